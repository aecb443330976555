"""The 3x3 recipe's network with either first layer (``main.py --input stickers|pairs``): reading and training
speed, side by side.

Both networks have the recipe's shape (1,024, 256, 256, 256 units, 27 distance classes) and random weights
(speed does not depend on them). Reading: ``Solver_Base.network_fns``' ``with_value`` (value and logits in one
pass, what the mixed beam reads) on ``--states`` random-walk states; training: ``Train_Network.train_on_targets``
steps of ``--batch-size``. Both at ``--precision`` (``auto``: bf16 where the CPU multiplies it natively, as the
recipe and the 3x3's default solver), the two networks interleaved round by round so that load on the machine
hits both alike; states a second and the ratio pairs / stickers (the median of per-round ratios). Reading also
times the pair network fed the one-hot (``pairs-1hot``), as searches fed it before they handed it the stickers'
colours (``PolicyValueNet.reads_colours``): the ratio pairs / pairs-1hot is what skipping the one-hot buys.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import common  # noqa: F401  (import paths)
from common import Cli, print_rates, print_ratio, walk_states
from cube.Puzzles import get_puzzle
from cube.Solver_Base import network_fns
from engine import Precision
from Policy_Value_Net import VALUE_PER_MOVE, PolicyValueNet
from run.Recipes import RECIPES
from Train_Network import train_on_targets

INPUTS = ("stickers", "pairs")


def networks(seed: int) -> dict[str, PolicyValueNet]:
    recipe = RECIPES["3x3"]
    torch.manual_seed(seed)
    return {
        kind: PolicyValueNet(
            324,
            distance_classes=recipe["distance_classes"],
            hidden_sizes=tuple(recipe["hidden_sizes"]),
            pair_input=kind == "pairs",
        ).eval()
        for kind in INPUTS
    }


class OneHotPairs(PolicyValueNet):
    """A pair network that searches feed the one-hot, as before ``reads_colours``."""

    reads_colours = False


def reading(nets, puzzle, cubes: np.ndarray, rounds: int, precision: str) -> None:
    one_hot = OneHotPairs(324, distance_classes=nets["pairs"].distance_classes, hidden_sizes=nets["pairs"].hidden_sizes,
                          pair_input=True)  # fmt: skip
    one_hot.load_state_dict(nets["pairs"].state_dict())
    nets = {**nets, "pairs-1hot": one_hot.eval()}
    fns = {k: network_fns(net, "cpu", puzzle=puzzle, precision=precision)[1].with_value for k, net in nets.items()}
    rates: dict[str, list[float]] = {k: [] for k in nets}
    for _ in range(rounds):
        for k, fn in fns.items():
            start = time.perf_counter()
            fn(cubes)
            rates[k].append(len(cubes) / (time.perf_counter() - start))
    print(f"# reading {len(cubes):,} walk states (1-26 moves), {rounds} rounds, value and logits in one forward")
    print_rates(rates, over=("pairs", "stickers"))
    print_ratio(rates, "pairs", "pairs-1hot")


def training(nets, puzzle, batch: int, steps: int, rounds: int, precision: str, rng: np.random.Generator) -> None:
    n = batch * steps
    states = puzzle.encode(walk_states(puzzle, n, rng))
    pis = np.eye(puzzle.num_actions, dtype=np.float32)[rng.integers(0, puzzle.num_actions, n)]
    zs = (1 - VALUE_PER_MOVE * rng.integers(0, 27, n)).astype(np.float32)
    optimizers = {k: torch.optim.Adam(net.parameters(), lr=1e-5) for k, net in nets.items()}
    rates: dict[str, list[float]] = {k: [] for k in INPUTS}
    for _ in range(rounds):
        for k, net in nets.items():
            start = time.perf_counter()
            train_on_targets(
                net, (states, pis, zs), batch, 1, 1e-5, seed=0, optimizer=optimizers[k], value_loss="distance",
                precision=precision,
            )  # fmt: skip
            rates[k].append(n / (time.perf_counter() - start))
    print(f"# training: {steps} steps of {batch} a round, {rounds} rounds (Adam, distance and policy losses)")
    print_rates(rates, over=("pairs", "stickers"))


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=Cli.int_in(1, 1024, "torch threads"), default=2, help="torch threads")
    p.add_argument("--states", type=Cli.int_in(1, 10_000_000, "states"), default=100_000, help="states read a round")
    p.add_argument("--batch-size", type=Cli.int_in(1, 100_000, "batch size"), default=2048, help="training batch")
    p.add_argument("--steps", type=Cli.int_in(1, 100_000, "steps"), default=20, help="training steps a round")
    p.add_argument("--rounds", type=Cli.int_in(1, 1000, "rounds"), default=3, help="interleaved rounds")
    p.add_argument("--precision", choices=Precision.PRECISIONS, default="auto", help="the networks' arithmetic")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the weights, states and targets")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    precision = Precision.resolve(args.precision, "cpu")
    puzzle, rng, nets = get_puzzle("3x3"), np.random.default_rng(args.seed), networks(args.seed)
    print(f"# the 3x3 recipe's network, {args.threads} thread(s), {precision}")
    reading(nets, puzzle, walk_states(puzzle, args.states, rng), args.rounds, precision)
    training(nets, puzzle, args.batch_size, args.steps, args.rounds, precision, rng)
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
