"""Go training as ``main.py --game goN`` runs it: ``GoTrainer`` gives Run_Loop.py (the loop every game's
training shares: commits, locks, resume, repair, time budget, snapshots) Go_Training's iterations (self-play,
the game buffer, SGD), the Go parts of the training state file (``go_size``, the learning-rate schedule, the
buffer's games) and their checks before a run resumes, and the memory its flags need.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import time
from dataclasses import dataclass

import numpy as np
import torch

from go import Go_Args
from go.Go_Net import GoNet, load_go_model
from go.Go_Training import GameBuffer, GoRecipe, lr_at, make_optimizer, recipe_table, train_iteration
from Plot_Scatter import MetricsLogger, pyplot, save_figure
from run import Workers
from run.Run_Files import check_memory_needs, is_int
from run.Run_IO import CheckpointError
from run.Run_Loop import check_finite, rng_from_state

GO_STATE_VERSION = 1
#: One list per metric, one entry per iteration (metrics.json).
GO_METRIC_KEYS = (
    "iterations", "losses", "policy_losses", "value_losses", "black_wins", "mean_lengths", "games_played", "minutes",
)  # fmt: skip
#: Go's parts of every training state (besides Run_Loop.STATE_KEYS).
GO_STATE_KEYS = ("go_size", "optimizer", "scheduler", "buffer_games_added", "buffer")


@dataclass
class GoRun:
    """A Go run in progress: what its training state file saves, live."""

    model: GoNet
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    buffer: GameBuffer
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
        extra = ("gate_score", "gate_kept", "score_loss", "ownership_loss", "score_error", "belief_loss")
        extra += ("hopeless_share",)
        scalars.update({f"go/{k}": values[k] for k in extra if k in values})
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


# --------------------------------------------------------------------------- the checks of a saved state
def buffer_problem(games, recipe: GoRecipe) -> str | None:
    """What is wrong with a saved game buffer of this recipe's board (a phrase), or None: per game the
    evaluator rows (int8 points and player to move), visit-count policies over the board's moves, outcomes
    (and with ``--score-heads`` final margins and owners)."""
    game = recipe.game()
    width, actions = len(game.eval_input(game.initial_state(1))[0]), game.num_actions
    parts = 5 if recipe.score_heads else 3
    if not isinstance(games, list) or not all(isinstance(g, list | tuple) and len(g) == parts for g in games):
        what = "rows, policies, values, margins, owners" if recipe.score_heads else "rows, policies, values"
        return f"has a game buffer that is not a list of games ({what})"
    for rows, pis, zs, *score in games:
        if not all(torch.is_tensor(t) for t in (rows, pis, zs, *score)):
            return "has a game buffer whose games are not tensors"
        if score and (problem := score_targets_problem(*score, len(rows), game.rules.num_points)):
            return problem
        if rows.dtype != torch.int8 or rows.dim() != 2 or rows.shape[1] != width:
            return (
                f"has buffer rows of shape {tuple(rows.shape)} and type {rows.dtype} (need n x {width} int8, "
                f"a {recipe.size}x{recipe.size} board with --history {recipe.history})"
            )
        if pis.dtype != torch.float32 or pis.shape != (len(rows), actions):
            return f"has buffer policies of shape {tuple(pis.shape)} (need {len(rows)} x {actions} float32)"
        if zs.dtype != torch.float32 or zs.shape != (len(rows),):
            return f"has buffer values of shape {tuple(zs.shape)} and type {zs.dtype} (need {len(rows)} float32)"
        points = rows[:, : recipe.history * game.rules.num_points]  # (a komi column follows with --komi-input)
        if len(rows) == 0 and recipe.full_search_share == 1:
            return "has a game without samples in its buffer (only --full-search-share below 1 leaves one)"
        if len(rows) and (int(points.min()) < -1 or int(points.max()) > 1 or not bool(rows[:, -1].abs().eq(1).all())):
            return "has buffer rows that hold points outside -1..1"
        if not (torch.isfinite(pis).all() and torch.isfinite(zs).all()):
            return "has buffer targets that are not finite"
        if bool((pis < 0).any()) or float((pis.double().sum(dim=1) - 1).abs().max()) > 1e-3:
            return "has buffer policy targets that are not distributions (non-negative, summing to 1)"
        if float(zs.abs().max()) > 1:
            return "has buffer values outside -1..1"
    return None


def score_targets_problem(margins, owners, samples: int, points: int) -> str | None:
    """What is wrong with one saved game's margins and owners (a phrase), or None."""
    if margins.dtype != torch.float32 or margins.shape != (samples,) or not bool(torch.isfinite(margins).all()):
        return f"has buffer margins that are not {samples} finite float32 numbers"
    if owners.dtype != torch.int8 or owners.shape != (samples, points) or int(owners.abs().max()) > 1:
        return f"has buffer owners that are not {samples} x {points} int8 in -1..1"
    return None


def buffer_size_problem(state: dict, recipe: GoRecipe) -> str | None:
    """Whether the buffer's counts are the ones this recipe's iterations make: ``games`` games each, of which
    the buffer keeps the last ``max(min_games, ceil(fraction * games played))``."""
    added, kept = state["buffer_games_added"], len(state["buffer"])
    if not is_int(added) or added != state["iteration"] * recipe.games:
        return (
            f"has {added!r} games played in {state['iteration']} iterations (--games {recipe.games} makes "
            f"{state['iteration'] * recipe.games})"
        )
    expected = min(added, max(recipe.buffer_min_games, math.ceil(recipe.buffer_fraction * added)))
    if kept != expected:
        return f"has a game buffer of {kept} games where this recipe keeps {expected}"
    return None


# --------------------------------------------------------------------------- the trainer
class GoTrainer:
    """Go's training as Run_Loop drives it (Run_Loop.Trainer)."""

    state_version = GO_STATE_VERSION
    metric_keys = GO_METRIC_KEYS
    required_keys = GO_STATE_KEYS
    errors = (Workers.WorkerError,)

    def __init__(self, args: argparse.Namespace, device: torch.device):
        self.args, self.device = args, device
        self.recipe = Go_Args.recipe_of(args)
        self.name = f"Go {args.game}"
        self.pool = None  # a Workers.WorkerPool with --workers/--backend, made by session()

    # -- the run and its file
    def foreign_problem(self, state: dict) -> str | None:
        if "go_size" not in state:
            return "is a cube run's training state, not a Go one" if "scramble_len" in state else None
        if state["go_size"] != self.recipe.size:
            return f"belongs to a {state['go_size']}x{state['go_size']} run, not --game {self.args.game}"
        return None

    def state_parts(self, run: GoRun) -> dict:
        return {
            "go_size": self.recipe.size,
            "scheduler": run.scheduler.state_dict(),
            "buffer_games_added": run.buffer.games_added,
            # np.require copies only arrays torch cannot share: strided ones, and read-only ones (Ray's workers'
            # results come back read-only from its object store).
            "buffer": [
                [torch.from_numpy(np.require(part, requirements=("C", "W"))) for part in game]
                for game in run.buffer.games
            ],
        }

    def parts_problem(self, state: dict) -> str | None:
        if not isinstance(state["scheduler"], dict):
            return "has a learning-rate schedule that is not a dictionary"
        return buffer_problem(state["buffer"], self.recipe) or buffer_size_problem(state, self.recipe)

    def metrics_problem(self, metrics: dict, iteration: int) -> str | None:
        if metrics["iterations"] != list(range(1, iteration + 1)):
            return f"has metrics of {len(metrics['iterations'])} iterations of {iteration} (every Go iteration trains)"
        if not all(0 <= w <= 1 for w in metrics["black_wins"]):
            return "has Black win rates outside 0..1"
        if not all(is_int(n) and n >= 1 for n in metrics["games_played"]):
            return "has game counts that are not whole numbers of at least 1"
        if min(metrics["mean_lengths"] + metrics["minutes"], default=0) < 0:
            return "has negative game lengths or minutes"
        return None

    def new_run(self) -> GoRun:
        """A run from random weights (seeded by ``--seed``), on the device."""
        torch.manual_seed(self.args.seed)
        model = self.recipe.network()
        optimizer, scheduler = make_optimizer(model, self.recipe)
        buffer = GameBuffer(self.recipe.buffer_fraction, self.recipe.buffer_min_games, self.recipe.score_heads)
        metrics = {k: [] for k in GO_METRIC_KEYS}
        run = GoRun(model, optimizer, scheduler, buffer, np.random.default_rng(self.args.seed), metrics)
        return self.on_device(run)

    def resume(self, state: dict) -> GoRun:
        run = self.new_run()
        run.model.load_state_dict(state["model"])
        run.optimizer.load_state_dict(state["optimizer"])
        run.scheduler.load_state_dict(state["scheduler"])
        run.rng = rng_from_state(state, self.args.seed)
        run.buffer.games = [tuple(part.numpy() for part in game) for game in state["buffer"]]
        run.buffer.games_added = int(state["buffer_games_added"])
        run.metrics = {k: list(state["metrics"][k]) for k in GO_METRIC_KEYS}
        run.iteration, run.seconds = state["iteration"], float(state.get("seconds", 0.0))
        return self.on_device(run)

    def from_weights(self, checkpoint: str) -> GoRun:
        """A new run (optimizer, buffer, schedule afresh) starting from the weights of ``checkpoint``;
        CheckpointError (one sentence) for a cube network, another board or another network shape."""
        run = self.new_run()
        model = load_go_model(checkpoint, self.recipe.size)
        try:
            run.model.load_state_dict(model.state_dict())
        except RuntimeError:
            raise CheckpointError(
                f"checkpoint '{checkpoint}' holds a Go network of another shape than this recipe's "
                "(--filters, --blocks, --history)."
            ) from None
        print(f"Loaded weights from {checkpoint} (no training state beside it: optimizer, buffer, schedule anew).")
        return run

    def on_device(self, run: GoRun) -> GoRun:
        """The network and the optimizer's state on the run's device (the files always hold CPU tensors, so a
        run may resume on another device)."""
        run.model.to(self.device)
        for slot in run.optimizer.state.values():
            for key, value in slot.items():
                if torch.is_tensor(value):
                    slot[key] = value.to(self.device)
        return run

    def describe(self, run: GoRun) -> str:
        return f"buffer {len(run.buffer.games)} games"

    def check_memory(self, run: GoRun | None = None) -> None:
        check_memory_needs(memory_needs(self.recipe))

    def new_logger(self, log_dir: str, purge_step: int) -> GoMetricsLogger:
        return GoMetricsLogger(log_dir, purge_step=purge_step)

    def hparams(self) -> dict:
        return {**vars(self.args), **recipe_table(self.recipe)}

    @contextlib.contextmanager
    def session(self):
        """Self-play on --workers for the run's length."""
        self.pool = Workers.from_args(self.args)  # None: self-play in this process
        try:
            yield
        finally:
            if self.pool is not None:
                self.pool.close()

    # -- one iteration
    def step(self, run: GoRun, it: int) -> dict:
        if self.recipe.lr_drops:  # by the share of the time budget spent (GoRecipe.lr_drops)
            for group in run.optimizer.param_groups:
                group["lr"] = lr_at(self.recipe, run.seconds / (60 * self.args.time_budget))
        values = train_iteration(run.model, run.optimizer, run.scheduler, run.buffer, self.recipe, run.rng, self.pool)
        check_finite(run, [values["loss"]], f"try a lower --lr (now {self.recipe.lr:g})")
        return values

    def record(self, run: GoRun, logger: GoMetricsLogger, it: int, values: dict) -> None:
        logger.log_go_iteration(it, values, run)

    def report(self, run: GoRun, it: int, values: dict, seconds: float, total: float) -> None:
        print(
            f"iter {it:4d} | games {values['games']} (Black wins {100 * values['black_wins']:3.0f}%, "
            f"{values['mean_length']:.1f} moves) | loss {values['loss']:.4f} (pi {values['policy_loss']:.4f}, "
            f"v {values['value_loss']:.4f}) | lr {run.scheduler.get_last_lr()[0]:.0e} "
            f"| buffer {values['buffer_samples']:,}{score_text(values)}{hopeless_text(values)}{gate_text(values)} "
            f"| {seconds:5.1f}s "
            f"| total {time.strftime('%H:%M:%S', time.gmtime(run.seconds))}",
            flush=True,
        )

    def finish(self, run: GoRun) -> None:
        pass  # Go's matches are evaluate.py's (docs/go.md)


def gate_text(values: dict) -> str:
    """The arena's verdict for the iteration line (empty without ``--gate-games``)."""
    if "gate_score" not in values:
        return ""
    return f" | gate {100 * values['gate_score']:3.0f}% {'kept' if values['gate_kept'] else 'reverted'}"


def score_text(values: dict) -> str:
    """The score head's mean absolute error in points this iteration (``--score-heads``) and the score
    belief's loss (``--score-belief``), for its line."""
    text = f" | score error {values['score_error']:.2f}" if "score_error" in values else ""
    return text + (f" | belief {values['belief_loss']:.3f}" if "belief_loss" in values else "")


def hopeless_text(values: dict) -> str:
    """The share of samples that trained the value only (``--hopeless``), for the iteration line."""
    return f" | hopeless {100 * values['hopeless_share']:3.0f}%" if "hopeless_share" in values else ""


# --------------------------------------------------------------------------- memory
#: Bytes of a search-tree node per move (a child index and 4 float64 statistics) and besides them.
NODE_BYTES_PER_MOVE = 8 + 4 * 8
NODE_BYTES_BESIDES = 64


def memory_needs(recipe: GoRecipe) -> list[list[tuple[int, str]]]:
    """The largest arrays that live at once in one iteration (self-play, then training): ``(bytes, what sets
    them)``. A lower bound (Python's own objects are left out), so flags it finds too big surely are."""
    game = recipe.game()
    row = len(game.eval_input(game.initial_state(1))[0])
    actions, moves = game.num_actions, game.rules.max_moves
    node = row + NODE_BYTES_BESIDES + actions * NODE_BYTES_PER_MOVE
    simulations = max(recipe.simulations, recipe.sampled_simulations)
    sample = row + 4 * (actions + 1)  # int8 row, float32 policy and value
    kept = max(recipe.buffer_min_games, recipe.games)
    planes = 4 * int(np.prod(game.obs_shape))
    activations = 4 * recipe.filters * recipe.size**2 * (2 * recipe.blocks + 2)  # per sample, forward and back
    weights = 4 * 3 * (9 * recipe.filters**2 * 2 * recipe.blocks)  # weights, gradients, momentum
    playing = [
        (recipe.games * (simulations + 1) * node, "the search trees (--games x --simulations)"),
        (recipe.games * moves * sample, "the games' samples (--games x --max-moves)"),
        (weights, "the network (--filters, --blocks)"),
    ]
    training = [
        (kept * moves * sample, "the game buffer (--buffer-min-games, --games x --max-moves)"),
        (recipe.batch_size * (planes + activations), "a training batch (--batch-size x the network)"),
        (weights, "the network (--filters, --blocks)"),
    ]
    return [playing, training]
