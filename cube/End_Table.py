"""The exact distance to solved of every position near it, so a beam finishes exactly (``--ends R``).

``end_table(puzzle, R)`` finds every position within ``R`` quarter turns of solved by breadth-first
search over the 12 moves and keeps, sorted, their keys (``Tree_Searches.beam_keys`` by position: on
the 2x2 a position up to a whole-cube turn, which is solved in any orientation; on the 3x3, whose
centres never move, the state itself) and their distances. On the 3x3, ``R = 6`` is 983,926 positions
(1, 12, 114, 1,068, 10,011, 93,840 and 878,880 at distances 0-6; 9 MB), built in a few seconds.

Why a beam with it is never longer and stops sooner (``Tree_Searches._beam_search``): each depth,
every child the beam generated is looked up; at the first depth ``k`` where some child is in the
table, no child of the depth before was, so every state the beam held at depth ``k - 1`` is more than
``R`` moves from solved, and any solution the plain beam would go on to find is at least
``k - 1 + R + 1`` moves long. The child found is exactly ``R`` away (one move from a state beyond
``R``), and ``finish`` walks it down the table in ``R`` moves: a solution of ``k + R``, at least
``R`` depths (those the network reads at full width) before the plain beam could end.

A key is a 64-bit hash of the position's exact key, so a collision could name a position the table
does not hold; ``finish`` then finds no move down and returns None (the beam goes on), and every
solution is replayed on its cube besides.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from cube.Puzzles import Puzzle, beam_keys, get_puzzle

#: Radii ``--ends`` takes: 8 would be 68 million positions on the 3x3 (BFS: minutes, gigabytes).
MAX_END_RADIUS = 7
#: Bits of the filter in front of the sorted keys (16 MB): a key's low bits, set for every table key.
FILTER_BITS = 1 << 27


def position_keys(puzzle: Puzzle, cubes: np.ndarray) -> np.ndarray:
    """``(B,)`` int64: the table's keys, the beam's keys by position (``Puzzles.beam_keys``)."""
    return beam_keys(puzzle, True, cubes)


@dataclass(frozen=True, eq=False)
class EndTable:
    """Every position within ``radius`` moves of solved: ``keys`` sorted, ``distances`` beside them, and
    ``bits``, a filter of ``FILTER_BITS`` bits set at each key's low bits: a beam's children are almost
    all far from solved, and one bit each (16 MB, mostly in cache) turns nearly all of them away before
    the binary search over the keys, which costs a cache miss a step."""

    puzzle: Puzzle
    radius: int
    keys: np.ndarray
    distances: np.ndarray
    bits: np.ndarray

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """``(B,)`` int8: each key's distance to solved, -1 where it is more than ``radius`` moves away."""
        found = np.full(len(keys), -1, np.int8)
        low = keys & (FILTER_BITS - 1)
        maybe = np.flatnonzero((self.bits[low >> 3] >> (low & 7).astype(np.uint8)) & 1)
        at = np.minimum(np.searchsorted(self.keys, keys[maybe]), len(self.keys) - 1)
        found[maybe] = np.where(self.keys[at] == keys[maybe], self.distances[at], -1)
        return found

    def nearest(self, states: np.ndarray, keys: np.ndarray | None = None) -> tuple[int, list[int]] | None:
        """The first of ``states`` nearest solved within ``radius``, and a shortest move sequence from it to
        solved; None where none is within the radius. ``keys``: their ``position_keys``, where the caller
        has them already (the beam's, by position or on the 3x3)."""
        distances = self.lookup(position_keys(self.puzzle, states) if keys is None else keys)
        near = np.flatnonzero(distances >= 0)
        for i in near[np.argsort(distances[near], kind="stable")]:
            moves = self.finish(states[i], int(distances[i]))
            if moves is not None:
                return int(i), moves
        return None

    def finish(self, cube: np.ndarray, distance: int) -> list[int] | None:
        """A shortest move sequence from ``cube`` (``distance`` moves from solved, by ``lookup``) to
        solved: each move one that the table puts a move nearer. None where no move does (a key that
        collided with a table position), or the end is not solved."""
        puzzle, moves = self.puzzle, []
        state = np.asarray(cube, np.int8).reshape(1, puzzle.num_stickers)
        actions = np.arange(puzzle.num_actions)
        for d in range(distance - 1, -1, -1):
            children = puzzle.apply(np.repeat(state, len(actions), axis=0), actions)
            nearer = np.flatnonzero(self.lookup(position_keys(puzzle, children)) == d)
            if not len(nearer):
                return None
            moves.append(int(nearer[0]))
            state = children[nearer[0]][None]
        return moves if puzzle.is_solved(state)[0] else None


def end_table(puzzle: Puzzle | str | None, radius: int) -> EndTable:
    """The ``EndTable`` of radius ``radius`` (0..``MAX_END_RADIUS``), built once per process and puzzle."""
    if not 0 <= radius <= MAX_END_RADIUS:
        raise ValueError(f"an end table's radius is 0..{MAX_END_RADIUS}, got {radius}")
    return _built(get_puzzle(puzzle).name, radius)


@functools.lru_cache(maxsize=4)
def _built(puzzle_name: str, radius: int) -> EndTable:
    """``end_table``'s breadth-first search, cached by the puzzle's name."""
    puzzle = get_puzzle(puzzle_name)
    frontier = puzzle.solved[None].astype(np.int8)
    keys = [position_keys(puzzle, frontier)]
    seen = keys[0]
    actions = np.arange(puzzle.num_actions)
    for _ in range(radius):
        grown = puzzle.apply(np.repeat(frontier, len(actions), axis=0), np.tile(actions, len(frontier)))
        new, first = np.unique(position_keys(puzzle, grown), return_index=True)
        fresh = np.searchsorted(seen, new)
        fresh = seen[np.minimum(fresh, len(seen) - 1)] != new
        frontier, new = grown[first[fresh]], new[fresh]
        keys.append(new)
        seen = np.sort(np.concatenate([seen, new]))
    distances = np.concatenate([np.full(len(k), d, np.int8) for d, k in enumerate(keys)])
    all_keys = np.concatenate(keys)
    order = np.argsort(all_keys)
    low = all_keys & (FILTER_BITS - 1)
    bits = np.zeros(FILTER_BITS // 8, np.uint8)
    np.bitwise_or.at(bits, low >> 3, np.left_shift(1, low & 7).astype(np.uint8))
    return EndTable(puzzle, radius, all_keys[order], distances[order], bits)
