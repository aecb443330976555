"""The 3x3's default solver with and without its end table (``--ends``, ``End_Table``).

With the table, each beam finishes exactly from the first state it reaches within the table's radius of
solved: never a longer solution, and at least the radius's worth of depths sooner. This solves ``--cubes``
uniformly random positions (``--seed``) with the 3x3's default solver options (``Puzzle.default_solver_options``,
whose ``ends`` is the radius), cube by cube, each cube with the table and then without (``--ends 0``), so that
load on the machine hits both alike; it prints per cube the length, states generated and seconds of each, then
the means, how often each was shorter, and the ratios without / with.
"""

from __future__ import annotations

import common  # noqa: F401  (import paths)
from common import Cli, default_3x3_side_by_side
from cube.End_Table import end_table
from cube.Puzzles import get_puzzle


def main(argv=None) -> int:
    p3 = get_puzzle("3x3")
    radius = p3.default_solver_options["ends"]
    end_table(p3, radius)  # built before the clock starts, as once per process in the scripts
    variants = {"with": ({"ends": radius}, True), "without": ({"ends": 0}, True)}
    return default_3x3_side_by_side(argv, __doc__, variants, same_moves=False)


if __name__ == "__main__":
    Cli.run_script(main)
