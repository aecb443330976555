"""Workers.py (issue 17): --workers N on a local process pool and on Ray give the same numbers,
evaluation with workers equals the in-process run, resume works with workers, a missing Ray is
one sentence, and the default run never imports Ray. Tiny settings: this runs on 2 loaded cores.
The Ray tests skip when Ray is absent (``pip install -r requirements-ray.txt``)."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import evaluate
import main
from conftest import REPO
from proc_tree import alive, children, command_line, needs_proc, wait_for
from run import Workers

ROOT = str(REPO)
TINY = [
    "--episodes-per-iter", "4", "--sims", "8", "8", "8", "--epochs", "1", "--batch-size", "8",
    "--min-buffer-batches", "1", "--sample-batches", "2", "--max-episode-steps", "4", "--window", "2",
    "--solve-threshold", "0.0", "--seed", "5", "--no-progress", "--skip-eval",
]  # fmt: skip
LOOKAHEAD = ["--targets", "lookahead", "--states-per-iter", "40", "--double-estimate"]
SCRAMBLES = "R U\nF' R2 U\nU' F R U2\nR U F' D\nF\nR U R' U' F2\n"


def train(folder, iters, *extra):
    os.makedirs(folder, exist_ok=True)
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        assert main.main(["--checkpoint", "m.pt", "--log-dir", "logs", *TINY, "--num-iters", str(iters), *extra]) == 0
    finally:
        os.chdir(cwd)
    with open(os.path.join(folder, "logs", "metrics.json")) as f:
        metrics = json.load(f)
    return metrics, torch.load(os.path.join(folder, "m.pt"), weights_only=True)


def solve(folder, checkpoint, *extra):
    os.makedirs(folder, exist_ok=True)
    scrambles = os.path.join(folder, "s.txt")
    with open(scrambles, "w") as f:
        f.write(SCRAMBLES)
    out = os.path.join(folder, "out.json")
    args = ["--checkpoint", str(checkpoint), "--scrambles", scrambles, "--out", out, "--sims", "16"]
    assert evaluate.main([*args, "--max-steps", "6", "--no-progress", "--device", "cpu", *extra]) == 0
    with open(out) as f:  # everything but the timings
        return [{k: v for k, v in r.items() if k != "seconds"} for r in json.load(f)]


def same_weights(a, b) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def local2(tmp_path_factory, checkpoints):
    """Runs with two local workers, shared by the tests below (each costs seconds here), each made the first
    time a test asks for it: pytest-xdist sets a module's fixture up once per worker, and a worker that runs
    only one of these tests needs only its run."""
    root = tmp_path_factory.mktemp("local2")
    runs = {
        "selfplay": lambda: train(root / "selfplay", 2, "--workers", "2"),
        "lookahead": lambda: train(root / "lookahead", 2, "--workers", "2", *LOOKAHEAD),
        "solve": lambda: solve(root / "solve", checkpoints["random"], "--workers", "2"),
    }

    class Runs(dict):
        def __missing__(self, name):
            self[name] = runs[name]()
            return self[name]

    return Runs()


# ---------------------------------------------------------------- pieces
def test_split_counts_and_worker_streams():
    assert Workers.split_counts(7, 3) == [3, 2, 2] and Workers.split_counts(1, 2) == [1, 0]
    a, b = Workers.worker_rng(5, 3, 0).integers(1 << 30, size=4), Workers.worker_rng(5, 3, 1).integers(1 << 30, size=4)
    assert not np.array_equal(a, b)
    assert np.array_equal(a, Workers.worker_rng(5, 3, 0).integers(1 << 30, size=4))
    assert Workers.from_args(main.parse_args([])) is None  # the default: no pool, the engine as before


def test_missing_ray_is_one_sentence_and_exit_2(monkeypatch, capsys, tmp_path, checkpoints):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    monkeypatch.chdir(tmp_path)
    assert main.main([*TINY, "--num-iters", "1", "--backend", "ray"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: " + Workers.RAY_MISSING]
    assert evaluate.main(["--checkpoint", str(checkpoints["random"]), "--backend", "ray", "--runs", "1"]) == 2
    assert capsys.readouterr().err.strip() == "error: " + Workers.RAY_MISSING
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_sweep_refuses_workers(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main.main([*TINY, "--targets", "sweep", "--canonical-symmetry", "--workers", "2"]) == 2
    assert "--targets sweep" in capsys.readouterr().err


@pytest.mark.slow
def test_default_runs_never_import_ray(tmp_path, checkpoints):
    code = (
        "import sys, main, evaluate\n"
        f"assert main.main({['--checkpoint', 'm.pt', '--log-dir', 'logs', *TINY, '--num-iters', '1']!r}) == 0\n"
        f"assert evaluate.main({['--checkpoint', str(checkpoints['random']), '--runs', '1', '--max-len', '2']!r}"
        " + ['--sims', '4', '--max-steps', '3', '--no-progress']) == 0\n"
        "print('RAY', 'ray' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": ROOT},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "RAY False" in out.stdout


# ---------------------------------------------------------------- local workers
@pytest.mark.slow
def test_evaluate_with_two_workers_equals_one(tmp_path, checkpoints, local2):
    one = solve(tmp_path, checkpoints["random"])
    assert [r["solution"] for r in one] == [r["solution"] for r in local2["solve"]]
    assert one == local2["solve"]


@pytest.mark.slow
def test_resume_with_workers_gives_the_uninterrupted_run(tmp_path, local2):
    metrics, weights = local2["selfplay"]
    train(tmp_path, 1, "--workers", "2")
    resumed, resumed_weights = train(tmp_path, 2, "--workers", "2")
    assert resumed["iterations"] == metrics["iterations"] == [1, 2]
    assert resumed["solve_rates"] == metrics["solve_rates"]
    assert resumed["losses"] == pytest.approx(metrics["losses"], rel=1e-5)
    assert same_weights(resumed_weights, weights)


# ---------------------------------------------------------------- Ray (a local cluster of 2 CPUs)
# Skipped before any fixture is set up: without Ray the local2 runs they compare with would be
# wasted (tens of seconds) only to skip when local_ray finds no Ray.
needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="Ray is not installed (requirements-ray.txt)"
)


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": ROOT}})
    yield ray
    ray.shutdown()


@needs_ray
@pytest.mark.slow
@pytest.mark.parametrize("targets", ["selfplay", "lookahead"])
def test_ray_workers_give_the_numbers_of_local_workers(tmp_path, local_ray, local2, targets):
    extra = LOOKAHEAD if targets == "lookahead" else []
    metrics, weights = train(tmp_path, 2, "--workers", "2", "--backend", "ray", *extra)
    local_metrics, local_weights = local2[targets]
    assert metrics["solve_rates"] == local_metrics["solve_rates"] and metrics["losses"] == local_metrics["losses"]
    assert same_weights(weights, local_weights)


@needs_ray
def test_ray_evaluation_equals_local(tmp_path, checkpoints, local_ray, local2):
    assert solve(tmp_path, checkpoints["random"], "--workers", "2", "--backend", "ray") == local2["solve"]


GO_TINY = "--game go5 --games 3 --simulations 4 --train-steps 2 --batch-size 8 --filters 8 --blocks 1 --seed 2".split()


@needs_ray
def test_go_ray_workers_give_the_numbers_of_one_process(tmp_path, local_ray):
    for name, extra in (("one", []), ("ray", ["--workers", "2", "--backend", "ray"])):
        argv = [*GO_TINY, "--num-iters", "2", "--checkpoint", str(tmp_path / f"{name}.pt")]
        assert main.main([*argv, "--log-dir", str(tmp_path / f"{name}_logs"), *extra]) == 0
    one, ray = (torch.load(tmp_path / f"{n}.pt", weights_only=True) for n in ("one", "ray"))
    assert same_weights(one, ray)


@pytest.mark.slow
@needs_proc
def test_killing_a_go_driver_ends_its_workers_and_frees_its_stdout(tmp_path):
    """Issue 47, item 13: kill -9 of a Go training driver with --workers 2 (local processes): the workers and
    multiprocessing's resource tracker end too, and the driver's stdout reaches its end (a `| tee` ends)."""
    go = "--game go5 --games 2 --simulations 4 --train-steps 2 --batch-size 8 --filters 8 --blocks 1 --gate-games 0"
    cmd = [sys.executable, os.path.join(ROOT, "main.py"), *go.split(), "--buffer-min-games", "2", "--workers", "2"]
    cmd += ["--num-iters", "100000", "--checkpoint", str(tmp_path / "m.pt"), "--log-dir", str(tmp_path / "logs")]
    driver = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def started() -> list[int] | None:
        """The driver's children (the workers and the resource tracker) once both workers run."""
        found = children(driver.pid)
        return found if sum("spawn_main" in command_line(p) for p in found) == 2 else None

    workers = wait_for(started, timeout=300, what="two workers")
    driver.kill()
    driver.communicate(timeout=120)  # returns at the end of stdout: when every process holding it has ended
    wait_for(lambda: not any(map(alive, workers)), timeout=60, what="the workers and the resource tracker to end")
