"""The optimal solver against the test vectors: distance counts, example scrambles, rotations,
sampling by distance, invalid cubes, the on-disk cache and the command line.

The table is built once per session into a temporary folder (about a second), so the tests
never touch the user's cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import Optimal_Solver as OS
from conftest import REPO
from Rubik2x2Env import (
    SOLVED_STICKERS,
    apply_moves,
    batch_apply_moves,
    batch_is_solved,
    batch_scramble,
    is_solved,
    parse_moves,
)

VECTOR_PATHS = [REPO / "tests" / "vectors" / "cube2x2.json", REPO.parent / "shared" / "vectors" / "cube2x2.json"]
# Whole-cube rotations as move pairs: on a 2x2, R L' is x, U D' is y, F B' is z.
ROTATION_MOVES = [parse_moves("R L'"), parse_moves("U D'"), parse_moves("F B'")]


@pytest.fixture(scope="session")
def vectors() -> dict:
    path = next((p for p in VECTOR_PATHS if p.exists()), None)
    assert path is not None, f"test vectors not found in {[str(p) for p in VECTOR_PATHS]}"
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("optimal_cache")


@pytest.fixture(scope="session")
def solver(cache_dir) -> OS.OptimalSolver:
    s = OS.OptimalSolver(cache_dir / OS.CACHE_NAME)
    s.table  # the one build of the session
    return s


def example_cubes(vectors) -> tuple[np.ndarray, np.ndarray]:
    ex = vectors["examples"]
    return np.array([e["stickers"] for e in ex], dtype=np.int8), np.array([e["optimal_qtm_length"] for e in ex])


def rotate(cubes: np.ndarray, rng: np.random.Generator, steps: int = 6) -> np.ndarray:
    """Each cube turned by its own random sequence of whole-cube x, y, z rotations."""
    for _ in range(steps):
        which = rng.integers(0, 3, size=len(cubes))
        # Some cubes skip a step, so odd and even numbers of quarter rotations both occur.
        skip = rng.random(len(cubes)) < 0.5
        for k in range(2):
            turned = batch_apply_moves(cubes, np.array([ROTATION_MOVES[w][k] for w in which]))
            cubes = np.where(skip[:, None], cubes, turned)
    return cubes


def test_distance_counts_match_vectors(solver, vectors, cache_dir):
    expected = vectors["qtm_distance_counts_fixed_orientation"]
    assert solver.distance_counts() == expected
    assert [solver.count_at_distance(d) for d in range(16)] == expected + [0]
    assert sum(expected) == OS.NUM_STATES
    # The build left exactly the table in the cache folder (no temp file behind).
    assert [p.name for p in cache_dir.iterdir()] == [OS.CACHE_NAME]
    on_disk = np.load(cache_dir / OS.CACHE_NAME)
    assert on_disk.dtype == np.uint8 and np.array_equal(on_disk, solver.table)


def test_examples_distance_and_solution(solver, vectors):
    cubes, lengths = example_cubes(vectors)
    assert np.array_equal(solver.batch_distance(cubes), lengths)
    for cube, length in zip(cubes, lengths):
        assert solver.distance(cube) == length
        assert solver.distance(cube.reshape(6, 2, 2)) == length
        moves = solver.solve(cube)
        assert len(moves) == length and all(0 <= a < 12 for a in moves)
        assert batch_is_solved(apply_moves(cube, moves)[None])[0]


def test_rotated_cubes_keep_their_distance(solver, vectors):
    rng = np.random.default_rng(1)
    cubes, lengths = example_cubes(vectors)
    scrambled, _ = batch_scramble(rng, 200, 15)
    cubes = np.concatenate([cubes, scrambled])
    lengths = np.concatenate([lengths, solver.batch_distance(scrambled)])
    for _ in range(3):
        turned = rotate(cubes, rng)
        assert np.array_equal(solver.batch_distance(turned), lengths)
    # Every orientation of the solved cube is at distance 0, and all 24 are reached.
    solved = rotate(np.tile(SOLVED_STICKERS, (500, 1)), rng)
    assert len(np.unique(solved, axis=0)) == 24
    assert batch_is_solved(solved).all() and not solver.batch_distance(solved).any()
    # A solution is for the cube as given, in its own orientation.
    for cube, length in zip(turned[:30], lengths[:30]):
        moves = solver.solve(cube)
        assert len(moves) == length
        assert is_solved(apply_moves(cube, moves))


def test_scrambles_bound_the_distance(solver):
    # k quarter turns reach distance <= k, of the same parity (each turn is an odd
    # permutation of the corners).
    rng = np.random.default_rng(2)
    for k in (0, 1, 2, 5, 9, 30):
        cubes, _ = batch_scramble(rng, 300, k)
        d = solver.batch_distance(cubes)
        assert (d <= min(k, OS.MAX_DISTANCE)).all() and ((d - k) % 2 == 0).all()


def test_random_cubes_at_distance(solver):
    rng = np.random.default_rng(3)
    for d in range(OS.MAX_DISTANCE + 1):
        n = min(40, solver.count_at_distance(d))
        cubes = solver.random_cubes_at_distance(rng, d, n)
        assert cubes.shape == (n, 24) and cubes.dtype == np.int8
        assert (solver.batch_distance(cubes) == d).all()
        assert len(np.unique(cubes, axis=0)) == n  # distinct positions without replacement
    # All 276 antipodes, or more of them with replacement only.
    assert len(np.unique(solver.random_cubes_at_distance(rng, 14, 276), axis=0)) == 276
    with pytest.raises(ValueError, match="replace=True"):
        solver.random_cubes_at_distance(rng, 14, 277)
    assert (solver.batch_distance(solver.random_cubes_at_distance(rng, 14, 1000, replace=True)) == 14).all()
    with pytest.raises(ValueError):
        solver.random_cubes_at_distance(rng, 15, 1)
    # Uniform: the 6 positions at distance 1 are drawn about equally often.
    draws = solver.random_cubes_at_distance(rng, 1, 6000, replace=True)
    _, counts = np.unique(draws, axis=0, return_counts=True)
    assert len(counts) == 6 and counts.min() > 850 and counts.max() < 1150
    # Same seed, same cubes.
    a = solver.random_cubes_at_distance(np.random.default_rng(7), 9, 5)
    assert np.array_equal(a, solver.random_cubes_at_distance(np.random.default_rng(7), 9, 5))


def test_invalid_cubes_raise(solver):
    solved = SOLVED_STICKERS.copy()
    a, b, c = OS._model().corners[0]  # the three stickers of one corner, in cyclic order
    home_d, home_l, home_b = OS._model().home
    extra_colour, out_of_range, mirrored, twisted, mirrored_home = (solved.copy() for _ in range(5))
    extra_colour[a] = 1
    out_of_range[a] = 9
    mirrored[[b, c]] = solved[[c, b]]
    twisted[[a, b, c]] = solved[[c, a, b]]
    mirrored_home[[home_l, home_b]] = solved[[home_b, home_l]]
    cases = [
        (extra_colour, "colour"),
        (out_of_range, "colour"),
        (mirrored, "corners"),
        (twisted, "twisted"),
        (mirrored_home, "D, L, B"),
    ]
    for cube, why in cases:
        with pytest.raises(ValueError, match=why):
            solver.distance(cube)
        with pytest.raises(ValueError, match=why):
            solver.solve(cube)
    with pytest.raises(ValueError, match="24 stickers"):
        solver.distance(np.zeros(5, dtype=np.int8))
    with pytest.raises(ValueError, match="cube 1 of the batch"):
        solver.batch_distance(np.stack([solved, twisted]))


@pytest.mark.parametrize("damage", ["missing", "garbage", "truncated", "dtype", "counts", "shuffled", "swapped"])
def test_damaged_cache_is_rebuilt(solver, tmp_path, damage):
    path = tmp_path / OS.CACHE_NAME
    good = solver.table
    rng = np.random.default_rng(0)
    if damage == "garbage":
        path.write_bytes(b"not a numpy file")
    elif damage == "truncated":
        np.save(path, good)
        path.write_bytes(path.read_bytes()[:1000])
    elif damage == "dtype":
        np.save(path, good.astype(np.int16))
    elif damage == "counts":
        np.save(path, np.zeros_like(good))
    elif damage == "shuffled":  # the right counts, solved at index 0, every other entry moved
        np.save(path, np.concatenate([good[:1], rng.permutation(good[1:])]))
    elif damage == "swapped":  # one distance-13 and one distance-14 position trade places
        bad = good.copy()
        i, j = rng.choice(np.flatnonzero(good == 13)), rng.choice(np.flatnonzero(good == 14))
        bad[[i, j]] = bad[[j, i]]
        np.save(path, bad)
    table, built = OS.load_or_build(path)
    assert built and np.array_equal(table, good)
    assert np.array_equal(np.load(path), good)
    assert [p.name for p in tmp_path.iterdir()] == [OS.CACHE_NAME]


def test_breadth_first_check_names_what_is_wrong(solver):
    assert OS._problem(solver.table) is None
    far = solver.table.copy()
    far[np.flatnonzero(far == 1)[0]] = 3  # a neighbour of solved said to be 3 moves out
    assert OS._breadth_first_problem(far) == "distance that one move changes by more than one"
    stuck = solver.table.copy()
    stuck[np.flatnonzero(stuck == 14)[0]] = 12  # within one of its neighbours (all 13), none closer
    assert OS._breadth_first_problem(stuck) == "position with no neighbour one move closer"


def test_valid_cache_is_loaded_not_rebuilt(solver, cache_dir, monkeypatch):
    monkeypatch.setattr(OS, "build_table", lambda: pytest.fail("a valid cache was rebuilt"))
    monkeypatch.setenv(OS.CACHE_ENV, str(cache_dir))
    assert OS.default_cache_path() == cache_dir / OS.CACHE_NAME
    assert OS.OptimalSolver().distance_counts() == solver.distance_counts()


def test_import_does_no_work_and_writes_nothing(tmp_path):
    cache = tmp_path / "cache"
    code = (
        "import Optimal_Solver as O\n"
        "s = O.get_solver()\n"
        "assert s is O.get_solver() and s._table is None\n"
        "assert O._model.cache_info().currsize == 0\n"
    )
    env = {**os.environ, OS.CACHE_ENV: str(cache), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, check=True)
    assert list(tmp_path.iterdir()) == []


def run_cli(cache_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, OS.CACHE_ENV: str(cache_dir), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, str(REPO / "Optimal_Solver.py"), *args], env=env, capture_output=True, text=True
    )


@pytest.mark.slow
def test_cli(solver, cache_dir):
    out = run_cli(cache_dir, "--scramble", "R U F'")
    assert out.returncode == 0, out.stderr
    assert "optimal length: 3" in out.stdout and "solution: F U' R'" in out.stdout
    out = run_cli(cache_dir, "--scramble", "R U X")
    assert out.returncode == 2 and "unknown move 'X'" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert run_cli(cache_dir, "--help").returncode == 0
    assert run_cli(cache_dir).returncode == 2


def test_random_cubes_are_uniform_over_all_positions(solver):
    cubes = solver.random_cubes(np.random.default_rng(4), 20000)
    assert cubes.shape == (20000, 24) and cubes.dtype == np.int8
    # Real cubes (batch_distance raises otherwise), with distances in the proportions of the whole table.
    share = np.bincount(solver.batch_distance(cubes), minlength=15) / len(cubes)
    expected = np.array(solver.distance_counts()) / OS.NUM_STATES
    assert np.abs(share - expected).max() < 0.015
    assert np.array_equal(solver.random_cubes(np.random.default_rng(4), 5), cubes[:5])
