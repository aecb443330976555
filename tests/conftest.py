"""Shared test setup: import paths and the cube test vectors.

The vectors live in ``../shared/vectors/cube2x2.json`` (and ``cube3x3.json``) beside the
repository (CI clones the repo with ``shared`` next to it); ``tests/vectors/`` holds copies for
checkouts without it. A test module may define its own ``vectors`` fixture (test_optimal_solver does):
pytest then uses that one for the module.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# One thread a process when pytest-xdist runs the suite on several workers (``-n 2``): each worker and
# every script a test starts would otherwise take a thread per core, twice as many threads as cores.
# An explicit OMP_NUM_THREADS wins (CI's second pass sets one, docs/reproducibility.md).
if os.environ.get("PYTEST_XDIST_WORKER") and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
for folder in (REPO, TESTS):  # the flat project modules, and reference_mcts
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def main_in_process(folder, *argv) -> subprocess.CompletedProcess:
    """``python main.py ARGV`` run from ``folder`` inside this process (``main.main``): its exit status,
    stdout and stderr as ``subprocess.run`` gives them. A new process spends ~5 s importing torch (and the
    optimizer's torch._dynamo) for ~1 s of tiny training; the script's own wrapper (exit statuses,
    signals, kills, a closed stdout) is tested in processes (tests/test_cli_sweep.py,
    tests/test_main_reliability.py, tests/test_interrupts.py)."""
    import main

    out, err, cwd = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main.main([str(arg) for arg in argv])
            except SystemExit as exc:  # argparse's usage errors
                status = exc.code
    finally:
        os.chdir(cwd)
    return subprocess.CompletedProcess(["main.py", *argv], status, out.getvalue(), err.getvalue())


VECTOR_PATHS = (REPO.parent / "shared" / "vectors" / "cube2x2.json", TESTS / "vectors" / "cube2x2.json")
VECTOR_PATHS_3X3 = tuple(p.with_name("cube3x3.json") for p in VECTOR_PATHS)


def load_vectors(paths=VECTOR_PATHS) -> dict:
    path = next((p for p in paths if p.is_file()), None)
    if path is None:
        raise FileNotFoundError(f"cube test vectors not found in {[str(p) for p in paths]}")
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def vectors() -> dict:
    return load_vectors()


@pytest.fixture(scope="session")
def vectors3x3() -> dict:
    return load_vectors(VECTOR_PATHS_3X3)


def make_checkpoint(path: Path, neutral: bool = False) -> Path:
    """A throwaway model file. ``neutral`` zeroes both heads (uniform priors, value 0): with
    it a short search always finds the move that solves a 1-move scramble, whereas a random
    net's saturated values can make the original's search miss it."""
    import torch

    from Policy_Value_Net import PolicyValueNet
    from run.Checkpoints import save_checkpoint

    torch.manual_seed(0)
    net = PolicyValueNet()
    if neutral:
        with torch.no_grad():
            for head in (net.policy_head, net.value_head):
                head.weight.zero_()
                head.bias.zero_()
    save_checkpoint(net, str(path))
    return path


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    """``random`` and ``neutral`` models, and a ``corrupt`` file that only starts like a pickle."""
    folder = tmp_path_factory.mktemp("models")
    paths = {name: make_checkpoint(folder / f"{name}.pt", name == "neutral") for name in ("random", "neutral")}
    paths["corrupt"] = folder / "corrupt.pt"
    paths["corrupt"].write_bytes(b"\x80\x04 not a checkpoint")
    return paths


@pytest.fixture(scope="module")
def isolated_solver_cache(tmp_path_factory):
    """The optimal solver's table in a temp folder (a copy of the user's cache when there is
    one, else built in about a second), so tests never write the user's cache."""
    import shutil

    import Optimal_Solver as OS

    folder = tmp_path_factory.mktemp("solver_cache")
    user_cache = OS.default_cache_path()
    if user_cache.is_file():
        shutil.copy(user_cache, folder / OS.CACHE_NAME)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(OS.CACHE_ENV, str(folder))
        OS.get_solver.cache_clear()
        yield folder
    OS.get_solver.cache_clear()


@pytest.fixture(scope="module")
def torch_one_thread():
    """Run a module's small forwards on one thread: on a busy 2-core machine, torch's second
    thread makes batch-1 forwards >10x slower. Restored after the module."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``cuda`` skip on a machine without a CUDA GPU."""
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
