"""Speed of the batched Go rules: random games in lockstep, one ``legal_mask`` and one ``step`` per move.

For each board size, ``--batch`` games start together and play ``N*N`` random legal moves (the pass rarely);
the best of ``--rounds`` rounds in CPU seconds is reported as batched steps per second (one step = a legal
mask and a move for the whole batch) and as state steps per second (times the batch).

    python bench/bench_go_rules.py --sizes 5 7 --batch 64
"""

from __future__ import annotations

import time

import numpy as np

from common import Cli
from go.Go_Board import MAX_SIZE, MIN_SIZE, GoBoard


def steps_per_second(size: int, batch: int, rounds: int) -> float:
    """Batched steps (legal mask + step) per CPU second, the best round of ``rounds``."""
    rules, best = GoBoard(size), float("inf")
    for _ in range(rounds):
        rng, state = np.random.default_rng(0), rules.initial_state(batch)
        start = time.process_time()
        for _ in range(size * size):
            weights = rules.legal_mask(state) * rng.random((batch, rules.num_actions))
            weights[:, -1] *= 0.05
            state = rules.step(state, weights.argmax(axis=1))
        best = min(best, (time.process_time() - start) / (size * size))
    return 1.0 / best


def main(argv=None) -> int:
    parser = Cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = Cli.int_in(MIN_SIZE, MAX_SIZE, "board sizes")
    parser.add_argument("--sizes", type=size, nargs="+", default=[5, 7, 9], help="board sizes")
    parser.add_argument("--batch", type=Cli.int_in(1, 100_000, "games in memory"), default=64, help="games in lockstep")
    parser.add_argument("--rounds", type=Cli.rounds, default=3, help="rounds per size; the fastest counts")
    args = parser.parse_args(argv)
    for size in args.sizes:
        rate = steps_per_second(size, args.batch, args.rounds)
        print(f"{size}x{size}, B={args.batch}: {rate:,.0f} batched steps/s = {rate * args.batch:,.0f} state steps/s")
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
