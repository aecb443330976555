"""Self-play throughput with workers (issue 17): the engine in this process (the default,
``--workers 1``) against N local worker processes and N Ray tasks (``Workers.WorkerPool``).

Random-weight network, ``--episodes`` episodes of scramble length ``--scramble-len``,
``--sims`` simulations per move, at most ``--max-steps`` moves, sampled moves at T = 1 (as
main.py's self-play). Each setting first plays one untimed warm-up call (pool start, imports,
Ray start), then ``--rounds`` timed calls; throughput = simulations per second of wall time
of the whole call (splitting, shipping weights and merging included); medians reported.
The in-process settings get no warm-up (nothing to start).
``--ray`` adds the Ray backend (a local Ray of N CPUs; needs ``requirements-ray.txt``).
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
import torch

import common  # noqa: F401
from common import Cli, random_net, timed
from cube.Puzzles import C_PUCT
from run import Workers
from Self_Play import generate_self_play_data


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--episodes", type=Cli.episodes, default=80, help="self-play episodes per call")
    p.add_argument("--scramble-len", type=Cli.scramble_len, default=7)
    p.add_argument("--sims", type=Cli.simulations, default=200, help="simulations per move")
    p.add_argument("--max-steps", type=Cli.move_limit, default=10, help="moves per episode")
    p.add_argument("--rounds", type=Cli.rounds, default=3, help="timed calls per setting (median reported)")
    p.add_argument("--workers", type=Workers.workers_count, nargs="+", default=[1, 2], help="worker counts")
    p.add_argument("--ray", action="store_true", help="also measure the Ray backend")
    args = p.parse_args(argv)

    model = random_net(0)
    play = (args.episodes, args.max_steps, args.sims, args.scramble_len, "sample", 1.0)

    def in_process(it):
        rng = np.random.default_rng(it)
        return generate_self_play_data(model, *play, rng=rng, return_results=True)[2]

    def with_pool(pool):
        return lambda it: pool.self_play(model, it, *play, C_PUCT)

    def one_thread(it):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return in_process(it)
        finally:
            torch.set_num_threads(threads)

    settings = [(f"in process (the default; {torch.get_num_threads()} torch threads)", in_process)]
    settings.append(("in process, 1 torch thread", one_thread))
    pools = []
    try:
        for backend in ("local", "ray") if args.ray else ("local",):
            for n in args.workers:
                pools.append(Workers.WorkerPool(n, backend, seed=0))
                settings.append((f"{backend}, {n} worker{'s' if n > 1 else ''}", with_pool(pools[-1])))
    except Workers.WorkerError as exc:  # Ray missing or unreachable
        for pool in pools:
            pool.close()
        return Cli.fail(exc)
    print("| setting | simulations / s (median) | rounds | episodes solved |\n| --- | ---: | --- | ---: |")
    for name, fn in settings:
        if "worker" in name:
            fn(0)  # warm-up: pool start, imports, first weights
        rates, solved = [], 0
        for r in range(1, args.rounds + 1):
            res, t = timed(lambda: fn(r))
            rates.append(res.simulations / t)
            solved = int(res.solved.sum())
        lo, hi = min(rates), max(rates)
        print(
            f"| {name} | {statistics.median(rates):,.0f} | {lo:,.0f}-{hi:,.0f} | {solved}/{args.episodes} |", flush=True
        )
    for pool in pools:
        pool.close()
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
