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

Stop at any time (Ctrl-C or SIGTERM): the last completed iteration is on disk and running
the same command again continues from the next one. ``--fresh`` starts over.
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
from dataclasses import dataclass, field

import numpy as np
import torch

import Cli
import Workers
from Cli import C_PUCT, EVAL_SIMULATIONS, MAX_MOVES, DeviceError, add_device_flag, fail, resolve_device, show_progress
from Lookahead_Targets import greedy_policy_solve_rate, lookahead_targets, scramble_path_states
from Plot_Scatter import MetricsLogger
from Policy_Value_Net import CheckpointError, PolicyValueNet, load_state_dict, model_from_state, save_checkpoint
from Rubik2x2Env import NUM_ACTIONS, NUM_STICKERS, batch_onehot, batch_scramble
from Run_IO import atomic_write
from Seed_Targets import SEED_TARGETS, seed_training_sample
from Self_Play import VALUE_TARGETS, generate_self_play_data
from Train_Network import VALUE_LOSSES, VALUE_WEIGHT, train_on_selfplay_data
from Value_Sweep import Sweeper

TARGET_SOURCES = ("selfplay", "lookahead", "sweep", *SEED_TARGETS)
LR_SCHEDULES = ("constant", "cosine")

#: Named presets (``--recipe``): flag values, as argparse destinations, that work together.
RECIPES = {
    "exact": dict(
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
    ),
}


def recipe_text(name: str) -> str:
    """A recipe as the flags it sets, for --help."""
    flags = []
    for key, value in RECIPES[name].items():
        flag = "--" + key.replace("_", "-")
        flags.append(flag if value is True else f"{flag} {value}")
    return " ".join(flags)


def learning_rate(args: argparse.Namespace, iteration: int) -> float:
    """The learning rate of ``iteration`` (1-based): ``--lr``, or with ``--lr-schedule cosine``
    a half cosine from ``--lr`` down to ``--lr-end`` over ``--num-iters``; either way times
    ``iteration / --warmup-iters`` during the warm-up (a fresh Adam's first steps move every
    weight together, which from scratch saturated the value head)."""
    lr = args.lr
    if args.lr_schedule == "cosine":
        progress = (iteration - 1) / max(args.num_iters - 1, 1)
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
    """The last ``capacity`` self-play states, stored compactly (cubes as int8, not one-hot)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.cubes = np.zeros((0, NUM_STICKERS), dtype=np.int8)
        self.pis = np.zeros((0, NUM_ACTIONS), dtype=np.float32)
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
        return list(zip(batch_onehot(self.cubes[idx]), self.pis[idx], self.zs[idx].tolist()))

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
        nargs=3,
        default=[300, 600, 800],
        metavar=("LE3", "LE7", "LONGER"),
        help="MCTS simulations per move for scramble length <=3, <=7, longer",
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
        choices=list(VALUE_TARGETS),
        default="episode",
        help="value target of a state in an episode solved in n moves: 'episode' = max(0.4, 1-0.03n) for every state (original); "  # noqa: E501
        "'remaining' = max(0.4, 1-0.03*(moves still needed from that state))",
    )
    g.add_argument(
        "--targets",
        choices=list(TARGET_SOURCES),
        default="selfplay",
        help="where training targets come from: 'selfplay' = MCTS self-play episodes (original); 'lookahead' = "
        "states of random scramble paths, targets from a one-ply search of all 12 moves with the current network; "
        "'sweep' = every class of positions up to symmetry once per iteration plus the states of random scramble "
        "paths, targets from one network read per class (Value_Sweep.py; needs --canonical-symmetry); 'adi' (seed "
        "001) and 'scramble' (seed 002): Seed_Targets.py",
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
        action="store_true",
        help="as --canonical-orientation, and also map every cube to one representative of the (up to) 48 positions that "  # noqa: E501
        "are the same up to a symmetry of the cube (colours renamed as a rotation renames them, and mirror images): "
        "about 48 times fewer positions for the network to learn",
    )
    g.add_argument(
        "--keep-optimizer",
        action="store_true",
        help="one Adam optimizer for the whole run (saved with the training state) instead of a new one every iteration: "  # noqa: E501
        "a fresh Adam's first steps move every weight by about --lr, which blurs values that must be exact to 0.03",
    )
    g.add_argument(
        "--policy-temperature",
        type=Cli.nonnegative_float,
        default=0.0,
        help="with --targets lookahead: policy target softmax(-moves to go after each move / T) from the children's values, "  # noqa: E501
        "T in moves; 0 = one-hot on the best move",
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
        "value before its tanh, which keeps a gradient where the tanh saturates (Train_Network.alphazero_loss)",
    )
    g.add_argument(
        "--lr-schedule",
        choices=list(LR_SCHEDULES),
        default="constant",
        help="'constant' = --lr every iteration (original); 'cosine' = --lr decayed to --lr-end over the run, after "
        "--warmup-iters iterations of linear warm-up",
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
    g = p.add_argument_group("final evaluation (solve rate by scramble length)")
    g.add_argument("--eval-min-len", type=Cli.scramble_len, default=1, help="shortest scramble evaluated")
    g.add_argument("--eval-max-len", type=Cli.scramble_len, default=20, help="longest scramble evaluated")
    g.add_argument("--eval-runs", type=Cli.episodes, default=100, help="episodes per scramble length")
    g.add_argument(
        "--eval-sims",
        type=Cli.simulations,
        default=EVAL_SIMULATIONS,
        help="MCTS simulations per move in the evaluation",
    )
    g.add_argument(
        "--eval-max-steps", type=Cli.move_limit, default=MAX_MOVES, help="moves allowed per evaluation episode"
    )
    g.add_argument("--skip-eval", action="store_true", help="do not run the evaluation at the end")
    g = p.add_argument_group("run")
    add_device_flag(g)
    Workers.add_arguments(g)
    g.add_argument(
        "--seed", type=Cli.seed, default=0, help="seed of every random choice (scrambles, sampling, shuffling, init)"
    )
    g.add_argument(
        "--checkpoint",
        default="rubik_policy_value.pt",
        help="model file (bare state_dict); the training state is saved beside it",
    )
    g.add_argument("--log-dir", default="training_logs", help="folder of metrics.json, charts and TensorBoard events")
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
    checks = [
        (args.lr_end > 0 and args.warmup_iters >= 0, "--lr-end must be positive and --warmup-iters 0 or more"),
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
        (min(args.temps) > 0, "temperatures must be positive"),
        (1 <= args.eval_min_len <= args.eval_max_len, "--eval-min-len must be between 1 and --eval-max-len"),
        (args.eval_runs >= 1 and args.eval_max_steps >= 1, "--eval-runs and --eval-max-steps must be at least 1"),
    ]
    for ok, message in checks:
        if not ok:
            p.error(message)
    return args


def state_path_for(checkpoint: str) -> str:
    root, _ = os.path.splitext(checkpoint)
    return root + ".train_state.pt"


def archive_old_logs(log_dir: str) -> str | None:
    """Move an older run's outputs aside so that a fresh run never mixes with them."""
    names = [
        n
        for n in (
            "metrics.json",
            "training_metrics.png",
            "eval_scramble_result.json",
            "eval_bar_chart.png",
            "tensorboard",
        )
        if os.path.exists(os.path.join(log_dir, n))
    ]
    if not names:
        return None
    dest = os.path.join(log_dir, "previous", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(dest, exist_ok=True)
    for n in names:
        shutil.move(os.path.join(log_dir, n), os.path.join(dest, n))
    return dest


# --------------------------------------------------------------------------- training
def main(argv=None) -> int:
    args = parse_args(argv)
    progress = show_progress(args.progress)
    try:
        device = resolve_device(args.device)
    except DeviceError as exc:
        return fail(exc)
    try:
        workers = Workers.from_args(args)  # None: self-play and targets in this process, as always
    except Workers.WorkerError as exc:
        return fail(exc)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    network_flags = dict(canonical_orientation=args.canonical_orientation, canonical_symmetry=args.canonical_symmetry)
    model = PolicyValueNet(**network_flags).to(device)
    curriculum = Curriculum(args.start_scramble_len, args.window, args.solve_threshold)
    buffer = ReplayBuffer(args.buffer_size)
    state_path = state_path_for(args.checkpoint)
    first_iter, metrics, optimizer_state, sweep_depths = 1, None, None, None
    try:
        if not args.fresh and os.path.isfile(state_path):
            state = torch.load(state_path, map_location="cpu", weights_only=True)
            if state.get("version") != STATE_VERSION:
                raise CheckpointError(
                    f"training state '{state_path}' has an unknown format; use --fresh to start over."
                )
            model = model_from_state(state["model"], state_path, **network_flags).to(device)
            curriculum = Curriculum(
                state["scramble_len"], args.window, args.solve_threshold, list(state["recent_solve_rates"])
            )
            buffer.load(state["buffer"])
            rng.bit_generator.state = json.loads(state["rng"])
            first_iter, metrics, optimizer_state = state["iteration"] + 1, state["metrics"], state.get("optimizer")
            sweep_depths = state.get("sweep_best_depth")
            print(
                f"Resuming from {state_path}: iteration {first_iter}, scramble length {curriculum.scramble_len}, buffer {len(buffer)} states."  # noqa: E501
            )
        elif not args.fresh and os.path.isfile(args.checkpoint):
            # As the original: continue from the weights, but the curriculum starts over.
            model = model_from_state(load_state_dict(args.checkpoint), args.checkpoint, **network_flags).to(device)
            print(
                f"Loaded weights from {args.checkpoint} (no training state beside it: curriculum starts at {curriculum.scramble_len})."  # noqa: E501
            )
        else:
            print(f"New model ({'--fresh' if args.fresh else 'no checkpoint at ' + args.checkpoint}).")
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a damaged state file: say so, never a traceback
        print(
            f"error: training state '{state_path}' could not be read ({type(exc).__name__}); use --fresh to start over.",  # noqa: E501
            file=sys.stderr,
        )
        return 2
    if args.double_estimate and model.symmetric:
        print(
            "error: --double-estimate reads a mirror image a second time, but a --canonical-symmetry network sees a cube "  # noqa: E501
            "and its mirror image as one input; leave one of the two flags out.",
            file=sys.stderr,
        )
        return 2

    if metrics is None:
        moved = archive_old_logs(args.log_dir)
        if moved:
            print(f"Moved the previous run's logs from {args.log_dir} to {moved}.")
    logger = MetricsLogger(args.log_dir, purge_step=first_iter)
    if metrics is not None:
        logger.metrics = {k: list(v) for k, v in metrics.items()}
    logger.log_hparams_text(vars(args))

    optimizer = None
    if args.keep_optimizer:
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        if optimizer_state is not None:
            optimizer.load_state_dict(optimizer_state)
    sweeper = None
    if args.targets == "sweep":
        if not model.symmetric:
            return fail(
                "--targets sweep reads one network value per class of positions up to symmetry, so it needs "
                "--canonical-symmetry."
            )
        print("Sweep tables: the 77,802 classes of positions up to symmetry (built once, about a minute).")
        sweeper = Sweeper(None if sweep_depths is None else sweep_depths.numpy())
    guard = InterruptGuard()
    guard.install()
    min_buffer = args.batch_size * args.min_buffer_batches
    sample_size = args.batch_size * args.sample_batches
    start = time.perf_counter()
    print(
        f"Training on {device} for iterations {first_iter}..{args.num_iters} (seed {args.seed}); checkpoint {args.checkpoint}, logs in {args.log_dir}/"  # noqa: E501
    )
    try:
        for it in range(first_iter, args.num_iters + 1):
            t0 = time.perf_counter()
            length = curriculum.scramble_len
            if args.targets == "lookahead" and workers is not None:
                cubes, z, pi = workers.lookahead(
                    model, it, args.states_per_iter, length, args.double_estimate, args.policy_temperature
                )
            elif args.targets == "lookahead":
                cubes, depth, last = scramble_path_states(rng, args.states_per_iter, length)
                z, pi = lookahead_targets(
                    model,
                    cubes,
                    depth,
                    last,
                    device,
                    rng=rng if args.double_estimate else None,
                    policy_temperature=args.policy_temperature,
                )
            if args.targets == "lookahead":
                start_cubes, _ = batch_scramble(rng, args.episodes_per_iter, length)
                solve_rate = greedy_policy_solve_rate(model, start_cubes, args.max_episode_steps, device)
                sample, num_samples, trained = (batch_onehot(cubes), pi, z), len(z), True
                rate = ("states/s", len(z) / (time.perf_counter() - t0))
                what = f"lookahead {len(z)} states | greedy"
            elif args.targets == "sweep":
                sample = sweeper.targets(model, rng, args.states_per_iter, length, args.policy_temperature)
                start_cubes, _ = batch_scramble(rng, args.episodes_per_iter, length)
                solve_rate = greedy_policy_solve_rate(model, start_cubes, args.max_episode_steps, device)
                num_samples, trained = len(sample[2]), True
                rate = ("states/s", num_samples / (time.perf_counter() - t0))
                what = f"sweep {num_samples} states | greedy"
            elif args.targets in SEED_TARGETS:  # as lookahead, targets (and loss weights) from Seed_Targets.py
                if workers is not None:
                    sample = workers.seed_sample(args.targets, model, it, args.states_per_iter, length)
                else:
                    sample = seed_training_sample(args.targets, model, rng, args.states_per_iter, length, device)
                start_cubes, _ = batch_scramble(rng, args.episodes_per_iter, length)
                solve_rate = greedy_policy_solve_rate(model, start_cubes, args.max_episode_steps, device)
                num_samples, trained = len(sample[2]), True
                rate = ("states/s", num_samples / (time.perf_counter() - t0))
                what = f"{args.targets} {num_samples} states | greedy"
            else:
                sims = simulations_for(length, tuple(args.sims))
                temp = temperature_for(length, tuple(args.temps))
                _, solve_rate, res = Workers.self_play_fn(workers, it, generate_self_play_data)(
                    model,
                    args.episodes_per_iter,
                    args.max_episode_steps,
                    sims,
                    length,
                    args.select_mode,
                    temp,
                    device=device,
                    rng=rng,
                    c_puct=args.c_puct,
                    progress=progress,
                    return_results=True,
                    value_target=args.value_target,
                )
                buffer.extend(
                    np.concatenate(res.states),
                    np.concatenate(res.policies),
                    np.concatenate(res.state_values(args.value_target)),
                )
                rate = ("sims/s", res.simulations / max(res.seconds, 1e-9))
                trained = len(buffer) >= min_buffer
                sample = buffer.sample(rng, sample_size) if trained else None
                num_samples = len(sample) if trained else 0
                what = f"sims {sims} | T {temp:.2f} |"
            loss = ploss = vloss = None
            if trained:
                _, loss, ploss, vloss = train_on_selfplay_data(
                    model,
                    sample,
                    args.batch_size,
                    args.epochs,
                    learning_rate(args, it),
                    device=device,
                    seed=int(rng.integers(2**62)),
                    progress=progress,
                    value_weight=args.value_weight,
                    optimizer=optimizer,
                    value_loss=args.value_loss,
                )
            with guard.deferred():  # a signal now waits until everything is on disk
                if trained:
                    logger.log_iteration(
                        it,
                        loss,
                        ploss,
                        vloss,
                        solve_rate,
                        length,
                        num_samples,
                        **{f"charts/{rate[0].replace('/', '_per_')}": rate[1]},
                        buffer=len(buffer),
                    )
                    changed = curriculum.record(solve_rate)
                else:
                    logger.log_scalars(it, {"charts/solve_rate_warmup": solve_rate, "charts/sims_per_s": rate[1]})
                    changed = False
                state = {
                    "version": STATE_VERSION,
                    "iteration": it,
                    "scramble_len": curriculum.scramble_len,
                    "recent_solve_rates": list(curriculum.recent),
                    "rng": json.dumps(rng.bit_generator.state),
                    "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
                    "buffer": buffer.state(),
                    "metrics": logger.metrics,
                    "args": json.dumps(vars(args)),
                }
                if optimizer is not None:
                    state["optimizer"] = optimizer.state_dict()
                if sweeper is not None:
                    state["sweep_best_depth"] = torch.from_numpy(sweeper.best_depth.copy())
                atomic_write(state_path, lambda f: torch.save(state, f))
                save_checkpoint(model, args.checkpoint)
                logger.save_json()
                if logger.metrics["iterations"]:
                    logger.plot_all()
            losses = (
                f"loss {loss:.4f} (pi {ploss:.4f}, v {vloss:.4f}) | samples {num_samples}"
                if trained
                else f"warm-up: buffer {len(buffer)}/{min_buffer}, no training"
            )
            print(
                f"iter {it:3d}/{args.num_iters} | len {length:2d} | {what} solve {100 * solve_rate:5.1f}% | "
                f"{losses} | {rate[1]:,.0f} {rate[0]} | {time.perf_counter() - t0:5.1f}s | total {time.strftime('%H:%M:%S', time.gmtime(time.perf_counter() - start))}"  # noqa: E501
                + (f" | scramble length -> {curriculum.scramble_len}" if changed else ""),
                flush=True,
            )
    except Interrupted as exc:
        done = state["iteration"] if "state" in locals() else first_iter - 1
        print(
            f"\nStopped by {exc}: iterations up to {done} are saved in {args.checkpoint} and {state_path}. Run the same command to continue.",  # noqa: E501
            flush=True,
        )
        logger.close()
        return 0

    logger.close()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    print(f"Training finished in {time.perf_counter() - start:.0f}s; model saved to {args.checkpoint}.")
    if not args.skip_eval:
        from evaluate import ScrambleEvaluator

        evaluator = ScrambleEvaluator(
            model=model, device=device, n_runs=args.eval_runs, log_dir=args.log_dir, seed=args.seed
        )
        results = evaluator.evaluate_scramble_range(
            args.eval_min_len, args.eval_max_len, args.eval_sims, args.eval_max_steps, progress=progress
        )
        path = evaluator.plot_scramble_results()
        print("Evaluation: " + ", ".join(f"len {r['scramble_len']}: {100 * r['solve_rate']:.0f}%" for r in results))
        print(f"Saved {os.path.join(args.log_dir, 'eval_scramble_result.json')} and {path}.")
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
