"""Go self-play and training speed of several presets side by side: games an hour at each preset's settings.

Each round plays one iteration of every preset in turn (``bench_go_selfplay.batched_round``: its ``--games``
games in lockstep from the empty board at its simulations, then its training steps), each preset with its
own network of random weights (``--seed``), so that a preset's extra heads, komi plane or cheaper searches
are what differs. Rounds interleave the presets (a machine's drift hits all alike); the medians are printed
with each preset's ratios to the first: moves a second (the cost of a move) and games an hour (which also
depends on how long each random network's games last, as in early training).

    python bench/bench_go_recipes.py [--recipes go5 go5-score] [--rounds 3]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import common  # noqa: F401
from bench_go_selfplay import batched_round
from common import Cli
from go import Go_Args
from run.Recipes import GO_RECIPES


def main(argv=None) -> None:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipes", nargs="+", choices=sorted(GO_RECIPES), default=["go5", "go5-score"],
                   help="the presets timed side by side (the first is the baseline)")  # fmt: skip
    p.add_argument("--rounds", type=Cli.rounds, default=3, help="interleaved rounds (medians reported)")
    p.add_argument("--seed", type=Cli.seed, default=0)
    args = p.parse_args(argv)
    recipes = {name: Go_Args.recipe_of(Go_Args.parse_args(["--recipe", name])) for name in args.recipes}
    models = {}
    for name, recipe in recipes.items():
        torch.manual_seed(args.seed)
        models[name] = recipe.network().eval()
    rows = {name: [] for name in recipes}  # per round: (moves/s, games/h of self-play, games/h with training)
    rng = np.random.default_rng(args.seed)
    for r in range(args.rounds):
        for name, recipe in recipes.items():
            rows[name].append(batched_round(models[name], recipe, rng))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1][2]:,.0f} games/h" for k, v in rows.items()))
    base = np.array(rows[args.recipes[0]])
    print()
    for name, recipe in recipes.items():
        got = np.array(rows[name])
        print(
            f"{name:>10}: {recipe.games} games of {recipe.simulations} simulations, "
            f"{np.median(got[:, 0]):,.1f} moves/s, {np.median(got[:, 1]):,.0f} games/hour of self-play, "
            f"{np.median(got[:, 2]):,.0f} with its training steps; {np.median(got[:, 0] / base[:, 0]):.2f}x the "
            f"{args.recipes[0]}'s moves a second, {np.median(got[:, 2] / base[:, 2]):.2f}x its games an hour"
        )


if __name__ == "__main__":
    Cli.run_script(main)
