"""Solve a cube from several views and keep the shortest solution (the solvers' ``--views V``).

A network reads a cube and the same cube in disguise differently, so a beam that goes astray on one
view of a cube often finds a short way from another, and the best of a few independent searches beats
one search that averages the network over the disguises (``--symmetries``; docs/puzzles.md). The views
of a cube, in order (``view_list``):

- view ``2j``: the cube under symmetry ``j`` (``Cube_Model.symmetries``: the whole cube turned or
  mirrored, its colours renamed). A solution of the disguise, every move renamed back, solves the cube.
- view ``2j + 1``: the cube's inverse (``Puzzle.inverse_states``) under symmetry ``j``. A solution of the
  inverse, reversed with every move inverted, solves the cube.

A puzzle without ``inverse_states`` (the 2x2) has the symmetries alone (view ``j``: symmetry ``j``).
Every view is solved as the cube would be, with an even share of the cube's budgets (``max_nodes`` and
the time limit divided by V), all views of all cubes in one lockstep call; the result keeps the shortest
solution found (the first view's among equals), the states generated and seconds of all the views.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from cube import Cube_Model
from cube.Cube_Model import NO_ACTION
from cube.Puzzles import Puzzle
from cube.Solver_Base import SolveResult, start_history, verify


@dataclasses.dataclass(frozen=True)
class View:
    symmetry: int  # index into Cube_Model.symmetries
    inverse: bool  # the cube's inverse rather than the cube


#: The most views any puzzle has: every symmetry of the cube and of its inverse.
MAX_VIEWS = 2 * Cube_Model.SYMMETRY_COUNT


def view_count_limit(puzzle: Puzzle) -> int:
    """How many distinct views ``puzzle`` has: its symmetries, twice with an inverse."""
    return MAX_VIEWS if puzzle.inverse_states is not None else Cube_Model.SYMMETRY_COUNT


def view_list(puzzle: Puzzle, count: int) -> list[View]:
    """The first ``count`` views of ``puzzle``'s cubes (module docstring)."""
    if not 1 <= count <= view_count_limit(puzzle):
        raise ValueError(f"views must be 1..{view_count_limit(puzzle)} for the {puzzle.name}, got {count}")
    if puzzle.inverse_states is None:
        return [View(j, False) for j in range(count)]
    return [View(v // 2, v % 2 == 1) for v in range(count)]


def solve_from_views(
    run: Callable[..., list[SolveResult]],
    cubes: np.ndarray,
    last,
    count,
    opts,
    puzzle: Puzzle,
    *args,
    stops_views: bool = False,
) -> list[SolveResult]:
    """``run(cubes, last, count, opts, *args)`` (a ``SolverSpec.run``) on ``opts.views`` views of every cube
    at once, each view with ``1 / views`` of the budgets; per cube the shortest solution, in the cube's own
    moves, replayed on the cube (module docstring). The views of a cube are handed on side by side; with
    ``stops_views`` (the beam) ``run`` also gets ``siblings`` (each view's cube) and stops a cube's views
    once one has solved it (``Tree_Searches._lockstep``): the same shortest solution, fewer states."""
    views = view_list(puzzle, opts.views)
    starts, lasts, counts = (
        np.stack(parts, axis=1).reshape(len(cubes) * len(views), *parts[0].shape[1:])
        for parts in zip(*(disguise(cubes, last, count, view, puzzle) for view in views))
    )  # row i * views + v: view v of cube i
    share = dataclasses.replace(
        opts,
        views=1,
        max_nodes=max(1, opts.max_nodes // len(views)),
        seconds=None if opts.seconds is None else opts.seconds / len(views),
    )
    extra = {"siblings": np.repeat(np.arange(len(cubes)), len(views))} if stops_views else {}
    results = run(starts, lasts, counts, share, *args, **extra)
    best = []
    for i, cube in enumerate(cubes):
        mine = results[i * len(views) : (i + 1) * len(views)]
        found = (cube_solution(cube, r, view, puzzle) for r, view in zip(mine, views))
        solutions = [moves for moves in found if moves is not None]
        # Unsolved: view 0's walk (the cube itself, symmetry 0 being the identity).
        moves = min(solutions, key=len) if solutions else list(mine[0].moves)
        best.append(SolveResult(moves, bool(solutions), sum(r.nodes for r in mine), sum(r.seconds for r in mine)))
    return best


def disguise(cubes: np.ndarray, last, count, view: View, puzzle: Puzzle):
    """``(starts, last, count)``: ``cubes`` (with their move histories, default fresh) as ``view`` shows them."""
    perms, colours, move_map = Cube_Model.symmetries(puzzle.size)
    last, count = start_history(len(cubes), last, count)
    if view.inverse:  # a fresh history: the cube's last move is not a move of its inverse
        base, last, count = puzzle.inverse_states(cubes), np.full_like(last, NO_ACTION), np.zeros_like(count)
    else:
        base, last = cubes, np.where(last == NO_ACTION, NO_ACTION, move_map[view.symmetry][np.maximum(last, 0)])
    return colours[view.symmetry][base[:, perms[view.symmetry]]], last, count


def cube_moves(moves, view: View, move_map: np.ndarray) -> list[int]:
    """A view's solution as the cube's: every move renamed back from the view's symmetry, and for an
    inverse view reversed with every move inverted (moves come in (move, inverse) pairs: ``a ^ 1``)."""
    back = np.argsort(move_map[view.symmetry])  # T(apply(s, a)) == apply(T(s), move_map[a])
    renamed = back[np.asarray(moves, dtype=np.intp)]
    return [int(a) ^ 1 for a in renamed[::-1]] if view.inverse else [int(a) for a in renamed]


def cube_solution(cube: np.ndarray, result: SolveResult, view: View, puzzle: Puzzle) -> list[int] | None:
    """A view's result as a solution of ``cube`` in the cube's own moves, replayed on the cube; None when
    the view's search did not solve it."""
    if not result.solved:
        return None
    moves = cube_moves(result.moves, view, Cube_Model.symmetries(puzzle.size)[2])
    return moves if verify(cube, moves, puzzle) else None
