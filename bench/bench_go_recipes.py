"""Go self-play and training speed of several presets side by side: games an hour at each preset's settings.

Each round plays one iteration of every preset in turn (``bench_go_selfplay.batched_round``: its ``--games``
games in lockstep from the empty board at its simulations, then its training steps), each preset with its
own network of random weights (``--seed``), so that a preset's extra heads, komi plane or cheaper searches
are what differs. Rounds interleave the presets (a machine's drift hits all alike); the medians are printed
with each preset's ratios to the first: moves a second (the cost of a move) and games an hour (which also
depends on how long each random network's games last, as in early training).

    python bench/bench_go_recipes.py [--recipes go5 go5-score] [--rounds 3]
        [--models go5=pretrained/go5_policy_value.pt go5-score=runs/go5_score_s1/go5_score.pt]
    python bench/bench_go_recipes.py --recipes go9 --precisions fp32 bf16

``--precisions``: every preset at each of these precisions (``GoRecipe.precision``; the same weights), named
``PRESET@PRECISION``: float32 against bfloat16 where the CPU multiplies it natively.

``--models RECIPE=FILE``: that preset plays with a trained network instead of random weights. A trained
network's games can cost quite another time a move than a random one's (its searches revisit other
positions, and its evaluation cache hits differently), so this times the presets as their runs see them.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses

import numpy as np
import torch

import common  # noqa: F401
from bench_go_selfplay import batched_round
from common import Cli
from engine.Precision import PRECISIONS
from go import Go_Args
from run.Recipes import GO_RECIPES


def main(argv=None) -> None:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipes", nargs="+", choices=sorted(GO_RECIPES), default=["go5", "go5-score"],
                   help="the presets timed side by side (the first is the baseline)")  # fmt: skip
    p.add_argument("--rounds", type=Cli.rounds, default=3, help="interleaved rounds (medians reported)")
    p.add_argument("--seed", type=Cli.seed, default=0)
    p.add_argument("--models", nargs="+", default=[], metavar="RECIPE=FILE",
                   help="a trained network for a preset instead of random weights")  # fmt: skip
    p.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=[],
                   help="time every preset at each of these precisions (default: each preset's own)")  # fmt: skip
    args = p.parse_args(argv)
    presets = {name: Go_Args.recipe_of(Go_Args.parse_args(["--recipe", name])) for name in args.recipes}
    files = dict(item.split("=", 1) for item in args.models if "=" in item)
    if len(files) != len(args.models) or not set(files) <= set(presets):
        p.error("--models takes RECIPE=FILE pairs, each RECIPE one of --recipes")
    recipes, models = {}, {}
    for name, recipe in presets.items():
        torch.manual_seed(args.seed)
        model = recipe.network().eval() if name not in files else trained(p, files[name], recipe)
        for precision in args.precisions or [recipe.precision]:
            label = f"{name}@{precision}" if args.precisions else name
            # each its own copy: a round's training steps change the weights
            recipes[label], models[label] = dataclasses.replace(recipe, precision=precision), copy.deepcopy(model)
    rows = {name: [] for name in recipes}  # per round: (moves/s, games/h of self-play, games/h with training)
    rng = np.random.default_rng(args.seed)
    for r in range(args.rounds):
        for name, recipe in recipes.items():
            rows[name].append(batched_round(models[name], recipe, rng))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1][2]:,.0f} games/h" for k, v in rows.items()))
    first = next(iter(recipes))
    base = np.array(rows[first])
    print()
    for name, recipe in recipes.items():
        got = np.array(rows[name])
        print(
            f"{name:>10}: {recipe.games} games of {recipe.simulations} simulations, "
            f"{np.median(got[:, 0]):,.1f} moves/s, {np.median(got[:, 1]):,.0f} games/hour of self-play, "
            f"{np.median(got[:, 2]):,.0f} with its training steps; {np.median(got[:, 0] / base[:, 0]):.2f}x the "
            f"{first}'s moves a second, {np.median(got[:, 2] / base[:, 2]):.2f}x its games an hour"
        )


def trained(parser, path: str, recipe):
    """The network in ``path`` for ``recipe``; a file that is no Go model of its board and planes ends
    the process with a sentence (exit status 2)."""
    from go.Go_Net import load_go_model
    from run.Run_IO import CheckpointError

    try:
        model = load_go_model(path, recipe.size).eval()
    except (CheckpointError, FileNotFoundError, ValueError) as exc:
        parser.error(f"--models: {exc}")
    if model.game_options != recipe.game().network_options:
        wants, plays = model.game_options, recipe.game().network_options
        parser.error(f"--models: {path} needs the game {wants}, the preset plays {plays}")
    return model


if __name__ == "__main__":
    Cli.run_script(main)
