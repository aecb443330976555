"""float32 against bfloat16 (``--precision``) for a cube network: reading and training, side by side.

Reading: the network's forward (``Solver_Base.network_fns``' ``with_value``: value and logits in one pass,
what the mixed beam reads) on ``--states`` cube states, random walks of 1-26 moves from solved, at each
precision, interleaved round by round so that load on the machine hits both alike; states a second and
their ratio (the median of per-round ratios), and how far bf16's reading is from fp32's: the value in moves
(``|delta value| / 0.03``, mean and maximum) and the share of states whose most likely move is the same.
Training: ``Train_Network.train_on_targets`` steps of ``--batch-size`` on random targets at each
precision, states a second and their ratio. ``auto`` is what ``Precision.resolve`` picks on this machine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import common  # noqa: F401  (import paths)
from common import Cli, load_3x3_model, print_rates, walk_states
from cube.Puzzles import get_puzzle
from cube.Solver_Base import network_fns
from engine import Precision
from Policy_Value_Net import VALUE_PER_MOVE
from Train_Network import train_on_targets


def reading(model, puzzle, cubes: np.ndarray, rounds: int) -> None:
    fns = {p: network_fns(model, "cpu", puzzle=puzzle, precision=p)[1].with_value for p in ("fp32", "bf16")}
    rates: dict[str, list[float]] = {"fp32": [], "bf16": []}
    out = {}
    for _ in range(rounds):
        for p, fn in fns.items():
            start = time.perf_counter()
            out[p] = fn(cubes)
            rates[p].append(len(cubes) / (time.perf_counter() - start))
    moves = np.abs(out["bf16"][:, 0] - out["fp32"][:, 0]) / VALUE_PER_MOVE
    same = (out["bf16"][:, 1:].argmax(1) == out["fp32"][:, 1:].argmax(1)).mean()
    print(f"# reading {len(cubes):,} walk states (1-26 moves), {rounds} rounds, value and logits in one forward")
    print_rates(rates)
    print(
        f"bf16 value off by {moves.mean():.4f} moves on average, {moves.max():.4f} at most; same best move {same:.1%}"
    )


def training(model, puzzle, batch: int, steps: int, rounds: int, rng: np.random.Generator) -> None:
    n = batch * steps
    states = puzzle.encode(walk_states(puzzle, n, rng))
    pis = np.eye(puzzle.num_actions, dtype=np.float32)[rng.integers(0, puzzle.num_actions, n)]
    zs = (1 - VALUE_PER_MOVE * rng.integers(0, 27, n)).astype(np.float32)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    rates: dict[str, list[float]] = {"fp32": [], "bf16": []}
    for _ in range(rounds):
        for p in rates:
            start = time.perf_counter()
            train_on_targets(
                model, (states, pis, zs), batch, 1, 1e-5, seed=0, optimizer=optimizer, value_loss="distance",
                precision=p,
            )  # fmt: skip
            rates[p].append(n / (time.perf_counter() - start))
    print(f"# training: {steps} steps of {batch} a round, {rounds} rounds (Adam, distance and policy losses)")
    print_rates(rates)


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Cli.nonempty_path, default="pretrained/rubik3x3_policy_value.pt", help="3x3 model")
    p.add_argument("--threads", type=Cli.int_in(1, 1024, "torch threads"), default=2, help="torch threads")
    p.add_argument("--states", type=Cli.int_in(1, 10_000_000, "states"), default=100_000, help="states read a round")
    p.add_argument("--batch-size", type=Cli.int_in(1, 100_000, "batch size"), default=2048, help="training batch")
    p.add_argument("--steps", type=Cli.int_in(1, 100_000, "steps"), default=20, help="training steps a round")
    p.add_argument("--rounds", type=Cli.int_in(1, 1000, "rounds"), default=3, help="interleaved rounds")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the states and targets")
    args = p.parse_args(argv)
    model = load_3x3_model(args.model, args.threads)
    puzzle, rng = get_puzzle("3x3"), np.random.default_rng(args.seed)
    print(f"# {args.model}, {args.threads} thread(s); --precision auto is {Precision.resolve('auto', 'cpu')} here")
    reading(model, puzzle, walk_states(puzzle, args.states, rng), args.rounds)
    training(model, puzzle, args.batch_size, args.steps, args.rounds, rng)
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
