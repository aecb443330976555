"""The Go agent's play (gtp.py, the GUI, evaluate.py) in float32 against bfloat16 (``--precision``), side by side.

The positions of one game: the shipped network's agent at the play settings (``Agent_Flags``: 200 simulations
on 5x5, 400 on larger boards, c_puct 1.0, the 8 symmetries) plays ``--moves`` moves against itself in float32
from the empty board. Each round then searches every one of those positions in turn with a fresh agent at
each precision (its evaluation cache filling up as in a game), the precisions interleaved so that load on the
machine hits both alike. Printed: simulations a second for each (medians over rounds), bf16's over fp32's (the
median of the per-round ratios), and the share of positions where bf16's move is fp32's (its products round
differently, so its searches can part ways). One thread, as gtp.py and the GUI search.

    python bench/bench_go_play.py [--game go7] [--checkpoint FILE] [--moves 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import common  # noqa: F401  (import paths)
from common import CheckpointError, Cli, print_rates
from go.Agent_Flags import DEFAULT_C_PUCT, DEFAULT_SYMMETRIC, default_simulations, go_name
from go.Arena import play_agent
from go.Go_Board import BLACK
from go.Go_Game import go_play_game
from go.Go_Match import load_agent_model

PRECISIONS = ("fp32", "bf16")


def game_positions(model, size: int, moves: int) -> tuple[object, list[dict]]:
    """The play game and the positions before each of the first ``moves`` moves of the fp32 agent's game
    against itself (fewer if it ends)."""
    game = go_play_game(size, None, **model.game_options)
    agent = play_agent(model, default_simulations(size), DEFAULT_C_PUCT, DEFAULT_SYMMETRIC)
    agent.new_game(game, BLACK)
    state, positions = game.initial_state(1), []
    while len(positions) < moves and not game.is_terminal(state)[0]:
        positions.append(state)
        state = game.step(state, np.array([agent.genmove(state)]))
    return game, positions


def one_round(model, game, positions: list[dict], precision: str) -> tuple[float, list[int]]:
    """Simulations a second of a fresh agent at ``precision`` searching every position in turn, and its moves."""
    simulations = default_simulations(game.size)
    agent = play_agent(model, simulations, DEFAULT_C_PUCT, DEFAULT_SYMMETRIC, precision=precision)
    agent.new_game(game, BLACK)
    start = time.perf_counter()
    moves = [agent.genmove(state) for state in positions]
    return simulations * len(positions) / (time.perf_counter() - start), moves


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", type=go_name, default=7, help="the board: go5 ... go19 (default: go7)")
    p.add_argument("--checkpoint", type=Cli.nonempty_path, help="Go model (default: pretrained/goN_policy_value.pt)")
    p.add_argument("--moves", type=Cli.int_in(1, 400, "moves"), default=10, help="positions of the game searched")
    p.add_argument("--rounds", type=Cli.rounds, default=3, help="interleaved rounds (medians reported)")
    args = p.parse_args(argv)
    try:
        model = load_agent_model(args.checkpoint, args.game)
    except CheckpointError as exc:
        return Cli.fail(exc)
    torch.set_num_threads(1)
    game, positions = game_positions(model, args.game, args.moves)
    rates: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    moves: dict[str, list[int]] = {}
    for _ in range(args.rounds):
        for precision in PRECISIONS:
            rate, moves[precision] = one_round(model, game, positions, precision)
            rates[precision].append(rate)
    print(
        f"# go{args.game}: {len(positions)} positions of the agent's game against itself, "
        f"{default_simulations(args.game)} simulations a move, symmetric {DEFAULT_SYMMETRIC}, one thread"
    )
    print_rates(rates, unit="simulations")
    same = np.mean(np.array(moves["bf16"]) == np.array(moves["fp32"]))
    print(f"bf16 plays fp32's move in {same:.0%} of the positions (last round)")
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
