"""One test per class of failure of the reliability issue: masked moves with no visits,
damaged weights, unwritable outputs, stale temp files, flag bounds, broken pipes, a full
stdout and Ctrl-C."""

from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from Action_MCTS import pick_action_from_mcts, pick_actions_batch, visit_probabilities
from conftest import REPO
from cube.Cube_Checkpoints import load_model
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import NO_ACTION, Rubik2x2Env, legal_action_mask, next_face_count
from run import Cli, Run_IO
from run.Checkpoints import load_state_dict
from run.Run_IO import CheckpointError
from Self_Play import greedy_solve, play_episodes


# --------------------------------------------------------------------------- 1: masked moves
def test_no_visits_never_pick_a_masked_move():
    mask = np.zeros(12, dtype=bool)
    mask[[4, 7]] = True
    rng = np.random.default_rng(0)
    for mode in ("greedy", "sample"):
        picks = {pick_action_from_mcts(np.zeros(12), mode, 1.0, rng, mask=mask) for _ in range(200)}
        assert picks == {4, 7}
    masks = np.tile(mask, (500, 1))
    for mode in ("greedy", "sample"):
        assert set(pick_actions_batch(np.zeros((500, 12)), mode, 1.0, rng, masks).tolist()) == {4, 7}
    assert visit_probabilities(np.zeros(12), 1.0, mask).tolist() == [0.5 if m else 0.0 for m in mask]


def test_visits_on_a_masked_move_are_ignored():
    mask = np.ones(12, dtype=bool)
    mask[3] = False
    counts = np.zeros(12)
    counts[3], counts[5] = 9, 1
    assert pick_action_from_mcts(counts, mask=mask) == 5
    assert pick_actions_batch(counts[None], "sample", 1.0, np.random.default_rng(0), mask[None]).tolist() == [5]


def test_one_simulation_plays_only_legal_moves():
    torch.manual_seed(0)
    model = PolicyValueNet().eval()
    env = Rubik2x2Env(scramble_len=3, max_steps=12, use_action_mask=True)
    env.reset(seed=0)
    for _ in greedy_solve(model, env, num_simulations=1, max_steps=12, device="cpu"):
        pass  # env.step raises on a masked move
    cubes = np.stack([_scrambled(s) for s in range(6)])
    for mode in ("greedy", "sample"):
        res = play_episodes(model, cubes, 8, 1, mode, rng=np.random.default_rng(1))
        for actions in res.actions:
            last, count = np.array([NO_ACTION]), np.array([0])
            for a in actions:
                assert legal_action_mask(last, count)[0, a], actions
                count, last = next_face_count(last, count, np.array([a])), np.array([a])


def _scrambled(seed: int) -> np.ndarray:
    env = Rubik2x2Env(scramble_len=4)
    env.reset(seed=seed)
    return env.cube.copy()


# --------------------------------------------------------------------------- 2: damaged weights
@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda s, k: s.__setitem__(k, torch.full_like(s[k], float("nan"))), "NaN"),
        (lambda s, k: s.__setitem__(k, torch.full_like(s[k], float("inf"))), "NaN or infinite"),
        (lambda s, k: s.__setitem__(k, s[k].to(torch.int64)), "int64"),
        (lambda s, k: s.__setitem__(7, s.pop(k)), "non-string key"),
        (lambda s, k: s.__setitem__(k, s[k].to_sparse()), "is a sparse_coo tensor"),
        (lambda s, k: s.__setitem__(k, torch.empty_like(s[k], device="meta")), "is a meta tensor"),
        (lambda s, k: s.__setitem__("model", {k: s.pop(k).to_sparse()}), "'model.{key}' is a sparse_coo tensor"),
    ],
    ids=["nan", "inf", "int", "non-string key", "sparse", "meta", "sparse inside 'model'"],
)
def test_damaged_weights_are_a_checkpoint_error(tmp_path, damage, words):
    state = PolicyValueNet().state_dict()
    key = list(state)[2]
    damage(state, key)
    path = tmp_path / "bad.pt"
    torch.save(state, path)
    with pytest.raises(CheckpointError) as info:
        load_model(str(path))
    message = str(info.value)
    words = words.format(key=key)
    assert str(path) in message and words in message and len(message.splitlines()) == 1
    if words != "non-string key":
        assert key in message
    with pytest.raises(CheckpointError):
        load_state_dict(str(path))


# --------------------------------------------------------------------------- 5, 14: outputs
def test_check_writable(tmp_path):
    Run_IO.check_writable(tmp_path / "new" / "deeper" / "out.json")
    assert not (tmp_path / "new").exists()  # nothing left behind
    Run_IO.check_writable(tmp_path / "logs", folder=True)
    with pytest.raises(Run_IO.OutputError, match="directory"):
        Run_IO.check_writable(tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(Run_IO.OutputError, match="not a folder"):
        Run_IO.check_writable(tmp_path / "f", folder=True)
    with pytest.raises(Run_IO.OutputError):
        Run_IO.check_writable(tmp_path / "f" / "out.json")
    if os.path.isdir("/proc/self"):
        with pytest.raises(Run_IO.OutputError, match="/proc/x"):
            Run_IO.check_writable("/proc/x", folder=True)


def test_atomic_write_failure_is_one_sentence_output_error(tmp_path):
    def full(f):
        raise OSError(28, "No space left on device")

    with pytest.raises(Run_IO.OutputError, match="No space left") as info:
        Run_IO.atomic_write(tmp_path / "x.json", full)
    assert isinstance(info.value, OSError) and os.listdir(tmp_path) == []


def test_temp_names_carry_the_pid_and_stale_ones_are_removed(tmp_path):
    seen = []
    Run_IO.atomic_write(tmp_path / "a.json", lambda f: seen.extend(os.listdir(tmp_path)) or f.write(b"{}"))
    assert seen and seen[0].startswith(f".tmp-{os.getpid()}-")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".tmp-{dead_pid}-abcdrubik_policy_value.pt"
    live = tmp_path / f".tmp-{os.getpid()}-efghmetrics.json"
    other = tmp_path / ".tmp-notapid"
    for p in (stale, live, other):
        p.write_bytes(b"half")
    assert Run_IO.remove_stale_temps(tmp_path) == [str(stale)]
    assert not stale.exists() and live.exists() and other.exists() and (tmp_path / "a.json").exists()
    assert Run_IO.remove_stale_temps(tmp_path / "missing") == []


# --------------------------------------------------------------------------- 8, 10, 12, 16: bounds
@pytest.mark.parametrize(
    "kind, good, bad",
    [
        (Cli.seed, ["0", str(2**32 - 1)], ["-1", str(2**32), str(2**40), "1.0"]),
        (Cli.simulations, ["1", "100000"], ["0", "100001", "1000000000"]),
        (Cli.scramble_len, ["0", "10000"], ["-1", "10001", str(10**12)]),
        (Cli.episodes, ["1"], ["0", "10000000"]),
        (Cli.move_limit, ["1", "10000"], ["0", "10001"]),
        (Cli.rounds, ["1"], ["0", "-1"]),
        (Cli.buffer_size, ["1"], ["0", "-5"]),
        (Cli.batches, ["1"], ["0"]),
        (Cli.positive_float, ["1.3", "1e-9"], ["0", "-1", "inf", "-inf", "nan", "x"]),
        (Cli.nonnegative_float, ["0", "2"], ["-1", "inf", "nan"]),
        (Cli.fraction, ["0", "0.9", "1"], ["-0.1", "1.1", "nan"]),
        (Cli.nonempty_path, ["a.pt"], ["", "  "]),
    ],
)
def test_flag_types_bound_their_values(kind, good, bad):
    for text in good:
        kind(text)
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError):
            kind(text)


def test_ascii_digits_only():
    assert Cli.is_ascii_digits("12")
    for text in ("²", "①", "١٢", "", "1 2", "-1"):
        assert not Cli.is_ascii_digits(text)


def test_parser_error_is_one_line(capsys):
    p = Cli.ArgumentParser(prog="x")
    p.add_argument("--n", type=Cli.simulations)
    with pytest.raises(SystemExit) as info:
        p.parse_args(["--n", "0"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "x: error: argument --n" in err


# --------------------------------------------------------------------------- 11, 18: run_script
SCRIPT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from run import Cli
    def main(argv=None):
        mode = sys.argv[1]
        if mode == "interrupt":
            raise KeyboardInterrupt
        for i in range(200000):
            print("line", i)
        open(sys.argv[2], "w").write("done")  # the result file, after the printing
        return 0

    Cli.run_script(main)
    """
)


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "tool.py"
    path.write_text(SCRIPT.format(repo=str(REPO)))
    return path


def test_broken_pipe_stops_printing_quietly_and_finishes(tmp_path):
    result = tmp_path / "result.txt"
    proc = subprocess.Popen(
        [sys.executable, str(_script(tmp_path)), "print", str(result)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.readline()
    proc.stdout.close()  # the reader leaves, as `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert err == "" and result.read_text() == "done"


@pytest.mark.slow
def test_full_stdout_is_one_sentence_exit_2(tmp_path):
    result, device = tmp_path / "result.txt", tmp_path / "full"
    try:  # a node with /dev/full's numbers under tmp_path: /dev itself is never touched
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    with open(device, "w") as full:
        proc = subprocess.run(
            [sys.executable, str(_script(tmp_path)), "print", str(result)], stdout=full, stderr=subprocess.PIPE
        )
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "No space left" in err and result.read_text() == "done"


def test_ctrl_c_is_one_line_exit_130(tmp_path):
    proc = subprocess.run([sys.executable, str(_script(tmp_path)), "interrupt"], capture_output=True, text=True)
    assert proc.returncode == 130 and proc.stderr.strip() == "interrupted"


# --------------------------------------------------------------------------- 15, 17: scripts
def test_empty_checkpoint_is_a_usage_error(capsys):
    import test as test_script

    with pytest.raises(SystemExit) as info:
        test_script.parse_args(["--checkpoint", ""])
    assert info.value.code == 2 and "--checkpoint" in capsys.readouterr().err


def test_optimal_solver_says_it_draws_nothing(capsys):
    import Optimal_Solver

    with pytest.raises(SystemExit):
        Optimal_Solver.main(["--help"])
    assert "draws nothing at random" in " ".join(capsys.readouterr().out.split())


# --------------------------------------------------------------------------- issue 28: result files
@pytest.mark.parametrize("kind", ["full device", "fifo"])
def test_evaluate_out_that_is_no_regular_file_is_refused_and_kept(tmp_path, monkeypatch, capsys, kind):
    import evaluate

    monkeypatch.chdir(tmp_path)
    Path("scrambles.txt").write_text("R U\n")
    out = tmp_path / "out.json"
    try:  # the numbers of /dev/full, made under tmp_path: /dev itself is never touched
        os.mknod(out, 0o666 | (stat.S_IFCHR if kind == "full device" else stat.S_IFIFO), os.makedev(1, 7))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    before = os.lstat(out)
    assert evaluate.main(["--scrambles", "scrambles.txt", "--out", str(out), "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a regular file" in err and str(out) in err
    assert os.lstat(out).st_mode == before.st_mode and sorted(os.listdir()) == ["out.json", "scrambles.txt"]
