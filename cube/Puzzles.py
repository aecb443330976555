"""The puzzles the engine solves, described by data: ``PUZZLES = {"2x2": ..., "3x3": ...}``.

A solver, the evaluation or a script never asks which cube it has; it reads a ``Puzzle``: how
many stickers, the 12 move permutations, the solved stickers, the solved test, the network's
encoding, the state keys, the mask rule, move strings, the ASCII net, how a value reads as
moves, the default move limit, model file, log folder and longest scramble evaluated, where the
reference lengths come from (the exact optimal solver for the 2x2, ``kociemba``'s two-phase
solver for the 3x3) and, for the 3x3, how to draw uniformly random positions. The 2x2 is the default
everywhere, and every 2x2 path reads the same arrays and functions as before, so its results
are unchanged.

``add_puzzle_flag(parser)`` adds ``--puzzle 2x2|3x3``; ``get_puzzle(name)`` looks one up.
A ``Puzzle`` is also a ``Games.Game`` (state batches of stickers, last move and face count;
discount +1; the original MCTS's leaf quirk), which is how the search and self-play see it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

import Rubik2x2Env
from cube import Cube_Model, Rubik3x3Env
from cube.Cube_Model import CubeModel
from cube.Kociemba_Solver import solution_lengths
from engine.Games import DEFAULT_GAME
from engine.Value_Scale import VALUE_PER_MOVE
from Optimal_Solver import get_solver

DEFAULT_PUZZLE = DEFAULT_GAME  # the engine's default game is the 2x2
#: PUCT's exploration constant on the cubes (the original's): ``Puzzle.c_puct``, which the search reads
#: when it is given none, and the default of the cube scripts' ``--c-puct``.
C_PUCT = 1.3


def value_as_moves(values, per_move: float = VALUE_PER_MOVE, at_least: float | None = None) -> np.ndarray:
    """The network's value read as moves to solved, float64 in ``values``' shape: ``(1 - v) / per_move``
    (the inverse of ``v = 1 - per_move * d``; ``per_move``: the puzzle's ``value_per_move``). ``at_least``
    (None: no bound) floors the reading: a solver's heuristic is never negative, while a measure of the
    value's error wants the reading as it is (a value above 1 reads as fewer than 0 moves)."""
    moves = (1.0 - np.asarray(values, dtype=np.float64)) / per_move
    return moves if at_least is None else np.maximum(moves, at_least)


@dataclass(frozen=True)
class Puzzle:
    """One cube as the engine sees it. Arrays are read-only; functions are batched over rows of
    ``(B, num_stickers)`` arrays unless their name says otherwise (``replay``: one cube)."""

    name: str  # "2x2", "3x3": the --puzzle value
    model: CubeModel = field(repr=False)  # the sticker permutations and helpers of this size
    env_class: type = field(repr=False)  # the Gymnasium env (registered as env_id)
    env_id: str
    #: The network's value reads ``v = 1 - value_per_move * d`` for a cube ``d`` moves from solved
    #: (the original's 2x2 target; the 3x3's distances, at most 26 quarter turns, stay above 0.2).
    value_per_move: float
    default_max_moves: int  # moves per solve (greedy, mcts) and beam depth when no flag says otherwise
    checkpoint: str  # the model file name scripts look for (./NAME, else pretrained/NAME)
    reference: str  # what reference lengths are: "optimal" (exact) or "kociemba" (two-phase, upper bound)
    log_dir: str  # main.py's and evaluate.py's default --log-dir
    eval_max_len: int  # evaluate.py's default --max-len (the longest scramble evaluated)
    #: ``(B, stickers) -> (B, stickers)``: each cube turned as a whole into one orientation shared
    #: by all orientations of its position (the 2x2, which has no centres); None where the
    #: centres fix the orientation (the 3x3).
    orient: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)
    #: ``random_states(rng, batch) -> (batch, stickers)``: uniformly random positions (the 2x2:
    #: drawn from the exact solver's table of all 3,674,160; the 3x3: from its cubies).
    random_states: Callable | None = field(default=None, repr=False)
    #: ``inverse_states(cubes) -> (B, stickers)``: each position's inverse (the 3x3, from its cubies;
    #: ``Solver_Views`` solves a cube from its inverse too), None where not available (the 2x2).
    inverse_states: Callable | None = field(default=None, repr=False)
    #: The mean optimal length of a uniformly random position in quarter turns, where no exact distances
    #: measure each solution (the 3x3: 20.66, from the distribution of Rokicki et al. the issues quote);
    #: None where they do (the 2x2's exact table).
    uniform_optimal_mean: float | None = None
    #: The solver the scripts use when no ``--solver`` is given, and the budgets it then gets for
    #: the flags not given (``Solvers.SolverOptions`` field -> value): the 2x2's is the original's
    #: MCTS with its defaults.
    default_solver: str = "mcts"
    default_solver_options: Mapping[str, object] = field(default_factory=dict, hash=False)

    # -- sizes and tables -------------------------------------------------------------
    @property
    def size(self) -> int:
        return self.model.n

    @property
    def num_stickers(self) -> int:
        return self.model.num_stickers

    @property
    def num_actions(self) -> int:
        return Cube_Model.NUM_ACTIONS

    @property
    def obs_dim(self) -> int:
        """Network inputs: every sticker one-hot over 6 colours."""
        return self.model.obs_dim

    @property
    def move_perms(self) -> np.ndarray:
        """``(12, num_stickers)``: ``new = old[move_perms[a]]``."""
        return self.model.move_perms

    @property
    def solved(self) -> np.ndarray:
        """``(num_stickers,)`` int8: the solved stickers."""
        return self.model.solved

    @property
    def key_dtype(self) -> np.dtype:
        return self.model.key_dtype

    @property
    def move_names(self) -> tuple[str, ...]:
        return Cube_Model.MOVE_NAMES

    # -- batched functions ------------------------------------------------------------
    def apply(self, cubes: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """``actions[i]`` applied to ``cubes[i]``."""
        return self.model.batch_apply_moves(cubes, actions)

    def is_solved(self, cubes: np.ndarray) -> np.ndarray:
        return self.model.batch_is_solved(cubes)

    def uniform_faces(self, cubes: np.ndarray) -> np.ndarray:
        return self.model.uniform_faces(cubes)

    def encode(self, cubes: np.ndarray) -> np.ndarray:
        """``(B, obs_dim)`` float32: the network's input."""
        return self.model.batch_onehot(cubes)

    def state_keys(self, cubes: np.ndarray) -> np.ndarray:
        """``(B,)`` exact keys of ``key_dtype`` (int64 for the 2x2)."""
        return self.model.batch_state_keys(cubes)

    def position_keys(self, cubes: np.ndarray) -> np.ndarray:
        """``(B,)`` keys equal exactly for cubes that are one position up to a whole-cube turn
        (on the 2x2, ``U`` and ``D`` from one cube give one position): what an
        orientation-invariant value cannot tell apart."""
        cubes = np.asarray(cubes).reshape(-1, self.num_stickers)
        return self.state_keys(cubes if self.orient is None else self.orient(cubes))

    def scramble(self, rng: np.random.Generator, batch: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``batch`` cubes of ``k`` random moves each, and the moves."""
        return self.model.batch_scramble(rng, batch, k)

    def replay(self, cube: np.ndarray, actions) -> np.ndarray:
        """One cube after a sequence of actions."""
        return self.model.apply_moves(cube, actions)

    # -- the game interface (Games.Game): a state batch is {stickers, last_action, face_count} --
    #: One agent: a value is never negated between plies (Games.Game.discount).
    discount = 1.0
    #: The original's MCTS updates the leaf edge twice per simulation (Search_Tree's quirk).
    leaf_quirk = True
    #: The PUCT constant of a search given none (Games.Game.c_puct).
    c_puct = C_PUCT

    @property
    def obs_shape(self) -> tuple[int, ...]:
        return (self.obs_dim,)

    @property
    def move_cost(self) -> float:
        """The value of one move on the network's scale (the Gumbel search's step cost)."""
        return self.value_per_move

    def new_states(self, cubes: np.ndarray, last_action=None, face_count=None) -> dict[str, np.ndarray]:
        """A state batch of ``(B, num_stickers)`` cubes (or any shape of B cubes) reached by
        ``last_action`` ``(B,)`` turned ``face_count`` ``(B,)`` times in a row (default: no move yet)."""
        stickers = np.asarray(cubes).reshape(-1, self.num_stickers).astype(np.int8)
        batch = len(stickers)
        last = np.full(batch, Cube_Model.NO_ACTION, np.intp) if last_action is None else last_action
        count = np.zeros(batch, np.intp) if face_count is None else face_count
        return {
            "stickers": stickers,
            "last_action": np.asarray(last, np.intp).reshape(batch),
            "face_count": np.asarray(count, np.intp).reshape(batch),
        }

    def legal_mask(self, state: dict) -> np.ndarray:
        """``(B, 12)`` bool: the mask rule after each state's last move."""
        return Cube_Model.legal_action_mask(state["last_action"], state["face_count"])

    def step(self, state: dict, actions: np.ndarray) -> dict[str, np.ndarray]:
        """The state batch after ``actions`` ``(B,)``."""
        return {
            "stickers": self.apply(state["stickers"], actions),
            "last_action": np.asarray(actions, np.intp),
            "face_count": Cube_Model.next_face_count(state["last_action"], state["face_count"], actions),
        }

    def reward(self, state: dict, actions: np.ndarray, next_state: dict) -> np.ndarray:
        """``(B,)`` 0.0: a cube's worth is its terminal value (the step cost is the search's)."""
        return np.zeros(len(actions))

    def is_terminal(self, state: dict) -> np.ndarray:
        return self.is_solved(state["stickers"])

    def terminal_value(self, state: dict) -> np.ndarray:
        """``(B,)`` float64 1.0: a solved cube (the only terminal state)."""
        return np.ones(len(state["stickers"]))

    def eval_input(self, state: dict) -> np.ndarray:
        """``(B, num_stickers)`` int8: what an evaluator sees (``encode`` and ``state_keys`` read it)."""
        return state["stickers"]

    def symmetries(self, inputs: np.ndarray, policies: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The equivalent ``(inputs, policies)`` pairs for augmentation: the batch itself (the
        cube's symmetry classes are the sweep's business, not the training step's)."""
        return [(inputs, policies)]

    # -- the shared rules, as every puzzle has them -----------------------------------------
    # (Class attributes, not fields: the 12 actions and their rules are the same for every cube.)
    legal_action_mask = staticmethod(Cube_Model.legal_action_mask)
    next_face_count = staticmethod(Cube_Model.next_face_count)
    parse_moves = staticmethod(Cube_Model.parse_moves)
    format_moves = staticmethod(Cube_Model.format_moves)

    def as_ascii(self, cube: np.ndarray) -> str:
        return self.model.as_ascii(cube)

    def make_env(self, **kwargs):
        """A new env of this puzzle (the constructor's keyword arguments)."""
        return self.env_class(**kwargs)

    def reference_lengths(self, cubes: np.ndarray) -> np.ndarray:
        """``(B,)`` int64 quarter-turn lengths to measure solutions against: the true distance
        (2x2, ``Optimal_Solver``) or kociemba's two-phase solution (3x3, an upper bound)."""
        cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, self.num_stickers)
        if self.reference == "optimal":
            return get_solver().batch_distance(cubes)
        return solution_lengths(cubes)


def _random_2x2_positions(rng: np.random.Generator, batch: int) -> np.ndarray:
    return get_solver().random_cubes(rng, batch)


PUZZLES = {
    "2x2": Puzzle(
        name="2x2",
        model=Rubik2x2Env.MODEL,
        env_class=Rubik2x2Env.Rubik2x2Env,
        env_id=Rubik2x2Env.ENV_ID,
        value_per_move=VALUE_PER_MOVE,
        default_max_moves=Rubik2x2Env.MAX_MOVES,
        checkpoint="rubik_policy_value.pt",
        reference="optimal",
        log_dir="training_logs",
        eval_max_len=20,  # the original's evaluation
        orient=Rubik2x2Env.canonical_orientation,
        random_states=_random_2x2_positions,
    ),
    "3x3": Puzzle(
        name="3x3",
        model=Rubik3x3Env.MODEL,
        env_class=Rubik3x3Env.Rubik3x3Env,
        env_id=Rubik3x3Env.ENV_ID,
        value_per_move=VALUE_PER_MOVE,
        # Random 3x3 states are up to 26 quarter turns from solved (kociemba's solutions about
        # 21-24 half turns, ~28-31 quarter turns): room for solutions a weak value makes longer.
        default_max_moves=100,
        checkpoint="rubik3x3_policy_value.pt",
        reference="kociemba",
        log_dir="training_logs_3x3",
        eval_max_len=26,  # every 3x3 position is within 26 quarter turns
        random_states=Rubik3x3Env.random_states,
        inverse_states=Rubik3x3Env.inverse_states,
        uniform_optimal_mean=20.66,
        # The mixed beam of 4,000 from 8 views, the end table of 6, 16,000,000 states and a minute, after a first
        # round of 2 views of 1,000 (Solver_Anytime), widened where the first round's speed predicts it ends
        # within 25 s (the median is 30 s): the configuration measured in docs/puzzles.md (why:
        # docs/design_notes.md, "the 3x3's default solver").
        default_solver="beam",
        default_solver_options=MappingProxyType(
            {
                "beam_width": 4000,
                "beam_rank": "mixed",
                "views": 8,
                "ends": 6,
                "first_width": 1000,
                "first_views": 2,
                "target_seconds": 25.0,
                "max_nodes": 16_000_000,
                "seconds": 60.0,
                "precision": "auto",
            }
        ),
    ),
}
PUZZLE_NAMES = tuple(PUZZLES)


def beam_keys(puzzle: Puzzle, by_position: bool, cubes: np.ndarray) -> np.ndarray:
    """``(B,)`` int64 keys the beam deduplicates by: the puzzle's exact ``state_keys`` (with
    ``by_position``, ``position_keys``) where they are one int64 (the 2x2), else a 64-bit hash
    of their fields (the 3x3's two). Sorting and searching a record array costs several times an
    int64's, and the beam does both each depth; a collision (about one in 10**11 searches of
    10**4 states) could only drop a state from the beam, never make a wrong solution (every
    solution is replayed)."""
    keys = puzzle.position_keys(cubes) if by_position else puzzle.state_keys(cubes)
    if keys.dtype.names is None:
        return keys
    hashed = np.zeros(len(keys), np.uint64)
    for name in keys.dtype.names:
        hashed = _mix64(hashed ^ keys[name].view(np.uint64))
    return hashed.view(np.int64)


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64s (wrapping): a bijection that scatters nearby inputs,
    so keys that differ in one field alone never collide."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def get_puzzle(puzzle: str | Puzzle | None = None) -> Puzzle:
    """``PUZZLES[name]`` (None: the 2x2; a ``Puzzle`` is returned as it is). Raises ValueError
    naming the choices for an unknown name."""
    if isinstance(puzzle, Puzzle):
        return puzzle
    name = DEFAULT_PUZZLE if puzzle is None else puzzle
    if name not in PUZZLES:
        raise ValueError(f"unknown puzzle {name!r}; choose one of {', '.join(PUZZLE_NAMES)}")
    return PUZZLES[name]


def puzzle_name(text: str) -> str:
    """argparse type of ``--puzzle``: one of ``PUZZLE_NAMES``."""
    if text not in PUZZLES:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(PUZZLE_NAMES)}, got {text!r}")
    return text


def add_puzzle_flag(group) -> None:
    """``--puzzle 2x2|3x3`` (default 2x2). A bad value is one line on stderr and exit status 2
    with ``Cli.ArgumentParser``."""
    group.add_argument(
        "--puzzle",
        type=puzzle_name,
        default=DEFAULT_PUZZLE,
        metavar="|".join(PUZZLE_NAMES),
        help="which cube: the 2x2 (the original) or the 3x3",
    )
