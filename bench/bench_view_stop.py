"""The 3x3's default solver with and without stopping a cube's other views once one has solved it.

``Solver_Views.solve_from_views`` hands the beam each view's cube (``siblings``), and the beam stops a cube's
other views once one view has solved it (``Tree_Searches._lockstep``): they are a depth deeper by then, so
none could find a shorter solution. This solves ``--cubes`` uniformly random positions (``--seed``) with the
3x3's default solver options (``Puzzle.default_solver_options``: the views, width, budgets and precision),
cube by cube, each cube with stopping and then without, so that load on the machine hits both alike; it
prints per cube the length found by each (they must be equal) and the states generated and seconds of each,
then the totals and the ratios without / with.
"""

from __future__ import annotations

import common  # noqa: F401  (import paths)
from common import Cli, default_3x3_side_by_side


def main(argv=None) -> int:
    return default_3x3_side_by_side(argv, __doc__, {"with": ({}, True), "without": ({}, False)}, same_moves=True)


if __name__ == "__main__":
    Cli.run_script(main)
