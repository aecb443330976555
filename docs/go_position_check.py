"""What a Go network makes of one position at several komi: its value, its expected margin (with a score
head), its prior on passing, and the search's most visited moves with their mean returns.

    python docs/go_position_check.py pretrained/go5_score_first/go5_score.pt --moves C3 --komi 24.5 25.5

``--moves`` are played from the empty board, Black first (``pass`` passes); everything is from the side of
the player to move after them. docs/go.md ("The first go5-score run") quotes it: that network, as White after
C3, put 0.87 of its prior on passing at komi 24.5 as at 25.5, where passing wins.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from engine.Search_Tree import N_ROW, W_ROW  # noqa: E402
from go.Arena import play_agent  # noqa: E402
from go.Go_Board import BLACK, format_vertex  # noqa: E402
from go.Go_Game import go_game, record_actions  # noqa: E402
from go.Go_Net import expected_margin, load_go_model  # noqa: E402
from run import Cli  # noqa: E402
from run.Run_IO import CheckpointError  # noqa: E402


def position_lines(model, size: int, actions: list[int], komis: list[float], sims: int, symmetric: bool) -> list[str]:
    """One line per komi: the network's and the search's view of the position after ``actions`` (legal at every
    komi: ``Go_Game.record_actions``, checked once with the flags)."""
    lines = []
    for komi in komis:
        game = go_game(size, komi, **model.game_options)
        state = game.initial_state(1)
        for action in actions:
            state = game.step(state, np.array([action]))
        with torch.inference_mode():
            obs = torch.from_numpy(game.encode(game.eval_input(state)))
            heads = model.heads(obs)  # logits and value; score and ownership with score heads
        prior_pass = float(torch.softmax(heads["logits"].float(), 1)[0, -1])
        margin = float(expected_margin(heads, size)[0]) if "score" in heads else None  # the belief's, if any
        score = "" if margin is None else f", expected margin {margin:+.2f}"
        agent = play_agent(model, sims, 1.0, symmetric)
        agent.new_game(game, int(state["to_play"][0]))
        stats = agent.think(state).root_stats()[0]
        visits, returns = stats[N_ROW], stats[W_ROW] / np.maximum(stats[N_ROW], 1)
        top = np.argsort(-visits, kind="stable")[:5]
        moves_text = ", ".join(f"{format_vertex(int(a), size)} {int(visits[a])} visits, Q {returns[a]:+.2f}"
                               for a in top)  # fmt: skip
        colour = "Black" if int(state["to_play"][0]) == BLACK else "White"
        lines.append(
            f"komi {komi:g}, {colour} to move: value {float(heads['value']):+.3f}{score}, prior on pass "
            f"{prior_pass:.3f}; search ({sims} simulations): {moves_text}"
        )
    return lines


def main(argv=None) -> int:
    parser = Cli.ArgumentParser(description=__doc__, formatter_class=Cli.HelpFormatter)
    parser.add_argument("checkpoint", type=Cli.nonempty_path, help="a Go model (main.py --game goN)")
    parser.add_argument("--size", type=Cli.int_in(2, 19, "board sizes"), default=5, help="the board's side")
    parser.add_argument("--moves", nargs="*", default=[], help="moves from the empty board, Black first")
    parser.add_argument("--komi", type=float, nargs="+", default=[24.5], help="the komi to read it at")
    parser.add_argument("--sims", type=Cli.int_in(2, 100_000, "simulations"), default=100, help="the search's")
    parser.add_argument("--symmetric", action=argparse.BooleanOptionalAction, default=True,
                        help="average the network over the board's 8 symmetries in the search")  # fmt: skip
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        actions = record_actions(go_game(args.size), " ".join(args.moves))
    except ValueError as exc:
        parser.error(f"--moves: {exc}")
    try:
        model = load_go_model(args.checkpoint, args.size).eval()
        for line in position_lines(model, args.size, actions, args.komi, args.sims, args.symmetric):
            print(line)
    except (CheckpointError, FileNotFoundError, ValueError) as exc:
        return Cli.fail(exc)
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
