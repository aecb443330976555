"""test.py, the single-episode runner: the original's text output (start cube, then "Step k: move
NAME (index I)" and the cube after each move, then the outcome), --json, explicit scrambles,
reproducible seeds, errors, and agreement with evaluate.py's batched episodes.

The repository's ``test.py`` shares its name with Python's own ``test`` package, so it is
loaded from its path under another module name. Checkpoints as in test_evaluate.py: a
``random`` net and a ``neutral`` one (heads zeroed), which solves every 1-move scramble.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import warnings

import pytest

import Optimal_Solver as OS
from conftest import REPO
from Rubik2x2Env import MOVE_NAMES, SOLVED_STICKERS, apply_move_idx, apply_moves, as_ascii, is_solved, parse_moves


def _load_runner():
    spec = importlib.util.spec_from_file_location("rubik_test_runner", REPO / "test.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


runner = _load_runner()
ASCII_LINES = 6  # the cube net is 6 text lines


# --------------------------------------------------------------------------- fixtures and helpers
pytestmark = pytest.mark.usefixtures("isolated_solver_cache", "torch_one_thread")


def _run_main(args: list[str], capsys) -> tuple[int, str, str]:
    code = runner.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- the original's text output
def test_text_output_has_the_seed_structure(checkpoints, capsys):
    code, out, _ = _run_main(
        [
            "--checkpoint",
            str(checkpoints["random"]),
            "--seed",
            "11",
            "--scramble-len",
            "4",
            "--sims",
            "20",
            "--max-steps",
            "5",
        ],
        capsys,
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"Loaded model {checkpoints['random']}") and "seed 11" in lines[0]
    assert lines[1].startswith("Scramble (4 moves): ")
    scramble = lines[1].split(": ", 1)[1].split("   [")[0]
    cube = apply_moves(SOLVED_STICKERS, parse_moves(scramble))
    assert lines[2] == "Initial state:"
    assert "\n".join(lines[3 : 3 + ASCII_LINES]) == as_ascii(cube)

    # Every step: a blank line, "Step k: move NAME (index I)", then the cube after the move.
    i, k = 3 + ASCII_LINES, 0
    while lines[i + 1].startswith("Step "):
        k += 1
        assert lines[i] == ""
        name, index = lines[i + 1].removeprefix(f"Step {k}: move ").removesuffix(")").split(" (index ")
        assert MOVE_NAMES[int(index)] == name
        cube = apply_move_idx(cube, int(index))
        assert "\n".join(lines[i + 2 : i + 2 + ASCII_LINES]) == as_ascii(cube)
        i += 2 + ASCII_LINES
    assert 1 <= k <= 5
    assert lines[i] == ""
    if is_solved(cube):
        assert lines[i + 1].startswith(f"Solved in {k} move")
    else:
        assert k == 5 and lines[i + 1] == "Not solved within 5 moves."


def test_json_output_is_one_object_that_replays(checkpoints, capsys):
    code, out, _ = _run_main(
        ["--checkpoint", str(checkpoints["random"]), "--seed", "2", "--sims", "20", "--max-steps", "6", "--json"],
        capsys,
    )
    assert code == 0
    record = json.loads(out)  # the whole stdout is one JSON object
    assert {"scramble", "solution", "solved", "length", "optimal", "checkpoint", "seed"} <= set(record)
    assert record["checkpoint"] == str(checkpoints["random"]) and record["seed"] == 2
    start = apply_moves(SOLVED_STICKERS, parse_moves(record["scramble"]))
    assert len(parse_moves(record["scramble"])) == 5  # the default --scramble-len
    assert record["optimal"] == OS.get_solver().distance(start)
    end = apply_moves(start, parse_moves(record["solution"]))
    assert record["length"] == len(parse_moves(record["solution"]))
    assert record["solved"] == is_solved(end)
    assert record["solved"] or record["length"] == 6


def test_explicit_one_move_scramble_is_solved(checkpoints, capsys):
    code, out, _ = _run_main(
        ["--checkpoint", str(checkpoints["neutral"]), "--scramble", "R", "--sims", "50", "--json"], capsys
    )
    assert code == 0
    record = json.loads(out)
    assert record["scramble"] == "R" and record["solved"] and record["length"] == 1 and record["optimal"] == 1
    code, out, _ = _run_main(["--checkpoint", str(checkpoints["neutral"]), "--scramble", "R", "--sims", "50"], capsys)
    assert code == 0 and "Step 1: move " in out and "Solved in 1 move " in out and "Step 2" not in out


def test_same_seed_same_output(checkpoints, capsys):
    args = [
        "--checkpoint",
        str(checkpoints["random"]),
        "--seed",
        "5",
        "--scramble-len",
        "6",
        "--sims",
        "15",
        "--max-steps",
        "4",
    ]

    def without_timing(result):  # the last line reports the search's seconds, which vary
        code, out, err = result
        return code, "\n".join(line for line in out.splitlines() if not line.startswith("Search (")), err

    first, second = without_timing(_run_main(args, capsys)), without_timing(_run_main(args, capsys))
    assert first == second and first[0] == 0
    other = _run_main([*args[:3], "6", *args[4:]], capsys)
    assert other[1] != first[1]


def test_run_one_episode_api_matches_the_batched_evaluation(checkpoints, tmp_path):
    import evaluate

    model = runner.load_network_in_eval_mode(str(checkpoints["random"]), "cpu")
    record = runner.run_one_episode(model, "cpu", num_simulations=25, max_steps=8, scramble="R U F' L", out=None)
    assert record["scramble"] == "R U F' L" and record["length"] == len(record["actions"])
    # Same net, same cube, same search: the one-tree runner and the lockstep batch agree.
    ev = evaluate.ScrambleEvaluator(model=model, log_dir=str(tmp_path))
    [batched] = ev.solve_scrambles([(1, "R U F' L", parse_moves("R U F' L"))], num_simulations=25, max_episode_steps=8)
    assert batched["solution"] == record["solution"] and batched["solved"] == record["solved"]


def test_scramble_len_zero_is_already_solved(checkpoints):
    model = runner.load_network_in_eval_mode(str(checkpoints["random"]), "cpu")
    lines: list[str] = []
    record = runner.run_one_episode(model, "cpu", scramble_len=0, num_simulations=5, seed=0, out=lines.append)
    assert record["solved"] and record["length"] == 0 and record["optimal"] == 0
    assert lines[-2].startswith("Solved in 0 moves") and lines[-1].startswith("Search (mcts): 0 simulations")


# --------------------------------------------------------------------------- errors
@pytest.mark.slow
def test_missing_model_one_line_exit_2_no_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(REPO / "test.py"), "--checkpoint", "nowhere.pt"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "nowhere.pt" in lines[0] and "python main.py" in lines[0]


def test_corrupt_checkpoint_exit_2(checkpoints, capsys):
    # The file starts like a pickle, which makes torch.load warn: the user must still see one line.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out, err = _run_main(["--checkpoint", str(checkpoints["corrupt"]), "--json"], capsys)
    assert not caught
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "corrupt" in err


@pytest.mark.parametrize(
    "bad",
    [
        ["--scramble", "R X"],
        ["--sims", "0"],
        ["--max-steps", "0"],
        ["--scramble-len", "-1"],
        ["--seed", "x"],
        ["--device", "gpu"],
    ],
)
def test_bad_flags_are_argparse_errors(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        runner.parse_args(bad)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.slow
def test_a_reader_that_stops_early_is_no_error(tmp_path, checkpoints):
    # `python test.py | head -2`: the pipe closes while the episode is still being printed.
    proc = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "test.py"),
            "--checkpoint",
            str(checkpoints["neutral"]),
            "--scramble",
            "R U F' D",
            "--sims",
            "5",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and "Traceback" not in err and "BrokenPipe" not in err


@pytest.mark.slow
def test_help_and_imports_have_no_side_effects(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(REPO / "test.py"), "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0
    for flag in (
        "--scramble-len",
        "--scramble",
        "--sims",
        "--max-steps",
        "--seed",
        "--checkpoint",
        "--device",
        "--json",
    ):
        assert flag in proc.stdout
    # Importing both scripts prints nothing, writes nothing and sets no environment variable.
    code = (
        # gymnasium itself sets PYGAME_HIDE_SUPPORT_PROMPT on import: compare after it.
        "import os, sys, gymnasium; before = dict(os.environ); sys.path.insert(0, sys.argv[1]); import importlib.util as u\n"  # noqa: E501
        "for name in ('evaluate', 'test'):\n"
        "    s = u.spec_from_file_location('m_' + name, os.path.join(sys.argv[1], name + '.py')); s.loader.exec_module(u.module_from_spec(s))\n"  # noqa: E501
        "assert dict(os.environ) == before"
    )
    env_proc = subprocess.run(
        [sys.executable, "-c", code, str(REPO)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert env_proc.returncode == 0, env_proc.stderr
    assert env_proc.stdout == ""
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- --solver
def test_solver_greedy_text_and_json(checkpoints, capsys):
    args = ["--checkpoint", str(checkpoints["neutral"]), "--scramble", "R", "--solver", "greedy"]
    code, out, _ = _run_main(args, capsys)
    lines = out.splitlines()
    assert code == 0 and "solver greedy" in lines[0]
    assert "Step 1: move " in out and "Solved in 1 move " in out and "Step 2" not in out
    assert lines[-1].startswith("Search (greedy): 12 states generated in ")  # the 12 children of the start
    code, out, _ = _run_main([*args, "--json"], capsys)
    record = json.loads(out)
    assert record["solver"] == "greedy" and record["nodes"] == 12 and record["seconds"] >= 0
    assert record["solved"] and record["length"] == 1


def test_solver_json_replays_for_every_solver(checkpoints, capsys):
    for solver in ("beam", "astar", "bestfirst", "gumbel"):
        args = ["--checkpoint", str(checkpoints["neutral"]), "--seed", "4", "--scramble-len", "3", "--json"]
        code, out, _ = _run_main([*args, "--solver", solver, "--sims", "10", "--max-steps", "6"], capsys)
        record = json.loads(out)
        assert code == 0 and record["solver"] == solver and record["nodes"] >= 0
        start = apply_moves(SOLVED_STICKERS, parse_moves(record["scramble"]))
        assert record["solved"] == is_solved(apply_moves(start, parse_moves(record["solution"])))
        if solver != "gumbel":  # the neutral net gives gumbel nothing to go on
            assert record["solved"]


def test_bestfirst_runs_without_a_model(tmp_path, capsys):
    args = ["--checkpoint", str(tmp_path / "none.pt"), "--scramble", "R U", "--solver", "bestfirst", "--json"]
    code, out, _ = _run_main(args, capsys)
    record = json.loads(out)
    assert code == 0 and record["solved"] and record["checkpoint"] is None


def test_solver_mcts_is_the_default(checkpoints, capsys):
    args = ["--checkpoint", str(checkpoints["random"]), "--seed", "3", "--sims", "15", "--max-steps", "5", "--json"]
    default = json.loads(_run_main(args, capsys)[1])
    mcts = json.loads(_run_main([*args, "--solver", "mcts"], capsys)[1])
    assert default.pop("seconds") >= 0 and mcts.pop("seconds") >= 0
    assert default == mcts and default["solver"] == "mcts" and default["nodes"] == 15 * default["length"]
