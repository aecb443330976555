"""A training run of ``main.py`` and its crash safety: ``Run`` (what the training state file saves:
network, curriculum, replay buffer, random generator, metrics, optimizer, sweep depths), the file
that commits each iteration (``save_state`` / ``load_state``, checked part by part before a run
resumes, and refused when its flags differ from the saved run's), the run's locks, the memory its
flags need, and the outputs that follow from the state (archived for a fresh run, repaired after a
kill). Every problem a user can fix is one sentence: ``RunError`` or ``CheckpointError``.

The replay buffer and the checks of a saved state read their shapes from the puzzle's entry
(``Puzzles.get_puzzle``): stickers per cube, moves, colours."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch

import Cli
from All_Positions import NUM_CLASSES
from Plot_Scatter import METRIC_KEYS, MetricsLogger
from Policy_Value_Net import (
    CheckpointError,
    PolicyValueNet,
    go_size_of,
    load_state_dict,
    model_from_state,
    save_checkpoint,
    unusable_tensor,
)
from Puzzles import PUZZLES, get_puzzle
from Run_IO import (
    FileLock,
    OutputError,
    atomic_write,
    check_writable,
    read_json,
    remove_stale_temps,
    short_path,
)
from Value_Sweep import Sweeper

#: The format of the training state file (``state_to_dict``); a file of another version is refused.
STATE_VERSION = 1


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


class RunError(Exception):
    """A problem the user can fix, in one sentence: ``main`` prints it and exits with status 2."""


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


def check_output_paths(checkpoint: str, log_dir: str) -> None:
    """Raise RunError unless the checkpoint names a file and it, its training state and the
    logs can be written (``Run_IO.check_writable``: a FIFO or a device is refused too): found
    before any work, not after the first iteration. Creates nothing."""
    if not checkpoint.strip() or checkpoint.endswith(("/", os.sep)) or os.path.isdir(checkpoint):
        raise RunError(f"--checkpoint must name a model file, got '{checkpoint}'.")
    if not log_dir.strip():
        raise RunError("--log-dir must name a folder, got ''.")
    if os.path.exists(log_dir) and not os.path.isdir(log_dir):
        raise RunError(f"--log-dir '{log_dir}' is a file, not a folder.")
    outputs = (
        ("--checkpoint", checkpoint, False),
        ("--checkpoint", state_path_for(checkpoint), False),
        ("--log-dir", log_dir, True),
    )
    for flag, path, folder in outputs:
        try:
            check_writable(path, folder=folder)
        except OutputError as exc:
            raise RunError(f"{flag}: {exc}") from None


def remove_temps_of_killed_runs(checkpoint: str, log_dir: str) -> None:
    """Temp files that killed writers left beside the checkpoint and in the log folder."""
    for folder in sorted({os.path.dirname(os.path.realpath(checkpoint)), os.path.abspath(log_dir)}):
        for path in remove_stale_temps(folder):
            print(f"Removed {path}, left by a run that was killed while saving.")


@contextlib.contextmanager
def run_locks(checkpoint: str, log_dir: str):
    """The run's two locks (``Run_IO.FileLock``): its checkpoint, by ``lock_path_for``, and
    its log folder, so that no second run resumes, writes or archives a live run's files."""
    with (
        FileLock(
            lock_path_for(checkpoint),
            f"checkpoint '{checkpoint}'",
            "wait for that run to end or give this one another --checkpoint",
        ),
        FileLock(
            log_lock_path_for(log_dir),
            f"--log-dir '{log_dir}'",
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


def all_finite(values) -> bool:
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
    if "go_size" in state:
        return "is a Go run's training state (main.py --game goN), not a cube's"
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
    if not isinstance(recent, list) or not all_finite(recent) or not all(0 <= r <= 1 for r in recent):
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
    if problem is None and not (all_finite([seconds]) and seconds >= 0):
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
    if not all(isinstance(v, list) and all_finite(v) for v in metrics.values()):
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
    if (size := go_size_of(state)) is not None:
        raise CheckpointError(
            f"checkpoint '{path}' is a Go network for {size}x{size}, not a cube's (main.py --game go{size})."
        )
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
    model = PolicyValueNet(
        puzzle.obs_dim, hidden_sizes=tuple(args.hidden_sizes), pair_input=args.input == "pairs", **network_flags(args)
    ).to(device)
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


def open_logger(log_dir: str, run: Run, hparams: dict) -> MetricsLogger:
    """The run's MetricsLogger in ``log_dir``, over ``run.metrics``, with the run's flags (``hparams``)
    as TensorBoard text; a new run first moves older logs aside."""
    if run.iteration == 0:
        moved = archive_old_logs(log_dir)
        if moved:
            print(f"Moved the previous run's logs from {log_dir} to {moved}.")
    logger = MetricsLogger(log_dir, purge_step=run.iteration + 1)
    logger.metrics = run.metrics
    logger.log_hparams_text(hparams)
    return logger


def write_outputs(checkpoint: str, run: Run, logger: MetricsLogger) -> None:
    """The files that follow from the training state: checkpoint, metrics.json, chart."""
    save_checkpoint(run.model, checkpoint)
    logger.save_json()
    if run.metrics["iterations"]:
        logger.plot_all()


def repair_outputs(checkpoint: str, log_dir: str, run: Run, logger: MetricsLogger) -> None:
    """Bring the outputs up to the training state where a run was killed between saving the
    state and saving them (or they were deleted). Nothing to do for a new run."""
    if run.iteration == 0:
        return
    state_path = state_path_for(checkpoint)
    repaired = []
    try:
        saved = load_state_dict(checkpoint)
    except CheckpointError:
        saved = None
    weights = {k: v.detach().cpu() for k, v in run.model.state_dict().items()}
    if saved is None or saved.keys() != weights.keys() or not all(torch.equal(saved[k], v) for k, v in weights.items()):
        save_checkpoint(run.model, checkpoint)
        repaired.append(checkpoint)
    metrics_path, chart_path = metrics_path_for(log_dir), chart_path_for(log_dir)
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
