"""A game of Go between a person and the agent, without any drawing: the state and its history (for undo),
the result, the captures, and the agent's moves searched in a worker thread (``AgentWorker``).

``GoMatch(game, human, agent_factory)`` holds the positions of one game (``states[0]`` the empty board,
``states[-1]`` the current one, each a one-state batch of ``Go_Game.GoGame``), the actions between them, the
person's colour and the result once the game is over (two passes or a resignation: the window plays
``Go_Game.go_play_game``, without self-play's move cap). The
window (``Go_Gui``) calls ``play``, ``undo``, ``resign``, ``restart`` and polls ``update``; whenever the
agent is to move in a game that is not over, ``update`` starts an ``AgentWorker`` with a fresh search
player from ``agent_factory(game, cancel)`` and plays its move when it is done. Undo, resign and a new game
cancel a running search at once (its evaluator checks the cancel event before every evaluation) and the
search's answer is dropped.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from go.Arena import RolloutEvaluator, SearchPlayer, play_agent
from go.Go_Board import BLACK, EMPTY, WHITE, format_vertex
from go.Go_Game import GoGame

TOP_MOVES = 3  # the agent's candidate moves shown with their visit shares
COLOUR_NAMES = {BLACK: "Black", WHITE: "White"}


class Cancelled(Exception):
    """Raised inside a search when its cancel event is set, to leave it at once."""


def cancellable(evaluator, cancel: threading.Event):
    """``evaluator`` that raises ``Cancelled`` instead of evaluating once ``cancel`` is set."""

    def evaluate(inputs):
        if cancel.is_set():
            raise Cancelled
        return evaluator(inputs)

    return evaluate


def search_agent(
    model, simulations: int, c_puct: float, device=None, seed: int | None = None, symmetric=False, precision="fp32"
):
    """A factory ``(game, cancel) -> SearchPlayer``: the agent of gtp.py and evaluate.py (``Arena.play_agent``:
    PUCT with the network ``model``, with ``symmetric`` averaged over the 8 board symmetries, its products at
    ``precision``), or without a
    model a pure rollout MCTS (``Arena.RolloutEvaluator``: uniform priors, random playouts), each evaluation
    refused once ``cancel`` is set."""
    rng = np.random.default_rng(seed)

    def make(game: GoGame, cancel: threading.Event) -> SearchPlayer:
        if model is not None:
            wrap = lambda evaluator: cancellable(evaluator, cancel)  # noqa: E731
            return play_agent(
                model, simulations, c_puct, symmetric, device=device, rng=rng, wrap=wrap, precision=precision
            )
        evaluator = cancellable(RolloutEvaluator(game, rng), cancel)
        return SearchPlayer("rollout MCTS", simulations, c_puct, evaluator=evaluator, rng=rng)

    return make


@dataclass
class AgentMove:
    """What a finished search gives: the move, its mean return for the agent, the top moves by visit share."""

    action: int
    value: float
    top: list[tuple[int, float]]  # (action, share of the root visits), most visited first


class AgentWorker(threading.Thread):
    """One search of ``player`` from ``state`` off the UI thread. The UI polls ``done``; then ``result`` (an
    ``AgentMove``) or ``error`` (a sentence) is set. ``cancel()`` makes the search stop at its next
    evaluation; a cancelled worker's result is never used."""

    def __init__(self, player: SearchPlayer, state: dict, cancel: threading.Event):
        super().__init__(name="go-agent", daemon=True)
        self.player, self.state, self.cancel_event = player, state, cancel
        self.started_at = time.monotonic()
        self.done = False
        self.result: AgentMove | None = None
        self.error: str | None = None

    def cancel(self) -> None:
        self.cancel_event.set()

    def run(self) -> None:
        try:
            action = self.player.genmove(self.state)
            visits = self.player.last_visits
            shares = visits / max(visits.sum(), 1.0)
            order = np.argsort(-shares, kind="stable")[:TOP_MOVES]
            top = [(int(a), float(shares[a])) for a in order if shares[a] > 0]
            self.result = AgentMove(int(action), self.player.last_value, top)
        except Cancelled:
            pass
        except Exception as exc:  # shown in the window; the GUI must survive a failed search
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.done = True


@dataclass
class Result:
    """A finished game: ``winner`` (BLACK, WHITE, 0 a draw), ``score`` (Black's area minus White's minus komi;
    None after a resignation), ``resigned`` (the colour that resigned, 0 if none)."""

    winner: int
    score: float | None
    resigned: int = 0

    def text(self) -> str:
        """``B+0.5``, ``W+R``, or ``Draw``."""
        if self.winner == 0:
            return "Draw"
        side = "B" if self.winner == BLACK else "W"
        return f"{side}+R" if self.resigned else f"{side}+{abs(self.score):g}"


class GoMatch:
    """A person (``human``: BLACK or WHITE) against the agent on ``game`` (see the module docstring)."""

    def __init__(self, game: GoGame, human: int, agent_factory: Callable[[GoGame, threading.Event], SearchPlayer]):
        self.agent_factory = agent_factory
        self.worker: AgentWorker | None = None
        self._all_workers: list[AgentWorker] = []  # cancelled ones too, joined by close()
        self.restart(game, human)

    # -- state -----------------------------------------------------------------------------------
    @property
    def state(self) -> dict:
        return self.states[-1]

    @property
    def to_play(self) -> int:
        return int(self.state["to_play"][0])

    @property
    def over(self) -> bool:
        return self.result is not None

    @property
    def thinking(self) -> bool:
        return self.worker is not None

    def agent_to_move(self) -> bool:
        """The agent is to move in a game that is not over (and its last search did not fail)."""
        return not self.over and self.to_play == -self.human and self.failure is None

    def legal(self, action: int) -> bool:
        return not self.over and bool(self.game.legal_mask(self.state)[0, action])

    def captures(self) -> dict[int, int]:
        """Stones captured so far by each colour (the opponent's stones each move removed)."""
        taken = {BLACK: 0, WHITE: 0}
        for before, after in zip(self.states, self.states[1:]):
            mover = int(before["to_play"][0])
            taken[mover] += int((before["board"][0] == -mover).sum() - (after["board"][0] == -mover).sum())
        return taken

    def ownership(self) -> np.ndarray:
        """(N*N,) int8: each point's owner under area scoring (``GoBoard.ownership``)."""
        return self.game.rules.ownership(self.state["board"])[0]

    def record(self) -> str:
        """The moves so far as Go coordinates, e.g. ``"C3 D4 pass"``."""
        return " ".join(format_vertex(a, self.game.size) for a in self.moves)

    # -- moves -----------------------------------------------------------------------------------
    def illegal_reason(self, action: int) -> str:
        """Why ``action`` cannot be played now (empty string when it can)."""
        if self.over:
            return "the game is over"
        if self.legal(action):
            return ""
        if action < self.game.rules.num_points and self.state["board"][0, action] != EMPTY:
            return "that point is taken"
        return "that move is suicide or repeats an earlier position (superko)"

    def play(self, action: int) -> None:
        """Play ``action`` for the side to move; ValueError (a sentence) when it is not legal."""
        reason = self.illegal_reason(action)
        if reason:
            raise ValueError(f"{format_vertex(action, self.game.size)} is not allowed: {reason}.")
        self.states.append(self.game.step(self.state, np.array([action])))
        self.moves.append(int(action))
        if self.game.is_terminal(self.state)[0]:
            score = float(self.game.rules.score(self.state)[0])
            self.result = Result(int(np.sign(score)), score)

    def resign(self, colour: int) -> None:
        self.cancel_search()
        self.result = Result(-colour, None, resigned=colour)

    def undo(self) -> bool:
        """Take back moves until one of the person's is gone and it is their turn (the agent's reply, a
        finished or resigned game too). False, and nothing changes, when the person has no move to take back."""
        own = [i for i, before in enumerate(self.states[:-1]) if int(before["to_play"][0]) == self.human]
        if not own:
            return False
        self.cancel_search()
        keep = own[-1] + 1  # the states up to the person's last turn
        del self.states[keep:], self.moves[keep - 1 :]
        self.result = self.failure = None
        return True

    def restart(self, game: GoGame, human: int) -> None:
        """A new game on ``game`` (its komi) with the person playing ``human``."""
        self.cancel_search()
        self.game, self.human = game, human
        self.states = [game.initial_state(1)]
        self.moves: list[int] = []
        self.result: Result | None = None
        self.failure: str | None = None  # the agent's failed search: it does not try again until undo or restart
        self.last_search: AgentMove | None = None

    # -- the agent -------------------------------------------------------------------------------
    def cancel_search(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            self.worker = None

    def update(self) -> str | None:
        """Start the agent's search when it is to move, play its move when it is done. Returns the
        failed search's error sentence, else None."""
        worker = self.worker
        if worker is not None and worker.done:
            self.worker = None
            if worker.error is not None:
                self.failure = worker.error
                return worker.error
            self.last_search = worker.result
            self.play(worker.result.action)
        if self.worker is None and self.agent_to_move():
            cancel = threading.Event()
            player = self.agent_factory(self.game, cancel)
            player.new_game(self.game, -self.human)
            self.worker = AgentWorker(player, self.state, cancel)
            self._all_workers = [w for w in self._all_workers if w.is_alive()] + [self.worker]
            self.worker.start()
        return None

    def close(self) -> None:
        """Stop every search and wait for the threads (a thread killed inside torch at exit aborts Python)."""
        self.cancel_search()
        for worker in self._all_workers:
            worker.cancel()
        for worker in self._all_workers:
            worker.join(timeout=10.0)
        self._all_workers = []
