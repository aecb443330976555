"""The Go agent as a GTP engine (Go Text Protocol 2), for GoGui, Sabaki, Lizzie, twogtp or a match against GNU Go.

    python gtp.py --game go5 [--checkpoint FILE] [--sims N] [--seconds-per-move S] [--resign-threshold V]

Reads commands on stdin, answers on stdout (``= text`` or ``? message``, each followed by an empty line).
``genmove`` plays the most visited move of a PUCT search guided by the network (``Go_Net``; default
``pretrained/go{N}_policy_value.pt``): ``--sims`` simulations, or, under a clock (``time_settings``,
``kgs-time_settings``, ``time_left``) or ``--seconds-per-move``, as many as the time allows (``GTP_Time``),
checked after every simulation; ``--sims`` given then still caps them. Commands:

  protocol_version name version known_command list_commands quit
  boardsize clear_board komi play genmove undo showboard final_score
  final_status_list dead|alive|seki    by the agent's own play to the end (below)
  kgs-genmove_cleanup COLOUR           genmove that does not pass while dead stones of the other colour stand
  fixed_handicap N, place_free_handicap N, set_free_handicap V1 V2 ...   (GTP 2; none fixed below 7x7)
  time_settings MAIN BYO STONES, kgs-time_settings none|absolute|byoyomi|canadian ..., time_left COLOUR T S
  loadsgf FILE [MOVE], printsgf [FILE]
  lz-analyze, kata-analyze, analyze [COLOUR] [INTERVAL] [minmoves N] [maxmoves N]: a search that runs until
      the next command (or an empty line), an ``info`` line each INTERVAL centiseconds (``GTP_Analysis``)
  lz-genmove_analyze, kata-genmove_analyze, genmove_analyze COLOUR [INTERVAL]: genmove with those lines,
      ending ``play MOVE``

``final_status_list``: the agent plays the position out, both colours, 16 simulations a move, until two
passes (at most twice the board's points in moves); a chain whose stones all still stand is alive (in seki
when it then touches an empty point that neither colour owns by area), else dead. ``--resign-threshold V``
(off by default; self-play never resigns): ``genmove`` answers ``resign`` once the value of the agent's
chosen move (-1..1) has been below V for 3 of its moves in a row.

A bad command, bad arguments or an illegal move get ``? message`` (one line; the input it quotes cut short)
and the engine carries on (ids, numbers and points are ASCII, of bounded length; bytes that are not UTF-8 are
replaced). The rules are ``Go_Board``'s (area scoring, positional superko, suicide illegal) without
self-play's move cap: any legal move sequence is played, however long (``Go_Game.go_play_game``). The agent
is ``Arena.play_agent``'s, as in the GUI and ``evaluate.py --game goN``. The network plays the one board size
it was trained for (``boardsize`` of another size answers ``? unacceptable size``); it has no komi input. A
move for the side not to move is accepted (controllers set up positions that way); after two passes a
further move continues the game. A bad flag or model file: one sentence on stderr and exit status 2.
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a signal during the slow imports below ends the script as at any moment
    from run import Process_Signals

    Process_Signals.start_script()

import argparse
import collections
import os
import sys
import threading
import time

import numpy as np

from go import GTP_Analysis
from go.Agent_Flags import (
    RESIGN_MOVES,
    ResignRule,
    add_agent_flags,
    agent_from_args,
    go_name,
    resign_threshold,
    resolve_agent_flags,
)
from go.Go_Board import BLACK, EMPTY, PLAY_MAX_MOVES, WHITE, format_vertex, parse_vertex
from go.Go_Game import go_play_game
from go.GTP_Client import fixed_handicap_points, format_response, parse_color, parse_command
from go.GTP_Time import MAX_SECONDS, MAX_STONES, Clock, TimeSettings
from run import Cli
from run.Input_Echo import shown
from run.Run_IO import CheckpointError, find_checkpoint

NAME, VERSION = "rubik-alphazero-go", "1.0"
ANALYZE = {"lz-analyze": "lz", "kata-analyze": "kata", "analyze": "kata"}
GENMOVE_ANALYZE = {"lz-genmove_analyze": "lz", "kata-genmove_analyze": "kata", "genmove_analyze": "kata"}
COMMANDS = (
    (
        "protocol_version name version known_command list_commands boardsize clear_board komi play genmove "
        "undo final_score showboard quit final_status_list kgs-genmove_cleanup fixed_handicap place_free_handicap "
        "set_free_handicap time_settings kgs-time_settings time_left loadsgf printsgf"
    ).split()
    + list(ANALYZE)
    + list(GENMOVE_ANALYZE)
)
#: ``final_status_list``'s playout: simulations a move (it plays a whole game out, both colours: at 16 the
#: dead stones of the positions measured in docs/go.md were those at 50, in a quarter of the time), and at
#: most this many times the board's points in moves.
STATUS_SIMULATIONS = 16
STATUS_PLAYOUT_POINTS = 2
#: The network's cached evaluations are forgotten beyond this many positions (an analysis session would
#: otherwise keep every position it ever searched; about 100 MB on 5x5).
MAX_CACHED_STATES = 200_000
#: Time a timed move keeps after its search to choose, play and answer (measured: a few milliseconds).
REPLY_SECONDS = 0.05
MAX_SGF_BYTES = 1 << 20  # a file this large holds no game of these boards
MAX_ERROR_CHARS = 300  # a `?` reply is one line of at most this many characters, whatever it quotes


class GTPFailure(Exception):
    """A command that gets ``? message``."""


class Engine:
    """The game a GTP controller sees: a stack of positions (for ``undo``) and the moves between them, the
    stones set up before them (handicap, ``loadsgf``), the clock, and the agent that moves.

    ``seconds_per_move``: every move searches that long (None: ``--sims`` simulations), less when the clock
    asks; ``max_simulations``: the most simulations of a timed search (None: as many as fit in
    ``GTP_Analysis.MAX_TREE_BYTES``); ``resign_threshold``: ``--resign-threshold`` (None: never resign)."""

    def __init__(self, model, agent, komi: float | None, seconds_per_move=None, max_simulations=None,
                 resign_threshold=None):  # fmt: skip
        self.model, self.agent = model, agent
        self.seconds_per_move, self.max_simulations = seconds_per_move, max_simulations
        self.resign = ResignRule(resign_threshold)  # the rule evaluate.py's matches resign by too
        self.game = go_play_game(model.size, komi=komi, **model.game_options)
        self.clock = Clock()
        self.last_tree = None  # the search tree of the last genmove (genmove_analyze's final line)
        self.clear_board()
        # A first search before the first command: torch's first calls are slow (tenths of a second), and a
        # first move under a 1-second clock must not pay for them. It only fills the network's cache with the
        # empty board's evaluations, which the game's first search would compute the same.
        self.search(BLACK, timed=False, stop=lambda: True)

    @property
    def state(self) -> dict:
        return self.history[-1]

    @property
    def points(self) -> int:
        return self.game.size * self.game.size

    def clear_board(self) -> None:
        self._start(self.game.initial_state(1))

    def _start(self, state: dict, setup=None, handicap: int = 0) -> None:
        """A new game from ``state`` (its first position): ``setup`` the stones placed there by colour."""
        self.history, self.moves = [state], []
        self.setup, self.handicap = setup or {}, handicap
        self.resign.new_game()
        self._status = None  # (state, final status) of the last final_status_list
        self.clock.restart()

    def set_komi(self, komi: float) -> None:
        self.game = go_play_game(self.model.size, komi=komi, **self.model.game_options)
        self._status = None  # the playout's values read the komi at the end

    def _ready_for(self, colour: int, state: dict | None = None) -> dict:
        """``state`` (default: the current one) with ``colour`` to move (a copy), passes forgotten after a
        finished game."""
        state = {key: value.copy() for key, value in (state or self.state).items()}
        if state["move_count"][0] >= self.game.rules.max_moves:  # Go_Board.PLAY_MAX_MOVES: no real game
            raise GTPFailure(f"game over: the cap of {self.game.rules.max_moves:,} moves is reached")
        state["to_play"][0] = colour
        if state["passes"][0] >= 2:
            state["passes"][0] = 0
        return state

    def _after(self, state: dict, colour: int, action: int) -> dict:
        """The position after ``colour`` plays ``action`` in ``state``; GTPFailure when illegal."""
        state = self._ready_for(colour, state)
        if not self.game.legal_mask(state)[0, action]:
            raise GTPFailure("illegal move")
        return self.game.step(state, np.array([action]))

    def play(self, colour: int, action: int) -> None:
        self.history.append(self._after(self.state, colour, action))
        self.moves.append((colour, action))

    def search(self, colour: int, *, mask=None, arrived=None, timed=True, stop=None, tick=None):
        """The agent's search for ``colour`` in the current position, as ``(state, mask, tree)``: timed by
        the clock and ``--seconds-per-move`` from ``arrived`` (``time.monotonic()`` when the command came),
        or endless until ``stop()`` (an analysis: ``timed`` False), within the tree's memory."""
        state = self._ready_for(colour)
        mask = self.game.legal_mask(state) if mask is None else mask
        self.agent.new_game(self.game, colour)
        trim = getattr(self.agent.search.evaluator, "trim", None)
        if trim is not None:
            trim(MAX_CACHED_STATES)
        budget = self.clock.budget(colour, self.points, int(state["move_count"][0])) if timed else None
        if timed and self.seconds_per_move is not None:
            budget = self.seconds_per_move if budget is None else min(budget, self.seconds_per_move)
        if timed and budget is None:  # no clock: the agent's --sims
            return state, mask, self.agent.think(state, mask, stop=stop, tick=tick)
        deadline = None
        if budget is not None:
            deadline = (time.monotonic() if arrived is None else arrived) + max(0.0, budget - REPLY_SECONDS)
        most = GTP_Analysis.node_limit(self.game, state, Cli.MAX_SIMULATIONS) - 1
        if timed and self.max_simulations is not None:
            most = min(most, self.max_simulations)
        return state, mask, self.agent.think(state, mask, simulations=most, deadline=deadline, stop=stop, tick=tick)

    def genmove(self, colour: int, arrived=None, tick=None, cleanup: bool = False) -> int | None:
        """The agent's move for ``colour``, played (None: it resigns, nothing played). ``cleanup``: no pass
        while the final status finds dead stones of the other colour (``kgs-genmove_cleanup``)."""
        arrived = time.monotonic() if arrived is None else arrived
        mask = self._cleanup_mask(colour) if cleanup else None
        state, mask, self.last_tree = self.search(colour, mask=mask, arrived=arrived, tick=tick)
        action = self.agent.choose(state, self.last_tree.root_stats()[0], mask)
        self.clock.spend(colour, time.monotonic() - arrived)
        if self.resign.apply(colour, action, self.agent.last_value) is None:
            return None
        self.history.append(self.game.step(state, np.array([action])))
        self.moves.append((colour, action))
        return action

    def undo(self) -> None:
        if len(self.history) == 1:
            raise GTPFailure("cannot undo")
        self.history.pop()
        self.moves.pop()

    def final_score(self) -> str:
        score = float(self.game.rules.score(self.state)[0])
        return "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}"

    # -- the end of a game ------------------------------------------------------------------------------
    def final_status(self) -> dict[str, list[list[int]]]:
        """The chains of the current board by ``final_status_list``'s statuses (``chain_status``) after the
        agent's own play to the end (``playout``); kept for the position."""
        if self._status is None or self._status[0] is not self.state:
            self._status = (self.state, chain_status(self.game.rules, self.state["board"][0], self.playout()))
        return self._status[1]

    def playout(self) -> np.ndarray:
        """The board after the agent plays the position out, both colours, ``STATUS_SIMULATIONS`` a move,
        until two passes (at most ``STATUS_PLAYOUT_POINTS`` times the board's points in moves)."""
        state = self._ready_for(int(self.state["to_play"][0]))
        for _ in range(STATUS_PLAYOUT_POINTS * self.points):
            if self.game.is_terminal(state)[0]:
                break
            colour = int(state["to_play"][0])
            self.agent.new_game(self.game, colour)
            mask = self.game.legal_mask(state)
            tree = self.agent.think(state, mask, simulations=STATUS_SIMULATIONS)
            state = self.game.step(state, np.array([self.agent.choose(state, tree.root_stats()[0], mask)]))
        return state["board"][0]

    def _cleanup_mask(self, colour: int) -> np.ndarray | None:
        """The moves of ``kgs-genmove_cleanup``: while the final status has dead stones of the other colour,
        no pass and no filling of one's own one-point eyes (None: no dead stones, every legal move)."""
        from go.Arena import own_eyes

        board = self.state["board"][0]
        if not any(board[chain[0]] == -colour for chain in self.final_status()["dead"]):
            return None
        state = self._ready_for(colour)
        mask = self.game.legal_mask(state)
        mask[0, :-1] &= ~own_eyes(self.game, state)[0]
        mask[0, -1] = not mask[0, :-1].any()
        return mask

    # -- handicap -----------------------------------------------------------------------------------------
    def require_empty(self) -> None:
        if len(self.history) > 1 or self.state["board"].any():
            raise GTPFailure("board not empty")

    def place_handicap(self, points: list[int]) -> None:
        """Black's handicap stones on ``points`` of the empty board; White moves next (not moves: undo
        cannot take them back)."""
        board = np.zeros(self.points, dtype=np.int8)
        board[points] = BLACK
        self._start(self.game.rules.state_from_board(board, WHITE), {BLACK: sorted(points)}, len(points))

    def place_free_handicap(self, stones: int) -> list[int]:
        """``stones`` points the agent picks, one search each (Black to move every time, no pass)."""
        state = self._ready_for(BLACK)
        points = []
        for _ in range(stones):
            mask = self.game.legal_mask(state)
            mask[0, -1] = False
            if not mask.any():  # the board is full: fewer stones (the spec allows it)
                break
            self.agent.new_game(self.game, BLACK)
            action = self.agent.choose(state, self.agent.think(state, mask).root_stats()[0], mask)
            points.append(action)
            state = self._ready_for(BLACK, self.game.step(state, np.array([action])))
        self.place_handicap(points)
        return points

    # -- SGF ----------------------------------------------------------------------------------------------
    def sgf(self) -> str:
        """The game as SGF (``Arena.sgf_text``): set-up stones, moves, the result once two passes ended it."""
        from go.Arena import GameRecord, sgf_text

        record = GameRecord("", "", moves=[action for _, action in self.moves])
        record.colours = [colour for colour, _ in self.moves]
        record.setup, record.handicap = self.setup, self.handicap
        record.to_play = int(self.history[0]["to_play"][0])
        if self.game.is_terminal(self.state)[0]:
            record.score = float(self.game.rules.score(self.state)[0])
            record.winner = int(np.sign(record.score))
        return sgf_text(self.game, record)

    def load_sgf(self, path: str, move_number: int | None) -> None:
        """The game of the SGF file ``path`` up to, not including, move ``move_number`` (1: none; None: all):
        its komi (kept when the file has none), set-up stones and moves. GTPFailure, the game unchanged,
        for a file that cannot be read or holds a game this engine cannot play."""
        from sgfmill import sgf

        try:
            with open(path, "rb") as file:
                data = file.read(MAX_SGF_BYTES + 1)
        except OSError as error:
            raise GTPFailure(f"cannot load file {shown(path)}: {error.strerror or 'unreadable'}") from None
        if len(data) > MAX_SGF_BYTES:
            raise GTPFailure(f"cannot load file {shown(path)}: larger than {MAX_SGF_BYTES:,} bytes")
        try:
            record = sgf.Sgf_game.from_bytes(data)
            komi = record.get_komi() if record.get_root().has_property("KM") else self.game.komi
            nodes = record.get_main_sequence()
            if record.get_size() != self.game.size:
                raise GTPFailure("unacceptable size")
            if not (np.isfinite(komi) and abs(komi) <= Cli.MAX_KOMI):
                raise ValueError(f"komi {komi:g} is beyond +-{Cli.MAX_KOMI:g}")
            black, white, empty = nodes[0].get_setup_stones()
            if empty or any(node.has_setup_stones() for node in nodes[1:]):
                raise ValueError("stones set up after the first position are not supported")
            moves = [node.get_move() for node in nodes]
            player = nodes[0].get("PL") if nodes[0].has_property("PL") else None  # "b" or "w"
            handicap = nodes[0].get("HA") if nodes[0].has_property("HA") else 0
        except ValueError as error:  # sgfmill's sentence for a file that is no SGF game
            raise GTPFailure(f"cannot load file {shown(path)}: {' '.join(str(error).split())}") from None
        size = self.game.size
        point = {colour: sorted((size - 1 - row) * size + col for row, col in points)
                 for colour, points in ((BLACK, black), (WHITE, white))}  # fmt: skip
        moves = [(BLACK if c == "b" else WHITE, size * size if m is None else (size - 1 - m[0]) * size + m[1])
                 for c, m in moves if c is not None]  # fmt: skip
        # Who moves first: PL, else the first move's colour, else White after a handicap, else Black.
        to_play = moves[0][0] if moves else WHITE if handicap and black else BLACK
        to_play = {"b": BLACK, "w": WHITE}.get(player, to_play)
        board = np.zeros(self.points, dtype=np.int8)
        board[point[BLACK]], board[point[WHITE]] = BLACK, WHITE
        game, self.game = self.game, go_play_game(size, komi=komi, **self.model.game_options)
        try:
            states = [self.game.rules.state_from_board(board, to_play)]
            for index, (colour, action) in enumerate(moves[: None if move_number is None else move_number - 1]):
                try:
                    states.append(self._after(states[-1], colour, action))
                except GTPFailure:
                    raise GTPFailure(f"cannot load file {shown(path)}: move {index + 1} is illegal") from None
        except GTPFailure:
            self.game = game
            raise
        self._start(states[0], {c: p for c, p in point.items() if p}, handicap if point[BLACK] else 0)
        self.history, self.moves = states, moves[: len(states) - 1]


def chain_status(rules, board: np.ndarray, end: np.ndarray) -> dict[str, list[list[int]]]:
    """The chains of ``board`` (``N*N``) as ``alive``, ``dead`` and ``seki`` lists of their points, judged by
    ``end``, the board the game reached from it: dead unless every stone of the chain still stands there; of
    the standing ones, in seki those next to an empty point that neither colour owns there (by area: it
    reaches both colours), alive the others."""
    size = rules.size
    neutral = (rules.ownership(end[None])[0] == EMPTY) & (end == EMPTY)
    labels = rules.components(board[None])[0]
    status = {"alive": [], "dead": [], "seki": []}
    for label in np.unique(labels[board != EMPTY]):
        chain = np.flatnonzero(labels == label)
        if not (end[chain] == board[chain]).all():
            status["dead"].append(chain.tolist())
        else:
            status["seki" if neutral[_neighbours(chain, size)].any() else "alive"].append(chain.tolist())
    return status


def _neighbours(points: np.ndarray, size: int) -> np.ndarray:
    """The on-board points next to ``points`` (with repeats)."""
    rows, cols = np.divmod(points, size)
    found = [(rows + dr, cols + dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))]
    return np.concatenate([(r * size + c)[(r >= 0) & (r < size) & (c >= 0) & (c < size)] for r, c in found])


# Long by design: the GTP command table, one branch per command (GTP 2 and the analysis extensions), read
# top to bottom as list_commands lists them.
def handle(engine: Engine, name: str, args: list[str], arrived: float | None = None) -> str:
    """The text of the ``=`` reply to one command (``arrived``: when it came, for the clock); GTPFailure for
    a ``?`` reply. The analysis commands stream and are answered by ``stream``."""
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
        if name in ("genmove", "kgs-genmove_cleanup"):
            if len(args) != 1:
                raise GTPFailure(f"{name} needs a colour")
            action = engine.genmove(parse_color(args[0]), arrived, cleanup=name != "genmove")
            return "resign" if action is None else format_vertex(action, size)
        if name == "undo":
            engine.undo()
            return ""
        if name == "final_score":
            return engine.final_score()
        if name == "final_status_list":
            if len(args) != 1 or args[0].lower() not in ("alive", "dead", "seki"):
                raise GTPFailure("final_status_list needs alive, dead or seki")
            chains = engine.final_status()[args[0].lower()]
            return "\n".join(" ".join(format_vertex(p, size) for p in chain) for chain in chains)
        if name == "showboard":
            return engine.game.to_text(engine.state)
        if name == "fixed_handicap":
            stones = _handicap_count(args)
            engine.require_empty()
            try:
                points = fixed_handicap_points(stones, size)
            except ValueError as error:
                raise GTPFailure(str(error)) from None
            engine.place_handicap(points)
            return " ".join(format_vertex(p, size) for p in points)
        if name == "place_free_handicap":
            stones = _handicap_count(args)
            engine.require_empty()
            if not 2 <= stones < engine.points:
                raise GTPFailure("invalid number of stones")
            return " ".join(format_vertex(p, size) for p in engine.place_free_handicap(stones))
        if name == "set_free_handicap":
            points = [parse_vertex(word, size) for word in args]
            engine.require_empty()
            if not 2 <= len(points) < engine.points or len(set(points)) < len(points) or engine.points in points:
                raise GTPFailure("bad vertex list: 2 or more distinct points, fewer than the board's, no pass")
            engine.place_handicap(points)
            return ""
        if name == "time_settings":
            if len(args) != 3:
                raise GTPFailure("time_settings needs main time, byo-yomi time and byo-yomi stones")
            engine.clock.set(TimeSettings.from_gtp(_seconds(args[0]), _seconds(args[1]), _stones(args[2])))
            return ""
        if name == "kgs-time_settings":
            engine.clock.set(TimeSettings.from_kgs(args, _seconds, _stones))
            return ""
        if name == "time_left":
            if len(args) != 3:
                raise GTPFailure("time_left needs a colour, a time and a number of stones")
            engine.clock.time_left(parse_color(args[0]), _seconds(args[1], negative=True), _stones(args[2]))
            return ""
        if name == "loadsgf":
            if not 1 <= len(args) <= 2:
                raise GTPFailure("loadsgf needs a file name and, optionally, a move number")
            move = _count(args[1], "move number", 1, PLAY_MAX_MOVES) if len(args) == 2 else None
            engine.load_sgf(args[0], move)
            return ""
        if name == "printsgf":
            if len(args) > 1:
                raise GTPFailure("printsgf takes at most a file name")
            return _print_sgf(engine, args[0] if args else None)
    except ValueError as error:  # a colour, vertex or number that does not parse
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


def _seconds(text: str, negative: bool = False) -> float:
    """A time argument: an ASCII number (``Cli.strict_float``) within 0..``MAX_SECONDS`` (also below 0 with
    ``negative``: a lagging controller's ``time_left``); ValueError otherwise."""
    value = Cli.strict_float(text)
    if not (np.isfinite(value) and (negative or value >= 0) and abs(value) <= MAX_SECONDS):
        raise ValueError(f"{shown(text)} is no time in seconds (0 to {MAX_SECONDS:g})")
    return value


def _stones(text: str) -> int:
    return _count(text, "stones", 0, MAX_STONES)


def _count(text: str, name: str, lo: int, hi: int) -> int:
    """An integer argument in ``lo..hi`` (``Cli.int_in``: ASCII digits of bounded length); ValueError."""
    try:
        return Cli.int_in(lo, hi)(text)
    except argparse.ArgumentTypeError as error:
        raise ValueError(f"{name} {error}") from None


def _handicap_count(args: list[str]) -> int:
    if len(args) != 1:
        raise GTPFailure("syntax error: one number of stones is needed")
    return _count(args[0], "number of stones", 0, MAX_STONES)


def _print_sgf(engine: Engine, path: str | None) -> str:
    """``printsgf``'s reply: the SGF text, or nothing once it is written to ``path``."""
    from run.Run_IO import atomic_write

    text = engine.sgf()
    if path is None:
        return text
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):  # atomic_write would make the folders
        raise GTPFailure(f"cannot write file {shown(path)}: no such folder")
    try:
        atomic_write(path, lambda file: file.write(text), "w")
    except OSError as error:
        cause = error.__cause__ if isinstance(error.__cause__, OSError) else None
        reason = cause.strerror if cause is not None and cause.strerror else "not a regular file or not writable"
        raise GTPFailure(f"cannot write file {shown(path)}: {reason}") from None
    return ""


# --------------------------------------------------------------------------- the controller's input
class Commands:
    """The controller's command lines as they arrive, each with ``time.monotonic()`` at its arrival: a thread
    reads them, so that a search sees the next command coming (an analysis ends there) and a move's clock
    starts when its command arrives, not when the engine gets to it. ``None`` marks the end of the input."""

    def __init__(self, stream):
        self._lines: collections.deque = collections.deque()
        self._ready = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True, name="gtp-input").start()

    def _read(self, stream) -> None:
        try:
            for line in stream:
                self._put((line, time.monotonic()))
        finally:  # the end of the input, or a stream that failed: the engine stops after what came
            self._put(None)

    def _put(self, item) -> None:
        with self._ready:
            self._lines.append(item)
            self._ready.notify_all()

    def next(self):
        """The next ``(line, arrived)``, waiting for it; None at the end of the input."""
        with self._ready:
            self._ready.wait_for(lambda: self._lines)
            return self._lines.popleft()

    def waiting(self) -> bool:
        """A line (or the end of the input) has come and not been taken."""
        return bool(self._lines)

    def wait(self) -> None:
        """Until ``waiting``."""
        with self._ready:
            self._ready.wait_for(lambda: self._lines)


def stream(engine: Engine, name: str, args: list[str], command_id, arrived: float, out, commands: Commands) -> None:
    """Answer an analysis command on ``out``: ``=`` and ``info`` lines, then, for an analysis, at the next
    command (or the end of the input) the empty line that ends the reply; for a genmove variant the move,
    ``play MOVE``. Bad arguments: ``? message``, as any command."""
    genmove = name in GENMOVE_ANALYZE
    try:
        request = GTP_Analysis.parse_request(args, (GENMOVE_ANALYZE if genmove else ANALYZE)[name], genmove)
        colour = int(engine.state["to_play"][0]) if request.colour is None else request.colour
        engine._ready_for(colour)  # a failure (the move cap) before the reply starts
    except ValueError as error:
        raise GTPFailure(f"syntax error: {error}") from None
    out.write(format_response("", command_id)[:-1])  # "=id\n": the info lines follow, the empty line last
    out.flush()
    c_puct = engine.agent.c_puct
    last = [time.monotonic()]

    def line(tree) -> None:
        text = GTP_Analysis.info_line(tree, c_puct, request, engine.agent.score_leads(tree))
        if text:
            out.write(text + "\n")
            out.flush()

    def tick(tree) -> None:
        if request.interval is not None and time.monotonic() - last[0] >= request.interval:
            last[0] = time.monotonic()
            line(tree)

    if genmove:
        action = engine.genmove(colour, arrived, tick=tick)
        if request.interval is not None:  # the search's last word before the move
            line(engine.last_tree)
        out.write(f"play {'resign' if action is None else format_vertex(action, engine.game.size)}\n\n")
    else:
        _, _, tree = engine.search(colour, timed=False, stop=commands.waiting, tick=tick)
        if not commands.waiting():  # the tree is full: its last line, then nothing until the next command
            if request.interval is not None:
                line(tree)
            commands.wait()
        out.write("\n")
    out.flush()


def serve(engine: Engine, commands: Commands, out) -> None:
    """Answer every command of ``commands`` on ``out`` until ``quit`` or the end of the input."""
    while (item := commands.next()) is not None:
        line, arrived = item
        try:
            command = parse_command(line)
        except ValueError as error:  # an id that is no GTP id: answered without one, the engine goes on
            out.write(format_response(str(error), None, error=True))
            out.flush()
            continue
        if command is None:
            continue
        command_id, name, args = command
        if name == "quit":
            out.write(format_response("", command_id))
            out.flush()
            return
        try:
            if name in ANALYZE or name in GENMOVE_ANALYZE:
                stream(engine, name, args, command_id, arrived, out, commands)
                continue
            reply = format_response(handle(engine, name, args, arrived), command_id)
        except GTPFailure as failure:
            # One line, bounded, whatever the failure quotes (an SGF library's message, a file name).
            message = " ".join(str(failure).split())
            if len(message) > MAX_ERROR_CHARS:
                message = message[: MAX_ERROR_CHARS - 3] + "..."
            reply = format_response(message, command_id, error=True)
        out.write(reply)
        out.flush()


def parse_args(argv=None) -> argparse.Namespace:
    parser = Cli.ArgumentParser(description=__doc__, formatter_class=Cli.HelpFormatter)
    parser.add_argument("--game", type=go_name, default="go5", help="the board: go5, go7, go9, ... go19")
    parser.add_argument(
        "--checkpoint", type=Cli.nonempty_path, help="Go model file (default: pretrained/go{N}_policy_value.pt)"
    )
    add_agent_flags(parser)
    parser.add_argument(
        "--seconds-per-move",
        type=seconds_per_move,
        help="every move searches this long, less when the controller's clock asks (default: --sims simulations; "
        "under a clock, what the clock allows)",
    )
    parser.add_argument(
        "--resign-threshold",
        type=resign_threshold,
        help=f"resign when the agent's value of its move (-1..1) is below this for {RESIGN_MOVES} of its moves "
        "in a row, e.g. -0.9 (default: never)",
    )
    Cli.add_device_flag(parser)
    parser.add_argument("--komi", type=Cli.komi, help="komi until a `komi` command (default: the board's)")
    parser.add_argument("--seed", type=Cli.seed, default=0, help="seed of torch and numpy")
    args = parser.parse_args(argv)
    # A timed search is capped by --sims only when it was given: the default is for moves without a clock.
    args.max_simulations = args.sims
    return resolve_agent_flags(args)


def seconds_per_move(text: str) -> float:
    """argparse type of ``--seconds-per-move``: positive, at most a day."""
    value = Cli.positive_float(text)
    if value > 86_400:
        raise argparse.ArgumentTypeError(f"must be at most 86400 (a day), got {text}")
    return value


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
    engine = Engine(model, agent, args.komi, args.seconds_per_move, args.max_simulations, args.resign_threshold)
    # Bytes that are not UTF-8 become U+FFFD: a controller's stray byte is a bad command, not a dead engine.
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    serve(engine, Commands(sys.stdin), sys.stdout)
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
