"""Go as entries of the game registry (``Games``): ``GoGame`` adapts the batched rules of ``Go_Board`` to
the engine's ``Game`` interface; ``GO_GAMES`` holds ``go5``, ``go7`` and ``go9`` with their default komi
and move cap (self-play's 2 N^2), ``go_game(size, komi, max_moves, history)`` makes any other and
``go_play_game`` the one of real games (GTP, the GUI, matches against GNU Go: no practical cap).

Two players, zero-sum: discount -1 (the search negates a value at each ply), no reward per move, the
terminal value is +1 / -1 / 0 for the player to move by the area score (``GoBoard.terminal_value``).
With ``score_utility`` u above 0, the search's utility of a finished game is ``(1 - u)`` times that plus
``u * score_term(margin)`` (the player to move's area lead after komi), the same mix a network with a
score head gives the positions it evaluates (``Go_Net.GoNet``): among lost (or won) moves the search then
prefers the larger expected margin (KataGo's static score utility).

What an evaluator sees of a state (``eval_input``) is one int8 row per state: the board, the
``history - 1`` previous boards (most recent first), with ``komi_input`` the komi in half points, and the
player to move, ``history * N*N + 1`` numbers (one more with the komi). The network's output depends on
nothing else, so the evaluation cache keys on those bytes (the hash history and pass count, which
legality needs, stay in the state batch, not in the key).
``encode`` turns rows into ``Go_Board.encode``'s planes; ``symmetries`` into the 8 square symmetries
of rows and policies (pass fixed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from go.Go_Board import MAX_INPUT_KOMI, PLAY_MAX_MOVES, GoBoard, parse_vertex

#: The seed's input: the last 8 positions of each side and a side-to-move plane (17 planes).
DEFAULT_HISTORY = 8


def score_term(margin_over_size):
    """The score part of the search's utility, ``tanh(margin / N)`` of a margin given in units of the
    board's side N (numpy or torch): a row's worth of points is worth about 0.76 of it. A score head
    predicts margins in these units (``Go_Net.GoNet``)."""
    return margin_over_size.tanh() if hasattr(margin_over_size, "tanh") else np.tanh(margin_over_size)


@dataclass(frozen=True)
class GoGame:
    """Go on ``rules`` (a ``GoBoard``) as a ``Games.Game``; ``name`` is the registry key."""

    rules: GoBoard
    name: str
    score_utility: float = 0.0  # the share of the score term in the search's utility (module docstring)
    discount: float = field(default=-1.0, init=False)  # two players: negate the value each ply
    leaf_quirk: bool = field(default=False, init=False)  # the cube MCTS's double leaf update is the cube's
    move_cost: float = field(default=0.0, init=False)  # a move costs nothing; only the end pays

    @property
    def size(self) -> int:
        return self.rules.size

    @property
    def network_options(self) -> dict:
        """What a network must read of this game: ``Go_Net.GoNet.game_options``."""
        return {"history": self.rules.history, "komi_input": self.rules.komi_input, "score_utility": self.score_utility}

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
        """(B,) the search's utility of finished games for their player to move (module docstring)."""
        win = self.rules.terminal_value(state)
        if not self.score_utility:
            return win
        margin = self.rules.score(state) * state["to_play"]
        return (1 - self.score_utility) * win + self.score_utility * score_term(margin / self.size)

    def final_targets(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What a score and an ownership head learn of finished games, from their last positions'
        ``eval_input`` rows: Black's area lead after komi ``(E,)`` float64, and each point's owner ``(E, N*N)``
        int8 (1 Black, -1 White, 0 neither; ``GoBoard.ownership``). Komi: the row's where it holds one,
        else the rules'."""
        state = self._unpack(inputs)
        return self.rules.score(state), self.rules.ownership(np.ascontiguousarray(state["board"]))

    def margins(self, state) -> np.ndarray:
        """(B,) float64: the area lead after komi of the player to move (finished or not: as the board stands)."""
        return self.rules.score(state) * state["to_play"]

    # -- what the network sees -------------------------------------------------------------------
    def eval_input(self, state) -> np.ndarray:
        """``(B, history*N*N + 1)`` int8: board, previous boards (most recent first), with ``komi_input``
        the komi in half points (clipped to ``Go_Board.MAX_INPUT_KOMI``), player to move."""
        parts = [state["board"]]
        if self.rules.history > 1:
            parts.append(state["past"].reshape(len(state["board"]), -1))
        if self.rules.komi_input:
            komi = np.clip(self.rules.komi_of(state), -MAX_INPUT_KOMI, MAX_INPUT_KOMI)
            parts.append(np.round(2 * komi).astype(np.int8)[:, None])
        parts.append(state["to_play"][:, None].astype(np.int8))
        return np.concatenate(parts, axis=1)

    def _unpack(self, inputs: np.ndarray) -> dict[str, np.ndarray]:
        """The ``board``, ``past``, ``komi`` and ``to_play`` arrays of ``eval_input`` rows (what ``encode``
        reads)."""
        nn, history = self.rules.num_points, self.rules.history
        inputs = np.asarray(inputs, dtype=np.int8)
        state = {"board": inputs[:, :nn], "to_play": inputs[:, -1]}
        if history > 1:
            state["past"] = inputs[:, nn : history * nn].reshape(len(inputs), history - 1, nn)
        if self.rules.komi_input:
            state["komi"] = inputs[:, -2].astype(np.float32) / 2
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


def go_game(
    size: int,
    komi: float | None = None,
    max_moves: int | None = None,
    history: int = DEFAULT_HISTORY,
    komi_input: bool = False,
    score_utility: float = 0.0,
) -> GoGame:
    """A ``GoGame`` on a ``size`` board (``GoBoard``'s defaults for ``komi`` and ``max_moves``; a network
    input with the komi plane with ``komi_input``; the search's ``score_utility``). Its name is ``go{size}``
    with the defaults, else it also names what differs (``go5-komi25.5``, ``go5-komiplane-utility0.1``), so
    that a registry never confuses two rule sets."""
    rules = GoBoard(size, komi=komi, max_moves=max_moves, history=history, komi_input=komi_input)
    default = GoBoard(size, history=DEFAULT_HISTORY)
    name = f"go{size}"
    for label, value, usual in (
        ("komi", rules.komi, default.komi),
        ("moves", rules.max_moves, default.max_moves),
        ("history", history, DEFAULT_HISTORY),
        ("utility", score_utility, 0.0),
    ):
        if value != usual:
            name += f"-{label}{value:g}"
    return GoGame(rules, name + ("-komiplane" if komi_input else ""), score_utility)


def go_play_game(size: int, komi: float | None = None, history: int = DEFAULT_HISTORY, **inputs) -> GoGame:
    """The game against a person or another engine (GTP, the GUI, matches against GNU Go): ``go_game`` with
    ``Go_Board.PLAY_MAX_MOVES`` instead of self-play's cap of 2 N^2 moves, so only two passes end it in
    practice, and positional superko over the whole game. ``inputs``: ``komi_input`` and ``score_utility``
    (a network's ``GoNet.game_options``)."""
    return go_game(size, komi, PLAY_MAX_MOVES, history, **inputs)


def record_actions(game: GoGame, record: str) -> list[int]:
    """The actions of the move record ``record`` (``"C3 C4 pass"``: Black first, then alternating) played
    from the empty board of ``game``; ValueError naming the move and why when a word is no point of the
    board or its move is illegal there (occupied, suicide, a repeated position) or comes after the game's
    end."""
    state, actions = game.initial_state(1), []
    for index, word in enumerate(record.split(), start=1):
        try:
            action = parse_vertex(word, game.size)
        except ValueError as exc:
            raise ValueError(f"move {index}: {exc}") from None
        if game.is_terminal(state)[0]:
            raise ValueError(f"move {index}: {word} comes after the game has ended")
        if not game.legal_mask(state)[0, action]:
            raise ValueError(f"move {index}: {word} is not a legal move there")
        state = game.step(state, np.array([action]))
        actions.append(action)
    return actions


GO_GAMES = {game.name: game for game in (go_game(5), go_game(7), go_game(9))}
