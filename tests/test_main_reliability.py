"""main.py's training state as the one commit point: non-finite training, kills at any moment,
a lock per checkpoint, damaged or inconsistent state files, stale temp files, bad output paths. Every test
that takes ``game`` (or ``reference``) runs for the cube and for Go: both go through Run_Loop.py.

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

import numpy as np
import pytest
import torch

import main
from cube import Run_State
from cube.Puzzles import get_puzzle
from Policy_Value_Net import PolicyValueNet
from run import Run_Files, Run_Loop
from run.Run_IO import atomic_write

CUBE_TINY = (
    "--episodes-per-iter 4 --sims 5 5 5 --batch-size 8 --min-buffer-batches 1 --sample-batches 2 --epochs 1 "
    "--max-episode-steps 3 --window 2 --solve-threshold 0.0 --seed 3 --skip-eval --no-progress "
    "--checkpoint m.pt --log-dir logs"
).split()
GO_TINY = (
    "--game go5 --games 2 --simulations 3 --train-steps 2 --batch-size 8 --filters 4 --blocks 1 --gate-games 0 "
    "--buffer-min-games 2 --max-moves 24 --seed 3 --checkpoint m.pt --log-dir logs"
).split()
TINIES = {"cube": CUBE_TINY, "go": GO_TINY}
TINY = list(CUBE_TINY)  # the flags of the test running now (the one_thread fixture sets them)
FORK = multiprocessing.get_context("fork")


@pytest.fixture(scope="module", params=list(TINIES))
def game(request) -> str:
    """The game a run-safety test runs for: each such test runs for every one."""
    return request.param


@pytest.fixture(autouse=True)
def one_thread(monkeypatch, tmp_path, request):
    """One torch thread (the machine is shared; forked children inherit it), runs in tmp_path, with the
    tiny flags of the test's ``game`` (the cube's for tests that take none)."""
    TINY[:] = TINIES[request.getfixturevalue("game")] if "game" in request.fixturenames else CUBE_TINY
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(Run_Loop.PAUSE_AFTER_COMMIT_ENV, raising=False)
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


LOSSES = ("losses", "policy_losses", "value_losses")


def assert_same_run(a: dict, b: dict) -> None:
    """The same iterations, counts and outcomes, losses and weights within float rounding (wall time aside)."""
    assert a["state"]["iteration"] == b["state"]["iteration"]
    ma, mb = a["metrics"], b["metrics"]
    assert ma.keys() == mb.keys()
    for key in ma.keys() - {"minutes", *LOSSES}:
        assert ma[key] == mb[key], key
    for key in LOSSES:
        assert ma[key] == pytest.approx(mb[key], rel=1e-5), key
    for k, v in a["weights"].items():
        assert torch.allclose(v.float(), b["weights"][k].float(), rtol=1e-4, atol=1e-6), k


@pytest.fixture(scope="module")
def reference_runs(tmp_path_factory):
    """``game`` -> the folder of an uninterrupted 3-iteration run of it, each made on first use, once a
    module. Not a module fixture that takes ``game``: the tests that give ``game`` with ``indirect`` make
    it a function-scoped parameter, and such a fixture was torn down and made again for every one of
    them (dozens of runs where two do)."""
    folders: dict[str, Path] = {}

    def run_of(game: str) -> Path:
        if game not in folders:
            folder = tmp_path_factory.mktemp(f"reference_{game}")
            old, threads = os.getcwd(), torch.get_num_threads()
            os.chdir(folder)
            torch.set_num_threads(1)
            try:
                assert main.main([*TINIES[game], "--num-iters", "3"]) == 0
            finally:
                os.chdir(old)
                torch.set_num_threads(threads)
            folders[game] = folder
        return folders[game]

    return run_of


@pytest.fixture
def reference(reference_runs, game) -> Path:
    """An uninterrupted 3-iteration run of ``game`` (its folder), and one good state to damage; tests
    only read it."""
    return reference_runs(game)


# ---------------------------------------------------------------- 2. non-finite training
def save_with_flags(state: dict, path="m.train_state.pt", **flags) -> None:
    """``state`` saved at ``path`` as if its run had been given ``flags`` (argparse names)."""
    state["args"] = json.dumps({**json.loads(state["args"]), **flags})
    torch.save(state, path)


@pytest.mark.slow
def test_non_finite_loss_stops_without_saving_the_iteration(capsys, reference):
    Path("m.pt").write_bytes((reference / "m.pt").read_bytes())
    # The run resumed with --lr 1e12 is one that had it all along: other flags are refused. (Go's SGD keeps
    # its rate in its optimizer's and schedule's states, so they had it too.)
    state = torch.load(reference / "m.train_state.pt", weights_only=True)
    if "scheduler" in state:
        state["optimizer"]["param_groups"][0]["lr"] = 1e12
        state["scheduler"]["base_lrs"] = state["scheduler"]["_last_lr"] = [1e12]
    save_with_flags(state, lr=1e12)
    os.makedirs("logs")
    Path("logs/metrics.json").write_bytes((reference / "logs" / "metrics.json").read_bytes())
    before = {p: Path(p).read_bytes() for p in ("m.pt", "m.train_state.pt", "logs/metrics.json")}
    rc, out, err = run(capsys, "--num-iters", "5", "--lr", "1e12")
    line = one_error_line(err)
    assert rc == 2 and "iteration 4" in line and "non-finite" in line and "keep iteration 3" in line
    assert {p: Path(p).read_bytes() for p in before} == before  # the last good iteration stays on disk
    assert not Path("m.train_state.pt.lock").exists()


# ---------------------------------------------------------------- 3. + 4. + 14. commit point, lock, temps
@pytest.mark.slow
def test_kill_after_the_last_commit_is_repaired_and_the_lock_guards_the_checkpoint(capsys, reference):
    child = start_child("--num-iters", "3", **{Run_Loop.PAUSE_AFTER_COMMIT_ENV: "3:60"})
    try:
        wait_for(lambda: state_iteration() == 3, timeout=120)
        assert Path("m.train_state.pt.lock").read_text().strip() == str(child.pid)
        # 4: a second run on the same checkpoint is refused while the first one runs
        rc, _, err = run(capsys, "--num-iters", "3")
        line = one_error_line(err)
        assert rc == 2 and f"process {child.pid}" in line and "m.train_state.pt.lock" in line
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
    assert f"Taking over the lock 'm.train_state.pt.lock' of process {dead}" in out
    assert "Rewrote m.pt, logs/metrics.json, logs/training_metrics.png" in out and "Nothing to train" in out
    for folder in (".", "logs"):
        assert (
            not Path(folder, f".tmp-{dead}-abcm.pt").exists() and Path(folder, f".tmp-{os.getpid()}-abcm.pt").exists()
        )
        Path(folder, f".tmp-{os.getpid()}-abcm.pt").unlink()
    assert not Path("m.train_state.pt.lock").exists()
    done = outputs()
    assert_consistent(done)
    assert_same_run(done, outputs(reference))
    rc, out, _ = run(capsys, "--num-iters", "3")  # up to date now: nothing rewritten
    assert rc == 0 and "Rewrote" not in out and "Nothing to train" in out


def test_atomic_write_names_its_temp_file_with_the_pid(tmp_path):
    seen = []
    atomic_write(tmp_path / "x.bin", lambda f: seen.extend(os.listdir(tmp_path)))
    assert seen[0].startswith(f".tmp-{os.getpid()}-") and seen[0].endswith("x.bin")


def test_a_signal_is_not_lost_where_a_library_catches_exceptions():
    """The run's signal lands on whatever line runs: an ``except Exception`` there lets it through, and one
    that swallows even that (``except BaseException``) only delays it to the guard's next check (between two
    iterations). Before, ``Interrupted`` was an Exception that such a guard swallowed."""
    guard = Run_Files.InterruptGuard()
    with guard.installed():
        with pytest.raises(Run_Files.Interrupted, match="SIGTERM"):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)  # the handler raises before this ends
            except Exception:  # noqa: BLE001 - what a library's guard does
                pass
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except BaseException:  # noqa: BLE001 - swallowed for good
            pass
        with pytest.raises(Run_Files.Interrupted, match="SIGINT"):
            guard.check()
        guard.check()  # raised once: nothing pending any more
        with pytest.raises(Run_Files.Interrupted, match="SIGTERM"):
            with guard.deferred():
                os.kill(os.getpid(), signal.SIGTERM)  # held until the block's end
                time.sleep(0.1)


@pytest.mark.slow
def test_lock_is_released_on_sigterm_and_errors(capsys, game):
    child = start_child("--num-iters", "50")
    wait_for(lambda: state_iteration() == 1, timeout=120)
    os.kill(child.pid, signal.SIGTERM)
    child.join(60)
    assert child.exitcode == 130 and not Path("m.train_state.pt.lock").exists()  # interrupted, as the README says
    rc, _, err = run(capsys, "--num-iters", "50", "--lr", "1e12")  # an error: the lock goes too
    assert rc == 2 and not Path("m.train_state.pt.lock").exists()
    Path("m.train_state.pt.lock").write_text("1\n")  # left by a killed run whose pid is reused (init): free
    rc, out, err = run(capsys, "--num-iters", "1")
    assert rc == 0 and "Taking over the lock 'm.train_state.pt.lock' of process 1" in out, err


# ---------------------------------------------------------------- kill -9 at random moments
@pytest.mark.slow
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
    assert not list(Path(".").rglob(".tmp-*")) and not Path("m.train_state.pt.lock").exists()


# ---------------------------------------------------------------- 6. + 13. the file at fault
def test_a_bad_checkpoint_is_blamed_not_the_missing_training_state(capsys, game):
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
    elif what == "policy target -1e30":
        state["buffer"]["pis"][0, 0] = -1e30
    elif what == "value 5":
        state["buffer"]["zs"][0] = 5.0
    elif what == "emptied metrics":
        state["metrics"] = {k: [] for k in state["metrics"]}
    elif what == "metrics of iteration 1 missing":
        state["metrics"] = {k: v[1:] for k, v in state["metrics"].items()}
        state["metrics"]["iterations"] = [1, 3]
    elif what == "negative loss":
        state["metrics"]["losses"][-1] = -3.8e31
    elif what == "scramble length 1e9":
        state["scramble_len"] = 10**9
    elif what == "scramble length shrank":
        state["metrics"]["scramble_lengths"][0] = 9
    elif what == "recent solve rates":
        state["recent_solve_rates"] = [0.5]
    elif what == "sparse buffer":
        state["buffer"]["pis"] = state["buffer"]["pis"].to_sparse()
    elif what == "flags not JSON":
        state["args"] = "{--seed 3"
    elif what == "meta weights":
        state["model"]["body.0.weight"] = torch.empty_like(state["model"]["body.0.weight"], device="meta")
    return state


def _damage_go(state, what):
    rows, pis, zs = state["buffer"][0]
    if what == "args a JSON list":
        state["args"] = json.dumps(["--game", "go5"])
    elif what == "iteration 1e12":
        state["iteration"] = 10**12
    elif what == "buffer boards x100":
        rows[0, 0] = 100
    elif what == "nan metric":
        state["metrics"]["black_wins"][-1] = float("nan")
    elif what == "games added -1":
        state["buffer_games_added"] = -1
    elif what == "args not JSON":
        state["args"] = "{--game go5"
    elif what == "missing args":
        del state["args"]
    elif what == "a 7x7 buffer":
        state["buffer"][0] = [torch.zeros(len(rows), 8 * 49 + 1, dtype=torch.int8), pis, zs]
    elif what == "seconds nan":
        state["seconds"] = float("nan")
    elif what == "metric list too short":
        state["metrics"]["mean_lengths"] = state["metrics"]["mean_lengths"][:-1]
    elif what == "a go7 state":
        state["go_size"] = 7
    elif what == "a cube state":
        del state["go_size"]
        state["scramble_len"] = 3
    elif what == "policies not distributions":
        pis[0] = 5.0
    elif what == "buffer of another recipe":
        state["buffer"] = state["buffer"][:1]
    return state


EXPECTED_GO = {
    "args a JSON list": "saved flags that cannot be read",
    "iteration 1e12": "not consecutive up to its iteration 1000000000000",
    "buffer boards x100": "points outside -1..1",
    "nan metric": "finite numbers",
    "games added -1": "has -1 games played in 3 iterations",
    "args not JSON": "saved flags that cannot be read",
    "missing args": "lacks args",
    "a 7x7 buffer": "need n x 201 int8, a 5x5 board",
    "seconds nan": "training time that is not a number of seconds",
    "metric list too short": "metric lists of different lengths",
    "a go7 state": "belongs to a 7x7 run, not --game go5",
    "a cube state": "is a cube run's training state",
    "policies not distributions": "policy targets that are not distributions",
    "buffer of another recipe": "has a game buffer of 1 games where this recipe keeps 2",
}
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
    "policy target -1e30": "policy targets that are not distributions",
    "value 5": "values outside -1..1",
    "emptied metrics": "has metrics of 0 iterations, which its replay buffer of",
    "metrics of iteration 1 missing": "not consecutive up to its iteration 3",
    "negative loss": "negative losses",
    "scramble length 1e9": "scramble length 1000000000 (must be a whole number from 1 to 10,000)",
    "scramble length shrank": "scramble lengths that the curriculum",
    "recent solve rates": "recent solve rates that are not the last ones",
    "sparse buffer": "is damaged: 'buffer.pis' is a sparse_coo tensor",
    "meta weights": "is damaged: 'model.body.0.weight' is a meta tensor",
    "flags not JSON": "saved flags that cannot be read",
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "game, what", [("cube", w) for w in EXPECTED] + [("go", w) for w in EXPECTED_GO], indirect=["game"]
)
def test_an_inconsistent_training_state_is_refused_before_resuming(capsys, reference, game, what):
    damage, expected = (_damage, EXPECTED) if game == "cube" else (_damage_go, EXPECTED_GO)
    state = damage(torch.load(reference / "m.train_state.pt", weights_only=True), what)
    torch.save(state, "m.train_state.pt")
    rc, out, err = run(capsys, "--num-iters", "4")
    line = one_error_line(err)
    assert rc == 2 and "Resuming" not in out
    assert "training state 'm.train_state.pt'" in line and expected[what] in line and "--fresh" in line


# ---------------------------------------------------------------- issue 28: saved flags, memory, shapes
#: Flags a resumed run may change, per game: how long it trains, the evaluation, threads, paths, snapshots.
MAY_CHANGE = {
    "cube": ["--threads", "1", "--eval-runs", "5", "--log-dir", "other", "--snapshot-every", "2"],
    "go": ["--snapshot-every", "2", "--workers", "1", "--log-dir", "other", "--time-budget", "60"],
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "game, flags, used, asked",
    [
        ("cube", ["--seed", "1"], "--seed 3", "--seed 1"),
        ("cube", ["--recipe", "alphazero"], "no --recipe", "--recipe alphazero"),
        ("cube", ["--targets", "lookahead", "--value-loss", "bce"], "--targets selfplay, --value-loss mse",
         "--targets look"),
        ("go", ["--seed", "1"], "--seed 3", "--seed 1"),
        ("go", ["--simulations", "5", "--augment"], "--simulations 3, no --augment", "--simulations 5, --augment"),
    ],
    indirect=["game"],
)  # fmt: skip
def test_resuming_with_other_training_flags_is_refused(capsys, reference, game, flags, used, asked):
    for name in ("m.pt", "m.train_state.pt"):
        Path(name).write_bytes((reference / name).read_bytes())
    before = {p: Path(p).read_bytes() for p in ("m.pt", "m.train_state.pt")}
    rc, out, err = run(capsys, "--num-iters", "4", *flags)
    line = one_error_line(err)
    assert rc == 2 and "Resuming" not in out and "'m.train_state.pt'" in line and "--fresh" in line
    assert f"the saved run used {used}" in line and f"this command asks for {asked}" in line
    assert {p: Path(p).read_bytes() for p in before} == before
    # How long a run trains, the evaluation, threads and paths may change.
    rc, out, err = run(capsys, "--num-iters", "3", *MAY_CHANGE[game])
    assert rc == 0 and "Nothing to train" in out, err


def test_a_one_class_distance_head_is_refused_at_the_start(capsys):
    """Its softmax over one class is always 1: the value always 1, the loss always 0."""
    with pytest.raises(SystemExit) as exit_info:
        main.main([*TINY, "--num-iters", "1", "--distance-classes", "1", "--value-loss", "distance"])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1 and "--distance-classes 1 is a head" in err
    assert os.listdir(".") == []
    with pytest.raises(ValueError, match="at least 2 classes"):
        PolicyValueNet(distance_classes=1)


BIG = {
    "cube": (["--sims", "100000", "--episodes-per-iter", "1000000", "--max-episode-steps", "10000"],
             "the search trees (--episodes-per-iter x --sims)"),
    "go": (["--simulations", "100000", "--games", "100000"], "the search trees (--games x --simulations)"),
}  # fmt: skip


def test_flags_that_need_more_memory_than_the_machine_are_refused_before_any_work(capsys, game):
    big, what = BIG[game]
    rc, out, err = run(capsys, "--num-iters", "1", *big)
    line = one_error_line(err)
    assert rc == 2 and "TiB of memory" in line and what in line
    assert "Training" not in out and os.listdir(".") == []


def test_the_cube_s_memory_needs_grow_with_its_flags_and_scramble_length():
    args = main.parse_args(TINY)
    Run_State.check_memory(args, 3)  # the tiny run fits anywhere
    with pytest.raises(Run_Files.RunError, match="more than this machine's 1.0 KiB"):
        Run_State.check_memory(args, 3, available=1024)
    args = main.parse_args([*TINY, "--buffer-size", "8"])
    Run_State.check_memory(args, 3, available=200_000)
    with pytest.raises(Run_Files.RunError, match="for the scrambles' moves"):  # a long saved scramble length
        Run_State.check_memory(args, 10_000, available=200_000)


@pytest.mark.parametrize("name", ["2x2", "3x3"])
def test_the_replay_buffer_and_its_check_take_the_puzzle_s_shapes(name):
    puzzle = get_puzzle(name)
    buffer = Run_State.ReplayBuffer(10, name)
    k = puzzle.num_actions
    buffer.extend(np.tile(puzzle.solved, (3, 1)), np.full((3, k), 1 / k, np.float32), np.ones(3))
    assert Run_State.buffer_problem(buffer.state(), puzzle) is None
    assert buffer.sample(np.random.default_rng(0), 2)[0][0].shape == (puzzle.obs_dim,)
    other = get_puzzle("3x3" if name == "2x2" else "2x2")
    assert f"need n x {other.num_stickers} int8" in Run_State.buffer_problem(buffer.state(), other)


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
def test_unusable_output_paths_are_refused_before_any_work(capsys, game, flags, words):
    os.mkdir("folder")
    Path("afile").write_text("x")
    rc, out, err = run(capsys, "--num-iters", "1", *flags)
    assert rc == 2 and words in one_error_line(err) and "Training" not in out
    assert sorted(os.listdir(".")) == ["afile", "folder"]  # nothing written, no hidden ./.train_state.pt


# ---------------------------------------------------------------- issue 28: one run per identity
@pytest.mark.slow
def test_every_name_of_a_live_run_and_its_log_folder_are_refused(capsys, game):
    child = start_child("--num-iters", "1", **{Run_Loop.PAUSE_AFTER_COMMIT_ENV: "1:60"})
    try:
        wait_for(lambda: state_iteration() == 1, timeout=120)
        live = Path("logs/metrics.json").read_bytes() if Path("logs/metrics.json").exists() else None
        os.symlink("m.pt", "alias.pt")
        for name in ("m.pth", "m", "alias.pt", str(Path("m.pt").resolve())):  # one training state, one lock
            rc, _, err = run(capsys, "--checkpoint", name, "--log-dir", "other")
            line = one_error_line(err)
            assert rc == 2 and f"process {child.pid}" in line and "m.train_state.pt.lock'" in line, line
        rc, _, err = run(capsys, "--checkpoint", "n.pt")  # another model, the live run's --log-dir
        line = one_error_line(err)
        assert rc == 2 and "--log-dir 'logs' is in use" in line and "logs/run.lock" in line
        assert not Path("logs/previous").exists() and not Path("n.pt").exists()
        assert (Path("logs/metrics.json").read_bytes() if Path("logs/metrics.json").exists() else None) == live
    finally:
        kill(child)
    rc, out, err = run(capsys, "--checkpoint", "alias.pt", "--num-iters", "2")  # the link's run is m.pt's run
    assert rc == 0 and "Resuming from m.train_state.pt: iteration 2" in out, err
    assert Path("alias.pt").is_symlink() and state_iteration() == 2


@pytest.mark.slow
def test_a_run_killed_before_its_first_iteration_is_not_archived(capsys, monkeypatch, game):
    class Killed(Exception):
        pass

    def killed(*args, **kwargs):
        raise Killed  # what kill -9 leaves: the run's TensorBoard folder and nothing saved

    with monkeypatch.context() as m:
        m.setattr(Run_Loop, "train", killed)
        for _ in range(2):
            with pytest.raises(Killed):
                run(capsys, "--num-iters", "1")
            assert os.listdir("logs") == ["tensorboard"]
    rc, out, err = run(capsys, "--num-iters", "1")
    assert rc == 0 and "Moved the previous run's logs" not in out, err
    assert not Path("logs/previous").exists()
    rc, out, _ = run(capsys, "--num-iters", "1", "--fresh")  # a run that saved something is moved aside
    assert rc == 0 and "Moved the previous run's logs" in out


def test_a_full_disk_while_saving_is_one_sentence(capsys, monkeypatch, game):
    real = os.fdopen

    class Full:
        """A file on a full disk: every write fails (torch.save then raises RuntimeError)."""

        def __init__(self, file):
            self.file = file

        def write(self, data):
            raise OSError(28, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.file, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

    monkeypatch.setattr(os, "fdopen", lambda fd, mode="r", *a, **k: Full(real(fd, mode, *a, **k)))
    rc, _, err = run(capsys, "--num-iters", "1")
    line = one_error_line(err)
    assert rc == 2 and "'m.train_state.pt'" in line and "No space left on device" in line
    assert not list(Path(".").glob("m*.pt")) and not list(Path(".").rglob(".tmp-*"))


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: os.mkfifo("m.pt"), "'m.pt': it is a FIFO (named pipe), not a regular file"),
        (lambda: os.symlink("m.pt", "m.pt"), "'m.pt': it is a loop of symbolic links"),
        (lambda: os.mkdir("m.train_state.pt"), "'m.train_state.pt': it is a directory, not a regular file"),
        (lambda: os.mkdir("m.train_state.pt.lock"), "lock file 'm.train_state.pt.lock': it is a directory"),
        (lambda: os.mkfifo("logs/run.lock") if os.mkdir("logs") is None else None, "'logs/run.lock': it is a FIFO"),
    ],
    ids=["fifo checkpoint", "symlink loop", "state is a folder", "lock is a folder", "log lock is a fifo"],
)
def test_outputs_and_locks_that_are_no_regular_file_are_named(capsys, game, make, words):
    make()
    before = sorted(os.listdir("."))
    rc, out, err = run(capsys, "--num-iters", "1")
    assert rc == 2 and words in one_error_line(err) and "Training" not in out
    assert sorted(os.listdir(".")) == before and not Path("m.train_state.pt").is_file()
