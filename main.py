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

``--puzzle 3x3`` trains a 3x3 network (324 inputs, ``--hidden-sizes``) with the same trainers:
MCTS self-play (the default), ``--targets lookahead``, ``diffusion``, ``scramble`` or ``adi``;
``--recipe 3x3`` is the preset for an hour on a CPU (diffusion). The sweep and the options that
read the cube's symmetries (``--canonical-orientation``, ``--canonical-symmetry``,
``--double-estimate``) are the 2x2's; asked for with the 3x3, ``main.py`` stops with one sentence
(exit 2).

Stop at any time (Ctrl-C or SIGTERM): the last completed iteration is on disk and running
the same command again continues from the next one (the run ends with ``interrupted`` on stderr,
exit status 130). ``--fresh`` starts over.

``--game go5`` (or ``go7``, ``go9``) trains Go instead (Go_Run.py, docs/go.md), e.g. ``--game go5 --recipe go5``:
AlphaZero self-play against itself, crash-safe and resumable in the same way; ``--game go5 --help`` lists its flags.
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a signal during the slow imports below ends the script as at any moment
    from run import Process_Signals

    Process_Signals.start_script()

import argparse
import contextlib
import math
import os
import time
from dataclasses import dataclass

import numpy as np
import torch

from cube import Run_State, Train_Args
from cube.Lookahead_Targets import greedy_policy_solve_rate, lookahead_targets, scramble_path_states
from cube.Puzzles import get_puzzle
from cube.Run_State import Run
from cube.Seed_System_Targets import SEED_TARGETS, seed_training_sample
from cube.Solvers import SolverOptions
from engine.Gumbel_Self_Play import gumbel_self_play
from evaluate import ScrambleEvaluator
from go import Go_Args, Go_Run
from Plot_Scatter import METRIC_KEYS, MetricsLogger
from Policy_Value_Net import PolicyValueNet
from run import Cli, Workers
from run.Checkpoints import load_state_dict
from run.Cli import resolve_device, show_progress
from run.Run_Loop import LoopSettings, check_finite, run_training
from Self_Play import generate_self_play_data
from Train_Network import train_on_targets


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
            game=args.puzzle,
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
        game=args.puzzle,
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
            run.model,
            run.iteration + 1,
            args.states_per_iter,
            length,
            args.double_estimate,
            args.policy_temperature,
            args.puzzle,
        )
    else:
        cubes, depth, last = scramble_path_states(run.rng, args.states_per_iter, length, args.puzzle)
        z, pi = lookahead_targets(
            run.model,
            cubes,
            depth,
            last,
            device,
            rng=run.rng if args.double_estimate else None,
            policy_temperature=args.policy_temperature,
            puzzle=args.puzzle,
        )
    solve_rate = greedy_solve_rate(args, run, device)
    rate = ("states/s", len(z) / (time.perf_counter() - t0))
    observations = get_puzzle(args.puzzle).encode(cubes)
    return Targets((observations, pi, z), len(z), solve_rate, rate, f"lookahead {len(z)} states | greedy")


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
    Raises Run_Loop.NotFinite if the loss or the weights are no longer finite (nothing is saved then)."""
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
        precision=args.precision,
    )
    check_finite(run, (loss, ploss, vloss), f"try a lower --lr (now {learning_rate(args, it, run.seconds):g})")
    return loss, ploss, vloss


@dataclass
class CubeStep:
    """One iteration's work, as the commit and the iteration's line read it."""

    length: int  # the curriculum's scramble length the iteration trained at
    targets: Targets
    losses: tuple[float, float, float] | None
    changed: bool = False  # the curriculum lengthened the scrambles at the commit


class CubeTrainer:
    """The cube's training as Run_Loop drives it (Run_Loop.Trainer): Run_State's run and its checks, the
    targets and training steps above, the curriculum, and the final evaluation."""

    state_version = Run_State.STATE_VERSION
    metric_keys = METRIC_KEYS
    required_keys = Run_State.STATE_KEYS

    def __init__(self, args: argparse.Namespace, device: torch.device, progress: bool):
        self.args, self.device, self.progress = args, device, progress
        self.name = get_puzzle(args.puzzle).name
        self.workers = None  # a Workers.WorkerPool with --workers/--backend, made by session()
        self.errors = (Workers.WorkerError,)

    # -- the run and its file
    def foreign_problem(self, state: dict) -> str | None:
        return Run_State.foreign_problem(state)

    def state_parts(self, run: Run) -> dict:
        return Run_State.state_parts(run)

    def parts_problem(self, state: dict) -> str | None:
        return Run_State.parts_problem(state, self.args)

    def metrics_problem(self, metrics: dict, iteration: int) -> str | None:
        return Run_State.metrics_problem(metrics)

    def resume(self, state: dict) -> Run:
        Run_State.new_model(self.args, self.device)  # drawn in every case (Run_State.new_model)
        return Run_State.check_run(self.args, Run_State.run_from_state(state, self.args, self.device))

    def from_weights(self, checkpoint: str) -> Run:
        Run_State.new_model(self.args, self.device)
        model = Run_State.model_from_checked_state(load_state_dict(checkpoint), checkpoint, self.args)
        run = Run_State.fresh_run(self.args, model.to(self.device))
        print(
            f"Loaded weights from {checkpoint} (no training state beside it: curriculum starts at "
            f"{run.curriculum.scramble_len})."
        )
        return Run_State.check_run(self.args, run)

    def new_run(self) -> Run:
        model = Run_State.new_model(self.args, self.device)
        return Run_State.check_run(self.args, Run_State.fresh_run(self.args, model))

    def describe(self, run: Run) -> str:
        return f"scramble length {run.curriculum.scramble_len}, buffer {len(run.buffer)} states"

    def check_memory(self, run: Run | None = None) -> None:
        Run_State.check_memory(self.args, run.curriculum.scramble_len if run else self.args.start_scramble_len)

    def new_logger(self, log_dir: str, purge_step: int) -> MetricsLogger:
        return MetricsLogger(log_dir, purge_step=purge_step)

    def hparams(self) -> dict:
        return vars(self.args)

    @contextlib.contextmanager
    def session(self):
        """--threads and --workers for the run's length."""
        with torch_threads(self.args.threads):
            self.workers = Workers.from_args(self.args)  # None: episodes and targets made in this process
            try:
                yield
            finally:
                if self.workers is not None:
                    self.workers.close()

    # -- one iteration
    def step(self, run: Run, it: int) -> CubeStep:
        length = run.curriculum.scramble_len
        targets = targets_step(self.args, run, self.device, self.progress, self.workers)
        return CubeStep(length, targets, train_step(self.args, run, targets, it, self.device, self.progress))

    def record(self, run: Run, logger: MetricsLogger, it: int, step: CubeStep) -> None:
        targets = step.targets
        if step.losses is not None:
            logger.log_iteration(
                it,
                *step.losses,
                targets.solve_rate,
                run.curriculum.scramble_len,
                targets.num_samples,
                **{f"charts/{targets.rate[0].replace('/', '_per_')}": targets.rate[1]},
                buffer=len(run.buffer),
            )
            step.changed = run.curriculum.record(targets.solve_rate)
        else:
            warmup = {"charts/solve_rate_warmup": targets.solve_rate, "charts/sims_per_s": targets.rate[1]}
            logger.log_scalars(it, warmup)

    def report(self, run: Run, it: int, step: CubeStep, seconds: float, total: float) -> None:
        args, targets = self.args, step.targets
        if step.losses is not None:
            loss, ploss, vloss = step.losses
            text = f"loss {loss:.4f} (pi {ploss:.4f}, v {vloss:.4f}) | samples {targets.num_samples}"
        else:
            text = f"warm-up: buffer {len(run.buffer)}/{args.batch_size * args.min_buffer_batches}, no training"
        name, rate = targets.rate
        print(
            f"iter {it:3d}/{args.num_iters} | len {step.length:2d} | {targets.what} solve "
            f"{100 * targets.solve_rate:5.1f}% | {text} | {rate:,.0f} {name} | {seconds:5.1f}s | total "
            f"{time.strftime('%H:%M:%S', time.gmtime(total))}"
            + (f" | scramble length -> {run.curriculum.scramble_len}" if step.changed else ""),
            flush=True,
        )

    def finish(self, run: Run) -> None:
        if not self.args.skip_eval:
            evaluate_model(self.args, run.model, self.device, self.progress)


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


def evaluate_model(args: argparse.Namespace, model: PolicyValueNet, device, progress: bool) -> None:
    """The final evaluation: solve rate by scramble length, saved as JSON and a bar chart. With
    an --eval-solver other than mcts, its default budgets (beam: ranked by the policy after
    --targets scramble, whose value head is untrained)."""
    more = {}
    if args.eval_solver != "mcts":
        rank = "policy" if args.targets == "scramble" else "value"
        more = dict(solver=args.eval_solver, solver_options=SolverOptions(beam_rank=rank))
    evaluator = ScrambleEvaluator(
        model=model, device=device, n_runs=args.eval_runs, log_dir=args.log_dir, seed=args.seed, puzzle=args.puzzle,
        **more,
    )  # fmt: skip
    results = evaluator.evaluate_scramble_range(
        args.eval_min_len, args.eval_max_len, args.eval_sims, args.eval_max_steps, progress=progress
    )
    path = evaluator.plot_scramble_results()
    print("Evaluation: " + ", ".join(f"len {r['scramble_len']}: {100 * r['solve_rate']:.0f}%" for r in results))
    print(f"Saved {os.path.join(args.log_dir, 'eval_scramble_result.json')} and {path}.")


# --------------------------------------------------------------------------- main
def parse_args(argv=None) -> argparse.Namespace:
    """The flags of ``argv`` (Train_Args.py), with this script's docstring atop --help."""
    return Train_Args.parse_args(argv, description=__doc__)


def loop_settings(args: argparse.Namespace, device) -> LoopSettings:
    """What Run_Loop reads of a training command line (the cube's or Go's)."""
    return LoopSettings(
        args.checkpoint, args.log_dir, args.num_iters, args.time_budget, args.seed, args.fresh, vars(args),
        args.snapshot_every, device,
    )  # fmt: skip


def main(argv=None) -> int:
    go = Go_Args.wants_go(argv)  # Go training: its own flags (Go_Args.py) and trainer (Go_Run.py)
    args = Go_Args.parse_args(argv, __doc__) if go else parse_args(argv)
    try:
        device = resolve_device(args.device)  # a device this machine lacks: one sentence, before any work
    except Cli.DeviceError as exc:
        return Cli.fail(exc)
    trainer = Go_Run.GoTrainer(args, device) if go else CubeTrainer(args, device, show_progress(args.progress))
    return run_training(trainer, loop_settings(args, device))


if __name__ == "__main__":
    Cli.run_script(main)
