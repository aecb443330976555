"""``End_Table``: every position near solved and its exact distance, and the beam that finishes from it.

The tables against the known distance counts (the 2x2's from the shared vectors, the 3x3's from
Rokicki's quarter-turn counts), each lookup against the optimal solver, each finish replayed; the beam
with ``ends`` against the beam without on many value functions: never a longer solution, never more
states (``End_Table``'s argument), and the 3x3's views through ``Solvers.solve_cubes``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cube import Solvers as S
from cube import Tree_Searches as T
from cube.End_Table import MAX_END_RADIUS, end_table, position_keys
from cube.Puzzles import get_puzzle
from Optimal_Solver import get_solver
from Rubik2x2Env import NO_ACTION

P2, P3 = get_puzzle("2x2"), get_puzzle("3x3")
#: Positions of the 3x3 at 0..5 quarter turns from solved (Rokicki et al., cube20.org).
QTM_COUNTS_3X3 = [1, 12, 114, 1068, 10011, 93840]


@pytest.fixture(scope="module")
def solver(isolated_solver_cache):
    return get_solver()


@pytest.fixture(scope="module")
def near_and_far(solver) -> tuple[np.ndarray, np.ndarray]:
    """2x2 positions at every distance 1..12 (two each), and their distances."""
    rng = np.random.default_rng(5)
    cubes = np.concatenate([solver.random_cubes_at_distance(rng, d, 2) for d in range(1, 13)])
    return cubes, np.repeat(np.arange(1, 13), 2)


def test_tables_hold_every_position_within_the_radius_once(vectors):
    counts = np.bincount(end_table("2x2", 7).distances)
    assert counts.tolist() == vectors["qtm_distance_counts_fixed_orientation"][:8]
    three = end_table("3x3", 5)
    assert np.bincount(three.distances).tolist() == QTM_COUNTS_3X3
    assert np.all(np.diff(three.keys) > 0)  # sorted, no key twice
    assert end_table(P3, 5) is three  # built once a process
    # The bit filter in front of the keys turns away only keys the table does not hold
    cubes = np.concatenate(
        [P3.random_states(np.random.default_rng(0), 20_000), P3.scramble(np.random.default_rng(1), 50, 5)[0]]
    )
    keys = np.concatenate([position_keys(P3, cubes), three.keys[::97]])
    at = np.minimum(np.searchsorted(three.keys, keys), len(three.keys) - 1)
    assert np.array_equal(three.lookup(keys), np.where(three.keys[at] == keys, three.distances[at], -1))
    assert (three.lookup(keys) >= 0).sum() == 50 + len(three.keys[::97])
    for bad in (-1, MAX_END_RADIUS + 1):
        with pytest.raises(ValueError, match="radius"):
            end_table("2x2", bad)


@pytest.mark.parametrize("radius", [0, 4, 7])
def test_lookup_is_the_optimal_distance_and_finish_walks_it(near_and_far, solver, radius):
    cubes, distances = near_and_far
    table = end_table("2x2", radius)
    found = table.lookup(position_keys(P2, cubes))
    assert np.array_equal(found, np.where(distances <= radius, distances, -1))
    for cube, d in zip(cubes[distances <= radius], distances[distances <= radius]):
        moves = table.finish(cube, int(d))
        assert len(moves) == d and S.verify(cube, moves)


def test_3x3_finish_replays_scrambles_of_up_to_the_radius():
    table, rng = end_table("3x3", 5), np.random.default_rng(2)
    for k in range(6):
        cubes, _ = P3.scramble(rng, 8, k)
        found = table.lookup(position_keys(P3, cubes))
        assert np.all((found >= 0) & (found <= k)) and np.all(found % 2 == k % 2)  # a move flips parity
        for cube, d in zip(cubes, found):
            moves = table.finish(cube, int(d))
            assert len(moves) == d and S.verify(cube, moves, P3)


def test_a_key_that_names_a_far_position_finishes_nothing(near_and_far, solver):
    """A hash collision: a far position's key in the table, claiming it is a move from solved."""
    cubes, distances = near_and_far
    far = cubes[distances == 12][:1]
    table = end_table("2x2", 3)
    keys = np.concatenate([table.keys, position_keys(P2, far)])
    order = np.argsort(keys)
    fake = dataclasses.replace(
        table, keys=keys[order], distances=np.append(table.distances, 1)[order], bits=np.full_like(table.bits, 255)
    )
    assert fake.lookup(position_keys(P2, far))[0] == 1
    assert fake.finish(far[0], 1) is None and fake.nearest(far, position_keys(P2, far)) is None
    r = T.beam(far[0], lambda c: 1 - 0.03 * solver.batch_distance(c), beam_width=4, ends=fake)
    assert r.solved and len(r.moves) == 12  # the beam goes on past the false hit, exactly


def beam_pairs(cubes, last, count, **options):
    """The same beams without and with the end table of radius 4."""
    return [
        S.solve_cubes("beam", cubes, last=last, count=count, ends=ends, **options) for ends in (0, 4)
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("width", [1, 16])
def test_the_ends_never_lengthen_a_beam_and_stop_it_sooner(near_and_far, solver, width):
    cubes, distances = near_and_far
    last, count = np.full(len(cubes), NO_ACTION), np.zeros(len(cubes), int)
    last[1::4], count[1::4] = 5, 1
    noise = np.random.default_rng(3).uniform(0.0, 1.0, 3_674_160).astype(np.float32)  # functions of the position

    def logits(c):
        return noise[(solver.index(c)[:, None] + 7919 * np.arange(12)) % len(noise)]

    for options in (
        dict(value_fn=lambda c: noise[solver.index(c)]),
        dict(value_fn=lambda c: 1 - 0.03 * solver.batch_distance(c) + 0.02 * noise[solver.index(c)]),
        dict(value_fn=lambda c: noise[solver.index(c)], policy_fn=logits, beam_rank="mixed"),
    ):
        plain, ended = beam_pairs(cubes, last, count, beam_width=width, max_moves=24, **options)
        for cube, a, b, d in zip(cubes, plain, ended, distances):
            assert b.solved == S.verify(cube, b.moves) and b.nodes <= a.nodes
            assert b.solved or not a.solved
            if a.solved:
                assert len(b.moves) <= len(a.moves)
            if d <= 4:  # within the radius at the root: optimal, no state generated
                assert (len(b.moves), b.nodes) == (d, 0)
        # and sooner in all: fewer states over the cubes (those within the radius generate none)
        assert sum(b.nodes for b in ended) < sum(a.nodes for a in plain)


def test_3x3_views_with_ends_through_solve_cubes():
    rng = np.random.default_rng(4)
    cubes = np.concatenate([P3.scramble(rng, 2, k)[0] for k in (3, 7, 9)])

    def value_fn(c):  # seed 003's hand score: a function of the position
        return T.seed_heuristic(c, 0, P3).astype(np.float32)

    options = dict(value_fn=value_fn, beam_width=32, views=4, max_moves=30, max_nodes=400_000, puzzle=P3)
    plain, ended = (S.solve_cubes("beam", cubes, ends=ends, **options) for ends in (0, 5))
    assert all(r.solved == S.verify(c, r.moves, P3) for c, r in zip(cubes, ended))
    assert all(b.solved and len(b.moves) <= len(a.moves) for a, b in zip(plain, ended) if a.solved)
    assert sum(b.nodes for b in ended) < sum(a.nodes for a in plain)
    assert [len(r.moves) for r in ended[:2]] == [3, 3] and ended[0].nodes == 0


def test_lockstep_groups_keep_a_cubes_views_together(monkeypatch):
    sizes = []
    real = T._lockstep

    def spy(start, n, fn, chunk, siblings=None):
        sizes.append(chunk)
        return real(start, n, fn, chunk, siblings)

    monkeypatch.setattr(T, "_lockstep", spy)
    cubes = P3.scramble(np.random.default_rng(1), 3, 4)[0]
    T.beam_lockstep(np.repeat(cubes, 7, axis=0), lambda c: np.zeros(len(c), np.float32), beam_width=10,
                    puzzle=P3, siblings=np.repeat(np.arange(3), 7), chunk=10)  # fmt: skip
    T.beam_lockstep(cubes, lambda c: np.zeros(len(c), np.float32), beam_width=10, puzzle=P3, chunk=10)
    assert sizes == [7, 10]


def test_the_flag():
    parser = S.Cli.ArgumentParser()
    S.add_solver_arguments(parser)
    assert S.options_from_args(parser.parse_args(["--ends", "6"])).ends == 6
    assert S.options_from_args(parser.parse_args([])).ends == 0
    for bad in ("-1", str(MAX_END_RADIUS + 1), "x"):
        with pytest.raises(SystemExit) as stop:
            parser.parse_args(["--ends", bad])
        assert stop.value.code == 2
