"""The Go agent as a GTP engine (Go Text Protocol 2), for GoGui, Sabaki, twogtp or a match against GNU Go.

    python gtp.py --game go5 [--checkpoint FILE] [--sims N] [--c-puct C] [--seed S] [--device cpu]

Reads commands on stdin, answers on stdout (``= text`` or ``? message``, each followed by an empty line).
Commands: protocol_version, name, version, known_command, list_commands, boardsize, clear_board, komi,
play, genmove, undo, final_score, showboard, quit. ``genmove`` plays the most visited move of a PUCT search
of ``--sims`` simulations guided by the network (``Go_Net``; default ``pretrained/go{N}_policy_value.pt``).
A bad command, bad arguments or an illegal move get ``? message`` and the engine carries on (ids, numbers
and points are ASCII, of bounded length; bytes that are not UTF-8 are replaced). The rules are
``Go_Board``'s (area scoring, positional superko, suicide illegal) without self-play's move cap: any legal
move sequence is played, however long (``Go_Game.go_play_game``). The agent is ``Arena.play_agent``'s, as
in the GUI and ``evaluate.py --game goN``. The network plays the one board size
it was trained for (``boardsize`` of another size answers ``? unacceptable size``). A move for the side
not to move is accepted (controllers set up positions that way); after two passes a further move
continues the game. A bad flag or model file: one sentence on stderr and exit status 2.
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a signal during the slow imports below ends the script as at any moment
    from run import Process_Signals

    Process_Signals.start_script()

import argparse
import os
import sys

import numpy as np

from go.Go_Board import format_vertex, parse_vertex
from go.Go_Game import go_play_game
from go.GTP_Client import format_response, parse_color, parse_command
from run import Cli
from run.Run_IO import CheckpointError, find_checkpoint

NAME, VERSION = "rubik-alphazero-go", "1.0"
COMMANDS = (
    "protocol_version name version known_command list_commands boardsize clear_board komi play genmove "
    "undo final_score showboard quit"
).split()
#: The agent's play settings (GTP, matches, the GUI; docs/go.md measures them): self-play trains with the
#: seed's c_puct 0.3 and 30 simulations, but play is stronger with wider search over more simulations and
#: the network read under the 8 board symmetries (``Arena.SymmetricEvaluator``).
#: 200 simulations on 5x5; on larger boards 400: on 7x7 the search passed too early at 100 and 200 and lost
#: 30% of its games as Black against GNU Go, and won every one at 400.
DEFAULT_SIMULATIONS = 200
LARGE_BOARD_SIMULATIONS = 400
DEFAULT_C_PUCT = 1.0
DEFAULT_SYMMETRIC = True


def default_simulations(size: int) -> int:
    """The agent's simulations a move on a ``size`` x ``size`` board (the play defaults above)."""
    return DEFAULT_SIMULATIONS if size <= 5 else LARGE_BOARD_SIMULATIONS


def add_agent_flags(parser: argparse.ArgumentParser) -> None:
    """``--sims``, ``--c-puct`` and ``--symmetric``: the agent's search, with the play defaults
    (``resolve_agent_flags`` sets ``--sims`` from the board once the flags are read)."""
    parser.add_argument(
        "--sims",
        type=Cli.simulations,
        help=f"the agent's simulations a move (default: {DEFAULT_SIMULATIONS} on 5x5, "
        f"{LARGE_BOARD_SIMULATIONS} on larger boards)",
    )
    parser.add_argument("--c-puct", type=Cli.c_puct, default=DEFAULT_C_PUCT, help="the agent's PUCT constant")
    parser.add_argument(
        "--symmetric",
        action=argparse.BooleanOptionalAction,
        default=DEFAULT_SYMMETRIC,
        help="the agent averages its network over the board's 8 symmetries (Arena.SymmetricEvaluator)",
    )


def resolve_agent_flags(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with ``--sims`` given its board's default (``args.game``: the size) when it was not set."""
    if args.sims is None:
        args.sims = default_simulations(args.game)
    return args


def agent_from_args(model, args: argparse.Namespace, **kw):
    """The agent of ``add_agent_flags``'s flags (``--sims``, ``--c-puct``, ``--symmetric``): ``Arena.play_agent``,
    the one function that builds the agent of gtp.py, the GUI and ``evaluate.py --game goN`` (``kw``: its
    ``device``, ``rng``, ``sample_moves``, ``name``, ``wrap``)."""
    from go.Arena import play_agent  # torch: imported once the flags are read (a fast --help)

    return play_agent(model, args.sims, args.c_puct, args.symmetric, **kw)


class GTPFailure(Exception):
    """A command that gets ``? message``."""


class Engine:
    """The game a GTP controller sees: a stack of positions (for ``undo``) and the agent that moves."""

    def __init__(self, model, agent, komi: float | None):
        self.model, self.agent = model, agent
        self.game = go_play_game(model.size, komi=komi, history=model.history)
        self.clear_board()

    @property
    def state(self) -> dict:
        return self.history[-1]

    def clear_board(self) -> None:
        self.history = [self.game.initial_state(1)]

    def set_komi(self, komi: float) -> None:
        self.game = go_play_game(self.model.size, komi=komi, history=self.model.history)

    def _ready_for(self, colour: int) -> dict:
        """The current state with ``colour`` to move (a copy), passes forgotten after a finished game."""
        state = {key: value.copy() for key, value in self.state.items()}
        if state["move_count"][0] >= self.game.rules.max_moves:  # Go_Board.PLAY_MAX_MOVES: no real game
            raise GTPFailure(f"game over: the cap of {self.game.rules.max_moves:,} moves is reached")
        state["to_play"][0] = colour
        if state["passes"][0] >= 2:
            state["passes"][0] = 0
        return state

    def play(self, colour: int, action: int) -> None:
        state = self._ready_for(colour)
        if not self.game.legal_mask(state)[0, action]:
            raise GTPFailure("illegal move")
        self.history.append(self.game.step(state, np.array([action])))

    def genmove(self, colour: int) -> int:
        state = self._ready_for(colour)
        self.agent.new_game(self.game, colour)
        action = self.agent.genmove(state)
        self.history.append(self.game.step(state, np.array([action])))
        return action

    def undo(self) -> None:
        if len(self.history) == 1:
            raise GTPFailure("cannot undo")
        self.history.pop()

    def final_score(self) -> str:
        score = float(self.game.rules.score(self.state)[0])
        return "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}"


def handle(engine: Engine, name: str, args: list[str]) -> str:
    """The text of the ``=`` reply to one command; GTPFailure for a ``?`` reply."""
    size = engine.game.size
    try:
        if name == "protocol_version":
            return "2"
        if name == "name":
            return NAME
        if name == "version":
            return VERSION
        if name == "known_command":
            return "true" if args and args[0].lower() in COMMANDS else "false"
        if name == "list_commands":
            return "\n".join(COMMANDS)
        if name == "boardsize":
            if len(args) != 1 or not Cli.is_ascii_digits(args[0]) or len(args[0]) > 3:
                raise GTPFailure("boardsize needs one integer")
            if int(args[0]) != size:
                raise GTPFailure("unacceptable size")
            engine.clear_board()
            return ""
        if name == "clear_board":
            engine.clear_board()
            return ""
        if name == "komi":
            engine.set_komi(_komi(args))
            return ""
        if name == "play":
            if len(args) != 2:
                raise GTPFailure("play needs a colour and a vertex")
            engine.play(parse_color(args[0]), parse_vertex(args[1], size))
            return ""
        if name == "genmove":
            if len(args) != 1:
                raise GTPFailure("genmove needs a colour")
            return format_vertex(engine.genmove(parse_color(args[0])), size)
        if name == "undo":
            engine.undo()
            return ""
        if name == "final_score":
            return engine.final_score()
        if name == "showboard":
            return engine.game.to_text(engine.state)
    except ValueError as error:  # a colour or vertex that does not parse
        raise GTPFailure(f"syntax error: {error}") from None
    raise GTPFailure("unknown command")


def _komi(args: list[str]) -> float:
    """The komi of ``komi``'s arguments: one ASCII number (``Cli.strict_float``), finite, within +-MAX_KOMI."""
    try:
        komi = Cli.strict_float(args[0]) if len(args) == 1 else float("nan")
    except ValueError:
        komi = float("nan")
    if not (np.isfinite(komi) and abs(komi) <= Cli.MAX_KOMI):
        raise GTPFailure("komi needs one number")
    return komi


def serve(engine: Engine, lines, out) -> None:
    """Answer every command of ``lines`` on ``out`` until ``quit`` or the end of input."""
    for line in lines:
        try:
            command = parse_command(line)
        except ValueError as error:  # an id that is no GTP id: answered without one, the engine goes on
            out.write(format_response(str(error), None, error=True))
            out.flush()
            continue
        if command is None:
            continue
        command_id, name, args = command
        try:
            reply = format_response(handle(engine, name, args), command_id) if name != "quit" else None
        except GTPFailure as failure:
            reply = format_response(str(failure), command_id, error=True)
        if reply is None:
            out.write(format_response("", command_id))
            out.flush()
            return
        out.write(reply)
        out.flush()


def parse_args(argv=None) -> argparse.Namespace:
    parser = Cli.ArgumentParser(description=__doc__, formatter_class=Cli.HelpFormatter)
    parser.add_argument("--game", type=go_name, default="go5", help="the board: go5, go7, go9, ... go19")
    parser.add_argument(
        "--checkpoint", type=Cli.nonempty_path, help="Go model file (default: pretrained/go{N}_policy_value.pt)"
    )
    add_agent_flags(parser)
    Cli.add_device_flag(parser)
    parser.add_argument("--komi", type=Cli.komi, help="komi until a `komi` command (default: the board's)")
    parser.add_argument("--seed", type=Cli.seed, default=0, help="seed of torch and numpy")
    return resolve_agent_flags(parser.parse_args(argv))


def go_name(text: str) -> int:
    """argparse type of ``--game``: ``goN`` with N from 5 to 19 -> N."""
    digits = text.lower().removeprefix("go")
    if not text.lower().startswith("go") or not Cli.is_ascii_digits(digits) or not 5 <= int(digits) <= 19:
        raise argparse.ArgumentTypeError(f"must be go5 ... go19, got {text!r}")
    return int(digits)


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch  # after the flags: --help and a bad flag answer at once

    from go.Go_Net import load_go_model

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # one search at a time: batch-1 forwards are fastest on one thread
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained", f"go{args.game}_policy_value.pt")
    try:
        device = Cli.resolve_device(args.device)
        path = find_checkpoint(args.checkpoint or default, f"go{args.game}_policy_value.pt")
        model = load_go_model(path, args.game, device)
    except (CheckpointError, Cli.DeviceError) as error:
        return Cli.fail(error)
    agent = agent_from_args(model, args, rng=np.random.default_rng(args.seed), device=device)
    engine = Engine(model, agent, args.komi)
    # Bytes that are not UTF-8 become U+FFFD: a controller's stray byte is a bad command, not a dead engine.
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    serve(engine, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
