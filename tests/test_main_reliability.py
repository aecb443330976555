"""main.py's training state as the one commit point: non-finite training, kills at any moment,
a lock per checkpoint, damaged or inconsistent state files, stale temp files, bad output paths.

Runs are in-process (``main.main``) or forked children of this process (torch already
imported), so that the file stays fast on loaded machines; a child is killed with SIGKILL."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import main  # noqa: E402
from Run_IO import atomic_write  # noqa: E402

TINY = (
    "--episodes-per-iter 4 --sims 5 5 5 --batch-size 8 --min-buffer-batches 1 --sample-batches 2 --epochs 1 "
    "--max-episode-steps 3 --window 2 --solve-threshold 0.0 --seed 3 --skip-eval --no-progress "
    "--checkpoint m.pt --log-dir logs"
).split()
FORK = multiprocessing.get_context("fork")


@pytest.fixture(autouse=True)
def one_thread(monkeypatch, tmp_path):
    """One torch thread (the machine is shared; forked children inherit it), runs in tmp_path."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(main.PAUSE_AFTER_COMMIT_ENV, raising=False)
    yield
    torch.set_num_threads(threads)


def run(capsys, *extra):
    """``main.main(TINY + extra)`` in this process: (exit status, stdout, stderr)."""
    rc = main.main([*TINY, *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def _child(argv, env):
    os.environ.update(env)
    sys.stdout = sys.stderr = open(os.devnull, "w")
    os._exit(main.main(argv))


def start_child(*extra, **env) -> multiprocessing.Process:
    """main.py with TINY + extra in a forked child (its output discarded)."""
    proc = FORK.Process(target=_child, args=([*TINY, *extra], env))
    proc.start()
    return proc


def kill(proc: multiprocessing.Process) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()  # reaped: its pid is gone, as after a real kill -9


def state_iteration(path="m.train_state.pt"):
    try:
        return torch.load(path, weights_only=True)["iteration"]
    except Exception:
        return None


def wait_for(predicate, timeout=60.0):
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def outputs(folder=".") -> dict:
    """Checkpoint, training state and metrics.json of a run folder."""
    folder = Path(folder)
    return {
        "weights": torch.load(folder / "m.pt", weights_only=True),
        "state": torch.load(folder / "m.train_state.pt", weights_only=True),
        "metrics": json.loads((folder / "logs" / "metrics.json").read_text()),
    }


def assert_consistent(out: dict) -> None:
    """Checkpoint, metrics and training state hold the same iteration."""
    state = out["state"]
    assert out["metrics"] == state["metrics"]
    assert out["weights"].keys() == state["model"].keys()
    assert all(torch.equal(out["weights"][k], v) for k, v in state["model"].items())
    assert state["metrics"]["iterations"][-1] == state["iteration"]


def assert_same_run(a: dict, b: dict) -> None:
    assert a["state"]["iteration"] == b["state"]["iteration"]
    ma, mb = a["metrics"], b["metrics"]
    assert ma["iterations"] == mb["iterations"] and ma["solve_rates"] == mb["solve_rates"]
    assert ma["scramble_lengths"] == mb["scramble_lengths"] and ma["num_samples"] == mb["num_samples"]
    assert ma["losses"] == pytest.approx(mb["losses"], rel=1e-5)
    for k, v in a["weights"].items():
        assert torch.allclose(v.float(), b["weights"][k].float(), rtol=1e-4, atol=1e-6), k


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted 3-iteration run (its folder), and one good state to damage."""
    folder = tmp_path_factory.mktemp("reference")
    old, threads = os.getcwd(), torch.get_num_threads()
    os.chdir(folder)
    torch.set_num_threads(1)
    try:
        assert main.main([*TINY, "--num-iters", "3"]) == 0
    finally:
        os.chdir(old)
        torch.set_num_threads(threads)
    return folder


# ---------------------------------------------------------------- 2. non-finite training
def test_non_finite_loss_stops_without_saving_the_iteration(capsys, reference):
    for name in ("m.pt", "m.train_state.pt"):
        (Path(name)).write_bytes((reference / name).read_bytes())
    os.makedirs("logs")
    Path("logs/metrics.json").write_bytes((reference / "logs" / "metrics.json").read_bytes())
    before = {p: Path(p).read_bytes() for p in ("m.pt", "m.train_state.pt", "logs/metrics.json")}
    rc, out, err = run(capsys, "--num-iters", "5", "--lr", "1e12")
    line = one_error_line(err)
    assert rc == 2 and "iteration 4" in line and "non-finite" in line and "keep iteration 3" in line
    assert {p: Path(p).read_bytes() for p in before} == before  # the last good iteration stays on disk
    assert not Path("m.pt.lock").exists()


# ---------------------------------------------------------------- 3. + 4. + 14. commit point, lock, temps
def test_kill_after_the_last_commit_is_repaired_and_the_lock_guards_the_checkpoint(capsys, reference):
    child = start_child("--num-iters", "3", **{main.PAUSE_AFTER_COMMIT_ENV: "3:60"})
    try:
        wait_for(lambda: state_iteration() == 3, timeout=120)
        assert Path("m.pt.lock").read_text().strip() == str(child.pid)
        # 4: a second run on the same checkpoint is refused while the first one runs
        rc, _, err = run(capsys, "--num-iters", "3")
        line = one_error_line(err)
        assert rc == 2 and f"process {child.pid}" in line and "m.pt.lock" in line
    finally:
        kill(child)  # between the state of the last iteration and its outputs
    assert json.loads(Path("logs/metrics.json").read_text())["iterations"] == [1, 2]  # behind
    # 14: temp files of killed writers go, those of running processes stay
    dead = child.pid
    for folder in (".", "logs"):
        Path(folder, f".tmp-{dead}-abcm.pt").write_bytes(b"half")
        Path(folder, f".tmp-{os.getpid()}-abcm.pt").write_bytes(b"mine")
    rc, out, err = run(capsys, "--num-iters", "3")
    assert rc == 0, err
    assert f"Taking over the lock 'm.pt.lock' of process {dead}" in out
    assert "Rewrote m.pt, logs/metrics.json, logs/training_metrics.png" in out and "Nothing to train" in out
    for folder in (".", "logs"):
        assert (
            not Path(folder, f".tmp-{dead}-abcm.pt").exists() and Path(folder, f".tmp-{os.getpid()}-abcm.pt").exists()
        )
        Path(folder, f".tmp-{os.getpid()}-abcm.pt").unlink()
    assert not Path("m.pt.lock").exists()
    done = outputs()
    assert_consistent(done)
    assert_same_run(done, outputs(reference))
    rc, out, _ = run(capsys, "--num-iters", "3")  # up to date now: nothing rewritten
    assert rc == 0 and "Rewrote" not in out and "Nothing to train" in out


def test_atomic_write_names_its_temp_file_with_the_pid(tmp_path):
    seen = []
    atomic_write(tmp_path / "x.bin", lambda f: seen.extend(os.listdir(tmp_path)))
    assert seen[0].startswith(f".tmp-{os.getpid()}-") and seen[0].endswith("x.bin")


def test_lock_is_released_on_sigterm_and_errors(capsys):
    child = start_child("--num-iters", "50")
    wait_for(lambda: state_iteration() == 1, timeout=120)
    os.kill(child.pid, signal.SIGTERM)
    child.join(60)
    assert child.exitcode == 130 and not Path("m.pt.lock").exists()  # interrupted, as the README says
    rc, _, err = run(capsys, "--num-iters", "50", "--lr", "1e12")  # an error: the lock goes too
    assert rc == 2 and not Path("m.pt.lock").exists()
    Path("m.pt.lock").write_text("")  # a lock without a pid, just created: a run is writing it
    rc, _, err = run(capsys, "--num-iters", "1")
    assert rc == 2 and "in use by another process" in one_error_line(err)


# ---------------------------------------------------------------- kill -9 at random moments
def test_sigkill_at_random_moments_then_a_rerun_equals_an_uninterrupted_run(capsys, reference):
    t0 = time.time()
    assert run(capsys, "--num-iters", "1")[0] == 0  # times one iteration here
    per_iteration = time.time() - t0
    rnd = random.Random(11)
    for _ in range(4):
        child = start_child("--num-iters", "3")
        time.sleep(rnd.uniform(0.0, 1.5 * per_iteration))
        kill(child)
        it = state_iteration()
        assert it is None or 1 <= it <= 3  # the state on disk is always whole
    rc, _, err = run(capsys, "--num-iters", "3")
    assert rc == 0, err
    done = outputs()
    assert_consistent(done)
    assert_same_run(done, outputs(reference))
    assert not list(Path(".").rglob(".tmp-*")) and not Path("m.pt.lock").exists()


# ---------------------------------------------------------------- 6. + 13. the file at fault
def test_a_bad_checkpoint_is_blamed_not_the_missing_training_state(capsys):
    torch.save({0: torch.zeros(3)}, "m.pt")
    rc, _, err = run(capsys, "--num-iters", "1")
    line = one_error_line(err)
    assert rc == 2 and "'m.pt'" in line and "train_state" not in line
    Path("m.train_state.pt").write_bytes(b"not a torch file")
    rc, _, err = run(capsys, "--num-iters", "1")
    line = one_error_line(err)
    assert rc == 2 and "'m.train_state.pt'" in line and "damaged" in line and "--fresh" in line
    torch.save({"policy_head.weight": torch.zeros(1)}, "m.train_state.pt")  # an unrelated file
    rc, _, err = run(capsys, "--num-iters", "1")
    line = one_error_line(err)
    assert rc == 2 and "'m.train_state.pt'" in line and "unknown format" in line


def _damage(state, what):
    if what == "negative scramble length":
        state["scramble_len"] = -2
    elif what == "buffer lengths":
        state["buffer"]["zs"] = state["buffer"]["zs"][:-1]
    elif what == "sticker 9":
        state["buffer"]["cubes"][0, 0] = 9
    elif what == "missing metric":
        del state["metrics"]["losses"]
    elif what == "nan metric":
        state["metrics"]["losses"][-1] = float("nan")
    elif what == "nan weights":
        next(iter(state["model"].values()))[...] = float("nan")
    elif what == "missing key":
        del state["rng"]
    elif what == "non-string model keys":
        state["model"] = {i: v for i, v in enumerate(state["model"].values())}
    elif what == "wrong shapes":
        state["model"]["policy_head.weight"] = torch.zeros(2, 2)
    return state


EXPECTED = {
    "negative scramble length": "scramble length -2",
    "buffer lengths": "different lengths",
    "sticker 9": "stickers outside 0..5",
    "missing metric": "metrics with keys",
    "nan metric": "finite numbers",
    "nan weights": "not finite",
    "missing key": "lacks rng",
    "non-string model keys": "not a state_dict",
    "wrong shapes": "does not fit PolicyValueNet",
}


@pytest.mark.parametrize("what", list(EXPECTED))
def test_an_inconsistent_training_state_is_refused_before_resuming(capsys, reference, what):
    state = _damage(torch.load(reference / "m.train_state.pt", weights_only=True), what)
    torch.save(state, "m.train_state.pt")
    rc, out, err = run(capsys, "--num-iters", "4")
    line = one_error_line(err)
    assert rc == 2 and "Resuming" not in out
    assert "training state 'm.train_state.pt'" in line and EXPECTED[what] in line and "--fresh" in line


# ---------------------------------------------------------------- 15. output paths
@pytest.mark.parametrize(
    "flags, words",
    [
        (["--checkpoint", ""], "--checkpoint must name a model file"),
        (["--checkpoint", "folder"], "--checkpoint must name a model file"),
        (["--checkpoint", "/proc/x/m.pt"], "--checkpoint: cannot write"),
        (["--log-dir", "/proc/x"], "--log-dir: cannot write"),
        (["--log-dir", "afile"], "is a file, not a folder"),
    ],
)
def test_unusable_output_paths_are_refused_before_any_work(capsys, flags, words):
    os.mkdir("folder")
    Path("afile").write_text("x")
    rc, out, err = run(capsys, "--num-iters", "1", *flags)
    assert rc == 2 and words in one_error_line(err) and "Training" not in out
    assert sorted(os.listdir(".")) == ["afile", "folder"]  # nothing written, no hidden ./.train_state.pt
