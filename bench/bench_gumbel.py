"""Gumbel search throughput against the PUCT engine, side by side in one run (timings drift:
compare ratios). Both search the same B roots with the same random-weight net and budget;
simulations/s = B * sims / seconds (the Gumbel root evaluation and MCTS_Core's root-expanding
first simulation are inside the timing). Each round measures both once, interleaved; the
table shows medians over the rounds.
"""

from __future__ import annotations

import argparse

import numpy as np

import common  # noqa: F401  (import paths)
from common import Cli, random_net, timed
from engine.Gumbel_MCTS import GumbelMCTS
from MCTS_Core import MCTS
from Rubik2x2Env import batch_scramble


def main(argv=None) -> None:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=Cli.episodes, default=256, help="roots searched together (B)")
    p.add_argument("--sims", type=Cli.simulations, default=32, help="simulations per root")
    p.add_argument("--rounds", type=Cli.rounds, default=3, help="interleaved measurement rounds (medians are reported)")
    p.add_argument("--scramble-len", type=Cli.scramble_len, default=12, help="scramble length of the root cubes")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the network weights and the roots")
    p.add_argument("--no-cache", action="store_true", help="disable the evaluation cache in both engines")
    args = p.parse_args(argv)

    model = random_net(args.seed)
    rng = np.random.default_rng(args.seed)
    roots, _ = batch_scramble(rng, args.batch * (args.rounds + 1), args.scramble_len)
    rows: dict[str, list[float]] = {}
    cache = not args.no_cache
    for r in range(args.rounds + 1):  # round 0 warms up and is not reported
        batch = roots[r * args.batch : (r + 1) * args.batch]
        engines = {
            "MCTS_Core (PUCT)": MCTS(model, num_simulations=args.sims, use_cache=cache).run_batch,
            "Gumbel_MCTS": GumbelMCTS(model, num_simulations=args.sims, use_cache=cache).run_batch,
        }
        for name, run in engines.items():
            _, t = timed(lambda: run(batch))  # noqa: B023  (called at once)
            if r:
                key = f"{name}, B={args.batch}, {args.sims} sims (sims/s)"
                rows.setdefault(key, []).append(args.batch * args.sims / t)
    med = {k: float(np.median(v)) for k, v in rows.items()}
    width = max(map(len, med))
    for k, v in med.items():
        print(f"{k:<{width}}  {v:>10,.0f}   (rounds: {', '.join(f'{x:,.0f}' for x in rows[k])})")
    a, b = med.values()
    print(f"Gumbel / PUCT: {b / a:.2f}")


if __name__ == "__main__":
    Cli.run_script(main)
