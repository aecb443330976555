"""Go training as ``main.py --game goN`` runs it: Go_Training's iterations (self-play, replay buffer, SGD),
crash-safe and resumable as the cube runs are (Run_State.py's locks, signal guard, output checks and
saved-flag comparison).

Each iteration ends with its commit: the training state file (``<checkpoint less .pt>.train_state.pt``:
network, optimizer, learning-rate schedule, replay buffer, random generator, metrics, seconds trained,
flags) is written atomically first; the checkpoint, ``metrics.json``, the chart and every
``--snapshot-every``-th copy of the model (``<root>_iterNNNN.pt``, for matches over training) follow
from it and are rewritten from it when a run resumes. SIGINT or SIGTERM waits for a commit to finish,
then ends the run with ``interrupted`` (exit status 130); the same command continues it, with the same
flags (only ``--num-iters``, ``--time-budget``, the files and ``--fresh`` may change).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from dataclasses import dataclass

import numpy as np
import torch

import Cli
import Go_Args
import Workers
from Go_Net import GoNet, load_go_model
from Go_Training import GoRecipe, ReplayBuffer, make_optimizer, recipe_table, train_iteration
from Plot_Scatter import MetricsLogger, pyplot, save_figure
from Policy_Value_Net import CheckpointError, save_checkpoint, unusable_tensor
from Run_IO import OutputError, atomic_write
from Run_State import (
    Interrupted,
    InterruptGuard,
    RunError,
    all_finite,
    archive_old_logs,
    check_output_paths,
    check_saved_flags,
    remove_temps_of_killed_runs,
    run_locks,
    state_path_for,
)

GO_STATE_VERSION = 1
#: One list per metric, one entry per iteration (metrics.json).
GO_METRIC_KEYS = (
    "iterations", "losses", "policy_losses", "value_losses", "black_wins", "mean_lengths", "games_played", "minutes",
)  # fmt: skip


@dataclass
class GoRun:
    """A Go run in progress: what its training state file saves, live."""

    model: GoNet
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    buffer: ReplayBuffer
    rng: np.random.Generator
    metrics: dict[str, list]
    iteration: int = 0
    seconds: float = 0.0  # wall time of the completed iterations, every session together


class GoMetricsLogger(MetricsLogger):
    """``MetricsLogger`` (JSON, TensorBoard) over Go's metrics (``GO_METRIC_KEYS``) and their chart."""

    def log_go_iteration(self, iteration: int, values: dict, run: GoRun) -> None:
        row = dict(
            iterations=iteration,
            losses=values["loss"],
            policy_losses=values["policy_loss"],
            value_losses=values["value_loss"],
            black_wins=values["black_wins"],
            mean_lengths=values["mean_length"],
            games_played=run.buffer.games_added,
            minutes=run.seconds / 60,
        )
        for key in GO_METRIC_KEYS:
            self.metrics[key].append(row[key])
        scalars = {f"go/{k}": v for k, v in row.items() if k != "iterations"}
        scalars["go/lr"] = run.scheduler.get_last_lr()[0]
        scalars.update({f"go/{k}": values[k] for k in ("gate_score", "gate_kept") if k in values})
        self.log_scalars(iteration, scalars)

    def plot_all(self, filename: str = "training_metrics.png") -> str:
        """2x2 chart against iteration: the losses, Black's self-play win rate, the mean game length."""
        plt = pyplot()
        m = self.metrics
        fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
        panels = [
            ("Total loss", m["losses"], "loss"),
            ("Policy loss", m["policy_losses"], "cross-entropy"),
            ("Value loss", m["value_losses"], "MSE"),
            ("Black's self-play wins (%)", [100 * w for w in m["black_wins"]], "%"),
        ]
        for ax, (title, ys, ylabel) in zip(axes.flat, panels):
            ax.plot(m["iterations"], ys, marker=".", linewidth=1.2)
            ax.set(title=title, xlabel="iteration", ylabel=ylabel)
            ax.grid(alpha=0.3)
        twin = axes[1, 1].twinx()
        twin.plot(m["iterations"], m["mean_lengths"], color="tab:gray", alpha=0.6, linewidth=1)
        twin.set_ylabel("mean game length (moves)", color="tab:gray")
        fig.tight_layout()
        path = os.path.join(self.log_dir, filename)
        save_figure(fig, path)
        return path


# --------------------------------------------------------------------------- the training state
def state_to_dict(run: GoRun, args: argparse.Namespace) -> dict:
    games = run.buffer.games
    return {
        "version": GO_STATE_VERSION,
        "go_size": Go_Args.GO_SIZES[args.game],
        "iteration": run.iteration,
        "seconds": run.seconds,
        "rng": json.dumps(run.rng.bit_generator.state),
        "model": {k: v.detach().cpu() for k, v in run.model.state_dict().items()},
        "optimizer": run.optimizer.state_dict(),
        "scheduler": run.scheduler.state_dict(),
        "buffer_games_added": run.buffer.games_added,
        # np.require copies only arrays torch cannot share: strided ones, and read-only ones (Ray's workers'
        # results come back read-only from its object store).
        "buffer": [[torch.from_numpy(np.require(part, requirements=("C", "W"))) for part in game] for game in games],
        "metrics": run.metrics,
        "args": json.dumps(vars(args)),
    }


def save_state(path: str, run: GoRun, args: argparse.Namespace) -> None:
    state = state_to_dict(run, args)
    atomic_write(path, lambda f: torch.save(state, f))


def state_problem(state, args: argparse.Namespace) -> str | None:
    """What makes ``state`` no Go training state of this run's board (a phrase), or None."""
    if not isinstance(state, dict):
        return f"is not a training state (it holds a {type(state).__name__})"
    if "go_size" not in state:
        return "is a cube run's training state, not a Go one"
    if state.get("version") != GO_STATE_VERSION:
        return "has an unknown format (not a Go training state of this version of main.py)"
    if state["go_size"] != Go_Args.GO_SIZES[args.game]:
        return f"belongs to a {state['go_size']}x{state['go_size']} run, not --game {args.game}"
    problem = unusable_tensor(state)
    if problem is not None:
        return f"is damaged: {problem}"
    if not isinstance(state.get("iteration"), int) or state["iteration"] < 1:
        return "has no completed iteration"
    return None


def load_state(path: str, args: argparse.Namespace, recipe: GoRecipe) -> GoRun:
    """The run saved in ``path``; CheckpointError or RunError (one sentence) when it cannot continue here."""
    try:
        with warnings.catch_warnings():  # torch warns on some damaged files before failing: one message is enough
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # pickle errors, truncated zip, ...: all mean "damaged"
        state, problem = None, f"is damaged or not a training state ({type(exc).__name__})"
    else:
        problem = state_problem(state, args)
    if problem is None:
        check_saved_flags(json.loads(state["args"]), path, args)
        try:
            return run_from_state(state, args, recipe)
        except Exception as exc:  # whatever it is, it is this file's fault
            problem = f"does not fit this run ({type(exc).__name__}: {exc})".replace("\n", " ")
    raise CheckpointError(f"training state '{path}' {problem}; use --fresh to start over.")


def run_from_state(state: dict, args: argparse.Namespace, recipe: GoRecipe) -> GoRun:
    run = new_run(args, recipe)
    run.model.load_state_dict(state["model"])
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    run.rng.bit_generator.state = json.loads(state["rng"])
    run.buffer.games = [tuple(part.numpy() for part in game) for game in state["buffer"]]
    run.buffer.games_added = int(state["buffer_games_added"])
    run.metrics = {k: list(state["metrics"][k]) for k in GO_METRIC_KEYS}
    run.iteration, run.seconds = state["iteration"], float(state["seconds"])
    return run


def new_run(args: argparse.Namespace, recipe: GoRecipe) -> GoRun:
    """A run from random weights (seeded by ``--seed``)."""
    torch.manual_seed(args.seed)
    model = recipe.network()
    optimizer, scheduler = make_optimizer(model, recipe)
    buffer = ReplayBuffer(recipe.buffer_fraction, recipe.buffer_min_games)
    metrics = {k: [] for k in GO_METRIC_KEYS}
    return GoRun(model, optimizer, scheduler, buffer, np.random.default_rng(args.seed), metrics)


def move_run_to(run: GoRun, device) -> None:
    """The network and the optimizer's state on ``device`` (a run is built and loaded on the CPU; the files
    always hold CPU tensors, so a run may resume on another device)."""
    run.model.to(device)
    for slot in run.optimizer.state.values():
        for key, value in slot.items():
            if torch.is_tensor(value):
                slot[key] = value.to(device)


def start_run(args: argparse.Namespace, recipe: GoRecipe) -> GoRun:
    """The saved run to continue, else a new one: from the checkpoint's weights when it has no training
    state beside it (as the cube runs do), else from random weights."""
    path = state_path_for(args.checkpoint)
    if not args.fresh and os.path.isfile(path):
        run = load_state(path, args, recipe)
        print(f"Resuming from {path}: iteration {run.iteration + 1}, buffer {len(run.buffer.games)} games.")
        return run
    if not args.fresh and os.path.isfile(args.checkpoint):
        return run_from_weights(args, recipe)
    print(f"New Go {args.game} model ({'--fresh' if args.fresh else 'no checkpoint at ' + args.checkpoint}).")
    return new_run(args, recipe)


def run_from_weights(args: argparse.Namespace, recipe: GoRecipe) -> GoRun:
    """A new run (optimizer, buffer, schedule afresh) starting from the weights of ``--checkpoint``;
    CheckpointError (one sentence) for a cube network, another board or another network shape."""
    run = new_run(args, recipe)
    model = load_go_model(args.checkpoint, recipe.size)
    try:
        run.model.load_state_dict(model.state_dict())
    except RuntimeError:
        raise CheckpointError(
            f"checkpoint '{args.checkpoint}' holds a Go network of another shape than this recipe's "
            "(--filters, --blocks, --history)."
        ) from None
    print(f"Loaded weights from {args.checkpoint} (no training state beside it: optimizer, buffer, schedule anew).")
    return run


# --------------------------------------------------------------------------- outputs and the loop
def snapshot_path(checkpoint: str, iteration: int) -> str:
    """The copy of the model kept at ``iteration`` (``--snapshot-every``)."""
    return f"{os.path.splitext(checkpoint)[0]}_iter{iteration:04d}.pt"


def write_outputs(args: argparse.Namespace, run: GoRun, logger: GoMetricsLogger) -> None:
    """The files that follow from the training state: checkpoint, snapshot, metrics.json, chart."""
    save_checkpoint(run.model, args.checkpoint)
    if args.snapshot_every and run.iteration % args.snapshot_every == 0:
        save_checkpoint(run.model, snapshot_path(args.checkpoint, run.iteration))
    logger.save_json()
    if run.metrics["iterations"]:
        logger.plot_all()


def open_logger(args: argparse.Namespace, run: GoRun, recipe: GoRecipe) -> GoMetricsLogger:
    """The run's logger over ``run.metrics``; a new run first moves older logs aside."""
    if run.iteration == 0 and (moved := archive_old_logs(args.log_dir)):
        print(f"Moved the previous run's logs from {args.log_dir} to {moved}.")
    logger = GoMetricsLogger(args.log_dir, purge_step=run.iteration + 1)
    logger.metrics = run.metrics
    logger.log_hparams_text({**vars(args), **recipe_table(recipe)})
    return logger


def budget_spent(args: argparse.Namespace, run: GoRun) -> bool:
    return bool(args.time_budget) and run.seconds >= 60 * args.time_budget


def gate_text(values: dict) -> str:
    """The arena's verdict for the iteration line (empty without ``--gate-games``)."""
    if "gate_score" not in values:
        return ""
    return f" | gate {100 * values['gate_score']:3.0f}% {'kept' if values['gate_kept'] else 'reverted'}"


def hopeless_text(values: dict) -> str:
    """The share of samples that trained the value only (``--hopeless``), for the iteration line."""
    return f" | hopeless {100 * values['hopeless_share']:3.0f}%" if "hopeless_share" in values else ""


def report(it: int, values: dict, run: GoRun, seconds: float) -> None:
    total = time.strftime("%H:%M:%S", time.gmtime(run.seconds))
    print(
        f"iter {it:4d} | games {values['games']} (Black wins {100 * values['black_wins']:3.0f}%, "
        f"{values['mean_length']:.1f} moves) | loss {values['loss']:.4f} (pi {values['policy_loss']:.4f}, "
        f"v {values['value_loss']:.4f}) | lr {run.scheduler.get_last_lr()[0]:.0e} "
        f"| buffer {values['buffer_samples']:,}{hopeless_text(values)}{gate_text(values)} | {seconds:5.1f}s "
        f"| total {total}",
        flush=True,
    )


def train(args, recipe: GoRecipe, run: GoRun, logger: GoMetricsLogger, guard: InterruptGuard, pool=None) -> None:
    """Iterations ``run.iteration + 1 .. --num-iters``, or until the --time-budget is spent; self-play on
    ``pool``'s workers if given (``--workers``, ``--backend``)."""
    budget = f", or {args.time_budget:g} minutes in all" if args.time_budget else ""
    print(f"Training Go {args.game} for iterations {run.iteration + 1}..{args.num_iters}{budget} (seed {args.seed}); "
          f"checkpoint {args.checkpoint}, logs in {args.log_dir}/", flush=True)  # fmt: skip
    while run.iteration < args.num_iters and not budget_spent(args, run):
        t0 = time.perf_counter()
        values = train_iteration(run.model, run.optimizer, run.scheduler, run.buffer, recipe, run.rng, pool)
        if not all_finite([values["loss"]]):
            raise RunError(
                f"iteration {run.iteration + 1} trained to a non-finite loss and was not saved; try a lower --lr."
            )
        run.seconds += time.perf_counter() - t0
        with guard.deferred():  # a signal now waits until everything is on disk
            run.iteration += 1
            logger.log_go_iteration(run.iteration, values, run)
            save_state(state_path_for(args.checkpoint), run, args)
            write_outputs(args, run, logger)
        report(run.iteration, values, run, time.perf_counter() - t0)
    done = "Time budget spent" if budget_spent(args, run) else "Done"
    print(f"{done}: {run.iteration} iterations, {run.seconds / 60:.1f} minutes; model in {args.checkpoint}.")


def main(argv=None) -> int:
    args = Go_Args.parse_args(argv, __doc__)
    recipe = Go_Args.recipe_of(args)
    run = pool = None
    try:
        check_output_paths(args.checkpoint, args.log_dir)
        device = Cli.resolve_device(args.device)  # a device this machine lacks: one sentence, before any work
        pool = Workers.from_args(args)  # None: self-play in this process
        with InterruptGuard().installed() as guard, run_locks(args.checkpoint, args.log_dir):
            remove_temps_of_killed_runs(args.checkpoint, args.log_dir)
            run = start_run(args, recipe)
            move_run_to(run, device)
            logger = open_logger(args, run, recipe)
            try:
                if run.iteration:  # brings them up to the state after a kill between the two
                    write_outputs(args, run, logger)
                train(args, recipe, run, logger, guard, pool)
            finally:
                logger.close()
    except (RunError, CheckpointError, OutputError, Workers.WorkerError, Cli.DeviceError) as exc:
        return Cli.fail(exc)
    except Interrupted as exc:
        done = run.iteration if run is not None else 0
        saved = f"iterations up to {done} are saved" if done else "no iteration was saved"
        print(f"\nStopped by {exc}: {saved} in {state_path_for(args.checkpoint)}. Run the same command to continue.")
        return Cli.interrupted()
    finally:
        if pool is not None:
            pool.close()
    return 0
