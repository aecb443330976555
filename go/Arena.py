"""Go matches between players: the network+MCTS agent, uniform random, a pure rollout MCTS (no network),
GNU Go (or any engine) over GTP, an earlier checkpoint.

A player (``Player``) is told of a new game (``new_game``), asked for moves (``genmove``: an action, or
None to resign) and told of its opponent's moves (``observe``). ``play_game`` plays one game on a
``Go_Game.GoGame`` and gives a ``GameRecord``; ``run_match`` plays a match, colours alternating (the
agent Black first) or fixed, and sums it up in a ``MatchResult``: the agent's wins, losses and draws, its
win rate with a 95% Wilson interval (over the games played; draws count half) overall and by colour,
the mean margin (the area score from the agent's side, resigned games left out), the resignations, and
the games "not played" with their reason. The engine trusts no opponent: a GTP player's crash, hang
(timeout), malformed reply or illegal move (``GTP_Client.GTPError``) ends that game as not played and the
match goes on; a GTP player restarts its engine for the next game. With ``sgf_dir`` every game is
written as an SGF file (FF[4], Chinese rules; a resignation as ``B+R`` / ``W+R``, a game not played as
``Void`` with the reason in a comment).
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch

from Action_MCTS import pick_actions_batch
from engine.Search_Tree import N_ROW, W_ROW, SearchTree, take_rows
from go.Go_Board import BLACK, WHITE
from go.Go_Game import GoGame, go_game
from go.Go_Net import expected_margin
from go.GTP_Client import GTPClient, GTPError
from MCTS_Core import MCTS, NetworkEvaluator
from run.Run_IO import atomic_write

WILSON_Z = 1.96  # a 95% interval
#: A search cut short by a clock or by input still runs this many simulations: the root's expansion and one
#: visit, so that the most visited move is the network's favourite rather than the first legal point.
MIN_SIMULATIONS = 2
COLOURS = ("alternate", "black", "white")


class Player(Protocol):
    name: str

    def new_game(self, game: GoGame, colour: int) -> None:
        """A new game on ``game``'s board and komi; the player plays ``colour``."""

    def genmove(self, state: dict) -> int | None:
        """The move for the player to move of ``state`` (a one-state batch), None to resign."""

    def observe(self, state: dict, action: int) -> None:
        """``action`` was played in ``state`` (before the move): the opponent's move, or either colour's move
        of a game's given opening (``play_game``)."""

    def close(self) -> None: ...


class SymmetricEvaluator(NetworkEvaluator):
    """A ``NetworkEvaluator`` that reads each position under the board's 8 symmetries in one batch and
    averages them: the priors brought back to the board's own points, the values as they are. A network
    is not exactly symmetric; the average is, so the agent plays a position the same however the board
    is turned (AlphaGo's evaluation). Costs one network call of 8 rows a position."""

    def forward(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, rules = len(inputs), self.game.rules
        images = self.game.symmetries(inputs, np.zeros((n, self.game.num_actions), np.float32))
        priors, values = super().forward(np.concatenate([rows for rows, _ in images]))
        priors = priors.reshape(len(images), n, -1)
        back = sum(rules.policy_from_symmetry(k, priors[k]) for k in range(len(images))) / len(images)
        return back.astype(np.float32), values.reshape(len(images), n).mean(axis=0)


def network_evaluator(
    model: torch.nn.Module, game: GoGame, symmetric: bool = False, device=None, precision: str = "fp32"
) -> NetworkEvaluator:
    """The network's evaluator for ``game``: averaged over the 8 symmetries (``symmetric``) or plain, its
    products at ``precision`` (``Precision.PRECISIONS``)."""
    return (SymmetricEvaluator if symmetric else NetworkEvaluator)(model, device, game=game, precision=precision)


# --------------------------------------------------------------------------- players
class RandomPlayer:
    """Uniformly random among the legal moves, the pass included."""

    def __init__(self, rng: np.random.Generator, name: str = "random"):
        self.rng, self.name = rng, name

    def new_game(self, game: GoGame, colour: int) -> None:
        self.game = game

    def genmove(self, state: dict) -> int:
        return int(self.rng.choice(np.flatnonzero(self.game.legal_mask(state)[0])))

    def observe(self, state: dict, action: int) -> None:
        pass

    def close(self) -> None:
        pass


class SearchPlayer:
    """The most visited root move of a PUCT search (``MCTS_Core.MCTS``) with ``evaluator`` (None: the
    network ``model``'s, cached across moves and games); one search object serves every game.
    ``sample_moves``: the first moves of a game (move count below it) are drawn from the visit counts
    (temperature 1, with ``rng``) instead: two deterministic players would otherwise replay one game
    per colour, and a match of identical games measures nothing."""

    def __init__(
        self,
        name: str,
        simulations: int,
        c_puct: float,
        model: torch.nn.Module | None = None,
        evaluator=None,
        sample_moves: int = 0,
        rng: np.random.Generator | None = None,
        symmetric: bool = False,
        device=None,
        wrap=None,
        precision: str = "fp32",
    ):
        self.name, self.simulations, self.c_puct, self.symmetric = name, simulations, c_puct, symmetric
        self.precision = precision  # the network's products (Precision.PRECISIONS): the agent's --precision
        self.device = device  # where the network runs (None: the model's own device, the CPU)
        self.wrap = wrap  # evaluator -> evaluator around the network's (the GUI's cancellation), or None
        self.sample_moves = sample_moves
        self.model, self.evaluator = model, evaluator
        self.search: MCTS | None = None
        self.rng = np.random.default_rng(0) if rng is None else rng
        self.last_value = 0.0  # the chosen move's mean return for the player (the agent's own estimate)
        self.last_visits: np.ndarray | None = None  # (A,) the last search's root visit counts

    def new_game(self, game: GoGame, colour: int) -> None:
        wants = getattr(self.model, "game_options", game.network_options)
        if wants != game.network_options:
            raise ValueError(f"{self.name}'s network needs the game {wants}, the game is {game.network_options}")
        if self.search is None or self.search.game != game:
            evaluator = self.evaluator
            if evaluator is None and self.model is not None:
                evaluator = network_evaluator(self.model, game, self.symmetric, self.device, self.precision)
            if self.wrap is not None:
                evaluator = self.wrap(evaluator)
            self.search = MCTS(
                self.model,
                c_puct=self.c_puct,
                num_simulations=self.simulations,
                evaluator=evaluator,
                game=game,
                device=self.device,
            )

    def genmove(self, state: dict) -> int | None:
        mask = self.search.game.legal_mask(state)
        return self.choose(state, self.think(state, mask).root_stats()[0], mask)

    def think(self, state: dict, mask=None, simulations=None, deadline=None, stop=None, tick=None) -> SearchTree:
        """The search of ``genmove`` over the moves of ``mask`` (default: the legal ones), as a tree:
        ``simulations`` (default: the search's ``num_simulations``) or fewer, once ``time.monotonic()``
        reaches ``deadline`` or ``stop()`` says so (both checked after every simulation, from the
        ``MIN_SIMULATIONS``-th on, so that some move has a visit); ``tick(tree)`` after every simulation.
        ``gtp.py`` searches so under a clock and for its analysis."""
        mask = self.search.game.legal_mask(state) if mask is None else mask
        total = self.search.num_simulations if simulations is None else simulations
        tree = self.search.start(state, mask, max_nodes=total + 1)
        for done in range(1, total):
            if done >= MIN_SIMULATIONS and (
                (deadline is not None and time.monotonic() >= deadline) or (stop is not None and stop())
            ):
                break
            self.search.simulate(tree)
            if tick is not None:
                tick(tree)
        return tree

    def score_leads(self, tree: SearchTree) -> np.ndarray | None:
        """``(A,)`` the expected final margin in points, for the player to move at ``tree``'s root, after each
        root move, where the agent can estimate scores (``gtp.py``'s ``kata-analyze`` shows them as
        ``scoreLead``): the network's score head on each position after a legal root move (a finished game:
        its area margin); NaN for the other moves. None without a score head (a value of winning is no
        score)."""
        if not getattr(self.model, "has_score", False):
            return None
        game = tree.game
        root = take_rows(tree.state, np.zeros(1, dtype=np.intp))  # tree 0's root
        moves, leads = np.flatnonzero(game.legal_mask(root)[0]), np.full(game.num_actions, np.nan)
        if len(moves) == 0:
            return leads
        after = game.step(take_rows(root, np.zeros(len(moves), dtype=np.intp)), moves)
        device = next(self.model.parameters()).device
        with torch.inference_mode():
            heads = self.model.heads(torch.from_numpy(game.encode(game.eval_input(after))).to(device))
        # The child's player to move is the opponent: negate its margin.
        scores = -expected_margin(heads, game.size).cpu().numpy().astype(np.float64)
        ended = game.is_terminal(after)
        scores[ended] = -game.margins(take_rows(after, np.flatnonzero(ended)))
        leads[moves] = scores
        return leads

    def choose(self, state: dict, stats: np.ndarray, mask: np.ndarray) -> int:
        """The move of ``genmove`` from the root statistics ``stats`` (``(2 + rows, A)``) of ``think``, and
        its mean return in ``last_value`` (resigning is ``Agent_Flags.ResignRule``'s, around it)."""
        mode = "sample" if state["move_count"][0] < self.sample_moves else "greedy"
        action = int(pick_actions_batch(stats[None, N_ROW], mode, 1.0, self.rng, mask)[0])
        self.last_value = float(stats[W_ROW, action] / max(stats[N_ROW, action], 1.0))
        self.last_visits = stats[N_ROW].copy()
        return action

    def observe(self, state: dict, action: int) -> None:
        pass

    def close(self) -> None:
        pass


def agent_player(model: torch.nn.Module, simulations: int, c_puct: float, name: str = "agent", **kw):
    """The network + MCTS agent (or an earlier checkpoint's network: ``Go_Net.load_go_model``). Its game
    must give the network's planes: a ``GoGame`` whose history is the network's (``model.history``). No
    default ``c_puct``: the training gate passes its recipe's, play ``Agent_Flags``' (they differ)."""
    return SearchPlayer(name, simulations, c_puct, model=model, **kw)


def play_agent(
    model: torch.nn.Module,
    simulations: int,
    c_puct: float,
    symmetric: bool,
    *,
    device=None,
    rng: np.random.Generator | None = None,
    sample_moves: int = 0,
    name: str = "agent",
    wrap=None,
    precision: str = "fp32",
) -> SearchPlayer:
    """THE agent of real games: ``gtp.py``, the GUI (``Go_Play.search_agent``), ``evaluate.py --game goN`` and
    ``test.py --game goN`` all build it here (from ``Agent_Flags.add_agent_flags``'s flags:
    ``Agent_Flags.agent_from_args``),
    so that a result measured by evaluate.py is what a GTP controller or a person sees: PUCT over the
    network (read under the 8 symmetries with ``symmetric``), ``simulations`` a move at ``c_puct``, the most
    visited move (drawn from the visits for the game's first ``sample_moves`` moves, with ``rng``).
    ``wrap``: evaluator -> evaluator around the network's (the GUI's cancellation); ``precision``: the
    network's products (``Precision.PRECISIONS``; fp32, the default, plays the same on every CPU)."""
    return SearchPlayer(
        name, simulations, c_puct, model=model, rng=rng, symmetric=symmetric, device=device, wrap=wrap,
        sample_moves=sample_moves, precision=precision,
    )  # fmt: skip


def own_eyes(game: GoGame, state: dict) -> np.ndarray:
    """``(B, N*N)`` bool: empty points whose on-board neighbours are all the player to move's stones."""
    n = game.size
    own = (state["board"] * state["to_play"][:, None]).reshape(-1, n, n)
    padded = np.pad(own, ((0, 0), (1, 1), (1, 1)), constant_values=1)
    around = [padded[:, :-2, 1:-1], padded[:, 2:, 1:-1], padded[:, 1:-1, :-2], padded[:, 1:-1, 2:]]
    return ((own == 0) & np.logical_and.reduce([a == 1 for a in around])).reshape(-1, n * n)


class RolloutEvaluator:
    """The classic network-free evaluator: uniform priors, and as value the result of one random playout
    per leaf (random legal points that fill no own eye, a pass when there is none; all leaves in
    lockstep) for the leaf's player to move. A playout starts from the leaf's board and side to move
    without the earlier positions, so superko inside a playout counts from there."""

    def __init__(self, game: GoGame, rng: np.random.Generator):
        self.game, self.rng = game, rng
        # A playout ends at self-play's cap of 2 N^2 moves from the leaf at the latest, also in a game
        # without one (the GUI's): random play must not run on for the play cap's million moves.
        rules = game.rules
        cap = min(rules.max_moves, 2 * rules.num_points)
        self.playout_game = game if cap == rules.max_moves else go_game(rules.size, rules.komi, cap, rules.history)

    def __call__(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        game, n = self.playout_game, len(inputs)
        state = game.new_states(inputs[:, : game.rules.num_points])
        state["to_play"][:] = inputs[:, -1]
        mover = state["to_play"].copy()
        while not game.is_terminal(state).all():
            live = np.flatnonzero(~game.is_terminal(state))
            now = {k: v[live] for k, v in state.items()}
            mask = game.legal_mask(now)
            mask[:, :-1] &= ~own_eyes(game, now)
            mask[:, -1] = ~mask[:, :-1].any(axis=1)  # pass only when no point is left
            choice = pick_actions_batch(mask.astype(np.float64), "sample", 1.0, self.rng, mask)
            for key, value in game.step(now, choice).items():
                state[key][live] = value
        values = np.sign(game.rules.score(state)) * mover
        return np.full((n, game.num_actions), 1.0 / game.num_actions, np.float32), values.astype(np.float32)


class RolloutPlayer(SearchPlayer):
    """A pure rollout MCTS: PUCT over ``RolloutEvaluator`` (no network). With ``seconds`` per move it
    picks its simulations from the time its earlier searches took (equal time per move against an
    agent); else ``simulations`` every move."""

    def __init__(self, rng, simulations: int = 100, seconds: float | None = None, c_puct: float = 1.0, name="rollout"):
        super().__init__(name, simulations, c_puct)
        self.rng, self.seconds = rng, seconds
        self.per_simulation: float | None = None  # measured seconds per simulation

    def new_game(self, game: GoGame, colour: int) -> None:
        self.evaluator = RolloutEvaluator(game, self.rng)
        self.search = None  # a new search with the new evaluator
        super().new_game(game, colour)

    def genmove(self, state: dict) -> int | None:
        if self.seconds is not None and self.per_simulation is not None:
            self.search.num_simulations = max(2, int(self.seconds / self.per_simulation))
        start = time.perf_counter()
        action = super().genmove(state)
        self.per_simulation = (time.perf_counter() - start) / self.search.num_simulations
        return action


def game_seed(seed: int, index: int) -> int:
    """The engine's random seed for game ``index`` (from 0) of a match of ``seed``: a hash of the two, 1..2^31-1
    (GTP's ``set_random_seed`` reads a C int; 0 avoided), so that a game gets one seed whether its match runs
    straight through or is resumed, and each game another, so that GNU Go still varies its play between games."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0]) % (2**31 - 1) + 1


class GTPPlayer:
    """An engine over GTP (``GTP_Client.GTPClient``; GNU Go: ``GTP_Client.gnugo_command(level)``). Every failure raises
    ``GTPError``; a failed engine is started afresh at the next ``new_game``. With ``seed`` each game starts with
    ``set_random_seed game_seed(seed, index)``, ``index`` counting the games this player is set up for from
    ``first_game`` (a resumed match's next game): GNU Go otherwise seeds its choices from the clock, and a match
    could not be played again. An engine that answers ``?`` plays on unseeded and is not asked again. ``seed``
    None: unseeded, the engine's own choice (the tests' players, which need no repeatable games)."""

    def __init__(
        self, command: list[str], name: str = "gtp", timeout: float = 30.0, seed: int | None = None, first_game: int = 0
    ):
        self.command, self.name, self.timeout = command, name, timeout
        self.seed, self.next_game = seed, first_game
        self.client: GTPClient | None = None
        self.game: GoGame | None = None

    def new_game(self, game: GoGame, colour: int) -> None:
        index, self.next_game = self.next_game, self.next_game + 1  # counted before any failure: the match's index
        if self.client is not None and self.client.failure is not None:
            self.close()
        if self.client is None:
            self.client = GTPClient(self.command, self.timeout)
        self.game = game
        self.client.setup(game.size, game.komi)
        self.send_seed(index)

    def send_seed(self, index: int) -> None:
        """``set_random_seed`` for game ``index`` when seeded, after ``clear_board`` (which draws an unseeded GNU Go a
        new seed); an engine without the command (a ``?`` reply) is left unseeded from then on, quietly (GTP does
        not require it); any other failure raises."""
        if self.seed is None:
            return
        try:
            self.client.send(f"set_random_seed {game_seed(self.seed, index)}")
        except GTPError as error:
            if error.reason != "error":
                raise
            self.seed = None

    def genmove(self, state: dict) -> int | None:
        colour = int(state["to_play"][0])
        return self.client.genmove(colour, self.game.size, self.game.legal_mask(state)[0])

    def observe(self, state: dict, action: int) -> None:
        self.client.play(int(state["to_play"][0]), action, self.game.size)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


# --------------------------------------------------------------------------- one game
@dataclass
class GameRecord:
    """One game: the moves (actions), the players' names, the result."""

    black: str
    white: str
    moves: list[int] = field(default_factory=list)
    winner: int = 0  # BLACK, WHITE, or 0 (a draw, or not played)
    score: float | None = None  # Black's area minus White's minus komi (None: resigned or not played)
    resigned: int = 0  # the colour that resigned, 0 if none
    not_played: str | None = None  # why the game does not count
    # A game set up before its first move (GTP's handicap commands, loadsgf) whose moves need not alternate
    # (GTP's play takes either colour): ``colours`` holds each move's colour (None: Black first, then
    # alternating, as in every match), ``setup`` the stones placed before it by colour (``handicap`` of them
    # Black's handicap), ``to_play`` who moves first after it.
    colours: list[int] | None = None
    setup: dict[int, list[int]] = field(default_factory=dict)
    handicap: int = 0
    to_play: int = BLACK

    def result_text(self) -> str:
        """The SGF ``RE`` value: ``B+3.5``, ``W+R``, ``0`` (a draw) or ``Void``; empty for a game not over
        (no score, no resignation: ``gtp.py``'s ``printsgf`` in mid-game)."""
        if self.not_played is not None:
            return "Void"
        if self.score is None and not self.resigned:
            return ""
        if self.winner == 0:
            return "0"
        side = "B" if self.winner == BLACK else "W"
        return f"{side}+R" if self.resigned else f"{side}+{abs(self.score):g}"


def play_game(game: GoGame, black: Player, white: Player, opening: Sequence[int] = ()) -> GameRecord:
    """One game from the empty board until two passes, the move cap or a resignation; its first moves the
    legal actions ``opening`` (``Go_Game.record_actions``), which both players observe and neither chooses.
    Any ``GTPError`` of either player ends it as not played, with the player's name and the reason."""
    players = {BLACK: black, WHITE: white}
    record = GameRecord(black.name, white.name)
    state = game.initial_state(1)
    current = black  # the player asked last: the one blamed for a GTPError
    try:
        for colour, current in players.items():
            current.new_game(game, colour)
        for action in opening:
            for current in players.values():
                current.observe(state, action)
            state = game.step(state, np.array([action]))
            record.moves.append(action)
        while not game.is_terminal(state)[0]:
            colour = int(state["to_play"][0])
            current = players[colour]
            action = current.genmove(state)
            if action is None:
                record.resigned, record.winner = colour, -colour
                return record
            current = players[-colour]
            current.observe(state, action)
            state = game.step(state, np.array([action]))
            record.moves.append(action)
    except GTPError as error:
        record.not_played = f"{current.name}: {error}"
        return record
    record.score = float(game.rules.score(state)[0])
    record.winner = int(np.sign(record.score))
    return record


def sgf_escape(text: str) -> str:
    """``text`` as an SGF property value: ``\\`` and ``]`` escaped (a checkpoint named ``x]y.pt`` is a name)."""
    return text.replace("\\", "\\\\").replace("]", "\\]")


def sgf_point(action: int, size: int) -> str:
    """An action as an SGF point: column letter then row letter from the top (``aa`` is A19 on 19x19); the
    pass is empty."""
    letters = "abcdefghijklmnopqrs"
    return "" if action == size * size else letters[action % size] + letters[action // size]


def sgf_text(game: GoGame, record: GameRecord) -> str:
    """The game as an SGF file (FF[4]) on one line: board size, komi, players and result where known,
    set-up stones, moves (a pass as ``[]``)."""
    n = game.size
    head = f"(;GM[1]FF[4]CA[UTF-8]AP[rubik-go:1]RU[Chinese]SZ[{n}]KM[{game.komi:g}]"
    for key, name in (("PB", record.black), ("PW", record.white)):
        head += f"{key}[{sgf_escape(name)}]" if name else ""
    result = record.result_text()
    head += f"RE[{result}]" if result else ""
    if record.not_played is not None:
        head += f"C[not played: {sgf_escape(record.not_played)}]"
    head += f"HA[{record.handicap}]" if record.handicap else ""
    for key, colour in (("AB", BLACK), ("AW", WHITE)):
        points = record.setup.get(colour, [])
        head += key + "".join(f"[{sgf_point(p, n)}]" for p in points) if points else ""
    head += "PL[W]" if record.setup and record.to_play == WHITE else ""
    colours = record.colours or [BLACK if i % 2 == 0 else WHITE for i in range(len(record.moves))]
    moves = [f";{'B' if c == BLACK else 'W'}[{sgf_point(a, n)}]" for a, c in zip(record.moves, colours)]
    return head + "".join(moves) + ")\n"


def match_record(data: bytes, size: int) -> GameRecord:
    """The ``GameRecord`` of a match game's SGF file as ``sgf_text`` writes it (players, moves, the ``RE``
    result, a game not played's reason), so that a resumed match counts its earlier games; ValueError (a
    sentence) for a file that is no such game on a ``size`` board."""
    from sgfmill import sgf

    game = sgf.Sgf_game.from_bytes(data)  # ValueError for a file that is no SGF
    if game.get_size() != size:
        raise ValueError(f"a {game.get_size()}x{game.get_size()} game, not {size}x{size}")
    root = game.get_root()
    names = [root.get(key) if root.has_property(key) else "" for key in ("PB", "PW")]
    record = GameRecord(*names)
    for colour, move in (node.get_move() for node in game.get_main_sequence()[1:]):
        if colour is None:
            continue
        record.moves.append(size * size if move is None else (size - 1 - move[0]) * size + move[1])
    result = root.get("RE") if root.has_property("RE") else ""
    if result == "Void":
        comment = root.get("C") if root.has_property("C") else ""
        record.not_played = comment.removeprefix("not played: ") or "not played"
    elif result == "0":
        record.score = 0.0
    elif re.fullmatch(r"[BW]\+(R|\d+(\.\d+)?)", result):
        record.winner = BLACK if result[0] == "B" else WHITE
        if result.endswith("+R"):
            record.resigned = -record.winner
        else:
            record.score = record.winner * float(result[2:])
    else:
        raise ValueError(f"its result {result!r} is none of a finished match game's (B+3.5, W+R, 0, Void)")
    return record


# --------------------------------------------------------------------------- a match
def wilson_interval(successes: float, trials: int, z: float = WILSON_Z) -> tuple[float, float]:
    """The Wilson score interval of a proportion (``(0, 1)`` when there are no trials)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class MatchResult:
    """A match of ``agent`` against ``opponent``: the records and, per game, the agent's colour."""

    agent: str
    opponent: str
    records: list[GameRecord] = field(default_factory=list)
    agent_colours: list[int] = field(default_factory=list)

    def summary(self, colour: int | None = None) -> dict:
        """Counts, win rate with its 95% Wilson interval, mean margin and resignations, from the agent's
        side, over all games or those where the agent played ``colour``."""
        games = [(r, c) for r, c in zip(self.records, self.agent_colours) if colour is None or c == colour]
        played = [(r, c) for r, c in games if r.not_played is None]
        wins = sum(r.winner == c for r, c in played)
        draws = sum(r.winner == 0 for r, _ in played)
        margins = [r.score * c for r, c in played if r.score is not None]
        low, high = wilson_interval(wins + draws / 2, len(played))
        return {
            "games": len(games),
            "played": len(played),
            "wins": wins,
            "losses": len(played) - wins - draws,
            "draws": draws,
            "win_rate": (wins + draws / 2) / len(played) if played else None,  # None: no game played
            "ci95": (low, high),
            "mean_margin": float(np.mean(margins)) if margins else None,  # None: no game was counted out
            "agent_resigned": sum(r.resigned == c for r, c in played),
            "opponent_resigned": sum(r.resigned == -c for r, c in played),
            "not_played": [r.not_played for r, _ in games if r.not_played is not None],
        }


def agent_colour(index: int, colours: str) -> int:
    """The agent's colour in game ``index``: alternating (Black first), or always ``black`` / ``white``."""
    if colours not in COLOURS:
        raise ValueError(f"colours must be one of {', '.join(COLOURS)}, got {colours!r}")
    if colours == "alternate":
        return BLACK if index % 2 == 0 else WHITE
    return BLACK if colours == "black" else WHITE


def run_match(
    game: GoGame,
    agent: Player,
    opponent: Player,
    games: int,
    colours: str = "alternate",
    sgf_dir: str | None = None,
    on_game=None,
    opening: Sequence[int] = (),
    earlier: Sequence[GameRecord] = (),
) -> MatchResult:
    """``games`` games of ``agent`` against ``opponent`` (``colours``: ``agent_colour``), each from the
    moves ``opening`` (``play_game``); each game's SGF file ``game_0001.sgf`` ... in ``sgf_dir`` (None:
    none), written atomically; ``on_game(index, record)`` is called after each game (progress). The match's
    first games may be ``earlier`` ones, already played (a resumed match): they count, and the games go on
    from the next. The players are closed at the end."""
    result = MatchResult(agent.name, opponent.name)
    result.records = list(earlier)
    result.agent_colours = [agent_colour(index, colours) for index in range(len(earlier))]
    try:
        for index in range(len(earlier), games):
            colour = agent_colour(index, colours)
            black, white = (agent, opponent) if colour == BLACK else (opponent, agent)
            record = play_game(game, black, white, opening)
            result.records.append(record)
            result.agent_colours.append(colour)
            if sgf_dir is not None:
                text = sgf_text(game, record)
                atomic_write(os.path.join(sgf_dir, f"game_{index + 1:04d}.sgf"), lambda f: f.write(text), "w")
            if on_game is not None:
                on_game(index, record)
    finally:
        agent.close()
        opponent.close()
    return result
