"""An independent referee: GNU Go against ``gtp.py``, both as GTP processes, the way a controller
(gogui-twogtp, Sabaki) plays them, not through the project's own match code (``Arena.run_match``).

    python bench/gtp_referee.py [--game go5 go7] [--games 20] [--level 10] [--sims N] [--out FILE.json]

Each game starts fresh processes of ``gnugo --mode gtp --chinese-rules --positional-superko
--capture-all-dead --level L --seed G`` and ``python gtp.py --game goN --seed G [--sims N]``, sends both ``boardsize``,
``komi`` and ``clear_board``, then asks the side to move for ``genmove`` and sends the reply to the other
as ``play``, until two passes in a row or a resignation. ``--games`` games with the agent as Black and as
many as White on each board (colours alternating, Black first); game ``G`` (from 0) seeds GNU Go with
``G + 1``: GNU Go breaks ties by its seed, and with one seed (the agent's play is greedy) every game of a
colour would be the same game. The referee keeps its own board
(``Go_Board``'s area-scoring rules with positional superko, as GNU Go plays them with those flags): a
move it finds illegal ends the game as "illegal" for the side that made it; a legal move that the other
engine answers with ``? ...`` ends it as "refused" (what issue 50 was: gtp.py's self-play move cap, so
the count must be 0); a crash or timeout ends it as "failed". A finished game is scored by area
(Tromp-Taylor, after komi) and, for comparison, by GNU Go's ``final_score``. ``--max-moves`` (default
1,000) is the referee's own bound on a game; a game that reaches it is "unfinished".

Prints per board and colour: games (how many distinct), the agent's wins with the win rate and its 95%
Wilson interval, the games refused / illegal / failed / unfinished, the moves per game (mean and longest)
and how often GNU Go's score disagreed on the winner; ``--out`` writes the same as JSON with every game's record.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402

from go.Agent_Flags import go_name  # noqa: E402
from go.Arena import wilson_interval  # noqa: E402
from go.Go_Board import BLACK, WHITE, format_vertex  # noqa: E402
from go.Go_Game import go_play_game  # noqa: E402
from go.GTP_Client import GNUGO_PATH, GTPClient, GTPError, format_color, gnugo_command  # noqa: E402
from run import Cli  # noqa: E402
from run.Run_IO import OutputError, check_writable, write_json  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = Cli.ArgumentParser(description=__doc__, formatter_class=Cli.HelpFormatter)
    parser.add_argument("--game", type=go_name, nargs="+", default=[5, 7], help="boards: go5 go7 ...")
    parser.add_argument("--games", type=Cli.episodes, default=20, help="games per colour of the agent per board")
    parser.add_argument("--level", type=Cli.int_in(0, 10, "GNU Go's levels"), default=10, help="GNU Go's level")
    parser.add_argument("--gnugo", type=Cli.nonempty_path, default=GNUGO_PATH, help="the GNU Go binary")
    parser.add_argument("--sims", type=Cli.simulations, help="gtp.py's --sims (default: gtp.py's own)")
    parser.add_argument("--checkpoint", type=Cli.nonempty_path, help="gtp.py's --checkpoint (default: its own)")
    parser.add_argument("--komi", type=Cli.nonnegative_float, help="komi (default: the board's; 24.5 on 5x5)")
    parser.add_argument("--timeout", type=Cli.positive_float, default=120.0, help="seconds for one reply")
    parser.add_argument("--max-moves", type=Cli.int_in(1, 100_000), default=1000, help="the referee's bound")
    parser.add_argument("--out", type=Cli.nonempty_path, help="a JSON file of the results and every game")
    return parser.parse_args(argv)


def agent_command(args: argparse.Namespace, size: int, seed: int) -> list[str]:
    command = [sys.executable, os.path.join(REPO, "gtp.py"), "--game", f"go{size}", "--seed", str(seed)]
    if args.sims is not None:
        command += ["--sims", str(args.sims)]
    if args.checkpoint is not None:
        command += ["--checkpoint", args.checkpoint]
    return command


def referee_game(args: argparse.Namespace, size: int, agent_colour: int, seed: int) -> dict:
    """One game between fresh processes; its record (``end``: scored, resigned, refused, illegal, failed,
    unfinished)."""
    game = go_play_game(size, args.komi, history=1)
    state, moves = game.initial_state(1), []
    names = {agent_colour: "gtp.py", -agent_colour: "gnugo"}
    record = {"agent": format_color(agent_colour), "moves": moves, "winner": None, "end": None, "detail": ""}
    gnugo = gnugo_command(args.level, args.gnugo) + ["--seed", str(seed + 1)]  # its own tie-breaks each game
    commands = {agent_colour: agent_command(args, size, seed), -agent_colour: gnugo}
    engines: dict[int, GTPClient] = {}
    try:
        for colour in (BLACK, WHITE):
            engines[colour] = GTPClient(commands[colour], args.timeout)
            engines[colour].setup(size, game.komi)
        while not game.is_terminal(state)[0]:
            if len(moves) >= args.max_moves:
                record["end"] = "unfinished"
                return record
            colour = int(state["to_play"][0])
            mover = names[colour]
            try:
                action = engines[colour].genmove(colour, size, game.legal_mask(state)[0])
            except GTPError as error:
                record["end"] = "illegal" if error.reason == "illegal" else "failed"
                record["detail"] = f"{mover}: {error}"
                return record
            if action is None:
                record.update(end="resigned", winner=format_color(-colour), detail=f"{mover} resigned")
                return record
            try:
                engines[-colour].play(colour, action, size)
            except GTPError as error:
                record["end"] = "refused" if error.reason == "error" else "failed"
                record["detail"] = f"{names[-colour]} after {len(moves)} moves: {error}"
                moves.append(format_vertex(action, size))
                return record
            state = game.step(state, np.array([action]))
            moves.append(format_vertex(action, size))
        score = float(game.rules.score(state)[0])
        record.update(end="scored", winner="black" if score > 0 else "white" if score < 0 else "draw", score=score)
        try:
            record["gnugo_score"] = engines[-agent_colour].send("final_score")
        except GTPError as error:
            record["gnugo_score"] = f"? {error}"
        return record
    except GTPError as error:
        record["end"], record["detail"] = "failed", str(error)
        return record
    finally:
        for engine in engines.values():
            engine.close()


def gnugo_disagrees(record: dict) -> bool:
    text = record.get("gnugo_score", "")
    if record["end"] != "scored" or not text or text.startswith("?"):
        return False
    said = "black" if text.upper().startswith("B+") else "white" if text.upper().startswith("W+") else "draw"
    return said != record["winner"]


def summary(records: list[dict]) -> dict:
    counted = [r for r in records if r["end"] in ("scored", "resigned")]
    wins = sum(r["winner"] == r["agent"] for r in counted) + sum(r["winner"] == "draw" for r in counted) / 2
    low, high = wilson_interval(wins, len(counted))
    lengths = [len(r["moves"]) for r in records]
    return {
        "games": len(records),
        "counted": len(counted),
        "agent_wins": wins,
        "win_rate": wins / len(counted) if counted else None,
        "ci95": [low, high] if counted else None,
        **{end: sum(r["end"] == end for r in records) for end in ("refused", "illegal", "failed", "unfinished")},
        "distinct_games": len({tuple(r["moves"]) for r in records}),  # GNU Go's seeds vary only some games
        "mean_moves": float(np.mean(lengths)) if lengths else None,
        "longest": max(lengths, default=0),
        "gnugo_disagrees": sum(gnugo_disagrees(r) for r in records),
    }


def line(what: str, s: dict) -> str:
    rate = "n/a" if s["win_rate"] is None else f"{100 * s['win_rate']:.0f}% (95% CI {100 * s['ci95'][0]:.0f}-"
    rate += "" if s["win_rate"] is None else f"{100 * s['ci95'][1]:.0f}%)"
    return (
        f"{what}: {s['games']} games ({s['distinct_games']} distinct), agent wins {s['agent_wins']:g} of "
        f"{s['counted']} counted, {rate} | refused "
        f"legal moves {s['refused']}, illegal {s['illegal']}, failed {s['failed']}, unfinished {s['unfinished']} "
        f"| moves: mean {s['mean_moves'] or 0:.1f}, longest {s['longest']} | GNU Go's score disagrees "
        f"{s['gnugo_disagrees']}"
    )


def main(argv=None) -> int:
    args = parse_args(argv)
    if not os.access(args.gnugo, os.X_OK):
        return Cli.fail(f"GNU Go was not found at {args.gnugo}.")
    if args.out is not None:
        try:
            check_writable(args.out)  # before the first game, not after an hour of them
        except OutputError as error:
            return Cli.fail(error)
    results = {"settings": {k: v for k, v in vars(args).items() if k != "out"}, "boards": {}}
    for size in args.game:
        records = []
        start = time.monotonic()
        for index in range(2 * args.games):
            colour = BLACK if index % 2 == 0 else WHITE
            record = referee_game(args, size, colour, seed=index)
            records.append(record)
            print(f"go{size} game {index + 1}: agent {record['agent']}, {record['end']} {record.get('winner')} "
                  f"after {len(record['moves'])} moves {record['detail']}", flush=True)  # fmt: skip
        board = {"records": records, "minutes": (time.monotonic() - start) / 60}
        for what, colour in (("all", None), ("black", "black"), ("white", "white")):
            board[what] = summary([r for r in records if colour is None or r["agent"] == colour])
            print(line(f"go{size} agent {what}", board[what]), flush=True)
        results["boards"][f"go{size}"] = board
    if args.out is not None:
        write_json(args.out, results)
    refused = sum(b["all"]["refused"] for b in results["boards"].values())
    print(f"games ended by a refused legal move: {refused}")
    return 1 if refused else 0


if __name__ == "__main__":
    Cli.run_script(main)
