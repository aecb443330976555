"""Every script, every numeric / device / path flag, a table of bad values: each must end in
exit status 2 and exactly one line on stderr, never a traceback.

Argument errors are checked in-process (``parse_args``/``main(argv)`` of each script: no
interpreter start per case); one subprocess per script (run in parallel) checks that the real
``__main__`` path, ``Cli.run_script`` included, gives the same one line.
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))  # bench scripts import their `common`

SEEDS = ["-1", str(2**32), str(2**40), "x"]
SIMS = ["0", "-5", "1000000000", "1.5"]
SCRAMBLES = ["-1", str(10**12), "x"]
COUNTS = ["0", "-1", "10000000000", "x"]
FLOATS = ["0", "-1", "inf", "nan", "x"]
DEVICES = ["bogus", "mps", "meta", "cuda:x", ""]
MOVES = ["0", "-3", "1000000000"]
PATHS = [""]


def _load(relpath: str):
    name = "sweep_" + relpath.replace("/", "_").removesuffix(".py")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / relpath)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# script -> (entry point taking argv, {flag: bad values}, argv every case needs)
TABLE = {
    "main.py": (
        "parse_args",
        {
            "--num-iters": COUNTS,
            "--episodes-per-iter": COUNTS,
            "--epochs": COUNTS,
            "--batch-size": COUNTS,
            "--lr": FLOATS,
            "--solve-threshold": ["-0.1", "1.5", "nan", "x"],
            "--window": COUNTS,
            "--start-scramble-len": SCRAMBLES,
            "--max-episode-steps": MOVES,
            "--buffer-size": ["0", "-5", "10000000000"],
            "--min-buffer-batches": ["-1", "x"],
            "--sample-batches": COUNTS,
            "--sims": SIMS,
            "--temps": FLOATS,
            "--c-puct": FLOATS,
            "--policy-temperature": ["-1", "inf", "nan"],
            "--states-per-iter": COUNTS,
            "--lr-end": FLOATS,
            "--warmup-iters": ["-1", "x", "1.5"],
            "--sweep-plies": ["0", "15", "x"],
            "--recipe": ["bogus"],
            "--value-loss": ["huber"],
            "--value-weight": FLOATS,
            "--eval-min-len": SCRAMBLES,
            "--eval-max-len": SCRAMBLES,
            "--eval-runs": COUNTS,
            "--eval-sims": SIMS,
            "--eval-max-steps": MOVES,
            "--device": DEVICES,
            "--seed": SEEDS,
            "--workers": COUNTS,
            "--backend": ["bogus"],
        },
        [],
    ),
    "evaluate.py": (
        "parse_args",
        {
            "--min-len": SCRAMBLES,
            "--max-len": SCRAMBLES,
            "--runs": COUNTS,
            "--min-dist": ["0", "99"],
            "--max-dist": ["0", "99"],
            "--sims": SIMS,
            "--max-steps": MOVES,
            "--c-puct": FLOATS,
            "--seed": SEEDS,
            "--device": DEVICES,
            "--checkpoint": PATHS,
            "--log-dir": PATHS,
            "--scrambles": PATHS,
            "--workers": COUNTS,
            "--backend": ["bogus"],
            "--symmetries": ["0", "49", "x"],
            "--views": ["0", "97", "x"],
            "--target-seconds": ["-1", "nan", "inf", "x"],
        },
        [],
    ),
    "test.py": (
        "parse_args",
        {
            "--scramble-len": SCRAMBLES,
            "--scramble": ["X", "²"],
            "--seed": SEEDS,
            "--sims": SIMS,
            "--max-steps": MOVES,
            "--c-puct": FLOATS,
            "--checkpoint": PATHS,
            "--device": DEVICES,
        },
        [],
    ),
    "PyGame.py": (
        "parse_args",
        {
            "--checkpoint": PATHS,
            "--device": DEVICES,
            "--sims": SIMS,
            "--max-steps": MOVES,
            "--seed": SEEDS,
            "--anim-ms": ["-1", "1000000000", "x"],
            "--scramble": ["²", "①", "51", "X"],
            "--screenshot": PATHS,
        },
        [],
    ),
    "Optimal_Solver.py": ("main", {"--cache": PATHS, "--scramble": ["X", "²"], "--seed": ["0"]}, ["--build"]),
    "benchmark.py": (
        "parse_args",
        {
            "--trainers": ["bogus", ","],
            "--budget-minutes": FLOATS,
            "--train-args": ["x", "bogus=--fresh"],
            "--checkpoints": ["x", "a=missing.pt"],
            "--positions-per-distance": COUNTS,
            "--uniform": ["-1", "10000000000", "x"],
            "--solvers": ["bogus"],
            "--sims": SIMS,
            "--max-moves": MOVES,
            "--max-nodes": ["0", "x"],
            "--beam-width": ["0", "x"],
            "--astar-lambda": ["-0.1", "1.5", "nan"],
            "--astar-batch": ["0", "x"],
            "--time-limit": FLOATS,
            "--device": DEVICES,
            "--seed": SEEDS,
            "--out-dir": PATHS,
        },
        [],
    ),
    "bench/bench_mcts.py": ("main", {"--rounds": COUNTS, "--scramble-len": SCRAMBLES, "--seed": SEEDS}, []),
    "bench/bench_gumbel.py": (
        "main",
        {"--batch": COUNTS, "--sims": SIMS, "--rounds": COUNTS, "--scramble-len": SCRAMBLES, "--seed": SEEDS},
        [],
    ),
    "bench/bench_selfplay.py": (
        "main",
        {
            "--episodes": COUNTS,
            "--ref-episodes": COUNTS,
            "--scramble-len": SCRAMBLES,
            "--sims": SIMS,
            "--max-steps": MOVES,
            "--rounds": COUNTS,
            "--seed": SEEDS,
            "--device": ["bogus"],
        },
        [],
    ),
    "bench/bench_solvers.py": (
        "main",
        {
            "--per-distance": COUNTS,
            "--uniform": COUNTS,
            "--rounds": COUNTS,
            "--seed": SEEDS,
            "--threads": ["0", "-1", "100000", "x"],
            "--model": PATHS,
            "--only": ["bogus", "greedy;bogus"],
        },
        [],
    ),
    "bench/bench_workers.py": (
        "main",
        {
            "--episodes": COUNTS,
            "--scramble-len": SCRAMBLES,
            "--sims": SIMS,
            "--max-steps": MOVES,
            "--rounds": COUNTS,
            "--workers": ["0", "-1", "x"],
        },
        [],
    ),
    "bench/bench_beam3x3.py": (
        "main",
        {
            "--model": PATHS,
            "--threads": ["0", "-1", "100000", "x"],
            "--speed-width": ["0", "-1", "x"],
            "--speed-cubes": COUNTS,
            "--cubes": ["-1", "100000", "x"],
            "--widths": ["0", "x", "100,-5"],
            "--time-limits": ["-1", "x", "nan"],
            "--start-width": ["0", "x"],
            "--ranks": ["x", "", "value,foo"],
            "--precision": ["fp16", ""],
        },
        [],
    ),
    "bench/bench_precision.py": (
        "main",
        {
            "--model": PATHS,
            "--threads": ["0", "x"],
            "--states": ["0", "x"],
            "--batch-size": ["0", "x"],
            "--steps": ["0", "x"],
            "--rounds": ["0", "x"],
            "--seed": SEEDS,
        },
        [],
    ),
    "bench/bench_pair_input.py": (
        "main",
        {
            "--threads": ["0", "x"],
            "--states": ["0", "x"],
            "--batch-size": ["0", "x"],
            "--steps": ["0", "x"],
            "--rounds": ["0", "x"],
            "--precision": ["fp16", ""],
            "--seed": SEEDS,
        },
        [],
    ),
    "bench/bench_views.py": (
        "main",
        {"--cubes": ["0", "x"], "--views": ["0", "97", "x"], "--beam-width": ["0", "x"], "--seed": SEEDS},
        [],
    ),
    "bench/bench_view_stop.py": (
        "main",
        {"--cubes": ["0", "x"], "--beam-width": ["0", "x"], "--threads": ["0", "x"], "--seed": SEEDS},
        [],
    ),
    "bench/bench_ends.py": (
        "main",
        {"--cubes": ["0", "x"], "--beam-width": ["0", "x"], "--threads": ["0", "x"], "--seed": SEEDS},
        [],
    ),
    "bench/bench_shortening.py": (
        "main",
        {"--radii": ["0", "7", "x"]},
        ["results.json"],
    ),
    "bench/bench_go_rules.py": (
        "main",
        {"--sizes": ["4", "20", "x"], "--batch": COUNTS, "--rounds": COUNTS},
        [],
    ),
    "bench/bench_go_selfplay.py": (
        "main",
        {"--recipe": ["bogus"], "--game": ["go4"], "--ref-games": COUNTS, "--rounds": COUNTS, "--seed": SEEDS},
        [],
    ),
    "bench/bench_anytime.py": (
        "main",
        {
            "--cubes": ["0", "x"],
            "--seed": SEEDS,
            "--threads": ["0", "x"],
            "--variants": ["bogus"],
            "--target-seconds": ["0", "-1", "nan", "x"],
            "--beam-width": ["0", "x"],
            "--checkpoint": PATHS + ["missing.pt"],
        },
        [],
    ),
    "bench/bench_go_recipes.py": (
        "main",
        {
            "--recipes": ["bogus"],
            "--precisions": ["fp16"],
            "--rounds": COUNTS,
            "--seed": SEEDS,
            "--models": [
                "go5",
                "go7=pretrained/go7_policy_value.pt",
                "go5=missing.pt",
                "go5-score=pretrained/go5_policy_value.pt",
            ],
        },
        [],
    ),
    "bench/bench_go_play.py": (
        "main",
        {
            "--game": ["go4", "x"],
            "--checkpoint": PATHS + ["missing.pt", "pretrained/rubik_policy_value.pt"],
            "--moves": COUNTS,
            "--rounds": COUNTS,
        },
        [],
    ),
    "docs/go_rules_check.py": (
        "main",
        {
            "--size": ["4", "20", "x"],
            "--moves": COUNTS,
            "--seed": SEEDS,
            "--pass-prob": ["1", "-0.1", "nan", "x"],
            "--gnugo": ["", "/nonexistent/gnugo"],
        },
        [],
    ),
    "gtp.py": (
        "main",
        {
            "--game": ["go4", "go20", "x"],
            "--sims": SIMS,
            "--c-puct": FLOATS + ["1e308"],
            "--komi": ["inf", "nan", "x", "-1e300", "٢٤", "1_000"],
            "--seed": SEEDS,
            "--checkpoint": PATHS + ["missing.pt"],
            "--device": DEVICES,
            "--precision": ["fp16", ""],
        },
        [],
    ),
    "bench/gpu_smoke.py": (
        "main",
        {"--device": ["tpu", "x"], "--seed": SEEDS, "--out": PATHS, "--skip": ["bogus"]},
        [],
    ),
    "bench/same_numbers.py": ("main", {"--only": ["bogus", ""]}, []),
    "bench/gtp_referee.py": (
        "main",
        {
            "--game": ["go4", "go20", "x"],
            "--games": COUNTS,
            "--level": ["11", "-1", "x"],
            "--sims": SIMS,
            "--komi": ["-1", "nan", "x"],
            "--timeout": FLOATS,
            "--max-moves": MOVES,
            "--out": PATHS,
            "--gnugo": PATHS,
            "--checkpoint": PATHS,
        },
        [],
    ),
    "docs/compare_with_original.py": (
        "main",
        {"--original": PATHS, "--rebuild": PATHS, "--shipped": PATHS, "--out": PATHS},
        [],
    ),
    "docs/supervised_ceiling.py": (
        "main",
        {
            "--init": PATHS,
            "--steps": COUNTS,
            "--batch-size": COUNTS,
            "--lr": FLOATS,
            "--value-weight": FLOATS,
            "--test-per-distance": COUNTS,
            "--log-every": COUNTS,
            "--save": PATHS,
            "--seed": SEEDS,
            "--device": ["mps"],
        },
        [],
    ),
    "docs/go_position_check.py": (
        "main",
        {"--size": ["1", "20", "x"], "--sims": ["0", "x"], "--moves": ["Z9", "C3 C3"], "--komi": ["x"]},
        ["pretrained/go5_policy_value.pt"],
    ),
    "docs/value_by_distance.py": (
        "main",
        {"--runs": COUNTS, "--seed": SEEDS, "--device": ["meta"]},
        ["pretrained/rubik_policy_value.pt"],
    ),
    "docs/value_target_quality.py": (
        "main",
        {"--episodes": COUNTS, "--sims": SIMS, "--scramble-len": COUNTS, "--seed": SEEDS},
        ["pretrained/rubik_policy_value.pt"],
    ),
    "docs/mcts_weak_spots.py": (
        "main",
        {"--ratio": FLOATS, "--sims": SIMS, "--seed": SEEDS, "--failures": PATHS},
        ["pretrained/rubik_policy_value.pt"],
    ),
}

NARGS = {("main.py", "--sims"): 3, ("main.py", "--temps"): 4}  # the bad value in every place

CASES = [
    pytest.param(script, flag, value, id=f"{script}{flag}={value}")
    for script, (_, flags, _) in TABLE.items()
    for flag, values in flags.items()
    for value in values
]


def _assert_one_line_usage_error(status, err: str) -> None:
    assert status == 2, err
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
@pytest.mark.parametrize("script, flag, value", CASES)
def test_bad_flag_value_is_one_line_and_status_2(script, flag, value, capsys):
    entry, _, base = TABLE[script]
    nargs = NARGS.get((script, flag))
    argv = [*base, flag, *[value] * nargs] if nargs else [*base, f"{flag}={value}"]
    if flag == "--scramble" and script == "Optimal_Solver.py":
        argv = [f"{flag}={value}"]
    func = getattr(_load(script), entry)
    try:
        status = func(argv)
    except SystemExit as exc:
        status = exc.code
    err = capsys.readouterr().err
    _assert_one_line_usage_error(status, err)
    assert flag.lstrip("-") in err or flag.lstrip("-").replace("-", "_") in err, err  # the error is this flag's


# The Go modes of the scripts (``--game goN``: Go_Args.py, Go_Match.py): (script, flag, bad values).
GO_FLAGS = [
    ("main.py", "--num-iters", COUNTS),
    ("main.py", "--time-budget", ["-1", "nan", "x", "100000"]),
    ("main.py", "--games", ["0", "x"]),
    ("main.py", "--simulations", ["0", "-1"]),
    ("main.py", "--lr", FLOATS),
    ("main.py", "--seed", SEEDS),
    ("main.py", "--recipe", ["bogus"]),
    ("main.py", "--checkpoint", PATHS),
    ("main.py", "--game", ["go4", "2x2"]),
    ("main.py", "--search", ["bogus"]),
    ("main.py", "--workers", COUNTS),
    ("main.py", "--backend", ["bogus"]),
    ("evaluate.py", "--games", COUNTS),
    ("evaluate.py", "--sims", SIMS),
    ("evaluate.py", "--level", ["11", "-1", "x"]),
    ("evaluate.py", "--komi", ["-1", "nan", "x"]),
    ("evaluate.py", "--opponent", ["bogus"]),
    ("evaluate.py", "--colors", ["red"]),
    ("evaluate.py", "--checkpoints", PATHS),
    ("test.py", "--sims", SIMS),
    ("test.py", "--opponent", ["bogus"]),
    ("test.py", "--seed", SEEDS),
    ("evaluate.py", "--device", DEVICES),
    ("test.py", "--device", DEVICES),
    ("evaluate.py", "--c-puct", ["1e308"]),
    ("evaluate.py", "--resign-threshold", ["1.5", "-2", "1e400", "nan", "x", "٠.٥"]),
]
GO_CASES = [
    pytest.param(script, flag, value, id=f"{script} --game go5 {flag}={value}")
    for script, flag, values in GO_FLAGS
    for value in values
]


@pytest.mark.parametrize("script, flag, value", GO_CASES)
def test_bad_go_flag_value_is_one_line_and_status_2(script, flag, value, capsys):
    argv = ["--game", "go5", f"{flag}={value}"] if flag != "--game" else [f"--game={value}"]
    try:
        status = _load(script).main(argv)
    except SystemExit as exc:
        status = exc.code
    _assert_one_line_usage_error(status, capsys.readouterr().err)


def test_every_script_is_in_the_table():
    scripts = {
        str(path.relative_to(REPO))
        for pattern in ("*.py", "bench/*.py", "docs/*.py")
        for path in REPO.glob(pattern)
        if 'if __name__ == "__main__":' in path.read_text()
    }
    assert scripts == set(TABLE)


@pytest.mark.parametrize("script", TABLE)
def test_help_works(script, capsys):
    entry, _, _ = TABLE[script]
    with pytest.raises(SystemExit) as exc:
        getattr(_load(script), entry)(["--help"])
    assert exc.value.code == 0 and "usage:" in capsys.readouterr().out


MODEL_3X3 = str(REPO / "pretrained" / "rubik3x3_policy_value.pt")
MODEL_2X2 = str(REPO / "pretrained" / "rubik_policy_value.pt")

# Errors found after parsing, before any work: the run must not start.
RUNTIME_CASES = [
    ("evaluate.py", ["--log-dir", "/proc/x"]),
    ("evaluate.py", ["--scrambles", "SCRAMBLES", "--out", "."]),
    ("evaluate.py", ["--scrambles", "SCRAMBLES", "--out", "/proc/x/out.json"]),
    ("evaluate.py", ["--checkpoint", "missing.pt", "--log-dir", "logs"]),
    ("evaluate.py", ["--device", "cuda:99", "--log-dir", "logs"]),
    ("PyGame.py", ["--screenshot", "/proc/x.png", "--scramble", "2", "--device", "cpu"]),
    ("PyGame.py", ["--screenshot", ".", "--device", "cpu"]),
    ("PyGame.py", ["--device", "cuda:99"]),
    ("docs/supervised_ceiling.py", ["--save", "/proc/x.pt", "--steps", "1"]),
    ("docs/compare_with_original.py", ["--out", "/proc/x.png"]),
    ("benchmark.py", ["--out-dir", "SCRAMBLES"]),  # a file, not a folder: refused before any training
    ("benchmark.py", ["--checkpoints", f"big={MODEL_3X3}", "--out-dir", "out"]),
    ("bench/bench_solvers.py", ["--model", "SCRAMBLES"]),  # a damaged model
    ("bench/bench_solvers.py", ["--model", MODEL_3X3]),
    ("docs/value_by_distance.py", [MODEL_3X3]),
    ("docs/go_position_check.py", [MODEL_3X3]),
    ("docs/value_target_quality.py", [MODEL_3X3]),
    ("docs/mcts_weak_spots.py", [MODEL_3X3]),
    ("docs/mcts_weak_spots.py", [MODEL_2X2, "--failures", "/proc/x.jsonl"]),
]


@pytest.mark.parametrize("script, argv", RUNTIME_CASES, ids=[f"{s} {' '.join(a)}" for s, a in RUNTIME_CASES])
def test_bad_location_or_device_fails_before_the_work(script, argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    (tmp_path / "SCRAMBLES").write_text("R U\n")
    try:
        status = _load(script).main(argv)
    except SystemExit as exc:
        status = exc.code
    _assert_one_line_usage_error(status, capsys.readouterr().err)
    assert not list(tmp_path.glob("logs/*.json"))  # nothing was evaluated


def _run(script: str, args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, str(REPO / script), *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=120
    )


# A real process for a few scripts (each start imports torch: seconds on a loaded CPU); the
# others are checked to end the same way, through Cli.run_script.
SUBPROCESS_CASES = {
    "main.py": ["--seed", "-1"],
    "evaluate.py": ["--sims", "1000000000"],
    "PyGame.py": ["--scramble", "²"],
    "bench/bench_mcts.py": ["--rounds", "0"],
    "benchmark.py": ["--seed", "-1"],
}


@pytest.mark.slow
def test_every_script_as_a_process_gives_one_line():
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(SUBPROCESS_CASES, pool.map(lambda item: _run(*item), SUBPROCESS_CASES.items())))
    for script, proc in done.items():
        assert proc.returncode == 2, (script, proc.stderr)
        assert "Traceback" not in proc.stderr, (script, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, (script, proc.stderr)


@pytest.mark.parametrize("script", TABLE)
def test_every_script_ends_through_run_script(script):
    source = (REPO / script).read_text()
    assert source.rstrip().endswith('if __name__ == "__main__":\n    Cli.run_script(main)'), script
