"""The games the engine plays: the ``Game`` interface and the registry of its entries by name.

The search (``Search_Tree``, ``MCTS_Core``, ``Gumbel_MCTS``) and the self-play driver
(``Self_Play``) know a game only through this interface; they never import a cube module or
ask which game they have. The puzzles of ``Puzzles.PUZZLES`` ("2x2", "3x3") are entries; a
two-player game registers itself with ``register_game`` (the tests' tic-tac-toe does).

A *state batch* is a dict of numpy arrays sharing the leading batch dimension B; the search
tree stores one with B * max_nodes rows and copies rows by fancy indexing, so everything a
state's rules need (move history, player to move, ...) lives in its arrays. What an evaluator
(the network) sees of a state is ``eval_input(state)``, one array of B rows; ``encode`` and
``state_keys`` take that array.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Protocol

import numpy as np

State = dict[str, np.ndarray]


class Game(Protocol):
    """One game as the engine sees it; every function is batched over the B rows of a state."""

    name: str  # the registry key
    num_actions: int  # A
    obs_shape: tuple[int, ...]  # the network's input shape of one state
    #: +1.0: one agent (a puzzle); -1.0: two-player zero-sum, a value is negated at each ply.
    discount: float
    #: PUCT MCTS repeats the original cube MCTS's second update of the leaf edge (Search_Tree).
    leaf_quirk: bool
    #: The value of one move on the network's scale (the Gumbel search's default step cost; 0 for a game).
    move_cost: float

    def new_states(self, positions: np.ndarray) -> State:
        """A state batch from B positions (the game's own array form) with no history."""

    def legal_mask(self, state: State) -> np.ndarray:
        """``(B, A)`` bool."""

    def step(self, state: State, actions: np.ndarray) -> State:
        """A new state batch: ``actions`` ``(B,)`` played."""

    def reward(self, state: State, actions: np.ndarray, next_state: State) -> np.ndarray:
        """``(B,)`` float64 reward of each move for the player who made it."""

    def is_terminal(self, state: State) -> np.ndarray:
        """``(B,)`` bool."""

    def terminal_value(self, state: State) -> np.ndarray:
        """``(B,)`` float64 value of a terminal state for its player to move."""

    def eval_input(self, state: State) -> np.ndarray:
        """``(B, ...)`` the array an evaluator receives for each state."""

    def encode(self, inputs: np.ndarray) -> np.ndarray:
        """``(B, *obs_shape)`` float32 network input of ``eval_input`` rows."""

    def state_keys(self, inputs: np.ndarray) -> np.ndarray:
        """``(B,)`` exact keys of ``eval_input`` rows (the evaluation cache's)."""

    def symmetries(self, inputs: np.ndarray, policies: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The equivalent ``(inputs, policies)`` batches, the given one first."""

    # Optional: ``with_room(state, moves) -> State``, the state made ready for ``moves`` more steps. A game
    # whose state arrays grow with the game (Go's superko history) has it; ``Search_Tree`` calls it at the
    # root, so that every state of one tree has the same array widths.
    # Optional: ``c_puct: float``, the PUCT constant ``MCTS_Core.MCTS`` searches the game with when it is
    # given none (the cubes': ``Puzzles.C_PUCT``). A game without one (Go: its recipe's and its agents'
    # flags set theirs) is searched with the c_puct its caller passes.


DEFAULT_GAME = "2x2"
#: Where the built-in games live: ``name -> (module, the module's table of its games)``. The interface
#: names them without importing them (the engine that imports this module imports no game); the first
#: lookup of a name imports its module. ``Go_Game.go_game(size, ...)`` makes other boards.
BUILT_IN = {
    "2x2": ("cube.Puzzles", "PUZZLES"),
    "3x3": ("cube.Puzzles", "PUZZLES"),
    "go5": ("go.Go_Game", "GO_GAMES"),
    "go7": ("go.Go_Game", "GO_GAMES"),
    "go9": ("go.Go_Game", "GO_GAMES"),
}


class GameRegistry(MutableMapping):
    """``name -> Game``: the built-in games, each loaded from its module on first use, and the games
    registered at run time (``register_game``)."""

    def __init__(self, built_in: dict[str, tuple[str, str]]):
        self._where = dict(built_in)
        self._games: dict[str, Game] = {}

    def __getitem__(self, name: str) -> Game:
        if name not in self._games and name in self._where:
            module, table = self._where[name]
            self._games[name] = getattr(importlib.import_module(module), table)[name]
        return self._games[name]

    def __setitem__(self, name: str, game: Game) -> None:
        self._games[name] = game

    def __delitem__(self, name: str) -> None:
        self._games.pop(name, None)
        self._where.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter({**self._where, **self._games})

    def __len__(self) -> int:
        return len({**self._where, **self._games})


GAMES = GameRegistry(BUILT_IN)


def register_game(game: Game) -> None:
    """Make ``game`` reachable as ``get_game(game.name)`` (replaces an entry of that name)."""
    GAMES[game.name] = game


def get_game(game: str | Game | None = None) -> Game:
    """``GAMES[name]`` (None: the 2x2; a game object is returned as it is). Raises ValueError
    naming the choices for an unknown name."""
    if game is not None and not isinstance(game, str):
        return game
    name = DEFAULT_GAME if game is None else game
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; choose one of {', '.join(GAMES)}")
    return GAMES[name]
