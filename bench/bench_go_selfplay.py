"""Go self-play speed: a preset's games in lockstep against games played one at a time, same network.

Batched: ``Go_Training.self_play``, the preset's ``--games`` games from the empty board together, one
batched PUCT search of the preset's simulations per move over every game still on (one network call per
simulation step for all trees, the evaluation cache shared). Reference: the same number of simulations per
move, one game at a time and one search tree per move, one batch-1 network call per simulation, as the seed
plays: ``tests/reference_mcts.py``'s ``ReferenceGameMCTS`` (the plain negamax PUCT the engine is tested
against; node objects, every legal child made at expansion), and, to separate the batching from the tree
code, the engine itself with one tree (``MCTS_Core.MCTS`` on one root). The reference players pick moves
as self-play does (drawn from the visit counts for the opening moves, the most visited after) but add no
root noise. The network has the preset's shape and random weights (``--seed``).

Rates are moves (searches) per second, so games of different lengths compare directly; the ratio is the
median over interleaved rounds of batched / reference. Games per hour: 3600 / (mean seconds per game) for
the reference; for the batched side the preset's games per the seconds of their call, and also with the
preset's training steps of an iteration after them (what ``main.py --game go5`` runs).

    python bench/bench_go_selfplay.py [--recipe go5] [--rounds 2] [--ref-games 1]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import common  # noqa: F401
from Action_MCTS import pick_actions_batch
from common import Cli, timed
from go import Go_Args
from go.Go_Training import GameBuffer, make_optimizer, self_play, train_steps
from MCTS_Core import MCTS
from reference_mcts import ReferenceGameMCTS
from run.Recipes import GO_RECIPES

TARGET = 10.0  # issue 30: batched self-play at least 10x the one-tree reference


def one_row_evaluator(model, game):
    """``evaluate(row) -> (priors (A,), value)``: one ``eval_input`` row, one batch-1 network call."""

    @torch.inference_mode()
    def evaluate(row):
        logits, value = model(torch.from_numpy(game.encode(row[None])))
        return torch.softmax(logits, dim=-1)[0].numpy(), float(value[0, 0])

    return evaluate


def play_one(recipe, search_visits, rng) -> int:
    """One game from the empty board, each move ``search_visits(state) -> visits (A,)`` on a 1-row state,
    drawn from the visits for the opening moves and the most visited after; returns the moves played."""
    game, opening, moves = recipe.game(), recipe.opening(), 0
    state = game.initial_state(1)
    while not game.is_terminal(state)[0]:
        mode = "sample" if state["move_count"][0] < opening else "greedy"
        state = game.step(state, pick_actions_batch(search_visits(state)[None], mode, 1.0, rng, game.legal_mask(state)))
        moves += 1
    return moves


def one_at_a_time(recipe, search_visits, games: int, rng) -> tuple[float, float]:
    """``games`` games played one after another (``play_one``): (moves/s, games/hour)."""
    moves, seconds = timed(lambda: sum(play_one(recipe, search_visits, rng) for _ in range(games)))
    return moves / seconds, 3600 * games / seconds


def batched_round(model, recipe, rng) -> tuple[float, float, float]:
    """One iteration's self-play in lockstep, then its training steps: (moves/s, games/hour of self-play,
    games/hour with training)."""
    results, t_play = timed(lambda: self_play(model, recipe, rng))
    buffer = GameBuffer(1.0, 1, recipe.score_heads)
    buffer.add(results, recipe.game())
    optimizer, scheduler = make_optimizer(model, recipe)
    _, t_train = timed(lambda: train_steps(model, optimizer, scheduler, buffer, recipe, rng))
    games = len(results.states)
    return results.lengths.sum() / t_play, 3600 * games / t_play, 3600 * games / (t_play + t_train)


def main(argv=None) -> None:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipe", choices=sorted(GO_RECIPES), default="go5", help="the preset whose settings are timed")
    p.add_argument("--game", choices=list(Go_Args.GO_SIZES), default="go5", help="the board")
    p.add_argument("--ref-games", type=Cli.int_in(1, 100, "games"), default=1, help="reference games per round")
    p.add_argument("--rounds", type=Cli.rounds, default=2, help="interleaved rounds (medians reported)")
    p.add_argument("--seed", type=Cli.seed, default=0)
    args = p.parse_args(argv)

    recipe = Go_Args.recipe_of(Go_Args.parse_args(["--game", args.game, "--recipe", args.recipe]))
    torch.manual_seed(args.seed)
    model, game = recipe.network().eval(), recipe.game()
    rng = np.random.default_rng(args.seed)
    reference = ReferenceGameMCTS(game, one_row_evaluator(model, game), recipe.c_puct, recipe.simulations)
    engine = MCTS(model, c_puct=recipe.c_puct, num_simulations=recipe.simulations, game=game)
    searches = {
        "reference tree": lambda state: reference.run(state)[0],
        "engine, one tree": lambda state: engine.run_batch(state)[0],
    }
    rows = {name: [] for name in ["batched", *searches]}  # per round: (moves/s, games/h[, games/h with training])
    for r in range(args.rounds):
        rows["batched"].append(batched_round(model, recipe, rng))
        for name, search in searches.items():
            engine.evaluator.clear()  # one tree at a time: no cache carried over from the batched games
            rows[name].append(one_at_a_time(recipe, search, args.ref_games, rng))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1][0]:,.1f} moves/s" for k, v in rows.items()))
    print(f"\n{args.recipe} preset on {game.size}x{game.size}: {recipe.games} games, {recipe.simulations} simulations")
    batched = np.array(rows["batched"])
    print(
        f"batched, {recipe.games} games in lockstep: {np.median(batched[:, 0]):>8,.1f} moves/s, "
        f"{np.median(batched[:, 1]):,.0f} games/hour ({np.median(batched[:, 2]):,.0f} with training)"
    )
    for name in searches:
        ref = np.array(rows[name])
        ratio = np.median(batched[:, 0] / ref[:, 0])
        print(
            f"{name}, one game at a time: {np.median(ref[:, 0]):>8,.1f} moves/s, {np.median(ref[:, 1]):,.0f} "
            f"games/hour; batched is {ratio:.1f}x (target >= {TARGET:g}x)"
        )


if __name__ == "__main__":
    Cli.run_script(main)
