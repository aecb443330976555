"""The training loop of ``main.py``, written once for every game: a ``Trainer`` (the cube's in main.py, Go's
in Go_Run.py) says how its run is made, saved, checked and advanced by one iteration; this module does the
rest the same way for all of them.

Each iteration ends with its commit: the training state file (``<checkpoint less .pt>.train_state.pt``:
network, optimizer, random generator, metrics, seconds trained, flags, and the trainer's own parts) is
written atomically first; the checkpoint, ``metrics.json``, the chart and every ``--snapshot-every``-th copy
of the model follow from it and are repaired from it when a run resumes after a kill. A run holds two locks
(its checkpoint, its log folder); SIGINT or SIGTERM waits for a commit to finish, then ends the run with
``interrupted`` (exit status 130), and the same command continues it with the same flags (only those of
``Run_Files.RESUME_MAY_CHANGE`` may change). A saved state is checked part by part before a run resumes:
every problem is one sentence naming the file (``CheckpointError``) or the flags (``RunError``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from engine import Precision
from Plot_Scatter import MetricsLogger
from run import Cli
from run.Checkpoints import load_state_dict, save_checkpoint, unusable_tensor
from run.Run_Files import (
    Interrupted,
    InterruptGuard,
    RunError,
    all_finite,
    archive_old_logs,
    chart_path_for,
    check_output_paths,
    check_saved_flags,
    is_int,
    metrics_path_for,
    remove_temps_of_killed_runs,
    run_locks,
    saved_flags,
    snapshot_path,
    state_path_for,
)
from run.Run_IO import CheckpointError, OutputError, atomic_write, read_json

#: Tests only: "ITERATION:SECONDS" = sleep that long between saving that iteration's training
#: state and its outputs, so that a test can kill the run exactly there.
PAUSE_AFTER_COMMIT_ENV = "RUBIK2X2_TEST_PAUSE_AFTER_COMMIT"
#: What every training state holds, whatever the game (a trainer adds its own parts).
STATE_KEYS = ("iteration", "rng", "model", "metrics", "args")
#: How far below 0 a logged loss may be: each is a mean of cross-entropies, KL divergences or
#: squares, so at least 0 but for float32 rounding.
LOSS_ROUNDING = 1e-4
LOSS_KEYS = ("losses", "policy_losses", "value_losses")


@dataclass(frozen=True)
class LoopSettings:
    """What the loop reads of the command line: the run's files, how long it trains, and its flags (saved in
    the training state, compared when it resumes)."""

    checkpoint: str
    log_dir: str
    num_iters: int
    time_budget: float  # minutes, every session together; 0: no limit
    seed: int
    fresh: bool
    flags: dict  # vars(args)
    snapshot_every: int = 0  # keep <root>_iterNNNN.pt every K iterations; 0: none
    device: Any = "cpu"


class Trainer(Protocol):
    """One game's training, as the loop drives it. A run object has at least ``model``, ``optimizer`` (or
    None), ``rng`` (numpy Generator), ``metrics`` (lists by ``metric_keys``), ``iteration`` and ``seconds``."""

    name: str  # "2x2", "Go go5", ... (the start line)
    errors: tuple[type[Exception], ...]  # the trainer's own one-sentence errors (e.g. Workers.WorkerError)
    state_version: int
    metric_keys: tuple[str, ...]
    required_keys: tuple[str, ...]  # the trainer's parts every saved state has

    def foreign_problem(self, state: dict) -> str | None: ...  # another game's or board's state (a phrase)
    def state_parts(self, run) -> dict: ...  # the trainer's parts of the training state file
    def parts_problem(self, state: dict) -> str | None: ...  # what is wrong with them (a phrase), or None
    def metrics_problem(self, metrics: dict, iteration: int) -> str | None: ...
    def resume(self, state: dict): ...  # the run saved in a checked state
    def from_weights(self, checkpoint: str): ...  # a new run from a checkpoint's weights
    def new_run(self): ...  # a new run from random weights
    def describe(self, run) -> str: ...  # "scramble length 5, buffer 120 states"
    def check_memory(self, run=None) -> None: ...  # RunError when the flags need more than the machine has
    def new_logger(self, log_dir: str, purge_step: int) -> MetricsLogger: ...
    def hparams(self) -> dict: ...
    def step(self, run, iteration: int): ...  # one iteration's work (targets, training): what record reads
    def record(self, run, logger: MetricsLogger, iteration: int, step) -> None: ...  # its metrics, in the commit
    def report(self, run, iteration: int, step, seconds: float, total: float) -> None: ...  # its line
    def session(self) -> contextlib.AbstractContextManager: ...  # what the run holds while it trains
    def finish(self, run) -> None: ...  # after the last iteration (the cube's evaluation)


# --------------------------------------------------------------------------- the training state
def state_to_dict(trainer: Trainer, run, settings: LoopSettings) -> dict:
    """The training state file's contents: every game's parts, then the trainer's."""
    state = {
        "version": trainer.state_version,
        "iteration": run.iteration,
        "seconds": run.seconds,
        "rng": json.dumps(run.rng.bit_generator.state),
        "model": {k: v.detach().cpu() for k, v in run.model.state_dict().items()},
        "metrics": run.metrics,
        "args": json.dumps(settings.flags),
    }
    if run.optimizer is not None:
        state["optimizer"] = run.optimizer.state_dict()
    state.update(trainer.state_parts(run))
    return state


def save_state(path: str, trainer: Trainer, run, settings: LoopSettings) -> None:
    state = state_to_dict(trainer, run, settings)
    atomic_write(path, lambda f: torch.save(state, f))


def header_problem(trainer: Trainer, state) -> str | None:
    """What makes ``state`` no readable training state of this trainer's version (a phrase), or None."""
    if not isinstance(state, dict):
        return f"is not a training state (it holds a {type(state).__name__})"
    if (problem := trainer.foreign_problem(state)) is not None:
        return problem
    if state.get("version") != trainer.state_version:
        return f"has an unknown format (not a {trainer.name} training state of this version of main.py)"
    missing = [k for k in (*STATE_KEYS, *trainer.required_keys) if k not in state]
    if missing:
        return f"lacks {', '.join(missing)}"
    if (problem := unusable_tensor(state)) is not None:
        return f"is damaged: {problem}"
    if not isinstance(state["rng"], str) or saved_flags(state["args"]) is None:
        return "has a random generator state or saved flags that cannot be read"
    return None


def state_problem(trainer: Trainer, state: dict) -> str | None:
    """What is wrong with the parts of a training state every game has, then with the trainer's (a phrase),
    or None if it is sound."""
    if not is_int(state["iteration"]) or state["iteration"] < 1:
        return f"has iteration {state['iteration']!r} (must be a whole number of at least 1)"
    model = state["model"]
    if not isinstance(model, dict) or not all(isinstance(k, str) and torch.is_tensor(v) for k, v in model.items()):
        return "has model weights that are not a state_dict (names to tensors)"
    if not all(torch.isfinite(v).all() for v in model.values() if v.is_floating_point()):
        return "has model weights that are not finite (inf or nan)"
    if (problem := metrics_problem(trainer, state["metrics"], state["iteration"])) is not None:
        return problem
    if not isinstance(state.get("optimizer", {}), dict):
        return "has an optimizer state that is not a dictionary"
    seconds = state.get("seconds", 0.0)  # absent in cube states saved before --time-budget
    if not (all_finite([seconds]) and seconds >= 0):
        return "has a training time that is not a number of seconds"
    return trainer.parts_problem(state)


def metrics_problem(trainer: Trainer, metrics, iteration: int) -> str | None:
    """What is wrong with saved metric lists (one entry per trained iteration), or None: each list of
    finite numbers, the iterations consecutive up to ``iteration``, the losses not negative; then the
    trainer's own ranges."""
    keys = trainer.metric_keys
    if not isinstance(metrics, dict) or set(metrics) != set(keys):
        found = sorted(metrics) if isinstance(metrics, dict) else type(metrics).__name__
        return f"has metrics with keys {found} (need {', '.join(keys)})"
    if not all(isinstance(v, list) and all_finite(v) for v in metrics.values()):
        return "has metrics that are not lists of finite numbers"
    if len({len(v) for v in metrics.values()}) != 1:
        return "has metric lists of different lengths"
    its = metrics["iterations"]
    # Training starts at some iteration (a cube's replay buffer warms up first) and then every one trains.
    # (The list is built from the metrics' own length: an iteration of 10**12 must not build 10**12 numbers.)
    if its and (
        not all(map(is_int, its)) or its[0] < 1 or its != list(range(its[0], its[0] + len(its))) or its[-1] != iteration
    ):
        return f"has metrics of iterations that are not consecutive up to its iteration {iteration}"
    if min(min(metrics[k], default=0) for k in LOSS_KEYS) < -LOSS_ROUNDING:
        return "has negative losses (each is a mean of cross-entropies or squares)"
    return trainer.metrics_problem(metrics, iteration)


def read_state(path: str, trainer: Trainer, settings: LoopSettings):
    """The run saved in ``path``, checked first: CheckpointError (one sentence naming ``path`` and what is
    wrong) or RunError (the flags that differ from the saved run's), rather than failing or mixing runs later."""
    try:
        with warnings.catch_warnings():  # torch warns on some damaged files before failing: one message is enough
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # pickle errors, truncated zip, ...: all mean "damaged"
        state, problem = None, f"is damaged or not a training state ({type(exc).__name__})"
    else:
        problem = header_problem(trainer, state)
    if problem is None:
        check_saved_flags(json.loads(state["args"]), path, settings.flags)
        problem = state_problem(trainer, state)
    if problem is None:
        try:
            return trainer.resume(state)
        except RunError:
            raise
        except CheckpointError as exc:
            problem = str(exc).split("' ", 1)[-1].rstrip(".")
        except Exception as exc:  # whatever it is, it is this file's fault
            problem = f"does not fit this run ({type(exc).__name__}: {exc})".replace("\n", " ")
    raise CheckpointError(f"training state '{path}' {problem}; use --fresh to start over.")


def start_run(trainer: Trainer, settings: LoopSettings):
    """The run to continue: the saved training state, else the checkpoint's weights (a new optimizer,
    buffer and schedule, as the original), else random weights."""
    path = state_path_for(settings.checkpoint)
    if not settings.fresh and os.path.isfile(path):
        run = read_state(path, trainer, settings)
        print(f"Resuming from {path}: iteration {run.iteration + 1}, {trainer.describe(run)}.")
        return run
    if not settings.fresh and os.path.isfile(settings.checkpoint):
        return trainer.from_weights(settings.checkpoint)
    print(f"New {trainer.name} model ({'--fresh' if settings.fresh else 'no checkpoint at ' + settings.checkpoint}).")
    return trainer.new_run()


# --------------------------------------------------------------------------- outputs
def open_logger(trainer: Trainer, settings: LoopSettings, run) -> MetricsLogger:
    """The run's logger over ``run.metrics``, with the run's settings as TensorBoard text; a new run first
    moves older logs aside."""
    if run.iteration == 0 and (moved := archive_old_logs(settings.log_dir)):
        print(f"Moved the previous run's logs from {settings.log_dir} to {moved}.")
    logger = trainer.new_logger(settings.log_dir, run.iteration + 1)
    logger.metrics = run.metrics
    logger.log_hparams_text(trainer.hparams())
    return logger


def snapshot_due(settings: LoopSettings, iteration: int) -> str | None:
    """The snapshot file of ``iteration``, if ``--snapshot-every`` keeps one."""
    if settings.snapshot_every and iteration and iteration % settings.snapshot_every == 0:
        return snapshot_path(settings.checkpoint, iteration)
    return None


def write_outputs(settings: LoopSettings, run, logger: MetricsLogger) -> None:
    """The files that follow from the training state: checkpoint, snapshot, metrics.json, chart."""
    save_checkpoint(run.model, settings.checkpoint)
    if (snapshot := snapshot_due(settings, run.iteration)) is not None:
        save_checkpoint(run.model, snapshot)
    logger.save_json()
    if run.metrics["iterations"]:
        logger.plot_all()


def holds_weights(path: str, weights: dict) -> bool:
    try:
        saved = load_state_dict(path)
    except CheckpointError:
        return False
    return saved.keys() == weights.keys() and all(torch.equal(saved[k], v) for k, v in weights.items())


def repair_outputs(settings: LoopSettings, run, logger: MetricsLogger) -> None:
    """Bring the outputs up to the training state where a run was killed between saving the state and
    saving them (or they were deleted). Nothing to do for a new run."""
    if run.iteration == 0:
        return
    state_path = state_path_for(settings.checkpoint)
    repaired = []
    weights = {k: v.detach().cpu() for k, v in run.model.state_dict().items()}
    for path in (settings.checkpoint, snapshot_due(settings, run.iteration)):
        if path is not None and not holds_weights(path, weights):
            save_checkpoint(run.model, path)
            repaired.append(path)
    metrics_path, chart_path = metrics_path_for(settings.log_dir), chart_path_for(settings.log_dir)
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


# --------------------------------------------------------------------------- the loop
def precision_note(settings: LoopSettings) -> str:
    """``", bfloat16"`` where the run's ``--precision`` resolves to bf16 on its device this session (``auto``
    is resolved again by each session, so one run may train in both), else nothing."""
    precision = settings.flags.get("precision")
    return ", bfloat16" if precision and Precision.resolve(precision, settings.device) == "bf16" else ""


def budget_spent(settings: LoopSettings, run) -> bool:
    """True once the completed iterations (every session of the run together) took --time-budget
    minutes: a wall-time budget holds however busy the machine, an iteration count does not."""
    return bool(settings.time_budget) and run.seconds >= 60 * settings.time_budget


def spent_text(settings: LoopSettings, run) -> str:
    return f"{run.seconds / 60:.1f} minutes of --time-budget {settings.time_budget:g}"


def pause_after_commit(iteration: int) -> None:
    """Tests only (PAUSE_AFTER_COMMIT_ENV): a window between the commit and its outputs."""
    pause_at, _, seconds = os.environ.get(PAUSE_AFTER_COMMIT_ENV, "").partition(":")
    if pause_at == str(iteration):
        print(f"paused after committing iteration {iteration}", file=sys.stderr, flush=True)
        time.sleep(float(seconds))


def commit(trainer: Trainer, settings: LoopSettings, run, logger: MetricsLogger, iteration: int, step) -> None:
    """Record the iteration, save the training state (the commit point), then the outputs that follow."""
    trainer.record(run, logger, iteration, step)
    run.iteration = iteration
    save_state(state_path_for(settings.checkpoint), trainer, run, settings)
    pause_after_commit(iteration)
    write_outputs(settings, run, logger)


def train(trainer: Trainer, settings: LoopSettings, run, logger: MetricsLogger, guard: InterruptGuard) -> None:
    """Iterations ``run.iteration + 1 .. --num-iters``, or until the --time-budget is spent: the trainer's
    step, then the commit."""
    state_path = state_path_for(settings.checkpoint)
    if run.iteration >= settings.num_iters:
        print(f"Nothing to train: {state_path} holds iteration {run.iteration} of --num-iters {settings.num_iters}.")
        return
    if budget_spent(settings, run):
        print(f"Nothing to train: {state_path} holds {spent_text(settings, run)}.")
        return
    start = time.perf_counter()
    budget = f", or {settings.time_budget:g} minutes in all" if settings.time_budget else ""
    print(
        f"Training on {settings.device} ({trainer.name}{precision_note(settings)}) for iterations "
        f"{run.iteration + 1}..{settings.num_iters}"
        f"{budget} (seed {settings.seed}); checkpoint {settings.checkpoint}, logs in {settings.log_dir}/",
        flush=True,
    )
    for it in range(run.iteration + 1, settings.num_iters + 1):
        guard.check()
        if budget_spent(settings, run):
            print(f"Time budget spent: {spent_text(settings, run)}, {run.iteration} iterations.")
            break
        t0 = time.perf_counter()
        try:
            step = trainer.step(run, it)
        except NotFinite as exc:
            raise not_finite_error(exc, settings, run, it) from None
        run.seconds += time.perf_counter() - t0
        t1 = time.perf_counter()
        with guard.deferred():  # a signal now waits until everything is on disk
            commit(trainer, settings, run, logger, it, step)
        # The commit (the model, the training state with its replay buffer, the charts) is wall time too:
        # about 15% of an iteration of Gumbel self-play. It is saved with the next iteration's commit, so a
        # resumed run loses at most one commit's seconds.
        run.seconds += time.perf_counter() - t1
        trainer.report(run, it, step, time.perf_counter() - t0, time.perf_counter() - start)
    print(f"Training finished in {time.perf_counter() - start:.0f}s; model saved to {settings.checkpoint}.")


class NotFinite(Exception):
    """Raised by a trainer's step that trained to a loss or weights that are not finite: ``what`` (e.g. "a
    non-finite loss (nan) or weights"), ``advice`` (e.g. "try a lower --lr"). The loop saves nothing then."""

    def __init__(self, what: str, advice: str):
        super().__init__(what)
        self.what, self.advice = what, advice


def check_finite(run, losses, advice: str) -> None:
    """NotFinite where a loss of ``losses`` or a weight of the network is not finite."""
    if not (all_finite(losses) and all(torch.isfinite(p).all() for p in run.model.parameters())):
        raise NotFinite(f"a non-finite loss ({', '.join(map(str, losses))}) or weights", advice)


def not_finite_error(exc: NotFinite, settings: LoopSettings, run, iteration: int) -> RunError:
    kept = f" ({settings.checkpoint} and its training state keep iteration {run.iteration})" if run.iteration else ""
    return RunError(f"iteration {iteration} trained to {exc.what} and was not saved{kept}; {exc.advice}.")


def run_training(trainer: Trainer, settings: LoopSettings) -> int:
    """A whole run, as ``main.py`` runs it: checks before any work, locks, start or resume, repair, the
    loop, the trainer's finish; the exit status (2 with one sentence on a problem a user can fix, 130
    when stopped by a signal)."""
    run = None
    try:
        check_output_paths(settings.checkpoint, settings.log_dir)
        trainer.check_memory()  # before any file is made; again below for a resumed run
        # The session first (threads, workers: a missing Ray is refused before the locks make a file).
        with trainer.session(), InterruptGuard().installed() as guard:
            with run_locks(settings.checkpoint, settings.log_dir):
                remove_temps_of_killed_runs(settings.checkpoint, settings.log_dir)
                run = start_run(trainer, settings)
                trainer.check_memory(run)
                logger = open_logger(trainer, settings, run)
                try:
                    repair_outputs(settings, run, logger)
                    train(trainer, settings, run, logger, guard)
                finally:
                    logger.close()
                trainer.finish(run)
    except (RunError, CheckpointError, Cli.DeviceError, OutputError, *trainer.errors) as exc:
        return Cli.fail(exc)
    except Interrupted as exc:
        done = run.iteration if run is not None else 0
        saved = f"iterations up to {done} are saved" if done else "no iteration was saved"
        print(
            f"\nStopped by {exc}: {saved} in {settings.checkpoint} and {state_path_for(settings.checkpoint)}. "
            "Run the same command to continue.",
            flush=True,
        )
        return Cli.interrupted()  # 130, as the README promises: `main.py && evaluate.py` stops here
    return 0


def rng_from_state(state: dict, seed: int) -> np.random.Generator:
    """The run's numpy generator as saved in ``state``."""
    rng = np.random.default_rng(seed)
    rng.bit_generator.state = json.loads(state["rng"])
    return rng
