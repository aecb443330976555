"""Tic-tac-toe as a ``Games.Game`` entry: the two-player test fixture of the engine (discount -1).

A state batch is ``{"board": (B, 9) int8 (+1 X, -1 O, 0 empty), "player": (B,) int8 (+1 or -1,
the player to move)}``. An evaluator sees the board from the mover's side (``board * player``:
+1 own, -1 the opponent's), which is all the rules need. ``minimax_values`` solves the game
exhaustively for the perfect-play tests; ``random_openings`` gives self-play its varied starts.
Importing this module registers it as "tictactoe".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from engine.Games import register_game
from engine.Search_Tree import take_rows

LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]])
#: The 8 symmetries of the board as cell permutations: ``new = old[perm]``.
_ROTATE = np.array([6, 3, 0, 7, 4, 1, 8, 5, 2])
_MIRROR = np.array([2, 1, 0, 5, 4, 3, 8, 7, 6])


def _board_symmetries() -> np.ndarray:
    perms, perm = [], np.arange(9)
    for _ in range(4):
        perms += [perm, perm[_MIRROR]]
        perm = perm[_ROTATE]
    return np.array(perms)


BOARD_SYMMETRIES = _board_symmetries()  # [8, 9]


@dataclass(frozen=True)
class TicTacToe:
    name: str = "tictactoe"
    num_actions: int = 9
    obs_shape: tuple[int, ...] = (18,)
    discount: float = -1.0
    leaf_quirk: bool = False
    move_cost: float = 0.0
    c_puct: float = 1.3  # the PUCT constant of a search given none (the cubes': the tests' numbers use it)

    def new_states(self, boards: np.ndarray) -> dict[str, np.ndarray]:
        """States of ``(B, 9)`` boards; X (+1) moves when both have as many stones."""
        board = np.asarray(boards, dtype=np.int8).reshape(-1, 9)
        player = np.where((board == 1).sum(axis=1) > (board == -1).sum(axis=1), -1, 1).astype(np.int8)
        return {"board": board.copy(), "player": player}

    def legal_mask(self, state: dict) -> np.ndarray:
        return state["board"] == 0

    def step(self, state: dict, actions: np.ndarray) -> dict[str, np.ndarray]:
        board = state["board"].copy()
        board[np.arange(len(board)), actions] = state["player"]
        return {"board": board, "player": -state["player"]}

    def reward(self, state: dict, actions: np.ndarray, next_state: dict) -> np.ndarray:
        return np.zeros(len(actions))

    def _lost(self, state: dict) -> np.ndarray:
        """``(B,)`` the player to move's opponent has three in a line."""
        lines = state["board"][:, LINES].astype(np.int64).sum(axis=2)  # [B, 8]
        return (lines == -3 * state["player"][:, None].astype(np.int64)).any(axis=1)

    def is_terminal(self, state: dict) -> np.ndarray:
        return self._lost(state) | (state["board"] != 0).all(axis=1)

    def terminal_value(self, state: dict) -> np.ndarray:
        """-1.0 for the player to move when the opponent has won, else 0.0 (a draw)."""
        return np.where(self._lost(state), -1.0, 0.0)

    def eval_input(self, state: dict) -> np.ndarray:
        return (state["board"] * state["player"][:, None]).astype(np.int8)

    def encode(self, inputs: np.ndarray) -> np.ndarray:
        return np.concatenate([inputs == 1, inputs == -1], axis=1).astype(np.float32)

    def state_keys(self, inputs: np.ndarray) -> np.ndarray:
        return ((inputs.astype(np.int64) + 1) * 3 ** np.arange(9)).sum(axis=1)

    def symmetries(self, inputs: np.ndarray, policies: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(inputs[:, perm], policies[:, perm]) for perm in BOARD_SYMMETRIES]


TICTACTOE = TicTacToe()
register_game(TICTACTOE)  # episode results name their game; the registry maps the name back


@functools.lru_cache(maxsize=None)
def _negamax(own: tuple[int, ...]) -> int:
    """The value (+1 win, 0 draw, -1 loss) for the player to move of a mover's-side board."""
    board = np.array(own, dtype=np.int8)
    if (board[LINES].sum(axis=1) == -3).any():
        return -1
    empty = np.flatnonzero(board == 0)
    if len(empty) == 0:
        return 0
    return max(-_negamax(tuple(-np.where(np.arange(9) == a, 1, board))) for a in empty)


def minimax_value(inputs: np.ndarray) -> int:
    """Exact value of one mover's-side board ``(9,)`` for the player to move."""
    return _negamax(tuple(int(x) for x in inputs))


def minimax_action_values(inputs: np.ndarray) -> np.ndarray:
    """``(9,)`` exact value of each move for the mover (-inf for occupied cells)."""
    out = np.full(9, -np.inf)
    for a in np.flatnonzero(inputs == 0):
        after = np.where(np.arange(9) == a, 1, inputs).astype(np.int8)
        out[a] = -minimax_value(-after)
    return out


def random_openings(rng: np.random.Generator, n: int, max_moves: int = 6) -> dict[str, np.ndarray]:
    """A state batch of ``n`` games, each opened by a uniform number (0 to ``max_moves``) of
    uniformly random legal moves from the empty board; a game that ends sooner stays ended."""
    state = TICTACTOE.new_states(np.zeros((n, 9), np.int8))
    moves = rng.integers(0, max_moves + 1, n)
    for ply in range(max_moves):
        moving = np.flatnonzero((moves > ply) & ~TICTACTOE.is_terminal(state))
        if len(moving) == 0:
            break
        playing = take_rows(state, moving)
        # A uniform legal cell: the argmax of uniform draws over the empty cells.
        actions = np.where(TICTACTOE.legal_mask(playing), rng.random((len(moving), 9)), -1.0).argmax(axis=1)
        after = TICTACTOE.step(playing, actions)
        for key, value in after.items():
            state[key][moving] = value
    return state
