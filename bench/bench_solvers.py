"""Per-cube seconds of the search solvers on the shipped network: beam and A* one cube at a
time (a network call holds one cube's frontier) against ``solve_cubes`` (all cubes in
lockstep, one network call per step), and mcts for scale. Same random cubes for all; each
round runs every configuration once, interleaved (timings drift on a loaded machine: compare
the ratios); the table shows medians over the rounds.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import common  # noqa: F401  (import paths)
import Solvers as S
from common import Cli, timed
from Optimal_Solver import get_solver
from Policy_Value_Net import load_model


def per_cube(name: str, cubes, value_fn, opts: S.SolverOptions) -> list[S.SolveResult]:
    """One cube at a time, through the single-cube functions."""
    if name == "beam":
        return [S.beam(c, value_fn, None, beam_width=opts.beam_width, max_depth=opts.max_moves) for c in cubes]
    return [S.astar(c, value_fn, lam=opts.astar_lambda, batch=opts.astar_batch) for c in cubes]


def main(argv=None) -> None:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cubes", type=Cli.episodes, default=200, help="random cubes solved by each configuration")
    p.add_argument("--rounds", type=Cli.rounds, default=1, help="interleaved measurement rounds (medians reported)")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the random cubes")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--model", default="pretrained/rubik_policy_value.pt")
    p.add_argument("--skip", default="", help="comma-separated row names to skip (e.g. 'lockstep,mcts')")
    args = p.parse_args(argv)

    torch.set_num_threads(args.threads)
    model = load_model(args.model)
    value_fn, _ = S.network_fns(model)
    cubes = get_solver().random_cubes(np.random.default_rng(args.seed), args.cubes)
    configs = {
        "beam w8": ("beam", S.SolverOptions(beam_width=8)),
        "beam w32": ("beam", S.SolverOptions(beam_width=32)),
        "astar b100 l0.6": ("astar", S.SolverOptions(astar_batch=100, astar_lambda=0.6)),
    }
    skip = set(filter(None, args.skip.split(",")))
    rows: dict[str, list[float]] = {}
    info: dict[str, str] = {}
    for _ in range(args.rounds):
        for label, (name, opts) in configs.items():
            got = {}
            for mode in ("per-cube", "lockstep"):
                if mode in skip:
                    continue
                if mode == "per-cube":
                    res, t = timed(lambda: per_cube(name, cubes, value_fn, opts))  # noqa: B023
                else:
                    res, t = timed(lambda: S.solve_cubes(name, cubes, value_fn=value_fn, options=opts))  # noqa: B023
                got[mode] = res
                key = f"{label}, {mode}"
                rows.setdefault(key, []).append(t / len(cubes))
                solved = [r for r in res if r.solved]
                info[key] = (
                    f"solved {len(solved)}/{len(res)}, mean length {np.mean([len(r.moves) for r in solved]):.2f}, "
                    f"mean nodes {np.mean([r.nodes for r in res]):,.0f}"
                )
            if len(got) == 2:
                same = sum((a.moves, a.solved, a.nodes) == (b.moves, b.solved, b.nodes) for a, b in zip(*got.values()))
                info[f"{label}, lockstep"] += f", identical to per-cube: {same}/{len(cubes)}"
        if "mcts" not in skip:
            res, t = timed(lambda: S.solve_cubes("mcts", cubes, model=model, sims=200))
            rows.setdefault("mcts 200 sims", []).append(t / len(cubes))
            solved = [r for r in res if r.solved]
            info["mcts 200 sims"] = (
                f"solved {len(solved)}/{len(res)}, mean length {np.mean([len(r.moves) for r in solved]):.2f}"
            )
    width = max(map(len, rows))
    for k, v in rows.items():
        print(f"{k:<{width}}  {np.median(v) * 1000:9.2f} ms/cube   ({info[k]})", flush=True)
    for label in configs:
        a, b = rows.get(f"{label}, per-cube"), rows.get(f"{label}, lockstep")
        if a and b:
            print(f"{label}: per-cube / lockstep = {np.median(a) / np.median(b):.2f}x")


if __name__ == "__main__":
    Cli.run_script(main)
