"""How far a solver's 3x3 solutions are from locally shortest: ``Solution_Shortening.shorten`` on each.

Reads the per-cube results of ``evaluate.py --puzzle 3x3 --uniform N --out FILE.json`` (each row's
``scramble`` and ``solution``), shortens every solved row with balls of each ``--radii`` (every
stretch of at most 2 R moves whose ends are closer is replaced by a shortest path) and prints, per
radius, the mean length before and after, the cubes it shortened and the seconds it took a cube.
Every shortened solution is replayed on its cube. A small gain means the solver's detours are
global (it heads the wrong way early), not local, which no post-processing of this kind repairs.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import common  # noqa: F401  (import paths)
from common import Cli
from cube.Cube_Model import MOVE_NAMES
from cube.Puzzles import get_puzzle
from cube.Solution_Shortening import ball, shorten

P3 = get_puzzle("3x3")
ACTION_OF = {name: a for a, name in enumerate(MOVE_NAMES)}


def read_rows(path: str) -> list[tuple[np.ndarray, list[int]]]:
    """``(cube, solution moves)`` of each solved row of an ``evaluate.py --out`` file."""
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "scramble" in r for r in rows):
        raise ValueError(f"{path} is not an evaluate.py --out file (a list of rows with scramble and solution)")
    out = []
    for row in rows:
        if not row.get("solved"):
            continue
        scramble = [ACTION_OF[m] for m in row["scramble"].split()]
        out.append((P3.replay(P3.solved, scramble), [ACTION_OF[m] for m in row["solution"].split()]))
    return out


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="evaluate.py --puzzle 3x3 --out files")
    p.add_argument("--radii", type=Cli.int_in(1, 6, "ball radius"), nargs="+", default=[4, 5], help="ball radii")
    args = p.parse_args(argv)
    try:
        rows = [row for path in args.results for row in read_rows(path)]
    except (OSError, ValueError, KeyError) as exc:
        return Cli.fail(f"cannot read the results: {exc}")
    if not rows:
        return Cli.fail("the results hold no solved cube")
    before = np.array([len(moves) for _, moves in rows])
    print(f"{len(rows)} solutions, mean {before.mean():.2f} quarter turns")
    for radius in args.radii:
        start = time.perf_counter()
        size = len(ball("3x3", radius)[0])
        built = time.perf_counter() - start
        after, seconds = [], []
        for cube, moves in rows:
            start = time.perf_counter()
            short = shorten(cube, moves, P3, radius)
            seconds.append(time.perf_counter() - start)
            if not P3.is_solved(P3.replay(cube, short)[None])[0]:
                return Cli.fail(f"radius {radius}: a shortened solution does not solve its cube")
            after.append(len(short))
        after = np.array(after)
        print(
            f"radius {radius} ({size:,} positions a ball, built in {built:.1f} s): mean {after.mean():.2f} "
            f"({(before - after).mean():.2f} fewer), {(after < before).sum()} of {len(rows)} shortened, "
            f"{np.mean(seconds):.2f} s a cube (max {np.max(seconds):.2f})"
        )
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
