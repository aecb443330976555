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

import argparse
import dataclasses

import numpy as np

import common  # noqa: F401  (import paths)
from common import Cli, load_3x3_model
from Puzzles import get_puzzle
from Solver_Base import network_fns
from Solver_Views import solve_from_views
from Solvers import SOLVERS, SolverOptions

P3 = get_puzzle("3x3")


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", default="pretrained/rubik3x3_policy_value.pt", help="a 3x3 model")
    p.add_argument("--cubes", type=Cli.int_in(1, 10_000), default=5, help="uniformly random positions")
    p.add_argument("--beam-width", type=Cli.int_in(1, 1_000_000), default=None, help="(default: the 3x3's)")
    p.add_argument("--threads", type=Cli.int_in(1, 1024, "torch threads"), default=2, help="torch threads")
    p.add_argument("--seed", type=Cli.seed, default=0, help="draws the positions")
    args = p.parse_args(argv)
    model = load_3x3_model(args.checkpoint, threads=args.threads)
    opts = dataclasses.replace(SolverOptions(max_moves=P3.default_max_moves), **P3.default_solver_options)
    if args.beam_width is not None:
        opts = dataclasses.replace(opts, beam_width=args.beam_width)
    value_fn, policy_fn = network_fns(model, puzzle=P3, precision=opts.precision)
    run = SOLVERS["beam"].run
    print(f"# {args.cubes} uniform positions (seed {args.seed}), {opts.views} views of {opts.beam_width}, "
          f"{opts.precision}, {args.threads} thread(s)")  # fmt: skip
    totals = np.zeros((2, 2))  # [with, without] x [states, seconds]
    for i, cube in enumerate(P3.random_states(np.random.default_rng(args.seed), args.cubes)):
        pair = [
            solve_from_views(
                run, cube[None], None, None, opts, P3, model, value_fn, policy_fn, "cpu", P3, stops_views=stops
            )[0]  # fmt: skip
            for stops in (True, False)
        ]
        if pair[0].moves != pair[1].moves:
            raise SystemExit(f"cube {i}: the solutions differ ({len(pair[0].moves)} and {len(pair[1].moves)} moves)")
        totals += [[r.nodes, r.seconds] for r in pair]
        print(f"cube {i}: {len(pair[0].moves)} moves | with: {pair[0].nodes:,} states {pair[0].seconds:.1f} s | "
              f"without: {pair[1].nodes:,} states {pair[1].seconds:.1f} s", flush=True)  # fmt: skip
    states, seconds = totals[1] / totals[0]
    print(f"without / with: {states:.2f}x the states, {seconds:.2f}x the seconds")
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
