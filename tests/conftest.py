"""Shared test setup: import paths and the cube test vectors.

The vectors live in ``../shared/vectors/cube2x2.json`` beside the repository (CI clones the
repo with ``shared`` next to it); ``tests/vectors/cube2x2.json`` is a copy for checkouts
without it. A test module may define its own ``vectors`` fixture (test_optimal_solver does):
pytest then uses that one for the module.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
for folder in (REPO, TESTS):  # the flat project modules, and reference_mcts
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

VECTOR_PATHS = (REPO.parent / "shared" / "vectors" / "cube2x2.json", TESTS / "vectors" / "cube2x2.json")


def load_vectors() -> dict:
    path = next((p for p in VECTOR_PATHS if p.is_file()), None)
    if path is None:
        raise FileNotFoundError(f"cube test vectors not found in {[str(p) for p in VECTOR_PATHS]}")
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def vectors() -> dict:
    return load_vectors()


@pytest.fixture(scope="module")
def torch_one_thread():
    """Run a module's small forwards on one thread: on a busy 2-core machine, torch's second
    thread makes batch-1 forwards >10x slower. Restored after the module."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
