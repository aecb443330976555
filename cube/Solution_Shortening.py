"""Shortcuts in a found solution: every stretch of it that a shorter path joins is replaced (``--shorten R``).

A beam search with an imperfect value network walks a few detours: stretches of its path whose ends
are closer than the moves spent between them. This finds each of those exactly, for ends up to
``2 R`` moves apart, by meeting in the middle:

- ``ball(R)``: every cube position within ``R`` quarter turns of solved, found once by breadth-first
  search over the 12 moves, as permutations of the stickers (``P``), their depths and move sequences.
  Because the moves act the same way on every cube, ``cube[P]`` over the ball is every position
  within ``R`` moves of any ``cube``, at the same depths (``Puzzle.apply``: ``new = old[perm]``).
- For each pair of states ``s_i``, ``s_j`` of the path (``i < j``), the position ``x`` shared by
  their balls with the fewest moves ``d_i(x) + d_j(x)`` is a shortest path between them when they
  are at most ``2 R`` apart: a shortest path has a middle position within ``R`` of both ends.
- A shortest path from the start to solved over the path's own steps and those shortcuts
  (dynamic programming over the path's indices) gives the new solution; it is searched again
  until nothing shortens (a shortcut changes the states its neighbours are measured from).

Every shortcut is replayed on its cube before it is used, so a hash collision can cost a shortcut,
never correctness. ``R = 5`` (104,046 positions a ball on the 3x3) takes about a second for a
solution of 25 moves; each step of ``R`` multiplies the work by about 9.
"""

from __future__ import annotations

import functools

import numpy as np

from cube.Cube_Model import NUM_ACTIONS
from cube.Puzzles import Puzzle, get_puzzle

#: Odd 64-bit multipliers that fold a multi-field state key into one uint64 (a hash; see the docstring).
_FOLD = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5], np.uint64)


def state_hashes(puzzle: Puzzle, cubes: np.ndarray) -> np.ndarray:
    """``(B,)`` uint64: the puzzle's exact state keys folded into one number each."""
    keys = puzzle.state_keys(cubes)
    if keys.dtype.names is None:
        return keys.astype(np.uint64)
    folded = np.zeros(len(keys), np.uint64)
    with np.errstate(over="ignore"):
        for name, factor in zip(keys.dtype.names, _FOLD):
            folded = folded * factor + keys[name].astype(np.uint64)
    return folded


@functools.lru_cache(maxsize=4)
def ball(puzzle_name: str, radius: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every position within ``radius`` moves of solved, breadth first: ``perms (S, stickers)`` (the
    position is ``solved[perm]``, and ``cube[perm]`` is as far from ``cube``), ``depth (S,)``, and each
    position's ``parent`` index and last ``move``, which spell its move sequence (``sequence``)."""
    puzzle = get_puzzle(puzzle_name)
    move_perms = np.asarray(puzzle.move_perms, np.intp)
    perms = [np.arange(puzzle.num_stickers, dtype=np.intp)[None]]
    depth, parent, move = [np.zeros(1, np.int8)], [np.full(1, -1, np.int64)], [np.full(1, -1, np.int8)]
    seen = state_hashes(puzzle, puzzle.solved[None])
    frontier, first = perms[0], 0
    for d in range(1, radius + 1):
        # Each frontier position followed by each move: P[perm_m] is P then m.
        grown = frontier[:, move_perms].reshape(-1, puzzle.num_stickers)
        keys = state_hashes(puzzle, puzzle.solved[grown])
        keys, index = np.unique(keys, return_index=True)  # the first of each new position
        new = ~np.isin(keys, seen)
        index = index[new]
        seen = np.concatenate([seen, keys[new]])
        frontier = grown[index]
        perms.append(frontier)
        depth.append(np.full(len(index), d, np.int8))
        parent.append(first + index // NUM_ACTIONS)
        move.append((index % NUM_ACTIONS).astype(np.int8))
        first += len(perms[-2])
    return tuple(np.concatenate(parts) for parts in (perms, depth, parent, move))


def sequence(parent: np.ndarray, move: np.ndarray, node: int) -> list[int]:
    """The moves from solved's ball root to ``node`` (``ball``'s parent and move arrays)."""
    moves = []
    while parent[node] >= 0:
        moves.append(int(move[node]))
        node = int(parent[node])
    return moves[::-1]


def _path_states(puzzle: Puzzle, cube: np.ndarray, moves: list[int]) -> np.ndarray:
    states = [np.asarray(cube, np.int8).reshape(puzzle.num_stickers)]
    for action in moves:
        states.append(puzzle.apply(states[-1][None], np.array([action]))[0])
    return np.stack(states)


def _shortcuts(puzzle: Puzzle, states: np.ndarray, radius: int) -> dict[tuple[int, int], list[int]]:
    """``(i, j) -> moves`` for each pair of path states joined by fewer than ``j - i`` moves."""
    perms, depth, parent, move = ball(puzzle.name, radius)
    balls = []  # per state: its ball's hashes sorted, their depths and ball indices
    for state in states:
        keys = state_hashes(puzzle, state[perms])
        order = np.argsort(keys, kind="stable")
        balls.append((keys[order], depth[order], order))
    found = {}
    for i in range(len(states)):
        keys_i, depth_i, node_i = balls[i]
        for j in range(i + 2, len(states)):
            keys_j, depth_j, node_j = balls[j]
            at = np.minimum(np.searchsorted(keys_i, keys_j), len(keys_i) - 1)
            shared = keys_i[at] == keys_j
            if not shared.any():
                continue
            total = np.where(shared, depth_i[at].astype(np.int64) + depth_j, np.iinfo(np.int64).max)
            best = int(total.argmin())
            if total[best] >= j - i:
                continue
            to_middle = sequence(parent, move, int(node_i[at[best]]))
            from_middle = [a ^ 1 for a in reversed(sequence(parent, move, int(node_j[best])))]
            path = to_middle + from_middle
            if np.array_equal(puzzle.replay(states[i], path), states[j]):
                found[(i, j)] = path
    return found


def shorten(cube: np.ndarray, moves, puzzle: Puzzle | str | None = None, radius: int = 5) -> list[int]:
    """``moves`` (a solution of ``cube``) with every detour found by ``radius``-move balls replaced by
    a shortest path, repeated until none is left; the same moves when there is none (or ``radius`` 0)."""
    puzzle = get_puzzle(puzzle)
    moves = [int(a) for a in moves]
    while radius > 0 and len(moves) >= 2:
        states = _path_states(puzzle, cube, moves)
        shortcuts = _shortcuts(puzzle, states, radius)
        if not shortcuts:
            return moves
        # Fewest moves from state 0 to each state of the path, by steps of the path and shortcuts.
        n = len(states)
        cost, came_from = np.arange(n), [(i - 1, [moves[i - 1]]) if i else None for i in range(n)]
        for j in range(1, n):
            for (i, jj), path in shortcuts.items():
                if jj == j and cost[i] + len(path) < cost[j]:
                    cost[j], came_from[j] = cost[i] + len(path), (i, path)
            if cost[j - 1] + 1 < cost[j]:
                cost[j], came_from[j] = cost[j - 1] + 1, (j - 1, [moves[j - 1]])
        pieces, j = [], n - 1
        while j > 0:
            j, path = came_from[j]
            pieces.append(path)
        moves = [a for path in reversed(pieces) for a in path]
    return moves
