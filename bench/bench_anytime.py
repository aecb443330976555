"""The 3x3's default solver without and with its first round (``Solver_Anytime``), side by side, idle or busy.

"today": the search alone (``first_width`` 0: the mixed beam of 4,000 from 8 views, the end table, 60 s);
"anytime": a first round of 2 views of 1,000, then that search with the time and states left (``target_seconds``
off); "sized": the default, the anytime beam with its second round as wide as the first round's speed predicts to
end within ``target_seconds`` a cube (``Solver_Anytime.sized_width``; the default's 25 s, or ``--target-seconds``;
run only when named: the documented runs compared the first two). This
draws ``--cubes`` uniformly random positions (``--seed``, ``Puzzle.random_states``) and solves each through
``Solvers.solve_cubes`` with the 3x3's default solver options (``Puzzle.default_solver_options``), as the scripts
do, cube by cube and each cube with one variant and then the other, so that load on the machine hits both alike
(``--variants`` runs one alone). ``--busy`` keeps one core busy with a spinning process during the solves, as another
job would. Prints per cube each variant's length (``-``: no solution) and seconds, then per variant the cubes
solved, the mean length of those solved, and the median and maximum seconds a cube (wall time of the solve; the end
table is built before the first). A solve counts only when its moves, replayed on the cube, solve it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import subprocess
import sys
import time

import numpy as np

import common  # noqa: F401  (import paths)
from common import Cli, default_3x3_options, load_3x3_model
from cube.End_Table import end_table
from cube.Puzzles import get_puzzle
from cube.Solvers import solve_cubes

P3 = get_puzzle("3x3")
#: Changes to the 3x3's default solver options.
VARIANTS = {"today": {"first_width": 0}, "anytime": {"target_seconds": None}, "sized": {}}  # no first round: no sizing


@contextlib.contextmanager
def busy_core(on: bool):
    """A process spinning on one core while the block runs (``--busy``): a machine with one core free."""
    if not on:
        yield
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def summary(label: str, lengths: list[float], seconds: list[float]) -> str:
    solved = np.isfinite(lengths)
    mean = f"{np.mean(np.array(lengths)[solved]):.2f}" if solved.any() else "-"
    return (
        f"{label}: solved {solved.sum()}/{len(lengths)}, mean length {mean} (of those solved), "
        f"s a cube median {np.median(seconds):.1f}, max {np.max(seconds):.1f}"
    )


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", default="pretrained/rubik3x3_policy_value.pt", help="a 3x3 model")
    p.add_argument("--cubes", type=Cli.int_in(1, 10_000), default=10, help="uniformly random positions")
    p.add_argument("--seed", type=Cli.seed, default=0, help="draws the positions")
    p.add_argument("--threads", type=Cli.int_in(1, 1024, "torch threads"), default=2, help="torch threads")
    p.add_argument("--busy", action="store_true", help="keep one core busy with a spinning process meanwhile")
    p.add_argument("--variants", nargs="+", choices=tuple(VARIANTS), default=["today", "anytime"], help="which to run")
    p.add_argument("--target-seconds", type=Cli.positive_float, help="the sized variant's target (default: the 3x3's)")
    p.add_argument("--beam-width", type=Cli.int_in(1, 1_000_000), default=None, help="(default: the 3x3's)")
    args = p.parse_args(argv)
    if args.target_seconds is not None and "sized" not in args.variants:
        p.error("--target-seconds is the sized variant's: add sized to --variants")
    model = load_3x3_model(args.checkpoint, threads=args.threads)
    base = default_3x3_options() if args.beam_width is None else default_3x3_options(beam_width=args.beam_width)
    changes = dict(VARIANTS, sized={} if args.target_seconds is None else {"target_seconds": args.target_seconds})
    runs = {label: dataclasses.replace(base, **changes[label]) for label in dict.fromkeys(args.variants)}
    end_table(P3, base.ends)  # built before the clock starts, as once per process in the scripts
    cubes = P3.random_states(np.random.default_rng(args.seed), args.cubes)
    lengths, seconds = ({label: [] for label in runs} for _ in range(2))
    print(f"# {args.cubes} uniform positions (seed {args.seed}), {args.threads} thread(s), busy core: {args.busy}, "
          f"load average {os.getloadavg()[0]:.2f}; {' | '.join(runs)}", flush=True)  # fmt: skip
    with busy_core(args.busy):
        for i, cube in enumerate(cubes):
            cells = []
            for label, opts in runs.items():
                began = time.perf_counter()
                [result] = solve_cubes("beam", cube, model=model, options=opts, puzzle=P3)
                seconds[label].append(time.perf_counter() - began)
                lengths[label].append(len(result.moves) if result.solved else np.inf)
                shown = len(result.moves) if result.solved else "-"
                cells.append(f"{label}: {shown} moves {seconds[label][-1]:.1f} s")
            print(f"cube {i}: " + " | ".join(cells), flush=True)
    for label in runs:
        print(summary(label, lengths[label], seconds[label]))
    (a, *others) = runs
    for b in others:  # each variant against the first
        first, second = np.array(lengths[a]), np.array(lengths[b])
        print(f"shorter: {a} on {(first < second).sum()}, {b} on {(second < first).sum()}")
    print(f"# load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
