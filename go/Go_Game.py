"""Go as entries of the game registry (``Games``): ``GoGame`` adapts the batched rules of ``Go_Board`` to
the engine's ``Game`` interface; ``GO_GAMES`` holds ``go5``, ``go7`` and ``go9`` with their default komi
and move cap (self-play's 2 N^2), ``go_game(size, komi, max_moves, history)`` makes any other and
``go_play_game`` the one of real games (GTP, the GUI, matches against GNU Go: no practical cap).

Two players, zero-sum: discount -1 (the search negates a value at each ply), no reward per move, the
terminal value is +1 / -1 / 0 for the player to move by the area score (``GoBoard.terminal_value``).

What an evaluator sees of a state (``eval_input``) is one int8 row per state: the board, the
``history - 1`` previous boards (most recent first) and the player to move, ``history * N*N + 1``
numbers. The network's output depends on nothing else, so the evaluation cache keys on those bytes
(the hash history and pass count, which legality needs, stay in the state batch, not in the key).
``encode`` turns rows into ``Go_Board.encode``'s planes; ``symmetries`` into the 8 square symmetries
of rows and policies (pass fixed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from go.Go_Board import PLAY_MAX_MOVES, GoBoard

#: The seed's input: the last 8 positions of each side and a side-to-move plane (17 planes).
DEFAULT_HISTORY = 8


@dataclass(frozen=True)
class GoGame:
    """Go on ``rules`` (a ``GoBoard``) as a ``Games.Game``; ``name`` is the registry key."""

    rules: GoBoard
    name: str
    discount: float = field(default=-1.0, init=False)  # two players: negate the value each ply
    leaf_quirk: bool = field(default=False, init=False)  # the cube MCTS's double leaf update is the cube's
    move_cost: float = field(default=0.0, init=False)  # a move costs nothing; only the end pays

    @property
    def size(self) -> int:
        return self.rules.size

    @property
    def komi(self) -> float:
        return self.rules.komi

    @property
    def num_actions(self) -> int:
        return self.rules.num_actions

    @property
    def obs_shape(self) -> tuple[int, int, int]:
        return self.rules.obs_shape

    # -- states and rules ------------------------------------------------------------------------
    def initial_state(self, batch: int = 1) -> dict[str, np.ndarray]:
        """``batch`` empty boards, Black to move."""
        return self.rules.initial_state(batch)

    def new_states(self, boards: np.ndarray) -> dict[str, np.ndarray]:
        """A state batch of B set-up boards ``(B, N*N)`` (or ``(B, N, N)``), Black to move, each the first
        position of its game (no earlier positions for superko)."""
        boards = np.asarray(boards, dtype=np.int8).reshape(-1, self.rules.num_points)
        state = self.rules.initial_state(len(boards))
        state["board"][:] = boards
        state["hash_history"][:, 0] = self.rules.board_hash(boards)
        return state

    def with_room(self, state, moves: int) -> dict[str, np.ndarray]:
        return self.rules.with_room(state, moves)

    def legal_mask(self, state) -> np.ndarray:
        return self.rules.legal_mask(state)

    def step(self, state, actions) -> dict[str, np.ndarray]:
        return self.rules.step(state, actions)

    def reward(self, state, actions, next_state) -> np.ndarray:
        return self.rules.reward(state, actions, next_state)

    def is_terminal(self, state) -> np.ndarray:
        return self.rules.is_terminal(state)

    def terminal_value(self, state) -> np.ndarray:
        return self.rules.terminal_value(state)

    # -- what the network sees -------------------------------------------------------------------
    def eval_input(self, state) -> np.ndarray:
        """``(B, history*N*N + 1)`` int8: board, previous boards (most recent first), player to move."""
        parts = [state["board"]]
        if self.rules.history > 1:
            parts.append(state["past"].reshape(len(state["board"]), -1))
        parts.append(state["to_play"][:, None].astype(np.int8))
        return np.concatenate(parts, axis=1)

    def _unpack(self, inputs: np.ndarray) -> dict[str, np.ndarray]:
        """The ``board``, ``past`` and ``to_play`` arrays of ``eval_input`` rows (what ``encode`` reads)."""
        nn, history = self.rules.num_points, self.rules.history
        inputs = np.asarray(inputs, dtype=np.int8)
        state = {"board": inputs[:, :nn], "to_play": inputs[:, -1]}
        if history > 1:
            state["past"] = inputs[:, nn:-1].reshape(len(inputs), history - 1, nn)
        return state

    def encode(self, inputs: np.ndarray) -> np.ndarray:
        """``(B, 2*history+1, N, N)`` float32 planes of ``eval_input`` rows (``GoBoard.encode``)."""
        return self.rules.encode(self._unpack(inputs))

    def state_keys(self, inputs: np.ndarray) -> np.ndarray:
        """``(B,)`` exact keys (bytes) of ``eval_input`` rows."""
        rows = np.ascontiguousarray(np.asarray(inputs, dtype=np.int8))
        # numpy's bytes drop trailing zeros; the last byte (the player to move, +-1) never is one.
        return rows.view(f"S{rows.shape[1]}").reshape(-1)

    def symmetries(self, inputs: np.ndarray, policies: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The 8 ``(inputs, policies)`` pairs under the square's symmetries, the given one first."""
        pairs = self.rules.symmetries(self._unpack(inputs), np.asarray(policies))
        return [(self.eval_input(state), policy) for state, policy in pairs]

    def to_text(self, state, index: int = 0) -> str:
        return self.rules.to_text(state, index)


def go_game(size: int, komi: float | None = None, max_moves: int | None = None, history: int = DEFAULT_HISTORY):
    """A ``GoGame`` on a ``size`` board (``GoBoard``'s defaults for ``komi`` and ``max_moves``). Its name is
    ``go{size}`` with the defaults, else it also names what differs (``go5-komi25.5``), so that a registry
    never confuses two rule sets."""
    rules = GoBoard(size, komi=komi, max_moves=max_moves, history=history)
    default = GoBoard(size, history=DEFAULT_HISTORY)
    name = f"go{size}"
    for label, value, usual in (
        ("komi", rules.komi, default.komi),
        ("moves", rules.max_moves, default.max_moves),
        ("history", history, DEFAULT_HISTORY),
    ):
        if value != usual:
            name += f"-{label}{value:g}"
    return GoGame(rules, name)


def go_play_game(size: int, komi: float | None = None, history: int = DEFAULT_HISTORY) -> GoGame:
    """The game against a person or another engine (GTP, the GUI, matches against GNU Go): ``go_game`` with
    ``Go_Board.PLAY_MAX_MOVES`` instead of self-play's cap of 2 N^2 moves, so only two passes end it in
    practice, and positional superko over the whole game."""
    return go_game(size, komi, PLAY_MAX_MOVES, history)


GO_GAMES = {game.name: game for game in (go_game(5), go_game(7), go_game(9))}
