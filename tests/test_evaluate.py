"""evaluate.py: the ScrambleEvaluator API (as main.py calls it), the command line's three modes
(scramble lengths, true distances, a scramble file), and its errors.

No trained model is needed: two throwaway checkpoints are made once per module, ``random``
(PolicyValueNet() with a fixed seed) and ``neutral`` (the same with both heads zeroed:
uniform priors, value 0). A random net's value head is often saturated, which can hide the
solved child from a short search (seed 4 fails half of the 1-move scrambles at 50
simulations); with the neutral net every 1-move scramble is solved, so those checks cannot
flake. Settings stay tiny (a few episodes, 10-30 simulations) to keep each test short.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import evaluate
import Optimal_Solver as OS
from conftest import REPO
from cube import Evaluation_All_Positions as EAP
from cube import Evaluation_Modes as EM
from cube.Cube_Checkpoints import load_model
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import SOLVED_STICKERS, apply_moves, batch_scramble, is_solved, parse_moves
from run import Run_IO
from run.Input_Echo import shown
from run.Run_IO import CheckpointError

SCRAMBLE_KEYS = {
    "scramble_len",
    "solve_rate",
    "episodes",
    "solved",
    "mean_length",
    "mean_optimal",
    "mean_ratio_to_optimal",
    "mean_nodes",  # states generated per cube (MCTS: simulations), beyond the original
    "mean_seconds",  # seconds per cube
}
TINY = ["--runs", "2", "--sims", "10", "--max-steps", "4", "--no-progress"]


def untimed(rows: list[dict]) -> list[dict]:
    """Result rows without ``mean_seconds``: the only number that differs between equal runs."""
    return [{k: v for k, v in r.items() if k != "mean_seconds"} for r in rows]


# --------------------------------------------------------------------------- fixtures and helpers
pytestmark = pytest.mark.usefixtures("isolated_solver_cache", "torch_one_thread")


def _run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "evaluate.py"), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


# --------------------------------------------------------------------------- the API, as main.py uses it
@pytest.mark.slow
def test_api_end_to_end_writes_json_and_chart(checkpoints, tmp_path):
    log_dir = tmp_path / "logs"
    ev = evaluate.ScrambleEvaluator(
        model_path=str(checkpoints["random"]), device="cpu", n_runs=2, log_dir=str(log_dir), seed=3
    )
    results = ev.evaluate_scramble_range(1, 3, num_simulations=10, max_episode_steps=4)
    assert [r["scramble_len"] for r in results] == [1, 2, 3]
    for r in results:
        assert set(r) == SCRAMBLE_KEYS
        assert r["episodes"] == 2 and r["solve_rate"] == r["solved"] / 2
    assert json.loads((log_dir / "eval_scramble_result.json").read_text()) == results

    # All lengths were played in one batch, from the scrambles the random seed draws.
    run = ev.last_run
    rng = np.random.default_rng(3)
    expected = np.concatenate([batch_scramble(rng, 2, k)[0] for k in (1, 2, 3)])
    np.testing.assert_array_equal(run.start_cubes, expected)
    distances = OS.get_solver().batch_distance(expected)
    for i, r in enumerate(results):
        group = slice(2 * i, 2 * i + 2)
        assert r["solved"] == int(run.solved[group].sum())
        assert r["mean_optimal"] == pytest.approx(distances[group].mean(), abs=1e-4)
        ok = run.solved[group] & (distances[group] > 0)
        if ok.any():
            ratio = (run.lengths[group][ok] / distances[group][ok]).mean()
            assert r["mean_ratio_to_optimal"] == pytest.approx(ratio, abs=1e-4) and r["mean_ratio_to_optimal"] >= 1.0
        else:
            assert r["mean_ratio_to_optimal"] is None

    chart = ev.plot_scramble_results()
    assert chart == str(log_dir / "eval_bar_chart.png")
    assert Path(chart).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_in_memory_model_as_main_py_calls_it(tmp_path):
    torch.manual_seed(1)
    model = PolicyValueNet().train()  # main.py hands over the model it just trained
    ev = evaluate.ScrambleEvaluator(model=model, device=torch.device("cpu"), n_runs=2, log_dir=str(tmp_path), seed=0)
    results = ev.evaluate_scramble_range(1, 2, 10, 3, progress=False)
    assert [r["scramble_len"] for r in results] == [1, 2] and all(0 <= r["solve_rate"] <= 1 for r in results)
    assert model.training, "the caller's train/eval mode must be restored"
    assert Path(ev.plot_scramble_results()).is_file()
    # A fresh evaluator draws the chart from the saved JSON (the original's behaviour).
    again = evaluate.ScrambleEvaluator(model=model, n_runs=2, log_dir=str(tmp_path))
    (tmp_path / "eval_bar_chart.png").unlink()
    assert Path(again.plot_scramble_results()).is_file()


def test_same_seed_same_results_and_another_seed_other_scrambles(checkpoints, tmp_path):
    def run(seed):
        ev = evaluate.ScrambleEvaluator(
            str(checkpoints["random"]), "cpu", n_runs=3, log_dir=str(tmp_path / str(seed)), seed=seed
        )
        return ev.evaluate_scramble_range(4, 5, 10, 3), ev.last_run

    (a, run_a), (b, run_b), (_, run_c) = run(7), run(7), run(8)
    assert untimed(a) == untimed(b) and run_a.actions == run_b.actions
    np.testing.assert_array_equal(run_a.start_cubes, run_b.start_cubes)
    assert not np.array_equal(run_a.start_cubes, run_c.start_cubes)


def test_summarize_statistics():
    solved = np.array([True, True, False, True])
    lengths = np.array([3, 0, 40, 6])
    optimal = np.array([3, 0, 5, 4])
    s = EM.summarize(solved, lengths, optimal)
    assert s["solved"] == 3 and s["solve_rate"] == 0.75
    assert s["mean_length"] == 3.0  # solved episodes only
    assert s["mean_optimal"] == 3.0  # every start position
    assert s["mean_ratio_to_optimal"] == pytest.approx((1.0 + 1.5) / 2)  # solved and optimal > 0
    assert EM.summarize(np.array([False]), np.array([40]), np.array([5]))["mean_length"] is None


# --------------------------------------------------------------------------- command line: scramble lengths
@pytest.mark.slow
def test_cli_default_mode_prints_table_and_writes_files(checkpoints, tmp_path, capsys):
    log_dir = tmp_path / "logs"
    args = [
        "--checkpoint",
        str(checkpoints["random"]),
        "--max-len",
        "3",
        "--log-dir",
        str(log_dir),
        "--seed",
        "5",
        *TINY,
    ]
    assert evaluate.main(args) == 0
    out = capsys.readouterr().out
    assert f"Loaded model {checkpoints['random']}" in out
    assert "scramble len" in out and "solve rate" in out and "Wall time" in out
    first = json.loads((log_dir / "eval_scramble_result.json").read_text())
    assert [r["scramble_len"] for r in first] == [1, 2, 3] and all(set(r) == SCRAMBLE_KEYS for r in first)
    assert (log_dir / "eval_bar_chart.png").is_file()
    # Same seed, same numbers.
    assert evaluate.main(args) == 0
    assert untimed(json.loads((log_dir / "eval_scramble_result.json").read_text())) == untimed(first)


# --------------------------------------------------------------------------- command line: true distance
@pytest.mark.slow
def test_cli_by_distance(checkpoints, tmp_path, capsys):
    log_dir = tmp_path / "logs"
    args = [
        "--checkpoint",
        str(checkpoints["neutral"]),
        "--by-distance",
        "--max-dist",
        "3",
        "--log-dir",
        str(log_dir),
        *TINY,
    ]
    assert evaluate.main(args) == 0
    out = capsys.readouterr().out
    assert "distance" in out and "Overall" in out
    data = json.loads((log_dir / "eval_by_distance.json").read_text())
    rows = data["by_distance"]
    assert [r["distance"] for r in rows] == [1, 2, 3]
    assert [r["positions"] for r in rows] == [6, 27, 120]
    for r in rows:
        assert r["episodes"] == 2 and {"solve_rate", "mean_length", "mean_ratio_to_optimal"} <= set(r)
    assert rows[0]["solve_rate"] == 1.0 and rows[0]["mean_ratio_to_optimal"] == 1.0  # neutral net, distance 1
    assert data["overall"]["episodes"] == 6 and "mean_ratio_to_optimal" in data["overall"]
    assert data["settings"]["runs_per_distance"] == 2
    assert (log_dir / "eval_by_distance.png").read_bytes()[:4] == b"\x89PNG"


def test_by_distance_samples_distinct_positions_at_the_right_distance(checkpoints, tmp_path):
    ev = evaluate.ScrambleEvaluator(str(checkpoints["random"]), "cpu", n_runs=300, log_dir=str(tmp_path), seed=0)
    # One simulation and one move: this checks the sampling, not the search.
    data = ev.evaluate_by_distance(13, 14, num_simulations=1, max_episode_steps=1)
    assert [r["episodes"] for r in data["by_distance"]] == [300, 276]  # only 276 positions at distance 14
    cubes = ev.last_run.start_cubes
    np.testing.assert_array_equal(OS.get_solver().batch_distance(cubes), [13] * 300 + [14] * 276)
    assert len(np.unique(OS.get_solver().index(cubes))) == len(cubes)


# --------------------------------------------------------------------------- command line: a scramble file
@pytest.mark.slow
def test_cli_scramble_file(checkpoints, tmp_path, capsys):
    scrambles = tmp_path / "set.txt"
    scrambles.write_text("# a small test set\nR\n\nR U\n   # indented comment\nU U'\nF2 R'\nB\n")
    out_json = tmp_path / "out" / "solutions.json"
    args = [
        "--checkpoint",
        str(checkpoints["neutral"]),
        "--scrambles",
        str(scrambles),
        "--out",
        str(out_json),
        "--sims",
        "30",
        "--no-progress",
    ]
    assert evaluate.main(args) == 0
    assert "Solved" in capsys.readouterr().out
    records = json.loads(out_json.read_text())
    assert [r["line"] for r in records] == [2, 4, 6, 7, 8]
    assert [r["scramble"] for r in records] == ["R", "R U", "U U'", "F2 R'", "B"]
    solver = OS.get_solver()
    for r in records:
        assert set(r) == {"line", "scramble", "solution", "solved", "length", "optimal", "nodes", "seconds"}
        start = apply_moves(SOLVED_STICKERS, parse_moves(r["scramble"]))
        assert r["optimal"] == solver.distance(start)
        solution = parse_moves(r["solution"])
        assert r["length"] == len(solution)
        if r["solved"]:
            assert is_solved(apply_moves(start, solution))
            assert r["length"] >= r["optimal"]
    # The neutral net solves every 1-move scramble at once; "U U'" is solved already.
    by_line = {r["scramble"]: r for r in records}
    assert by_line["R"]["solved"] and by_line["R"]["length"] == 1
    assert by_line["B"]["solved"] and by_line["B"]["length"] == 1
    assert by_line["U U'"].pop("seconds") >= 0
    assert by_line["U U'"] == {
        "line": 6,
        "scramble": "U U'",
        "solution": "",
        "solved": True,
        "length": 0,
        "optimal": 0,
        "nodes": 0,
    }


def test_cli_scramble_file_bad_line_names_it_and_writes_nothing(checkpoints, tmp_path, capsys):
    scrambles = tmp_path / "set.txt"
    scrambles.write_text("R U\n# fine\nR X U\nF\n")
    out_json = tmp_path / "solutions.json"
    assert (
        evaluate.main(
            ["--checkpoint", str(checkpoints["random"]), "--scrambles", str(scrambles), "--out", str(out_json)]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "line 3" in err and "'X'" in err
    assert not out_json.exists()

    scrambles.write_text("Q\nR\nR W\n")
    assert (
        evaluate.main(
            ["--checkpoint", str(checkpoints["random"]), "--scrambles", str(scrambles), "--out", str(out_json)]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "line 1" in err and "line 3" in err
    assert not out_json.exists()


def test_read_scramble_file_empty_and_missing(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing here\n\n")
    with pytest.raises(EM.ScrambleFileError, match="no scrambles"):
        EM.read_scramble_file(str(empty))
    with pytest.raises(EM.ScrambleFileError, match="cannot read"):
        EM.read_scramble_file(str(tmp_path / "missing.txt"))


# --------------------------------------------------------------------------- errors
@pytest.mark.slow
def test_missing_model_one_line_exit_2_no_traceback(tmp_path):
    proc = _run_cli(["--checkpoint", "nowhere/rubik_policy_value.pt", "--max-len", "1", "--runs", "1"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "does not exist" in lines[0] and "python main.py" in lines[0]
    assert not (tmp_path / "training_logs").exists()


def test_no_model_anywhere_says_how_to_train(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Run_IO, "PRETRAINED_CHECKPOINT", str(tmp_path / "no" / "pretrained.pt"))
    assert evaluate.main(["--max-len", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "python main.py" in err


def test_corrupt_checkpoint_exit_2(checkpoints, tmp_path, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert evaluate.main(["--checkpoint", str(checkpoints["corrupt"]), "--log-dir", str(tmp_path)]) == 2
    assert not caught  # a warning would be a second line on stderr
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "corrupt" in err
    with pytest.raises(CheckpointError):
        evaluate.ScrambleEvaluator(model_path=str(checkpoints["corrupt"]))


@pytest.mark.parametrize(
    "bad",
    [
        ["--runs", "0"],
        ["--sims", "0"],
        ["--max-steps", "0"],
        ["--min-len", "5", "--max-len", "2"],
        ["--min-len", "0"],
        ["--by-distance", "--max-dist", "15"],
        ["--out", "x.json"],
        ["--by-distance", "--scrambles", "f.txt"],
        ["--runs", "two"],
        ["--device", "gpu"],
    ],
)
def test_bad_flags_are_argparse_errors(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate.parse_args(bad)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.slow
def test_help_lists_every_setting(tmp_path):
    proc = _run_cli(["--help"], cwd=tmp_path)
    assert proc.returncode == 0
    for flag in (
        "--min-len",
        "--max-len",
        "--runs",
        "--sims",
        "--max-steps",
        "--seed",
        "--device",
        "--checkpoint",
        "--log-dir",
        "--progress",
        "--by-distance",
        "--scrambles",
        "--out",
    ):
        assert flag in proc.stdout
    assert list(tmp_path.iterdir()) == []  # --help writes nothing


# --------------------------------------------------------------------------- --solver (every mode)
SOLVER_TINY = [*TINY, "--max-nodes", "3000", "--beam-width", "8"]


@pytest.mark.parametrize("solver", ["greedy", "beam", "astar", "bestfirst", "gumbel"])
def test_every_solver_by_scramble_length(checkpoints, tmp_path, capsys, solver):
    log_dir = tmp_path / solver
    args = ["--checkpoint", str(checkpoints["neutral"]), "--max-len", "2", "--log-dir", str(log_dir)]
    assert evaluate.main([*args, *SOLVER_TINY, "--solver", solver]) == 0
    out = capsys.readouterr().out
    assert "scramble len" in out and "Wall time" in out
    rows = json.loads((log_dir / "eval_scramble_result.json").read_text())
    assert [r["scramble_len"] for r in rows] == [1, 2] and all(set(r) == SCRAMBLE_KEYS for r in rows)
    assert all(r["mean_nodes"] > 0 and r["mean_seconds"] >= 0 for r in rows)
    if solver != "gumbel":  # the neutral net gives gumbel nothing to go on; the others find 1 move
        assert rows[0]["solve_rate"] == 1.0


@pytest.mark.slow
def test_solver_by_distance_and_scramble_file(checkpoints, tmp_path, capsys):
    log_dir = tmp_path / "logs"
    base = ["--checkpoint", str(checkpoints["neutral"]), "--log-dir", str(log_dir), *SOLVER_TINY]
    assert evaluate.main([*base, "--by-distance", "--max-dist", "2", "--solver", "beam"]) == 0
    data = json.loads((log_dir / "eval_by_distance.json").read_text())
    assert data["settings"]["solver"] == "beam" and data["settings"]["solver_options"]["beam_width"] == 8
    assert all("mean_nodes" in r and "mean_seconds" in r for r in data["by_distance"])
    assert data["overall"]["solve_rate"] == 1.0 and data["overall"]["mean_nodes"] > 0
    scrambles = tmp_path / "set.txt"
    scrambles.write_text("R\nU F\n")
    out_json = tmp_path / "solutions.json"
    assert evaluate.main([*base, "--scrambles", str(scrambles), "--out", str(out_json), "--solver", "astar"]) == 0
    for r in json.loads(out_json.read_text()):
        assert r["solved"] and r["length"] == r["optimal"] and r["nodes"] > 0  # astar: optimal here
        start = apply_moves(SOLVED_STICKERS, parse_moves(r["scramble"]))
        assert is_solved(apply_moves(start, parse_moves(r["solution"])))
    capsys.readouterr()


def test_bestfirst_needs_no_model(tmp_path, capsys):
    args = ["--checkpoint", str(tmp_path / "none.pt"), "--max-len", "1", "--log-dir", str(tmp_path), *TINY]
    assert evaluate.main([*args, "--solver", "bestfirst"]) == 0
    assert "needs no model" in capsys.readouterr().out
    assert evaluate.main([*args, "--solver", "greedy"]) == 2  # the others do
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_solver_mcts_is_the_default(checkpoints, tmp_path, capsys):
    def run(extra, mode):
        log_dir = tmp_path / f"{mode}{len(extra)}"
        args = ["--checkpoint", str(checkpoints["random"]), "--max-len", "3", "--log-dir", str(log_dir), *TINY]
        assert evaluate.main([*args, *(["--by-distance", "--max-dist", "3"] if mode == "dist" else []), *extra]) == 0
        name = "eval_by_distance.json" if mode == "dist" else "eval_scramble_result.json"
        data = json.loads((log_dir / name).read_text())
        if mode == "dist":
            return untimed(data["by_distance"]), data["settings"]
        return untimed(data), None

    for mode in ("lengths", "dist"):
        (rows, settings), (rows_mcts, settings_mcts) = run([], mode), run(["--solver", "mcts"], mode)
        assert rows == rows_mcts
        assert all(r["mean_nodes"] > 0 for r in rows)
    assert {k: v for k, v in settings.items() if k != "checkpoint"} == {
        k: v for k, v in settings_mcts.items() if k != "checkpoint"
    }
    assert settings["solver"] == "mcts" and settings["solver_options"] == {"sims": 10, "max_moves": 4, "c_puct": 1.3}
    capsys.readouterr()


# --------------------------------------------------------------------------- --all-positions
def _read_failures(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _check_failures(records: list[dict]) -> None:
    solver = OS.get_solver()
    for r in records:
        cube = np.array(r["stickers"], dtype=np.int8)
        assert solver.distance(cube) == r["distance"] == len(parse_moves(r["scramble"]))
        assert np.array_equal(apply_moves(SOLVED_STICKERS, parse_moves(r["scramble"])), cube)
        assert solver.index(cube[None])[0] == r["index"]
        assert not is_solved(apply_moves(cube, parse_moves(r["moves"])))


@pytest.mark.slow
def test_all_positions_sample_end_to_end(checkpoints, tmp_path, capsys):
    log_dir = tmp_path / "logs"
    args = ["--checkpoint", str(checkpoints["neutral"]), "--log-dir", str(log_dir), "--all-positions"]
    args += ["--sample", "50", "--limit", "10", "--sims", "5", "--max-steps", "4", "--no-progress", "--seed", "2"]
    assert evaluate.main(args) == 0
    out = capsys.readouterr().out
    assert "distance" in out and "within 0.5" in out and "Overall" in out
    data = json.loads((log_dir / "eval_all_positions.json").read_text())
    index = EAP.all_positions_sample(2, 50, 10)
    assert data["settings"]["positions"] == len(index) and data["settings"]["mode"] == "sample"
    assert data["settings"]["solver"] == "mcts" and data["settings"]["sample"] == 50
    distance = OS.get_solver().table[index]
    assert (distance >= 13).sum() >= 10  # the 10 drawn at 13-14, and any the uniform sample holds
    rows = {r["distance"]: r for r in data["by_distance"]}
    assert sum(r["positions"] for r in rows.values()) == len(index)
    for d, r in rows.items():
        assert r["positions"] == int((distance == d).sum())
        assert r["positions_at_distance"] == OS.get_solver().count_at_distance(d)
        assert {"value_moves_mean", "value_max_error", "value_within_half_move", "mean_nodes"} <= set(r)
    failures = _read_failures(log_dir / "all_positions_failures.jsonl")
    assert len(failures) == data["overall"]["positions"] - data["overall"]["solved"] > 0
    _check_failures(failures)
    assert (log_dir / "eval_all_positions.png").read_bytes()[:4] == b"\x89PNG"


def test_all_positions_sample_limit_zero_is_the_uniform_sample_alone(capsys):
    index = EAP.all_positions_sample(3, 200, 0)
    rng = np.random.default_rng(3)
    assert np.array_equal(index, np.sort(rng.choice(OS.NUM_STATES, size=200, replace=False)))
    assert len(np.flatnonzero(EAP.all_positions_sample(3, 200))) > 80_000  # every position at 13-14 besides
    with pytest.raises(SystemExit):
        evaluate.parse_args(["--limit", "5"])  # --limit is for --all-positions
    with pytest.raises(SystemExit):
        evaluate.parse_args(["--all-positions", "--solver", "greedy", "--limit", "0"])
    assert "--limit" in capsys.readouterr().err


def test_all_positions_greedy_needs_an_orientation_invariant_network(checkpoints, tmp_path, capsys):
    args = ["--checkpoint", str(checkpoints["neutral"]), "--log-dir", str(tmp_path), "--all-positions"]
    assert evaluate.main([*args, "--solver", "greedy", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--sample" in err
    assert not (tmp_path / "eval_all_positions.json").exists()


@pytest.fixture(scope="module")
def canonical_checkpoint(tmp_path_factory) -> Path:
    from run.Checkpoints import save_checkpoint

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("canonical") / "canonical.pt"
    save_checkpoint(PolicyValueNet(canonical_orientation=True), str(path))
    return path


@pytest.mark.slow
def test_all_positions_greedy_on_a_slice(canonical_checkpoint, tmp_path):
    from cube.All_Positions import cubes_at
    from cube.Solvers import greedy_batch

    model = load_model(str(canonical_checkpoint), "cpu")
    start = np.arange(1, 3_674_160, 24_000)
    index, solved, lengths, values, failed_moves = EAP.greedy_every_position(model, start=start, max_moves=6)
    assert np.array_equal(index, start) and len(failed_moves) == int((~solved).sum())
    # The same games as the greedy solver on stickers (a canonical network: one value per position).
    moves, ref_lengths, ref_solved, _ = greedy_batch(cubes_at(start), lambda c: model_values(model, c), max_moves=6)
    assert np.array_equal(solved, ref_solved) and np.array_equal(lengths, ref_lengths)
    assert [m[:k].tolist() for m, k, s in zip(moves, ref_lengths, ref_solved) if not s] == failed_moves
    distance = OS.get_solver().table[start]
    assert (lengths[solved] >= distance[solved]).all()
    np.testing.assert_allclose(values, model_values(model, cubes_at(start)), atol=1e-5)


def model_values(model, cubes) -> np.ndarray:
    from cube.Solvers import network_fns

    return network_fns(model)[0](cubes).astype(np.float64)


@pytest.mark.slow
def test_all_positions_greedy_cli_on_a_slice(canonical_checkpoint, tmp_path, capsys):
    args = ["--checkpoint", str(canonical_checkpoint), "--log-dir", str(tmp_path), "--all-positions"]
    assert evaluate.main([*args, "--solver", "greedy", "--limit", "60", "--max-steps", "5", "--no-progress"]) == 0
    data = json.loads((tmp_path / "eval_all_positions.json").read_text())
    assert data["settings"]["mode"] == "all" and data["settings"]["positions"] == 60
    assert sum(r["positions"] for r in data["by_distance"]) == 60
    _check_failures(_read_failures(tmp_path / "all_positions_failures.jsonl"))
    assert "Overall" in capsys.readouterr().out


def test_optimal_scrambles_invert_the_optimal_solver():
    solver = OS.get_solver()
    cubes = solver.random_cubes(np.random.default_rng(9), 30)
    assert EM.optimal_solutions(cubes) == [solver.solve(c) for c in cubes]
    for cube, scramble in zip(cubes, EM.optimal_scrambles(cubes)):
        assert np.array_equal(apply_moves(SOLVED_STICKERS, parse_moves(scramble)), cube)


@pytest.mark.parametrize(
    "bad",
    [
        ["--sample", "10"],
        ["--all-positions", "--by-distance"],
        ["--all-positions", "--sample", "0"],
        ["--solver", "dfs"],
    ],
)
def test_bad_solver_and_all_positions_flags(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate.parse_args(bad)
    assert exc.value.code == 2


def test_read_scramble_file_takes_a_bom_and_trailing_comments(tmp_path):
    path = tmp_path / "s.txt"
    path.write_bytes("R U # a comment after the moves\n# a comment line\nF'#no space\n".encode("utf-8-sig"))
    assert EM.read_scramble_file(str(path)) == [(1, "R U", parse_moves("R U")), (3, "F'", parse_moves("F'"))]


def test_a_huge_bad_token_is_echoed_shortened(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("R " + "X" * 1_000_000 + "\n")
    with pytest.raises(EM.ScrambleFileError) as exc:
        EM.read_scramble_file(str(path))
    assert f"line 1: unknown move {shown('X' * 1_000_000)};" in str(exc.value) and len(str(exc.value)) < 300
