"""AlphaZero-style curriculum training of the 2x2 cube solver (the original's recipe).

Every iteration: self-play ``--episodes-per-iter`` episodes with MCTS at the current
scramble length, add them to the replay buffer, train on a sample of it (once it holds
``8 * batch size`` states), save the checkpoint, log, and let the curriculum raise the
scramble length. At the end, evaluate the solve rate by scramble length.

``--targets lookahead`` (beyond the original) replaces the self-play step: every iteration
takes ``--states-per-iter`` states from random scramble paths of the current length, gets
their value and policy targets from a one-ply full-width search with the current network
(Lookahead_Targets.py), and trains on them; the solve rate that drives the curriculum is
then the network's own greedy solve rate on ``--episodes-per-iter`` fresh scrambles.
``--targets sweep`` (Value_Sweep.py) trains on every class of positions up to symmetry each
iteration, ``--targets adi`` / ``scramble`` on the seed systems' targets and ``--targets
diffusion`` on CayleyPy's random-walk lengths (Seed_System_Targets.py); all use the same greedy solve rate.

``--puzzle 3x3`` trains a 3x3 network (324 inputs, ``--hidden-sizes``) with ``--targets
diffusion``, ``scramble`` or ``adi``, which need no search; ``--recipe 3x3`` is the preset for an
hour on a CPU. The MCTS self-play, the lookahead and the sweep, and the canonicalising
options, are the 2x2's; asked for with the 3x3, ``main.py`` stops with one sentence (exit 2).

Stop at any time (Ctrl-C or SIGTERM): the last completed iteration is on disk and running
the same command again continues from the next one (the run ends with ``interrupted`` on stderr,
exit status 130). ``--fresh`` starts over.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch

import Cli
import Workers
from All_Positions import NUM_CLASSES
from Cli import C_PUCT, EVAL_SIMULATIONS, MAX_MOVES, DeviceError, add_device_flag, fail, resolve_device, show_progress
from Gumbel_MCTS import BOOTSTRAP_STEPS, SEARCH_VALUE_TARGETS, SEARCH_VALUES, gumbel_self_play
from Lookahead_Targets import greedy_policy_solve_rate, lookahead_targets, scramble_path_states
from Optimal_Solver import MAX_DISTANCE
from Plot_Scatter import METRIC_KEYS, MetricsLogger
from Policy_Value_Net import (
    HIDDEN_SIZES,
    CheckpointError,
    PolicyValueNet,
    load_state_dict,
    model_from_state,
    save_checkpoint,
    unusable_tensor,
)
from Puzzles import PUZZLES, add_puzzle_flag, get_puzzle
from Rubik2x2Env import batch_onehot
from Run_IO import (
    FileLock,
    OutputError,
    atomic_write,
    check_writable,
    read_json,
    remove_stale_temps,
    short_path,
)
from Seed_System_Targets import SEED_TARGETS, seed_training_sample
from Self_Play import VALUE_TARGETS, generate_self_play_data
from Solvers import SOLVER_NAMES, SolverOptions, solver_puzzle_problem
from Train_Network import VALUE_LOSSES, VALUE_WEIGHT, train_on_targets
from Value_Sweep import Sweeper

TARGET_SOURCES = ("selfplay", "lookahead", "sweep", *SEED_TARGETS)
SEARCHES = ("puct", "gumbel")  # --search
LR_SCHEDULES = ("constant", "cosine", "cosine-time")
#: What --targets the 3x3 trains with: those that read no 2x2-only machinery (MCTS, sweep tables).
TARGETS_3X3 = ("diffusion", "scramble", "adi")

#: Named presets (``--recipe``): flag values, as argparse destinations, that work together.
_SWEEP = dict(
    targets="sweep",
    canonical_symmetry=True,
    keep_optimizer=True,
    value_loss="logit",
    value_weight=30.0,
    policy_temperature=0.5,
    states_per_iter=65536,
    start_scramble_len=20,
    epochs=2,
    batch_size=1024,
    lr=5e-4,
    lr_schedule="cosine",
    lr_end=1e-5,
    warmup_iters=2,
    num_iters=40,
    eval_sims=200,
)
RECIPES = {
    "sweep": _SWEEP,
    # The sweep with a distance-classifying value head (--value-loss distance): a class is
    # right or wrong, and the Bellman backup of right classes is exact, where the scalar
    # sweep's values compressed beyond 7 moves (docs/sweep_recipe.md).
    # Its value weight is 2, not 6: with less of the body given to the value (exact anyway by
    # iteration ~50), the policy fits the closer moves at distances 9-11 (92-94% of its mass
    # against 79-91% at weight 6), which is what MCTS follows. 85 iterations, not 70: the policy
    # keeps sharpening where 10 of 12 moves are closer (distance 12); after 70, one class of 48
    # positions there still had its prior on a further move and MCTS at 200 simulations cycled.
    "exact": dict(
        _SWEEP,
        value_loss="distance",
        distance_classes=20,
        value_weight=2.0,
        lr=1e-3,
        warmup_iters=1,
        num_iters=85,
    ),
    "alphazero": dict(
        targets="selfplay",
        search="gumbel",
        sims=[32, 32, 32],
        value_target="bootstrap",
        bootstrap_steps=4,
        search_value="best",
        canonical_symmetry=True,
        value_loss="bce",
        value_weight=30.0,
        keep_optimizer=True,
        lr=1e-3,
        episodes_per_iter=200,
        epochs=2,
        time_budget=90.0,
        num_iters=100_000,
        eval_sims=200,
        threads=1,
    ),
    # The 3x3 on a 2-core CPU in an hour (docs/puzzles.md): CayleyPy's random-walk lengths,
    # every walk length 1..26 (the 3x3's diameter in quarter turns) from the first iteration,
    # large batches of fresh states (no replay: each state is seen once), a distance head that
    # reads the expected walk length, and a learning rate annealed over the time budget.
    "3x3": dict(
        puzzle="3x3",
        targets="diffusion",
        walk_len=26,
        hidden_sizes=[1024, 256, 256, 256],
        value_loss="distance",
        distance_classes=27,
        value_weight=2.0,
        keep_optimizer=True,
        states_per_iter=524_288,
        epochs=1,
        batch_size=2048,
        lr=1e-3,
        lr_schedule="cosine-time",
        lr_end=2e-5,
        warmup_iters=2,
        time_budget=60.0,
        num_iters=1_000_000,
        start_scramble_len=8,
        window=4,
        episodes_per_iter=200,
        max_episode_steps=60,
        eval_runs=10,
        eval_max_len=26,
        eval_max_steps=40,
    ),
}


def recipe_text(name: str) -> str:
    """A recipe as the flags it sets, for --help."""
    flags = []
    for key, value in RECIPES[name].items():
        flag = "--" + key.replace("_", "-")
        text = " ".join(map(str, value)) if isinstance(value, list) else value
        flags.append(flag if value is True else f"{flag} {text}")
    return " ".join(flags)


def learning_rate(args: argparse.Namespace, iteration: int, seconds: float = 0.0) -> float:
    """The learning rate of ``iteration`` (1-based): ``--lr``, or with ``--lr-schedule cosine``
    a half cosine from ``--lr`` down to ``--lr-end`` over ``--num-iters``, with ``cosine-time``
    the same over the ``--time-budget``, read at the ``seconds`` of training done before the
    iteration (every session of the run together); either way times ``iteration /
    --warmup-iters`` during the warm-up (a fresh Adam's first steps move every weight together,
    which from scratch saturated the value head)."""
    lr = args.lr
    if args.lr_schedule in ("cosine", "cosine-time"):
        if args.lr_schedule == "cosine":
            progress = (iteration - 1) / max(args.num_iters - 1, 1)
        else:
            progress = min(1.0, seconds / (60 * args.time_budget))
        lr = args.lr_end + 0.5 * (args.lr - args.lr_end) * (1 + math.cos(math.pi * progress))
    if args.warmup_iters:
        lr *= min(1.0, iteration / args.warmup_iters)
    return lr


STATE_VERSION = 1


# --------------------------------------------------------------------------- recipe pieces
def simulations_for(scramble_len: int, sims: tuple[int, int, int] = (300, 600, 800)) -> int:
    """MCTS simulations per move: ``sims[0]`` up to length 3, ``sims[1]`` up to 7, else ``sims[2]``."""
    return sims[0] if scramble_len <= 3 else sims[1] if scramble_len <= 7 else sims[2]


def temperature_for(scramble_len: int, temps: tuple[float, float, float, float] = (1.0, 0.7, 0.4, 0.2)) -> float:
    """Sampling temperature: ``temps`` for lengths up to 5, up to 9, up to 11, and longer."""
    return (
        temps[0]
        if scramble_len <= 5
        else temps[1]
        if scramble_len <= 9
        else temps[2]
        if scramble_len <= 11
        else temps[3]
    )


@dataclass
class Curriculum:
    """The original's curriculum over scramble length.

    The solve rate of every trained iteration enters a window of the last ``window``
    values; once the window is full and its mean exceeds ``threshold`` the length grows by
    2 while it is at most 9, by 1 while it is at most 15, and the window is cleared.
    """

    scramble_len: int = 3
    window: int = 8
    threshold: float = 0.9
    recent: list[float] = field(default_factory=list)

    def record(self, solve_rate: float) -> bool:
        """Add one trained iteration's solve rate; True if the scramble length changed."""
        self.recent = (self.recent + [float(solve_rate)])[-self.window :]
        if len(self.recent) < self.window or float(np.mean(self.recent)) <= self.threshold:
            return False
        old = self.scramble_len
        if self.scramble_len <= 9:
            self.scramble_len += 2
        elif self.scramble_len <= 15:
            self.scramble_len += 1
        self.recent = []
        return self.scramble_len != old


class ReplayBuffer:
    """The last ``capacity`` self-play states, stored compactly (cubes as int8 stickers, not
    one-hot): ``cubes (n, num_stickers)``, ``pis (n, num_actions)``, ``zs (n,)``, the sizes of
    ``puzzle`` (a ``Puzzles.Puzzle`` or its name; default the 2x2: 24 stickers, 12 moves)."""

    def __init__(self, capacity: int, puzzle=None):
        self.capacity = capacity
        self.puzzle = get_puzzle(puzzle)
        self.cubes = np.zeros((0, self.puzzle.num_stickers), dtype=np.int8)
        self.pis = np.zeros((0, self.puzzle.num_actions), dtype=np.float32)
        self.zs = np.zeros((0,), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.zs)

    def extend(self, cubes: np.ndarray, pis: np.ndarray, zs: np.ndarray) -> None:
        self.cubes = np.concatenate([self.cubes, cubes])[-self.capacity :]
        self.pis = np.concatenate([self.pis, pis])[-self.capacity :]
        self.zs = np.concatenate([self.zs, zs.astype(np.float32)])[-self.capacity :]

    def sample(self, rng: np.random.Generator, size: int) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """``size`` distinct states, as the original's ``(observation, pi, z)`` tuples."""
        idx = rng.choice(len(self), size=min(size, len(self)), replace=False)
        return list(zip(self.puzzle.encode(self.cubes[idx]), self.pis[idx], self.zs[idx].tolist()))

    def state(self) -> dict:
        return {
            "cubes": torch.from_numpy(self.cubes.copy()),
            "pis": torch.from_numpy(self.pis.copy()),
            "zs": torch.from_numpy(self.zs.copy()),
        }

    def load(self, state: dict) -> None:
        self.cubes, self.pis, self.zs = state["cubes"].numpy(), state["pis"].numpy(), state["zs"].numpy()


# --------------------------------------------------------------------------- interruption
class Interrupted(Exception):
    pass


class InterruptGuard:
    """SIGINT/SIGTERM stop training with ``Interrupted``, but never in the middle of a save:
    inside ``deferred()`` the signal is held and raised when the block ends."""

    def __init__(self):
        self._deferring = False
        self._pending: int | None = None

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    @contextlib.contextmanager
    def installed(self):
        """The guard for the block; the handlers it replaced are put back afterwards."""
        previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        self.install()
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous[0])
            signal.signal(signal.SIGTERM, previous[1])

    def _handle(self, signum, frame):
        if self._deferring:
            self._pending = signum
        else:
            raise Interrupted(signal.Signals(signum).name)

    @contextlib.contextmanager
    def deferred(self):
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        if self._pending is not None:
            signum, self._pending = self._pending, None
            raise Interrupted(signal.Signals(signum).name)


# --------------------------------------------------------------------------- arguments
def parse_args(argv=None) -> argparse.Namespace:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--recipe",
        choices=list(RECIPES),
        default=None,
        help="a named preset of the flags below (single flags still override it); none = the original recipe. "
        + "; ".join(f"{name}: {recipe_text(name)}" for name in RECIPES),
    )
    g = p.add_argument_group("recipe (defaults = the original project)")
    add_puzzle_flag(g)
    g.add_argument("--num-iters", type=Cli.iterations, default=100, help="training iterations (NUM_ITERS)")
    g.add_argument(
        "--episodes-per-iter",
        type=Cli.episodes,
        default=80,
        help="self-play episodes per iteration (EPISODES_PER_ITER)",
    )
    g.add_argument(
        "--epochs", type=Cli.epochs, default=10, help="passes over the training sample per iteration (EPOCHS)"
    )
    g.add_argument("--batch-size", type=Cli.batch_size, default=256, help="mini-batch size (BATCH_SIZE)")
    g.add_argument(
        "--lr",
        type=Cli.positive_float,
        default=2e-4,
        help="Adam learning rate (LR); a new Adam every iteration, as the original",
    )
    g.add_argument(
        "--solve-threshold",
        type=Cli.fraction,
        default=0.9,
        help="mean solve rate over the window needed to lengthen scrambles",
    )
    g.add_argument(
        "--window", type=Cli.iterations, default=8, help="trained iterations in the curriculum's solve-rate window"
    )
    g.add_argument(
        "--start-scramble-len", type=Cli.scramble_len, default=3, help="scramble length of the first iteration"
    )
    g.add_argument(
        "--max-episode-steps",
        type=Cli.move_limit,
        default=MAX_MOVES,
        help="moves per self-play episode before it counts as unsolved",
    )
    g.add_argument(
        "--buffer-size", type=Cli.buffer_size, default=100_000, help="replay buffer capacity in states (BUFFER_MAXLEN)"
    )
    g.add_argument(
        "--min-buffer-batches",
        type=Cli.buffer_batches,
        default=8,
        help="train only once the buffer holds this many batches (MIN_BUFFER_SIZE = BATCH_SIZE*8)",
    )
    g.add_argument(
        "--sample-batches",
        type=Cli.batches,
        default=16,
        help="states trained on per iteration, in batches (TRAIN_SAMPLE_SIZE = BATCH_SIZE*16)",
    )
    g.add_argument(
        "--sims",
        type=Cli.simulations,
        nargs="+",
        default=[300, 600, 800],
        metavar="N",
        help="MCTS simulations per move for scramble length <=3, <=7, longer (three numbers), or one number for "
        "every length",
    )
    g.add_argument(
        "--temps",
        type=Cli.positive_float,
        nargs=4,
        default=[1.0, 0.7, 0.4, 0.2],
        metavar=("LE5", "LE9", "LE11", "LONGER"),
        help="self-play temperature for length <=5, <=9, <=11, longer",
    )
    g.add_argument("--c-puct", type=Cli.positive_float, default=C_PUCT, help="PUCT exploration constant")
    g.add_argument(
        "--select-mode",
        choices=["sample", "greedy"],
        default="sample",
        help="how self-play picks moves from the visit counts",
    )
    g = p.add_argument_group("recipe changes beyond the original (defaults keep the original)")
    g.add_argument(
        "--value-target",
        choices=[*VALUE_TARGETS, *SEARCH_VALUE_TARGETS],
        default="episode",
        help="value target of a state in an episode solved in n moves: 'episode' = max(0.4, 1-0.03n) for every state (original); "  # noqa: E501
        "'remaining' = max(0.4, 1-0.03*(moves still needed from that state)); with --search gumbel, solved or not: "
        "'search' = the search's value of that state (--search-value); 'bootstrap' = -0.03 per move for the next "
        "--bootstrap-steps moves played, plus the search's value of the state reached (1 if solved); "
        "'bootstrap-max' = the largest of the 0- to --bootstrap-steps-step returns (a sampled move may be a detour)",
    )
    g.add_argument(
        "--bootstrap-steps",
        type=Cli.int_in(0, Cli.MAX_MOVE_LIMIT, "moves"),
        default=BOOTSTRAP_STEPS,
        help="with --value-target bootstrap or bootstrap-max: the moves n of the n-step target "
        "(0 = --value-target search)",
    )
    g.add_argument(
        "--search-value",
        choices=list(SEARCH_VALUES),
        default="mean",
        help="with --value-target search or bootstrap: the search's value of a state: 'mean' = the root's value, "
        "the mean return of all its simulations (mctx); 'best' = the Q of the best root move visited",
    )
    g.add_argument(
        "--depth-bound",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --value-target search or bootstrap: a state t moves into an episode from a k-move scramble is at "
        "most k + t moves out, so its target is at least 1 - 0.03 (k + t)",
    )
    g.add_argument(
        "--search",
        choices=list(SEARCHES),
        default="puct",
        help="the self-play search: 'puct' = the original's MCTS, moves sampled from the visit counts, policy target "
        "= visit counts; 'gumbel' = Gumbel AlphaZero root search (Gumbel_MCTS.py): each move the Sequential Halving "
        "winner under Gumbel noise, policy target = the completed-Q improved policy (--temps, --select-mode and "
        "--c-puct unused)",
    )
    g.add_argument(
        "--gumbel-scale",
        type=Cli.nonnegative_float,
        default=1.0,
        help="with --search gumbel: scale of the Gumbel noise on the root's moves (1 = the paper's self-play; 0 = "
        "always the search's best move)",
    )
    g.add_argument(
        "--max-considered",
        type=Cli.int_in(1, 16, "root actions"),
        default=16,
        help="with --search gumbel: root actions Sequential Halving starts from (the paper's 16; a cube has 12 moves)",
    )
    g.add_argument(
        "--targets",
        choices=list(TARGET_SOURCES),
        default="selfplay",
        help="where training targets come from: 'selfplay' = MCTS self-play episodes (original); 'lookahead' = "
        "states of random scramble paths, targets from a one-ply search of all 12 moves with the current network; "
        "'sweep' = every class of positions up to symmetry once per iteration plus the states of random scramble "
        "paths, targets from one network read per class (Value_Sweep.py; needs --canonical-symmetry); 'adi' (seed "
        "001), 'scramble' (seed 002) and 'diffusion' (CayleyPy: value = the length of the non-backtracking random "
        "walk from solved that reached a state, policy = undo its last move): Seed_System_Targets.py",
    )
    g.add_argument(
        "--walk-len",
        type=Cli.int_in(0, 1000, "moves"),
        default=0,
        help="with --targets adi, scramble or diffusion: the longest scramble path or random walk; 0 = the "
        "curriculum's scramble length (the greedy solve rate is measured at that length either way)",
    )
    g.add_argument(
        "--hidden-sizes",
        type=Cli.int_in(1, 16384, "units"),
        nargs="+",
        default=list(HIDDEN_SIZES),
        metavar="N",
        help="widths of the network's hidden layers, each Linear + LayerNorm + ReLU (a saved network keeps its own)",
    )
    g.add_argument(
        "--double-estimate",
        action="store_true",
        help="with --targets lookahead: value the chosen move's child a second time with the cube turned as a whole "
        "(mirrored, with --canonical-orientation): same distance, other input, which removes the upward bias of the max over noisy values",  # noqa: E501
    )
    g.add_argument(
        "--canonical-orientation",
        action="store_true",
        help="turn every cube into its canonical orientation (one of 24 whole-cube rotations) before the network, so all "  # noqa: E501
        "orientations of a position share one input; a checkpoint trained this way stays so, and a plain one is a starting point",  # noqa: E501
    )
    g.add_argument(
        "--canonical-symmetry",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="as --canonical-orientation, and also map every cube to one representative of the (up to) 48 positions that "  # noqa: E501
        "are the same up to a symmetry of the cube (colours renamed as a rotation renames them, and mirror images): "
        "about 48 times fewer positions for the network to learn",
    )
    g.add_argument(
        "--keep-optimizer",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="one Adam optimizer for the whole run (saved with the training state) instead of a new one every iteration: "  # noqa: E501
        "a fresh Adam's first steps move every weight by about --lr, which blurs values that must be exact to 0.03",
    )
    g.add_argument(
        "--policy-temperature",
        type=Cli.nonnegative_float,
        default=0.0,
        help="with --targets lookahead or sweep: policy target softmax(-moves to go after each move / T) from the children's values, "  # noqa: E501
        "T in moves; 0 = one-hot on the best move",
    )
    g.add_argument(
        "--sweep-plies",
        type=Cli.int_in(1, MAX_DISTANCE, "every position is within 14 moves"),
        default=1,
        help="with --targets sweep: Bellman backups over the table of class values per iteration (a full-width "
        "search this many moves deep on the network's values)",
    )
    g.add_argument(
        "--states-per-iter",
        type=Cli.states,
        default=32768,
        help="with --targets lookahead, adi or scramble: states generated and trained on per iteration; with "
        "--targets sweep: scramble-path states added to the classes each iteration",
    )
    g.add_argument(
        "--value-weight",
        type=Cli.positive_float,
        default=VALUE_WEIGHT,
        help="weight of the value MSE in the loss (original 1.0; the policy's is 1.2)",
    )
    g.add_argument(
        "--value-loss",
        choices=list(VALUE_LOSSES),
        default="mse",
        help="'mse' = MSE of the value after its tanh (original); 'logit' = the same error measured through the "
        "value before its tanh, which keeps a gradient where the tanh saturates; 'bce' = cross-entropy of (1+v)/2 "
        "to (1+z)/2, whose gradient before the tanh is v - z everywhere (Train_Network.alphazero_loss); "
        "'distance' = cross-entropy of a --distance-classes network's distance head with the target's distance",
    )
    g.add_argument(
        "--distance-classes",
        type=Cli.int_in(0, 100, "distance classes"),
        default=0,
        help="0 = a scalar value head (original); K > 0 = a value head that classifies the moves to solved into "
        "0..K-1, read as the value 1 - 0.03 E[d] (needs --value-loss distance)",
    )
    g.add_argument(
        "--lr-schedule",
        choices=list(LR_SCHEDULES),
        default="constant",
        help="'constant' = --lr every iteration (original); 'cosine' = --lr decayed to --lr-end over the run's "
        "--num-iters, 'cosine-time' = over its --time-budget (the minutes trained so far), after --warmup-iters "
        "iterations of linear warm-up",
    )
    g.add_argument(
        "--lr-end", type=Cli.positive_float, default=1e-5, help="with --lr-schedule cosine: the last iteration's rate"
    )
    g.add_argument(
        "--warmup-iters",
        type=Cli.int_in(0, 1_000_000, "iterations"),
        default=0,
        help="iterations of linear learning-rate warm-up (0 = none)",
    )
    g.add_argument(
        "--time-budget",
        type=Cli.nonnegative_float,
        default=0.0,
        help="minutes of training wall time (every session of a resumed run together) after which no new iteration "
        "starts; 0 = none, --num-iters only",
    )
    g = p.add_argument_group("final evaluation (solve rate by scramble length)")
    g.add_argument("--eval-min-len", type=Cli.scramble_len, default=1, help="shortest scramble evaluated")
    g.add_argument(
        "--eval-max-len",
        type=Cli.scramble_len,
        default=None,
        help="longest scramble evaluated (default: 20; 26 for the 3x3)",
    )
    g.add_argument("--eval-runs", type=Cli.episodes, default=100, help="episodes per scramble length")
    g.add_argument(
        "--eval-sims",
        type=Cli.simulations,
        default=EVAL_SIMULATIONS,
        help="MCTS simulations per move in the evaluation",
    )
    g.add_argument(
        "--eval-max-steps",
        type=Cli.move_limit,
        default=None,
        help=f"moves allowed per evaluation episode (default: {MAX_MOVES}; "
        f"{PUZZLES['3x3'].default_max_moves} for the 3x3)",
    )
    g.add_argument(
        "--eval-solver",
        choices=list(SOLVER_NAMES),
        default=None,
        help="how the evaluation solves (Solvers.py; default: mcts, the original; beam for the 3x3, ranked by the "
        "policy after --targets scramble, else by the value)",
    )
    g.add_argument("--skip-eval", action="store_true", help="do not run the evaluation at the end")
    g = p.add_argument_group("run")
    add_device_flag(g)
    g.add_argument(
        "--threads",
        type=Cli.int_in(0, 1024, "threads"),
        default=0,
        help="torch's CPU threads (0 = torch's default, one per core; --recipe alphazero: 1, because its batches "
        "of 200 episodes run faster on one thread than on two, docs/alphazero_selfplay.md)",
    )
    Workers.add_arguments(g)
    g.add_argument(
        "--seed", type=Cli.seed, default=0, help="seed of every random choice (scrambles, sampling, shuffling, init)"
    )
    g.add_argument(
        "--checkpoint",
        default=None,
        help="model file (bare state_dict); the training state is saved beside it (default: rubik_policy_value.pt; "
        "rubik3x3_policy_value.pt for the 3x3)",
    )
    g.add_argument(
        "--log-dir",
        default=None,
        help="folder of metrics.json, charts and TensorBoard events (default: training_logs; training_logs_3x3 for "
        "the 3x3)",
    )
    g.add_argument(
        "--fresh",
        action="store_true",
        help="start a new run from random weights even if a checkpoint or saved state exists",
    )
    g.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars (default: when stderr is a terminal)",
    )
    known, _ = p.parse_known_args(argv)
    if known.recipe is not None:
        p.set_defaults(**RECIPES[known.recipe])
    args = p.parse_args(argv)
    puzzle = get_puzzle(args.puzzle)
    for key, default in (
        ("checkpoint", puzzle.checkpoint),
        ("log_dir", puzzle.log_dir),
        ("eval_max_len", puzzle.eval_max_len),
        ("eval_max_steps", puzzle.default_max_moves),
        ("eval_solver", "mcts" if puzzle.name == "2x2" else "beam"),
    ):
        if getattr(args, key) is None:
            setattr(args, key, default)
    two_by_two = [
        (args.targets in TARGETS_3X3, f"--targets {args.targets}"),
        (not args.canonical_orientation, "--canonical-orientation"),
        (not args.canonical_symmetry, "--canonical-symmetry"),
        (not args.double_estimate, "--double-estimate"),
    ]
    for ok, flag in two_by_two if puzzle.name != "2x2" else []:
        if not ok:
            p.error(
                f"{flag} is the 2x2's so far (MCTS self-play, lookahead, sweep and the cube's symmetries): train the "
                f"{puzzle.name} with --targets {', '.join(TARGETS_3X3[:-1])} or {TARGETS_3X3[-1]} (--recipe 3x3)"
            )
    checks = [
        (args.lr_end > 0 and args.warmup_iters >= 0, "--lr-end must be positive and --warmup-iters 0 or more"),
        (
            args.lr_schedule != "cosine-time" or args.time_budget > 0,
            "--lr-schedule cosine-time anneals over the --time-budget: give one",
        ),
        (
            args.walk_len == 0 or args.targets in SEED_TARGETS,
            "--walk-len is for --targets adi, scramble or diffusion",
        ),
        (
            not (args.value_loss == "distance" and args.targets == "diffusion" and args.walk_len)
            or args.distance_classes > args.walk_len,
            "--distance-classes must exceed --walk-len: class k holds the walks of k moves",
        ),
        (
            solver_puzzle_problem(args.eval_solver, puzzle) is None,
            f"--eval-solver: {solver_puzzle_problem(args.eval_solver, puzzle)}",
        ),
        (
            args.distance_classes != 1,
            "--distance-classes 1 is a head whose one class always wins: its value is always 1 and its loss always "
            "0, so it learns nothing; give 0 (a scalar value) or at least 2",
        ),
        (args.num_iters >= 1, "--num-iters must be at least 1"),
        (args.episodes_per_iter >= 1, "--episodes-per-iter must be at least 1"),
        (args.epochs >= 1 and args.batch_size >= 1, "--epochs and --batch-size must be at least 1"),
        (args.lr > 0, "--lr must be positive"),
        (args.policy_temperature >= 0, "--policy-temperature must be 0 or more"),
        (
            args.states_per_iter >= 1 and args.value_weight > 0,
            "--states-per-iter must be at least 1 and --value-weight positive",
        ),
        (
            not args.double_estimate or args.targets == "lookahead",
            "--double-estimate works only with --targets lookahead",
        ),
        (args.window >= 1, "--window must be at least 1"),
        (args.start_scramble_len >= 1, "--start-scramble-len must be at least 1"),
        (args.max_episode_steps >= 1, "--max-episode-steps must be at least 1"),
        (min(args.sims) >= 1 and args.eval_sims >= 1, "simulation counts must be at least 1"),
        (len(args.sims) in (1, 3), "--sims takes one number or three"),
        (
            args.value_target not in SEARCH_VALUE_TARGETS or args.search == "gumbel",
            f"--value-target {args.value_target} reads the values of --search gumbel",
        ),
        (args.search == "puct" or args.targets == "selfplay", "--search gumbel plays self-play: --targets selfplay"),
        (
            args.search == "puct" or (args.workers == 1 and args.backend == "local"),
            "--search gumbel plays its episodes in this process: leave --workers and --backend out",
        ),
        (min(args.temps) > 0, "temperatures must be positive"),
        (1 <= args.eval_min_len <= args.eval_max_len, "--eval-min-len must be between 1 and --eval-max-len"),
        (args.eval_runs >= 1 and args.eval_max_steps >= 1, "--eval-runs and --eval-max-steps must be at least 1"),
    ]
    for ok, message in checks:
        if not ok:
            p.error(message)
    args.sims = args.sims * 3 if len(args.sims) == 1 else args.sims  # one number: every scramble length
    return args


# --------------------------------------------------------------------------- files of a run
class RunError(Exception):
    """A problem the user can fix, in one sentence: ``main`` prints it and exits with status 2."""


#: Tests only: "ITERATION:SECONDS" = sleep that long between saving that iteration's training
#: state and its outputs, so that a test can kill the run exactly there.
PAUSE_AFTER_COMMIT_ENV = "RUBIK2X2_TEST_PAUSE_AFTER_COMMIT"


def run_root(checkpoint: str) -> str:
    """The name of a run: the checkpoint path less its suffix, a symbolic link replaced by the
    file it names. Every name of one model file (``m.pt``, ``m.pth``, ``m``, a link to
    ``m.pt``) is one run, with one training state and one lock."""
    if os.path.islink(checkpoint):
        checkpoint = short_path(os.path.realpath(checkpoint))
    return os.path.splitext(checkpoint)[0]


def state_path_for(checkpoint: str) -> str:
    return run_root(checkpoint) + ".train_state.pt"


def lock_path_for(checkpoint: str) -> str:
    """The lock of the run (a name that no checkpoint's training state can take)."""
    return state_path_for(checkpoint) + ".lock"


def log_lock_path_for(log_dir: str) -> str:
    return os.path.join(log_dir, "run.lock")


def metrics_path_for(log_dir: str) -> str:
    return os.path.join(log_dir, "metrics.json")


def chart_path_for(log_dir: str) -> str:
    return os.path.join(log_dir, "training_metrics.png")


#: What a run leaves in its log folder; a new run moves an older run's aside.
LOG_FILES = ("metrics.json", "training_metrics.png", "eval_scramble_result.json", "eval_bar_chart.png", "tensorboard")


def archive_old_logs(log_dir: str) -> str | None:
    """Move an older run's outputs aside so that a fresh run never mixes with them. A
    ``tensorboard`` folder alone is no run: a run killed before its first iteration left
    it (its hyperparameters, nothing else), and the new run adds its events there."""
    names = [n for n in LOG_FILES if os.path.exists(os.path.join(log_dir, n))]
    if names in ([], ["tensorboard"]):
        return None
    dest = os.path.join(log_dir, "previous", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(dest, exist_ok=True)
    for n in names:
        shutil.move(os.path.join(log_dir, n), os.path.join(dest, n))
    return dest


def check_output_paths(args: argparse.Namespace) -> None:
    """Raise RunError unless the checkpoint names a file and it, its training state and the
    logs can be written (``Run_IO.check_writable``: a FIFO or a device is refused too): found
    before any work, not after the first iteration. Creates nothing."""
    if not args.checkpoint.strip() or args.checkpoint.endswith(("/", os.sep)) or os.path.isdir(args.checkpoint):
        raise RunError(f"--checkpoint must name a model file, got '{args.checkpoint}'.")
    if not args.log_dir.strip():
        raise RunError("--log-dir must name a folder, got ''.")
    if os.path.exists(args.log_dir) and not os.path.isdir(args.log_dir):
        raise RunError(f"--log-dir '{args.log_dir}' is a file, not a folder.")
    outputs = (
        ("--checkpoint", args.checkpoint, False),
        ("--checkpoint", state_path_for(args.checkpoint), False),
        ("--log-dir", args.log_dir, True),
    )
    for flag, path, folder in outputs:
        try:
            check_writable(path, folder=folder)
        except OutputError as exc:
            raise RunError(f"{flag}: {exc}") from None


def remove_temps_of_killed_runs(args: argparse.Namespace) -> None:
    """Temp files that killed writers left beside the checkpoint and in the log folder."""
    for folder in sorted({os.path.dirname(os.path.realpath(args.checkpoint)), os.path.abspath(args.log_dir)}):
        for path in remove_stale_temps(folder):
            print(f"Removed {path}, left by a run that was killed while saving.")


@contextlib.contextmanager
def run_locks(args: argparse.Namespace):
    """The run's two locks (``Run_IO.FileLock``): its checkpoint, by ``lock_path_for``, and
    its log folder, so that no second run resumes, writes or archives a live run's files."""
    with (
        FileLock(
            lock_path_for(args.checkpoint),
            f"checkpoint '{args.checkpoint}'",
            "wait for that run to end or give this one another --checkpoint",
        ),
        FileLock(
            log_lock_path_for(args.log_dir),
            f"--log-dir '{args.log_dir}'",
            "wait for that run to end or give this one another --log-dir",
        ),
    ):
        yield


# --------------------------------------------------------------------------- the training state
@dataclass
class Run:
    """A run in progress: what its training state file saves, live. The state file is the
    commit point of an iteration; the checkpoint, metrics.json and the chart follow from it."""

    model: PolicyValueNet
    curriculum: Curriculum
    buffer: ReplayBuffer
    rng: np.random.Generator
    metrics: dict[str, list]  # MetricsLogger's lists, one entry per trained iteration
    optimizer: torch.optim.Optimizer | None = None  # with --keep-optimizer
    iteration: int = 0  # the last completed iteration; 0 = none yet
    sweeper: Sweeper | None = None  # with --targets sweep: its best_depth is saved as "sweep_best_depth"
    seconds: float = 0.0  # wall time of the completed iterations, every session together (--time-budget)


STATE_KEYS = ("iteration", "scramble_len", "recent_solve_rates", "rng", "model", "buffer", "metrics", "args")


def state_to_dict(run: Run, args: argparse.Namespace) -> dict:
    """The training state file's contents (read back by ``state_from_dict``)."""
    state = {
        "version": STATE_VERSION,
        "iteration": run.iteration,
        "scramble_len": run.curriculum.scramble_len,
        "recent_solve_rates": list(run.curriculum.recent),
        "rng": json.dumps(run.rng.bit_generator.state),
        "model": {k: v.detach().cpu() for k, v in run.model.state_dict().items()},
        "buffer": run.buffer.state(),
        "metrics": run.metrics,
        "args": json.dumps(vars(args)),
        "seconds": run.seconds,
    }
    if run.optimizer is not None:
        state["optimizer"] = run.optimizer.state_dict()
    if run.sweeper is not None:
        state["sweep_best_depth"] = torch.from_numpy(run.sweeper.best_depth.copy())
    return state


def state_from_dict(state, path: str, args: argparse.Namespace, device: torch.device) -> Run:
    """The run saved in ``state`` (read from ``path``), checked first: raises RunError (one
    sentence naming the flags that differ from the saved run's) or CheckpointError (one
    sentence naming ``path`` and what is wrong), rather than failing or mixing runs later."""
    problem = header_problem(state)
    if problem is None:
        check_saved_flags(json.loads(state["args"]), path, args)
        problem = state_problem(state, args)
    if problem is None:
        try:
            model = model_from_checked_state(state["model"], path, args).to(device)
            rng = np.random.default_rng(args.seed)
            rng.bit_generator.state = json.loads(state["rng"])
            buffer = ReplayBuffer(args.buffer_size, args.puzzle)
            buffer.load(state["buffer"])
            optimizer = new_optimizer(args, model)
            if optimizer is not None and "optimizer" in state:
                optimizer.load_state_dict(state["optimizer"])
        except CheckpointError as exc:
            problem = str(exc).removeprefix(f"checkpoint '{path}' ").rstrip(".")
        except Exception as exc:  # whatever it is, it is this file's fault
            problem = f"does not fit this run ({type(exc).__name__}: {exc})".replace("\n", " ")
    if problem is not None:
        raise CheckpointError(f"training state '{path}' {problem}; use --fresh to start over.")
    curriculum = Curriculum(state["scramble_len"], args.window, args.solve_threshold, list(state["recent_solve_rates"]))
    metrics = {k: list(v) for k, v in state["metrics"].items()}
    sweeper = new_sweeper(args, model, state.get("sweep_best_depth"))
    seconds = float(state.get("seconds", 0.0))  # absent in states saved before --time-budget
    return Run(model, curriculum, buffer, rng, metrics, optimizer, state["iteration"], sweeper, seconds)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _all_finite(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)


def _saved_flags(text) -> dict | None:
    """The flags a training state was saved with (its ``args``: ``vars(args)`` as JSON), or None."""
    try:
        flags = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return flags if isinstance(flags, dict) else None


def header_problem(state) -> str | None:
    """What makes ``state`` no readable training state of this version (a phrase), or None."""
    if not isinstance(state, dict):
        return f"is not a training state (it holds a {type(state).__name__})"
    if state.get("version") != STATE_VERSION:
        return "has an unknown format (not a training state of this version of main.py)"
    missing = [k for k in STATE_KEYS if k not in state]
    if missing:
        return f"lacks {', '.join(missing)}"
    problem = unusable_tensor(state)
    if problem is not None:
        return f"is damaged: {problem}"
    if not isinstance(state["rng"], str) or _saved_flags(state["args"]) is None:
        return "has a random generator state or saved flags that cannot be read"
    return None


#: Flags a resumed run may change: how long it trains (raised to extend a run), and all that is
#: not its recipe: the final evaluation, the device, threads and workers, the files and the output.
#: Every other flag (the --recipe, each recipe flag, --puzzle, --seed) must be the saved run's.
RESUME_MAY_CHANGE = frozenset(
    {"num_iters", "time_budget", "skip_eval", "device", "threads", "workers", "backend", "ray_address"}
    | {"eval_min_len", "eval_max_len", "eval_runs", "eval_sims", "eval_max_steps", "eval_solver"}
    | {"checkpoint", "log_dir", "fresh", "progress"}
)


def flag_text(dest: str, value) -> str:
    """A flag as a command line gives it: ``--sims 300 600 800``, ``--fresh``, ``no --recipe``."""
    flag = "--" + dest.replace("_", "-")
    if value is True:
        return flag
    if value is False or value is None:
        return f"no {flag}"
    return f"{flag} {' '.join(map(str, value)) if isinstance(value, list) else value}"


def check_saved_flags(saved: dict, path: str, args: argparse.Namespace) -> None:
    """Raise RunError unless ``args`` trains as the run saved in ``path`` did (``saved``: its
    flags): resumed with other flags, a run would go on as a hybrid of two (buffers mixed, a
    network converted, another seed). Flags the saved run did not know yet are not compared."""
    now = json.loads(json.dumps(vars(args)))  # as saved: tuples become lists
    differ = [k for k in now if k in saved and k not in RESUME_MAY_CHANGE and saved[k] != now[k]]
    if differ:
        used = ", ".join(flag_text(k, saved[k]) for k in differ)
        asked = ", ".join(flag_text(k, now[k]) for k in differ)
        raise RunError(
            f"training state '{path}' belongs to a run with other training flags: the saved run used {used}; this "
            f"command asks for {asked}; give the saved run's flags to continue it, or --fresh to start over."
        )


def state_problem(state: dict, args: argparse.Namespace) -> str | None:
    """What is wrong with the contents of a training state of a run with these flags (a phrase),
    or None if it is sound: every part in its range, and the parts consistent with each other."""
    if not _is_int(state["iteration"]) or state["iteration"] < 1:
        return f"has iteration {state['iteration']!r} (must be a whole number of at least 1)"
    length = state["scramble_len"]
    if not _is_int(length) or not 1 <= length <= Cli.MAX_SCRAMBLE_LEN:
        return f"has scramble length {length!r} (must be a whole number from 1 to {Cli.MAX_SCRAMBLE_LEN:,})"
    recent = state["recent_solve_rates"]
    if not isinstance(recent, list) or not _all_finite(recent) or not all(0 <= r <= 1 for r in recent):
        return "has recent solve rates that are not numbers between 0 and 1"
    model = state["model"]
    if not isinstance(model, dict) or not all(isinstance(k, str) and torch.is_tensor(v) for k, v in model.items()):
        return "has model weights that are not a state_dict (names to tensors)"
    if not all(torch.isfinite(v).all() for v in model.values() if v.is_floating_point()):
        return "has model weights that are not finite (inf or nan)"
    problem = buffer_problem(state["buffer"], get_puzzle(args.puzzle))
    if problem is None:
        problem = metrics_problem(state["metrics"], state["iteration"])
    if problem is None:
        problem = progress_problem(state, args)
    if problem is None and not isinstance(state.get("optimizer", {}), dict):
        problem = "has an optimizer state that is not a dictionary"
    seconds = state.get("seconds", 0.0)
    if problem is None and not (_all_finite([seconds]) and seconds >= 0):
        problem = "has a training time that is not a number of seconds"
    if problem is None and "sweep_best_depth" in state:
        problem = sweep_problem(state["sweep_best_depth"])
    return problem


#: How far below 0 a logged loss may be: each is a mean of cross-entropies, KL divergences or
#: squares, so at least 0 but for float32 rounding.
LOSS_ROUNDING = 1e-4


def buffer_problem(buffer, puzzle) -> str | None:
    """What is wrong with a saved replay buffer of ``puzzle`` (a ``Puzzles.Puzzle``: its sticker
    and move counts give the shapes), or None: stickers that are colours, policy targets that
    are distributions, values on the value scale."""
    if not isinstance(buffer, dict) or not all(torch.is_tensor(buffer.get(k)) for k in ("cubes", "pis", "zs")):
        return "has a replay buffer without its cubes, pis and zs tensors"
    cubes, pis, zs = buffer["cubes"], buffer["pis"], buffer["zs"]
    stickers, actions = puzzle.num_stickers, puzzle.num_actions
    colours = puzzle.obs_dim // stickers  # the network sees each sticker one-hot over the colours
    if cubes.dtype != torch.int8 or cubes.dim() != 2 or cubes.shape[1] != stickers:
        return (
            f"has replay buffer cubes of shape {tuple(cubes.shape)} and type {cubes.dtype} (need n x {stickers} int8)"
        )
    if pis.dtype != torch.float32 or pis.dim() != 2 or pis.shape[1] != actions:
        return (
            f"has replay buffer policies of shape {tuple(pis.shape)} and type {pis.dtype} (need n x {actions} float32)"
        )
    if zs.dtype != torch.float32 or zs.dim() != 1:
        return f"has replay buffer values of shape {tuple(zs.shape)} and type {zs.dtype} (need n float32)"
    if not len(cubes) == len(pis) == len(zs):
        return f"has replay buffer arrays of different lengths ({len(cubes)}, {len(pis)}, {len(zs)})"
    if len(cubes) and (int(cubes.min()) < 0 or int(cubes.max()) >= colours):
        return f"has replay buffer stickers outside 0..{colours - 1}"
    if not (torch.isfinite(pis).all() and torch.isfinite(zs).all()):
        return "has replay buffer targets that are not finite"
    if len(pis) and (bool((pis < 0).any()) or float((pis.double().sum(dim=1) - 1).abs().max()) > 1e-3):
        return "has replay buffer policy targets that are not distributions (non-negative, summing to 1)"
    if len(zs) and float(zs.abs().max()) > 1:
        return "has replay buffer values outside -1..1 (the value scale)"
    return None


def sweep_problem(best_depth) -> str | None:
    """What is wrong with a saved ``Sweeper.best_depth`` (the shortest scramble depth each
    class of positions was reached at), or None."""
    if not torch.is_tensor(best_depth):
        return f"has a sweep best_depth that is a {type(best_depth).__name__}, not a tensor"
    if best_depth.dtype != torch.int32 or best_depth.shape != (NUM_CLASSES,):
        return (
            f"has a sweep best_depth of shape {tuple(best_depth.shape)} and type {best_depth.dtype} "
            f"(need {NUM_CLASSES} int32)"
        )
    if int(best_depth.min()) < 1:
        return "has a sweep best_depth below 1 (a scramble depth is at least 1)"
    return None


def metrics_problem(metrics, iteration: int) -> str | None:
    """What is wrong with saved metric lists (one entry per trained iteration), or None: each
    list in its range, the iterations consecutive up to ``iteration``."""
    if not isinstance(metrics, dict) or set(metrics) != set(METRIC_KEYS):
        keys = sorted(metrics) if isinstance(metrics, dict) else type(metrics).__name__
        return f"has metrics with keys {keys} (need {', '.join(METRIC_KEYS)})"
    if not all(isinstance(v, list) and _all_finite(v) for v in metrics.values()):
        return "has metrics that are not lists of finite numbers"
    if len({len(v) for v in metrics.values()}) != 1:
        return "has metric lists of different lengths"
    its = metrics["iterations"]
    # Training starts at some iteration (after the replay buffer's warm-up) and then every one trains.
    if its and (not all(map(_is_int, its)) or its[0] < 1 or its != list(range(its[0], iteration + 1))):
        return f"has metrics of iterations that are not consecutive up to its iteration {iteration}"
    if min((min(metrics[k], default=0) for k in ("losses", "policy_losses", "value_losses"))) < -LOSS_ROUNDING:
        return "has negative losses (each is a mean of cross-entropies or squares)"
    if not all(0 <= r <= 1 for r in metrics["solve_rates"]):
        return "has solve rates outside 0..1"
    if not all(_is_int(n) and n >= 1 for n in metrics["scramble_lengths"] + metrics["num_samples"]):
        return "has scramble lengths or sample counts that are not whole numbers of at least 1"
    return None


def progress_problem(state: dict, args: argparse.Namespace) -> str | None:
    """What in a training state contradicts how a run with these flags goes (a phrase), or None:
    every iteration trains, with --targets selfplay from the first whose replay buffer holds
    --min-buffer-batches batches on (the buffer only grows, up to --buffer-size); the curriculum's
    scramble length starts at --start-scramble-len and only grows; its window holds the solve
    rates logged last."""
    its, n = state["metrics"]["iterations"], len(state["buffer"]["zs"])
    if args.targets != "selfplay":
        if its != list(range(1, state["iteration"] + 1)):
            return (
                f"has metrics of {len(its)} iterations of {state['iteration']} (--targets {args.targets} trains each)"
            )
        if n:
            return f"has a replay buffer, which --targets {args.targets} does not fill"
    elif n > args.buffer_size:
        return f"has a replay buffer of {n} states, more than --buffer-size {args.buffer_size}"
    elif bool(its) != (n >= args.batch_size * args.min_buffer_batches):
        return f"has metrics of {len(its)} iterations, which its replay buffer of {n} states contradicts"
    lengths = [args.start_scramble_len, *state["metrics"]["scramble_lengths"], state["scramble_len"]]
    if lengths != sorted(lengths):
        return "has scramble lengths that the curriculum, which only lengthens them, cannot have reached"
    recent, rates = state["recent_solve_rates"], state["metrics"]["solve_rates"]
    if len(recent) > args.window or (recent and recent != rates[-len(recent) :]):
        return "has recent solve rates that are not the last ones of its metrics"
    return None


def save_state(path: str, run: Run, args: argparse.Namespace) -> None:
    state = state_to_dict(run, args)
    atomic_write(path, lambda f: torch.save(state, f))


def load_state(path: str, args: argparse.Namespace, device: torch.device) -> Run:
    try:
        with warnings.catch_warnings():  # torch warns on some damaged files before failing: one message is enough
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # pickle errors, truncated zip, ...: all mean "damaged"
        raise CheckpointError(
            f"training state '{path}' is damaged or not a training state ({type(exc).__name__}); "
            "use --fresh to start over."
        ) from None
    return state_from_dict(state, path, args, device)


# --------------------------------------------------------------------------- memory
#: Bytes of a search-tree node (MCTS_Core's and Gumbel_MCTS's flat arrays): per move a child index
#: and up to 4 float64 statistics, and besides them its stickers, its move, face count and flags.
NODE_BYTES_PER_MOVE = 8 + 4 * 8
NODE_BYTES_BESIDES = 32


def memory_needs(args: argparse.Namespace, scramble_len: int) -> list[list[tuple[int, str]]]:
    """The largest arrays that live at once while one iteration trains, and then while the final
    evaluation runs: per phase a list of ``(bytes, what sets them)``. A lower bound (the network
    and Python's own objects are left out), so flags it finds too big surely are."""
    puzzle = get_puzzle(args.puzzle)
    node = puzzle.num_stickers + NODE_BYTES_BESIDES + puzzle.num_actions * NODE_BYTES_PER_MOVE
    state = puzzle.num_stickers + 4 * (puzzle.num_actions + 1)  # int8 stickers, float32 policy and value
    row = 4 * (puzzle.obs_dim + puzzle.num_actions + 1)  # a training row: float32 input, policy, value
    scrambles = (args.episodes_per_iter * max(scramble_len, args.walk_len) * 8, "the scrambles' moves")
    if args.targets == "selfplay":
        training = [
            (args.episodes_per_iter * (max(args.sims) + 1) * node, "the search trees (--episodes-per-iter x --sims)"),
            (
                args.episodes_per_iter * args.max_episode_steps * state,
                "the episodes (--episodes-per-iter x --max-episode-steps)",
            ),
            (2 * args.buffer_size * state, "the replay buffer (--buffer-size)"),
            (args.batch_size * args.sample_batches * row, "the training sample (--batch-size x --sample-batches)"),
        ]
    else:
        training = [(args.states_per_iter * row, "the training states (--states-per-iter)")]
    evaluation = []
    if not args.skip_eval and args.eval_solver == "mcts":
        evaluation.append((args.eval_runs * (args.eval_sims + 1) * node, "the evaluation (--eval-runs x --eval-sims)"))
    return [[*training, scrambles], evaluation]


def machine_memory() -> int | None:
    """Bytes of physical memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def binary_size(count: float) -> str:
    """``2.2 TiB``, ``126.0 GiB``, ..."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if count < 1024 or unit == "PiB":
            return f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def check_memory(args: argparse.Namespace, scramble_len: int, available: int | None = None) -> None:
    """Raise RunError (one sentence) where the flags, with the run's current ``scramble_len``,
    need more memory at once than the machine has (``available``; default its physical memory):
    flags each within bounds can together ask for terabytes, which would fail deep inside numpy."""
    available = machine_memory() if available is None else available
    phase = max(memory_needs(args, scramble_len), key=lambda needs: sum(b for b, _ in needs))
    total = sum(b for b, _ in phase)
    if available is not None and total > available:
        largest, what = max(phase)
        raise RunError(
            f"these flags need at least {binary_size(total)} of memory at once, more than this machine's "
            f"{binary_size(available)}: {binary_size(largest)} of it for {what}; lower them."
        )


# --------------------------------------------------------------------------- starting a run
def network_flags(args: argparse.Namespace) -> dict:
    return dict(
        canonical_orientation=args.canonical_orientation,
        canonical_symmetry=args.canonical_symmetry,
        distance_classes=args.distance_classes,
    )


def model_from_checked_state(state: dict, path: str, args: argparse.Namespace) -> PolicyValueNet:
    """``model_from_state``, with every failure a CheckpointError naming ``path``."""
    if not all(isinstance(k, str) for k in state):
        raise CheckpointError(f"checkpoint '{path}' is not a PolicyValueNet state_dict (keys that are not names).")
    try:
        return model_from_state(state, path, **network_flags(args))
    except CheckpointError:
        raise
    except Exception as exc:  # values that are no tensors, ...
        raise CheckpointError(f"checkpoint '{path}' does not fit PolicyValueNet ({type(exc).__name__}).") from None


def new_optimizer(args: argparse.Namespace, model: PolicyValueNet) -> torch.optim.Optimizer | None:
    """With --keep-optimizer, the one Adam of the whole run; else None (a new one per iteration)."""
    return torch.optim.Adam(model.parameters(), lr=args.lr) if args.keep_optimizer else None


def new_sweeper(args: argparse.Namespace, model: PolicyValueNet, best_depth: torch.Tensor | None = None):
    """With --targets sweep (and a --canonical-symmetry network, which ``start_run`` demands),
    the run's Sweeper, continuing from a saved ``best_depth``; else None."""
    if args.targets != "sweep" or not model.symmetric:
        return None
    print("Sweep tables: the 77,802 classes of positions up to symmetry (built once, about a minute).")
    return Sweeper(None if best_depth is None else best_depth.numpy().copy())


def start_run(args: argparse.Namespace, device: torch.device) -> Run:
    """The run to continue: the saved training state, else the checkpoint's weights with a new
    curriculum (as the original), else random weights."""
    torch.manual_seed(args.seed)
    # Drawn in every case, so that torch's random stream after it is the same whichever start.
    puzzle = get_puzzle(args.puzzle)
    model = PolicyValueNet(puzzle.obs_dim, hidden_sizes=tuple(args.hidden_sizes), **network_flags(args)).to(device)
    state_path = state_path_for(args.checkpoint)
    if not args.fresh and os.path.isfile(state_path):
        run = load_state(state_path, args, device)
        print(
            f"Resuming from {state_path}: iteration {run.iteration + 1}, scramble length {run.curriculum.scramble_len}, buffer {len(run.buffer)} states."  # noqa: E501
        )
    else:
        curriculum = Curriculum(args.start_scramble_len, args.window, args.solve_threshold)
        if not args.fresh and os.path.isfile(args.checkpoint):
            model = model_from_checked_state(load_state_dict(args.checkpoint), args.checkpoint, args).to(device)
            print(
                f"Loaded weights from {args.checkpoint} (no training state beside it: curriculum starts at {curriculum.scramble_len})."  # noqa: E501
            )
        else:
            print(f"New model ({'--fresh' if args.fresh else 'no checkpoint at ' + args.checkpoint}).")
        metrics = {k: [] for k in METRIC_KEYS}
        buffer = ReplayBuffer(args.buffer_size, puzzle)
        run = Run(model, curriculum, buffer, np.random.default_rng(args.seed), metrics)
        run.optimizer = new_optimizer(args, model)
    if run.model.obs_dim != puzzle.obs_dim:
        made_for = [p.name for p in PUZZLES.values() if p.obs_dim == run.model.obs_dim]
        raise RunError(
            f"{args.checkpoint} holds a network for the {made_for[0] if made_for else 'another cube'}, not the "
            f"{puzzle.name}; give another --checkpoint or use --fresh."
        )
    if args.double_estimate and run.model.symmetric:
        raise RunError(
            "--double-estimate reads a mirror image a second time, but a --canonical-symmetry network sees a cube "
            "and its mirror image as one input; leave one of the two flags out."
        )
    if args.targets == "sweep" and not run.model.symmetric:
        raise RunError(
            "--targets sweep reads one network value per class of positions up to symmetry, so it needs "
            "--canonical-symmetry."
        )
    if (args.value_loss == "distance") != bool(run.model.distance_classes):
        raise RunError(
            "--value-loss distance trains a distance head and a distance head needs it: give both "
            "--value-loss distance and --distance-classes K, or neither (a saved distance network keeps its head)."
        )
    if run.sweeper is None:  # a new run, or a saved one without a sweep's best_depth
        run.sweeper = new_sweeper(args, run.model)
    return run


def open_logger(args: argparse.Namespace, run: Run) -> MetricsLogger:
    """The run's MetricsLogger, over ``run.metrics``; a new run first moves older logs aside."""
    if run.iteration == 0:
        moved = archive_old_logs(args.log_dir)
        if moved:
            print(f"Moved the previous run's logs from {args.log_dir} to {moved}.")
    logger = MetricsLogger(args.log_dir, purge_step=run.iteration + 1)
    logger.metrics = run.metrics
    logger.log_hparams_text(vars(args))
    return logger


def write_outputs(args: argparse.Namespace, run: Run, logger: MetricsLogger) -> None:
    """The files that follow from the training state: checkpoint, metrics.json, chart."""
    save_checkpoint(run.model, args.checkpoint)
    logger.save_json()
    if run.metrics["iterations"]:
        logger.plot_all()


def repair_outputs(args: argparse.Namespace, run: Run, logger: MetricsLogger) -> None:
    """Bring the outputs up to the training state where a run was killed between saving the
    state and saving them (or they were deleted). Nothing to do for a new run."""
    if run.iteration == 0:
        return
    state_path = state_path_for(args.checkpoint)
    repaired = []
    try:
        saved = load_state_dict(args.checkpoint)
    except CheckpointError:
        saved = None
    weights = {k: v.detach().cpu() for k, v in run.model.state_dict().items()}
    if saved is None or saved.keys() != weights.keys() or not all(torch.equal(saved[k], v) for k, v in weights.items()):
        save_checkpoint(run.model, args.checkpoint)
        repaired.append(args.checkpoint)
    metrics_path, chart_path = metrics_path_for(args.log_dir), chart_path_for(args.log_dir)
    try:
        up_to_date = read_json(metrics_path) == run.metrics
    except (OSError, ValueError):
        up_to_date = False
    if not up_to_date:
        logger.save_json()
        repaired.append(metrics_path)
    chart_behind = not os.path.isfile(chart_path) or os.path.getmtime(chart_path) < os.path.getmtime(state_path)
    if run.metrics["iterations"] and (not up_to_date or chart_behind):
        logger.plot_all()
        repaired.append(chart_path)
    if repaired:
        print(f"Rewrote {', '.join(repaired)} from {state_path} (iteration {run.iteration}): they were behind it.")


# --------------------------------------------------------------------------- one iteration
@dataclass
class Targets:
    """One iteration's training data, and what the iteration's line reports about it."""

    sample: object | None  # what train_on_targets takes; None = no training (buffer warm-up)
    num_samples: int
    solve_rate: float
    rate: tuple[str, float]  # ("sims/s" or "states/s", value)
    what: str


def selfplay_step(args: argparse.Namespace, run: Run, device: torch.device, progress: bool, workers=None) -> Targets:
    """MCTS self-play episodes into the replay buffer, and a sample of the buffer once it is full enough."""
    length = run.curriculum.scramble_len
    sims = simulations_for(length, tuple(args.sims))
    if args.search == "gumbel":
        res = gumbel_self_play(
            run.model,
            args.episodes_per_iter,
            args.max_episode_steps,
            sims,
            length,
            run.rng,
            gumbel_scale=args.gumbel_scale,
            max_considered=args.max_considered,
            device=device,
        )
        values = res.state_values(args.value_target, args.bootstrap_steps, args.search_value, args.depth_bound)
        return buffer_targets(args, run, res, values, f"gumbel sims {sims} |")
    temp = temperature_for(length, tuple(args.temps))
    _, solve_rate, res = Workers.self_play_fn(workers, run.iteration + 1, generate_self_play_data)(
        run.model,
        args.episodes_per_iter,
        args.max_episode_steps,
        sims,
        length,
        args.select_mode,
        temp,
        device=device,
        rng=run.rng,
        c_puct=args.c_puct,
        progress=progress,
        return_results=True,
        value_target=args.value_target,
    )
    return buffer_targets(args, run, res, res.state_values(args.value_target), f"sims {sims} | T {temp:.2f} |")


def buffer_targets(args: argparse.Namespace, run: Run, res, values: list[np.ndarray], what: str) -> Targets:
    """Add the episodes' states, policy targets and ``values`` to the replay buffer; a sample of
    the buffer once it holds --min-buffer-batches batches (the original's warm-up)."""
    run.buffer.extend(np.concatenate(res.states), np.concatenate(res.policies), np.concatenate(values))
    rate = ("sims/s", res.simulations / max(res.seconds, 1e-9))
    sample = None
    if len(run.buffer) >= args.batch_size * args.min_buffer_batches:
        sample = run.buffer.sample(run.rng, args.batch_size * args.sample_batches)
    return Targets(sample, len(sample) if sample else 0, res.solve_rate, rate, what)


def lookahead_step(args: argparse.Namespace, run: Run, device: torch.device, workers=None) -> Targets:
    """States of random scramble paths with one-ply lookahead targets; the greedy solve rate."""
    t0 = time.perf_counter()
    length = run.curriculum.scramble_len
    if workers is not None:
        cubes, z, pi = workers.lookahead(
            run.model, run.iteration + 1, args.states_per_iter, length, args.double_estimate, args.policy_temperature
        )
    else:
        cubes, depth, last = scramble_path_states(run.rng, args.states_per_iter, length)
        z, pi = lookahead_targets(
            run.model,
            cubes,
            depth,
            last,
            device,
            rng=run.rng if args.double_estimate else None,
            policy_temperature=args.policy_temperature,
        )
    solve_rate = greedy_solve_rate(args, run, device)
    rate = ("states/s", len(z) / (time.perf_counter() - t0))
    return Targets((batch_onehot(cubes), pi, z), len(z), solve_rate, rate, f"lookahead {len(z)} states | greedy")


def greedy_solve_rate(args: argparse.Namespace, run: Run, device: torch.device) -> float:
    """The network's own greedy solve rate on --episodes-per-iter fresh scrambles (what drives
    the curriculum when the targets come from no self-play)."""
    puzzle = get_puzzle(args.puzzle)
    start_cubes, _ = puzzle.scramble(run.rng, args.episodes_per_iter, run.curriculum.scramble_len)
    return greedy_policy_solve_rate(run.model, start_cubes, args.max_episode_steps, device, puzzle)


def sweep_step(args: argparse.Namespace, run: Run, device: torch.device) -> Targets:
    """Every class of positions up to symmetry plus scramble-path states, targets from one
    network read per class (Value_Sweep.py); the greedy solve rate."""
    t0 = time.perf_counter()
    sample = run.sweeper.targets(
        run.model, run.rng, args.states_per_iter, run.curriculum.scramble_len, args.policy_temperature, args.sweep_plies
    )
    solve_rate = greedy_solve_rate(args, run, device)
    n = len(sample[2])
    return Targets(sample, n, solve_rate, ("states/s", n / (time.perf_counter() - t0)), f"sweep {n} states | greedy")


def seed_step(args: argparse.Namespace, run: Run, device: torch.device, workers=None) -> Targets:
    """As lookahead, targets and loss weights that need no search (Seed_System_Targets.py: adi,
    scramble, diffusion), from paths of --walk-len moves (0: the curriculum's length)."""
    t0 = time.perf_counter()
    length = args.walk_len or run.curriculum.scramble_len
    if workers is not None:
        sample = workers.seed_sample(
            args.targets, run.model, run.iteration + 1, args.states_per_iter, length, args.puzzle
        )
    else:
        sample = seed_training_sample(
            args.targets, run.model, run.rng, args.states_per_iter, length, device, args.puzzle
        )
    solve_rate = greedy_solve_rate(args, run, device)
    n = len(sample[2])
    rate = ("states/s", n / (time.perf_counter() - t0))
    return Targets(sample, n, solve_rate, rate, f"{args.targets} {n} states | greedy")


def targets_step(args: argparse.Namespace, run: Run, device: torch.device, progress: bool, workers=None) -> Targets:
    """This iteration's training data, from the --targets source; with ``workers`` (a
    ``Workers.WorkerPool``, --workers/--backend) the episodes or states are made by them."""
    if args.targets == "lookahead":
        return lookahead_step(args, run, device, workers)
    if args.targets == "sweep":
        return sweep_step(args, run, device)
    if args.targets in SEED_TARGETS:
        return seed_step(args, run, device, workers)
    return selfplay_step(args, run, device, progress, workers)


def train_step(
    args: argparse.Namespace, run: Run, targets: Targets, it: int, device: torch.device, progress: bool
) -> tuple[float, float, float] | None:
    """Train on the targets: ``(loss, policy loss, value loss)``, or None without a sample.
    Raises RunError if the loss or the weights are no longer finite (nothing is saved then)."""
    if targets.sample is None:
        return None
    _, loss, ploss, vloss = train_on_targets(
        run.model,
        targets.sample,
        args.batch_size,
        args.epochs,
        learning_rate(args, it, run.seconds),
        device=device,
        seed=int(run.rng.integers(2**62)),
        progress=progress,
        value_weight=args.value_weight,
        optimizer=run.optimizer,
        value_loss=args.value_loss,
    )
    finite = _all_finite((loss, ploss, vloss)) and all(torch.isfinite(p).all() for p in run.model.parameters())
    if not finite:
        kept = f"{args.checkpoint} and its training state keep iteration {run.iteration}" if run.iteration else ""
        raise RunError(
            f"iteration {it} trained to a non-finite loss ({loss}) or weights and was not saved"
            f"{' (' + kept + ')' if kept else ''}; try a lower --lr (now {learning_rate(args, it, run.seconds):g})."
        )
    return loss, ploss, vloss


def commit_step(args: argparse.Namespace, run: Run, logger: MetricsLogger, it: int, targets: Targets, losses) -> bool:
    """Record the iteration, save the training state (the commit point), then the outputs
    that follow from it. True if the curriculum changed the scramble length."""
    if losses is not None:
        logger.log_iteration(
            it,
            *losses,
            targets.solve_rate,
            run.curriculum.scramble_len,
            targets.num_samples,
            **{f"charts/{targets.rate[0].replace('/', '_per_')}": targets.rate[1]},
            buffer=len(run.buffer),
        )
        changed = run.curriculum.record(targets.solve_rate)
    else:
        logger.log_scalars(it, {"charts/solve_rate_warmup": targets.solve_rate, "charts/sims_per_s": targets.rate[1]})
        changed = False
    run.iteration = it
    save_state(state_path_for(args.checkpoint), run, args)
    pause_at, _, seconds = os.environ.get(PAUSE_AFTER_COMMIT_ENV, "").partition(":")
    if pause_at == str(it):
        print(f"paused after committing iteration {it}", file=sys.stderr, flush=True)
        time.sleep(float(seconds))
    write_outputs(args, run, logger)
    return changed


def report_iteration(args, it, length, targets: Targets, losses, changed, run: Run, t0: float, start: float) -> None:
    if losses is not None:
        loss, ploss, vloss = losses
        text = f"loss {loss:.4f} (pi {ploss:.4f}, v {vloss:.4f}) | samples {targets.num_samples}"
    else:
        text = f"warm-up: buffer {len(run.buffer)}/{args.batch_size * args.min_buffer_batches}, no training"
    name, rate = targets.rate
    print(
        f"iter {it:3d}/{args.num_iters} | len {length:2d} | {targets.what} solve {100 * targets.solve_rate:5.1f}% | "
        f"{text} | {rate:,.0f} {name} | {time.perf_counter() - t0:5.1f}s | total {time.strftime('%H:%M:%S', time.gmtime(time.perf_counter() - start))}"  # noqa: E501
        + (f" | scramble length -> {run.curriculum.scramble_len}" if changed else ""),
        flush=True,
    )


def train(
    args: argparse.Namespace,
    run: Run,
    logger: MetricsLogger,
    guard: InterruptGuard,
    device,
    progress: bool,
    workers=None,
) -> None:
    """Iterations ``run.iteration + 1 .. --num-iters``, or until the --time-budget is spent:
    targets, training, commit."""
    state_path = state_path_for(args.checkpoint)
    if run.iteration >= args.num_iters:
        print(f"Nothing to train: {state_path} holds iteration {run.iteration} of --num-iters {args.num_iters}.")
        return
    if budget_spent(args, run):
        print(f"Nothing to train: {state_path} holds {spent_text(args, run)}.")
        return
    start = time.perf_counter()
    budget = f", or {args.time_budget:g} minutes in all" if args.time_budget else ""
    print(
        f"Training on {device} for iterations {run.iteration + 1}..{args.num_iters}{budget} (seed {args.seed}); checkpoint {args.checkpoint}, logs in {args.log_dir}/"  # noqa: E501
    )
    for it in range(run.iteration + 1, args.num_iters + 1):
        if budget_spent(args, run):
            print(f"Time budget spent: {spent_text(args, run)}, {run.iteration} iterations.")
            break
        t0 = time.perf_counter()
        length = run.curriculum.scramble_len
        targets = targets_step(args, run, device, progress, workers)
        losses = train_step(args, run, targets, it, device, progress)
        run.seconds += time.perf_counter() - t0
        t1 = time.perf_counter()
        with guard.deferred():  # a signal now waits until everything is on disk
            changed = commit_step(args, run, logger, it, targets, losses)
        # The commit (saving the model, the training state with its replay buffer, the charts)
        # is wall time too: about 15% of an iteration of Gumbel self-play. It is saved with the
        # next iteration's commit, so a resumed run loses at most one commit's seconds.
        run.seconds += time.perf_counter() - t1
        report_iteration(args, it, length, targets, losses, changed, run, t0, start)
    print(f"Training finished in {time.perf_counter() - start:.0f}s; model saved to {args.checkpoint}.")


@contextlib.contextmanager
def torch_threads(count: int):
    """``--threads``: torch's CPU threads for this run (0 = leave them), restored after it: the
    tests call main() inside their own process."""
    before = torch.get_num_threads()
    if count:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        if count:
            torch.set_num_threads(before)


def budget_spent(args: argparse.Namespace, run: Run) -> bool:
    """True once the completed iterations (every session of the run together) took --time-budget
    minutes: a wall-time budget holds however busy the machine, an iteration count does not."""
    return bool(args.time_budget) and run.seconds >= 60 * args.time_budget


def spent_text(args: argparse.Namespace, run: Run) -> str:
    return f"{run.seconds / 60:.1f} minutes of --time-budget {args.time_budget:g}"


def evaluate_model(args: argparse.Namespace, model: PolicyValueNet, device, progress: bool) -> None:
    """The final evaluation: solve rate by scramble length, saved as JSON and a bar chart. With
    an --eval-solver other than mcts, its default budgets (beam: ranked by the policy after
    --targets scramble, whose value head is untrained)."""
    from evaluate import ScrambleEvaluator

    more = {}
    if args.eval_solver != "mcts":
        rank = "policy" if args.targets == "scramble" else "value"
        more = dict(solver=args.eval_solver, solver_options=SolverOptions(beam_rank=rank), puzzle=args.puzzle)
    evaluator = ScrambleEvaluator(
        model=model, device=device, n_runs=args.eval_runs, log_dir=args.log_dir, seed=args.seed, **more
    )
    results = evaluator.evaluate_scramble_range(
        args.eval_min_len, args.eval_max_len, args.eval_sims, args.eval_max_steps, progress=progress
    )
    path = evaluator.plot_scramble_results()
    print("Evaluation: " + ", ".join(f"len {r['scramble_len']}: {100 * r['solve_rate']:.0f}%" for r in results))
    print(f"Saved {os.path.join(args.log_dir, 'eval_scramble_result.json')} and {path}.")


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    args = parse_args(argv)
    progress = show_progress(args.progress)
    run = None
    try:
        device = resolve_device(args.device)
        workers = Workers.from_args(args)  # None: episodes and targets made in this process, as always
        check_output_paths(args)
        check_memory(args, args.start_scramble_len)  # before any file is made; again below for a resumed length
        with InterruptGuard().installed() as guard, run_locks(args), torch_threads(args.threads):
            remove_temps_of_killed_runs(args)
            run = start_run(args, device)
            check_memory(args, run.curriculum.scramble_len)
            logger = open_logger(args, run)
            try:
                repair_outputs(args, run, logger)
                train(args, run, logger, guard, device, progress, workers)
            finally:
                logger.close()
            if not args.skip_eval:
                evaluate_model(args, run.model, device, progress)
    except (RunError, CheckpointError, DeviceError, OutputError, Workers.WorkerError) as exc:
        return fail(exc)
    except Interrupted as exc:
        done = run.iteration if run is not None else 0
        saved = f"iterations up to {done} are saved" if done else "no iteration was saved"
        print(
            f"\nStopped by {exc}: {saved} in {args.checkpoint} and {state_path_for(args.checkpoint)}. Run the same command to continue.",  # noqa: E501
            flush=True,
        )
        return Cli.interrupted()  # 130, as the README promises: `main.py && evaluate.py` stops here
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
