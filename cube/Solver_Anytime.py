"""The anytime beam (the solvers' ``--first-width W``): a solution within seconds, then the configured search.

A search given a time limit on a machine slower than the limit assumes runs out of time, and a beam out of time
narrows towards greedy, which rarely solves a 3x3: with one of two cores busy, the 3x3's default (8 views of
4,000) came back with no solution for 13 of 30 hard positions (issue 49). So each cube is solved in two rounds:

1. the first round, cheap: a beam of ``first_width`` from ``first_views`` views (the 3x3's default: 2 views of
   1,000, a sixteenth of the configured search's rows a depth), which answers in a second or two;
2. the configured search (``views``, ``beam_width``, ...) with the time and states the first round left, searching
   only the depths that could find a shorter solution (``Tree_Searches.depth_to_beat``), so it can replace the
   first solution only by a shorter one.

On an idle machine the second round is the configured search as it was (only stopped where it could no longer
win), so every cube gets its solution or a shorter one; on a busy machine the first round's solution stands where
the second runs out of time.

With ``target_seconds`` (``--target-seconds T``) the second round is as wide as the machine allows: the first round's
seconds and states, scaled by rows a depth and depths, predict what the second round costs at each width, and it
takes the widest of the configured width times ``WIDTH_FACTORS`` predicted to end within T seconds of the cube's
start and within its states (``sized_width``). A fast machine searches wider (a doubling of the width buys about
0.3 moves, docs/puzzles.md); a slow or busy one keeps the configured width, as without T. The width then depends on
the clock, so a run is the same only where each cube's width is: the factors come in steps of the square root of 2,
so that runs mostly agree. Both rounds share the cube's budgets (``seconds``, ``max_nodes``): the first round is
limited by them too, and the second starts only with time and states left. Cube by cube: each cube's own wall time
is its budget (as ``Tree_Searches.beam_widening``). Every round's solution is replayed on its cube by the round
(``Solver_Views``, ``Tree_Searches``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from cube.Solver_Base import SolveResult, start_history
from cube.Tree_Searches import depth_to_beat, shorter

#: ``round(cubes, last, count, options) -> [SolveResult]``: one search of the cubes (``Solvers.solve_cubes``'s,
#: from its views where ``options.views > 1``).
Round = Callable[..., list[SolveResult]]


def first_round(opts):
    """The first round's ``SolverOptions``: ``first_width`` from ``first_views`` views, never wider or from more
    views than the configured search, with the cube's whole budgets; None where it is off (``first_width`` 0) or no
    cheaper than the configured search (it would only repeat it)."""
    width, views = min(opts.first_width, opts.beam_width), min(opts.first_views, opts.views)
    if width < 1 or (width, views) == (opts.beam_width, opts.views):
        return None
    return dataclasses.replace(opts, beam_width=width, views=views, first_width=0, beam_widen=False)


#: The second round's widths with ``target_seconds``: the configured width times these (steps of the square root
#: of 2, at most 8 times), so that the widths of two runs come from one short list.
WIDTH_FACTORS = tuple(2 ** (k / 2) for k in range(7))


def sized_width(opts, first: SolveResult, depth: int) -> int:
    """The second round's beam width: with ``opts.target_seconds`` the widest of ``opts.beam_width`` times
    ``WIDTH_FACTORS`` whose predicted seconds end within the target and within the time limit (``opts.seconds``,
    when lower; both counted from the cube's start) and whose predicted states fit the states left; else, or
    where the first round found no solution to time by, the configured width. The prediction scales the first
    round's seconds and states by the rows a depth (views times width) and by the depths: at most ``depth``
    against the first round's at least ``len(moves) - ends`` (a beam reaching the end table finishes within
    ``ends`` moves). Its small batches cost more a row than the second round's, so the prediction errs long,
    towards the configured width."""
    first_opts = first_round(opts)
    if not opts.target_seconds or first_opts is None or not first.solved or first.seconds <= 0:
        return opts.beam_width
    first_rows = first_opts.views * first_opts.beam_width * max(1, len(first.moves) - opts.ends)
    per_width = opts.views * depth / first_rows  # the second round's rows at width 1, in first rounds
    by = opts.target_seconds if opts.seconds is None else min(opts.target_seconds, opts.seconds)
    width = opts.beam_width
    for factor in WIDTH_FACTORS[1:]:
        wider = round(opts.beam_width * factor)
        fits_time = first.seconds * (1 + wider * per_width) <= by
        if not fits_time or first.nodes * (1 + wider * per_width) > opts.max_nodes:
            break
        width = wider
    return width


def second_round(opts, first: SolveResult):
    """The configured search's options after ``first``: the time and states it left, and after a solution only the
    depths that could find a shorter one, at ``sized_width``; None where nothing is left to search."""
    depth = opts.max_moves
    if first.solved:
        depth = min(depth, depth_to_beat(len(first.moves), opts.ends))
    seconds = None if opts.seconds is None else opts.seconds - first.seconds
    nodes = opts.max_nodes - first.nodes
    if depth < 1 or nodes < 1 or (seconds is not None and seconds <= 0):
        return None
    width = sized_width(opts, first, depth)
    return dataclasses.replace(
        opts, first_width=0, max_moves=depth, max_nodes=nodes, seconds=seconds, beam_width=width, target_seconds=None
    )


def solve_anytime(search: Round, cubes: np.ndarray, last, count, opts) -> list[SolveResult]:
    """Every cube by the two rounds (module docstring), one cube at a time; per cube the shorter solution (the
    first round's on a tie), with the states and seconds of both. Without a first round (``first_round``): the
    configured search, every cube in one call as always."""
    first = first_round(opts)
    if first is None:
        return search(cubes, last, count, opts)
    last, count = start_history(len(cubes), last, count)
    return [
        _solve_one(search, cubes[i : i + 1], last[i : i + 1], count[i : i + 1], first, opts) for i in range(len(cubes))
    ]


def _solve_one(search: Round, cube: np.ndarray, last, count, first, opts) -> SolveResult:
    best = search(cube, last, count, first)[0]
    rest = second_round(opts, best)
    return best if rest is None else shorter(best, search(cube, last, count, rest)[0])
