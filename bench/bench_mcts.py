"""Search throughput, measured side by side in one run (timings drift: compare ratios).

Prints simulations/s of the plain one-tree reference (200 simulations, one batch-1 network
call per simulation, as the original), of the batched engine at B=80 with 800 simulations
and at B=2000 with 200 simulations, and the raw network rate at batch 80 and 2000. Each
round measures everything once, interleaved; the table shows medians over the rounds.

Targets (2-core CPU): B=80/800 >= 15x the reference; B=2000/200 >= 80% of the raw network
rate at batch 2000.
"""

from __future__ import annotations

import argparse

import numpy as np

import common  # noqa: F401  (import paths)
from common import Cli, network_rate, one_state_evaluator, random_net, timed
from MCTS_Core import MCTS
from reference_mcts import ReferenceMCTS
from Rubik2x2Env import batch_scramble


def main(argv=None) -> None:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=Cli.rounds, default=3, help="interleaved measurement rounds (medians are reported)")
    p.add_argument("--scramble-len", type=Cli.scramble_len, default=12, help="scramble length of the root cubes")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the network weights and the roots")
    p.add_argument("--no-cache", action="store_true", help="disable the evaluation cache in the batched engine")
    args = p.parse_args(argv)

    model = random_net(args.seed)
    roots, _ = batch_scramble(np.random.default_rng(args.seed), 2000, args.scramble_len)
    reference = ReferenceMCTS(one_state_evaluator(model), num_simulations=200)
    rows: dict[str, list[float]] = {}

    def add(name, value):
        rows.setdefault(name, []).append(value)

    # Warm-up (not timed): first calls pay for lazy initialisation in torch and numpy.
    ReferenceMCTS(one_state_evaluator(model), num_simulations=50).run(roots[-1])
    MCTS(model, num_simulations=20).run_batch(roots[:80])
    network_rate(model, roots[:80], seconds=0.3)
    for r in range(args.rounds):
        _, t = timed(lambda: reference.run(roots[r]))
        add("reference, 1 tree, 200 sims (sims/s)", 200 / t)
        for batch, sims in ((80, 800), (2000, 200)):
            engine = MCTS(model, num_simulations=sims, use_cache=not args.no_cache)
            _, t = timed(lambda: engine.run_batch(roots[:batch]))
            add(f"batched, B={batch}, {sims} sims (sims/s)", batch * sims / t)
            add(f"network forward, batch {batch} (states/s)", network_rate(model, roots[:batch]))
        print(f"round {r + 1}/{args.rounds} done", flush=True)

    med = {k: float(np.median(v)) for k, v in rows.items()}
    width = max(map(len, med))
    print()
    for k, v in med.items():
        print(f"{k:<{width}}  {v:>10,.0f}   (rounds: {', '.join(f'{x:,.0f}' for x in rows[k])})")
    ref = med["reference, 1 tree, 200 sims (sims/s)"]
    b80 = med["batched, B=80, 800 sims (sims/s)"]
    b2000 = med["batched, B=2000, 200 sims (sims/s)"]
    raw2000 = med["network forward, batch 2000 (states/s)"]
    # Per-round ratios are more robust to drift than ratios of medians.
    r80 = np.median(
        [b / r for b, r in zip(rows["batched, B=80, 800 sims (sims/s)"], rows["reference, 1 tree, 200 sims (sims/s)"])]
    )
    r2000 = np.median(
        [
            b / n
            for b, n in zip(rows["batched, B=2000, 200 sims (sims/s)"], rows["network forward, batch 2000 (states/s)"])
        ]
    )
    print()
    print(f"B=80/800 vs reference:        {r80:5.1f}x   (target >= 15x; medians {b80:,.0f} / {ref:,.0f})")
    print(f"B=2000/200 vs raw network:    {100 * r2000:5.1f}%   (target >= 80%; medians {b2000:,.0f} / {raw2000:,.0f})")


if __name__ == "__main__":
    Cli.run_script(main)
