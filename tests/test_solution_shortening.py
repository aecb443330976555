"""Solution_Shortening: the balls against the known quarter-turn counts, shortcuts against a plain BFS."""

from __future__ import annotations

import numpy as np
import pytest

from cube.Puzzles import get_puzzle
from cube.Solution_Shortening import ball, sequence, shorten

P3 = get_puzzle("3x3")
DETOUR = [2, 0, 3, 1, 0, 2, 1, 3]  # R U R' U' U R U' R': the identity in 8 moves


def plain_distance(puzzle, cube, limit: int) -> int:
    """Moves from ``cube`` to solved by breadth-first search over stickers as tuples (the reference)."""
    seen, frontier = {tuple(cube)}, [np.asarray(cube, np.int8)]
    for depth in range(limit + 1):
        if any(puzzle.is_solved(c[None])[0] for c in frontier):
            return depth
        nxt = []
        for c in frontier:
            for a in range(puzzle.num_actions):
                child = puzzle.apply(c[None], np.array([a]))[0]
                if tuple(child) not in seen:
                    seen.add(tuple(child))
                    nxt.append(child)
        frontier = nxt
    raise AssertionError("farther than the limit")


def test_ball_has_the_known_quarter_turn_counts_and_its_sequences_reach_its_positions():
    perms, depth, parent, move = ball("3x3", 3)
    assert np.bincount(depth).tolist() == [1, 12, 114, 1068]  # positions at 0..3 quarter turns of the 3x3
    for node in np.random.default_rng(0).choice(len(perms), 50, replace=False):
        moves = sequence(parent, move, int(node))
        assert len(moves) == depth[node]
        assert np.array_equal(P3.replay(P3.solved, moves), P3.solved[perms[node]])


@pytest.mark.slow
@pytest.mark.parametrize("puzzle_name", ["3x3", "2x2"])
def test_shorten_gives_the_optimal_length_of_paths_within_its_reach(puzzle_name):
    puzzle, rng = get_puzzle(puzzle_name), np.random.default_rng(1)
    for _ in range(6):
        scramble = rng.integers(0, 12, 4).tolist()
        cube = puzzle.replay(puzzle.solved, scramble)
        undo = [a ^ 1 for a in reversed(scramble)]
        solution = undo[:2] + DETOUR + undo[2:]  # 12 moves; the ends at most 4 apart
        short = shorten(cube, solution, puzzle, radius=2)
        assert puzzle.is_solved(puzzle.replay(cube, short)[None])[0]
        assert len(short) == plain_distance(puzzle, cube, 4)


def test_shorten_keeps_a_solution_with_no_detour_and_radius_zero_changes_nothing():
    scramble = [0, 2, 4, 6, 8, 10, 0, 2]
    cube = P3.replay(P3.solved, scramble)
    undo = [a ^ 1 for a in reversed(scramble)]
    assert shorten(cube, undo, P3, radius=3) == undo  # no shorter path: nothing to replace
    assert shorten(cube, undo[:4] + DETOUR + undo[4:], P3, radius=0) == undo[:4] + DETOUR + undo[4:]
    assert shorten(cube, undo[:4] + DETOUR + undo[4:], P3, radius=4) == undo
