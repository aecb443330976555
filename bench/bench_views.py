"""Each view of the 3x3's ``--views`` alone, and the best of the first v of them (``Solver_Views``).

Draws ``--cubes`` uniformly random positions (``--seed``), solves each view of every cube separately
with the mixed beam of ``--beam-width`` and the plain network (one view at a time: each gets the whole
budget, unlike ``--views``, which shares it), replays every solution on its cube, and prints each view's
lengths, then for v = 1 .. ``--views`` the mean length of the shortest of the first v views. How much
shorter the best of several views is than one view, and which views help, at a glance.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import common  # noqa: F401  (import paths)
from common import Cli, load_3x3_model
from cube.Puzzles import get_puzzle
from cube.Solver_Base import network_fns
from cube.Solver_Views import cube_solution, disguise, view_count_limit, view_list
from cube.Solvers import solve_cubes
from engine.Precision import PRECISIONS

P3 = get_puzzle("3x3")


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", default="pretrained/rubik3x3_policy_value.pt", help="a 3x3 model")
    p.add_argument("--cubes", type=Cli.int_in(1, 10_000), default=10, help="uniformly random positions")
    p.add_argument("--views", type=Cli.int_in(1, view_count_limit(P3)), default=8, help="views of each cube")
    p.add_argument("--beam-width", type=Cli.int_in(1, 1_000_000), default=2000, help="the mixed beam's width")
    p.add_argument("--seed", type=Cli.seed, default=0, help="draws the positions")
    p.add_argument("--precision", choices=PRECISIONS, default="auto", help="the network's arithmetic (Precision.py)")
    args = p.parse_args(argv)
    model = load_3x3_model(args.checkpoint, threads=1)
    cubes = P3.random_states(np.random.default_rng(args.seed), args.cubes)
    value_fn, policy_fn = network_fns(model, puzzle=P3, precision=args.precision)
    lengths = np.full((args.views, args.cubes), np.inf)
    started = time.perf_counter()
    for v, view in enumerate(view_list(P3, args.views)):
        starts, last, count = disguise(cubes, None, None, view, P3)
        results = solve_cubes(
            "beam", starts, value_fn=value_fn, policy_fn=policy_fn, last=last, count=count, puzzle=P3,
            beam_width=args.beam_width, beam_rank="mixed", max_moves=P3.default_max_moves, max_nodes=10**8,
        )  # fmt: skip
        for i, result in enumerate(results):
            moves = cube_solution(cubes[i], result, view, P3)
            if moves is not None:
                lengths[v, i] = len(moves)
        shown = " ".join("-" if np.isinf(n) else str(int(n)) for n in lengths[v])
        name = f"symmetry {view.symmetry}{' inverse' if view.inverse else ''}"
        print(f"view {v} ({name}): {shown}  ({time.perf_counter() - started:.0f} s)", flush=True)
    for v in range(1, args.views + 1):
        best = lengths[:v].min(axis=0)
        solved = np.isfinite(best)
        mean = f"{best[solved].mean():.2f}" if solved.any() else "-"
        print(f"best of the first {v}: solved {solved.sum()}/{args.cubes}, mean {mean}")
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
