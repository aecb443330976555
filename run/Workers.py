"""Workers: self-play, target generation and evaluation split over ``--workers N``.

The learner, the replay buffer and every file stay in the driver (``main.py``,
``evaluate.py``). A worker is a function of ``(weights, task) -> result`` that keeps nothing
between calls: it rebuilds the network from a CPU ``state_dict`` (sent once per iteration;
with Ray, ``ray.put`` once and every task reads the same object), runs torch with one thread,
and plays all of its episodes in lockstep as the engine does in one process, so its network
calls stay batched.

Backends (``--backend``):

* ``local`` (default): with ``--workers 1`` nothing here runs at all: the scripts call the
  engine directly (the same random streams and numbers as a run without workers). With
  N > 1, a pool of N local processes (``spawn``), one task per worker per call.
* ``ray``: N Ray tasks on a local Ray (started here) or on a cluster (``--ray-address`` or
  ``RAY_ADDRESS``; the code reaches the nodes as the job's ``runtime_env`` working_dir).
  Ray is imported only by this backend.

Same seed, same numbers: worker ``w`` of iteration ``i`` draws from
``np.random.SeedSequence([seed, i, w])``, every worker runs the same function on CPU with one
thread, and results are concatenated in worker order, so ``--backend local --workers N`` and
``--backend ray --workers N`` give identical results (tested). Evaluation splits the cubes
after the driver drew them, so the cubes do not depend on N; greedy MCTS is deterministic
given the cubes, so its results equal the in-process run. Go self-play (``main.py --game goN``)
sends each worker a contiguous share of the iteration's per-game seeds; a game draws only from its
seed and the network calls have one fixed size (``Go_Training``), so any ``--workers`` and either
backend train the weights of the in-process run (tested).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time

import numpy as np
import torch

from cube.Cube_Checkpoints import model_from_state
from cube.Evaluation_Modes import play_cubes
from cube.Lookahead_Targets import lookahead_targets, scramble_path_states
from cube.Puzzles import get_puzzle
from cube.Seed_System_Targets import seed_training_sample
from engine.Precision import eval_mode
from go import Go_Training
from go.Go_Net import go_model_from_state
from run import Cli, Process_Signals
from run.Checkpoints import go_size_of
from run.Run_IO import REPO
from Self_Play import EpisodeResults, play_episodes

BACKENDS = ("local", "ray")
MAX_WORKERS = 1024
RAY_MISSING = (
    "--backend ray needs Ray, which is not installed: pip install -r requirements-ray.txt (or use --backend local)."
)
#: What a cluster's working_dir upload leaves out (results and weights are the driver's).
RAY_EXCLUDES = [".git", "training_logs", "runs", "pretrained", "*.pt", "__pycache__", "docs/*.png"]
workers_count = Cli.int_in(1, MAX_WORKERS, "worker processes or Ray tasks")


class WorkerError(Exception):
    """Workers cannot run as asked (Ray missing, cluster unreachable). One sentence."""


def add_arguments(group) -> None:
    """``--workers``, ``--backend`` and ``--ray-address`` (main.py and evaluate.py)."""
    group.add_argument(
        "--workers",
        type=workers_count,
        default=1,
        help="split self-play, target generation or evaluation over N workers (1 = in this process, as always)",
    )
    group.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="where workers run: 'local' = N local processes; 'ray' = Ray tasks (pip install -r requirements-ray.txt)",
    )
    group.add_argument(
        "--ray-address",
        default=None,
        help="with --backend ray: the cluster to join (default: $RAY_ADDRESS, else a Ray started on this machine)",
    )


def from_args(args, seed: int | None = None) -> WorkerPool | None:
    """The pool that ``args`` ask for, or None for the default (one worker, local: the engine
    runs in this process exactly as before). Raises ``WorkerError`` (one sentence)."""
    if args.workers == 1 and args.backend == "local":
        return None
    if getattr(args, "targets", None) == "sweep":
        raise WorkerError(
            "--targets sweep reads every class of positions in one pass in the driver: leave --workers out."
        )
    return WorkerPool(args.workers, args.backend, args.ray_address, args.seed if seed is None else seed)


# --------------------------------------------------------------------------- inside a worker
def worker_rng(seed: int, iteration: int, worker: int) -> np.random.Generator:
    """The random stream of worker ``worker`` in ``iteration`` of a run seeded ``seed``."""
    return np.random.default_rng(np.random.SeedSequence([seed, iteration, worker]))


def _self_play(model, rng, n, length, max_steps, sims, select_mode, temperature, c_puct, puzzle="2x2"):
    with eval_mode(model):
        start_cubes, _ = get_puzzle(puzzle).scramble(rng, n, length)
        return play_episodes(
            model,
            start_cubes,
            max_steps,
            sims,
            select_mode,
            temperature,
            rng=rng,
            device="cpu",
            c_puct=c_puct,
            game=puzzle,
        )


def _lookahead(model, rng, n, length, double_estimate, policy_temperature, puzzle="2x2"):
    cubes, depth, last = scramble_path_states(rng, n, length, puzzle)
    z, pi = lookahead_targets(
        model,
        cubes,
        depth,
        last,
        "cpu",
        rng=rng if double_estimate else None,
        policy_temperature=policy_temperature,
        puzzle=puzzle,
    )
    return cubes, z, pi


def _seed_targets(model, rng, kind, n, length, puzzle="2x2"):
    return seed_training_sample(kind, model, rng, n, length, "cpu", puzzle)


def _evaluate(model, rng, cubes, solver, options, sims, max_steps, seed, c_puct, puzzle="2x2"):
    options = dataclasses.replace(options, sims=sims, max_moves=max_steps, c_puct=float(c_puct), seed=int(seed))
    return play_cubes(solver, cubes, options, model=model, device=torch.device("cpu"), puzzle=get_puzzle(puzzle))


def _go_self_play(model, rng, recipe, seeds):
    return Go_Training.play_games(model, recipe, seeds)  # each game has its seed: ``rng`` goes unused


TASKS = {
    "selfplay": _self_play,
    "lookahead": _lookahead,
    "seed": _seed_targets,
    "evaluate": _evaluate,
    "goselfplay": _go_self_play,
}


def network_from_state(weights: dict):
    """The network of a CPU state_dict: a ``GoNet`` for Go weights (they carry their board size), else the
    cube's ``PolicyValueNet``."""
    if go_size_of(weights) is not None:
        return go_model_from_state(weights, "<worker weights>")
    return model_from_state(weights, "<worker weights>")


def run_task(weights: dict | None, kind: str, key: tuple[int, int, int], params: dict):
    """One worker's share: the network rebuilt from ``weights`` (None: no network), the
    random stream of ``key = (seed, iteration, worker)``, one thread."""
    torch.set_num_threads(1)
    model = None if weights is None else network_from_state(weights).eval()
    with torch.no_grad():
        return TASKS[kind](model, worker_rng(*key), **params)


def _init_local_worker(driver_pid: int) -> None:
    # A driver killed outright (kill -9) runs no clean-up: without this its workers would run on for ever,
    # holding its stdout (a `| tee` after it would never end); the resource tracker ends with the last of them.
    Process_Signals.die_with_parent(driver_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's: it saves and stops
    torch.set_num_threads(1)


# --------------------------------------------------------------------------- in the driver
def split_counts(n: int, workers: int) -> list[int]:
    """``n`` items in ``workers`` shares, the first ``n % workers`` one larger."""
    return [n // workers + (w < n % workers) for w in range(workers)]


def cpu_weights(model) -> dict | None:
    return None if model is None else {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


class WorkerPool:
    """N workers on one backend. ``map`` runs one task per worker and returns the results in
    worker order; the helpers below merge them into what the single-process call returns."""

    def __init__(self, workers: int, backend: str = "local", address: str | None = None, seed: int = 0):
        if backend not in BACKENDS:
            raise WorkerError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}.")
        self.workers, self.backend, self.seed = int(workers), backend, int(seed)
        self._weights_key = None
        self._weights = None
        self._executor = None
        self._ray = None
        if backend == "ray":
            self._start_ray(address or os.environ.get("RAY_ADDRESS") or None)

    def _start_ray(self, address: str | None) -> None:
        try:
            import ray
        except ImportError:
            raise WorkerError(RAY_MISSING) from None
        if not ray.is_initialized():
            try:
                if address:  # a cluster: ship this folder to every node as the job's working_dir
                    ray.init(
                        address=address,
                        runtime_env={"working_dir": REPO, "excludes": RAY_EXCLUDES},
                        log_to_driver=False,
                    )
                else:  # a Ray of our own on this machine: its workers import from this folder
                    ray.init(
                        num_cpus=max(self.workers, os.cpu_count() or 1),
                        include_dashboard=False,
                        log_to_driver=False,
                        runtime_env={"env_vars": {"PYTHONPATH": REPO}},
                    )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise WorkerError(f"cannot start or reach Ray at {address or 'this machine'} ({exc}).") from None
        self._ray = ray
        self._remote = ray.remote(num_cpus=1)(run_task)

    def weights(self, model, key) -> object:
        """The CPU weights of ``model``, made once per ``key`` (the iteration): with Ray an
        object reference (``ray.put``), locally the dict itself."""
        if key != self._weights_key or self._weights is None:
            weights = cpu_weights(model)
            self._weights = self._ray.put(weights) if self._ray is not None and weights is not None else weights
            self._weights_key = key
        return self._weights

    def map(self, kind: str, model, iteration: int, params: list[dict]) -> list:
        """``run_task`` of worker w on ``params[w]`` (empty shares skipped), results in worker order."""
        weights = self.weights(model, iteration)
        jobs = [(w, p) for w, p in enumerate(params) if p is not None]
        if self._ray is not None:
            refs = [self._remote.remote(weights, kind, (self.seed, iteration, w), p) for w, p in jobs]
            return self._ray.get(refs)
        if self._executor is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._executor = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_local_worker,
                initargs=(os.getpid(),),
            )
        futures = [self._executor.submit(run_task, weights, kind, (self.seed, iteration, w), p) for w, p in jobs]
        return [f.result() for f in futures]

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=True)
            self._executor = None

    def _shares(self, n: int, **task) -> list[dict | None]:
        """One task's ``params`` per worker: ``task`` with ``n`` the worker's share of ``n``
        (``split_counts``), or None for an empty share."""
        return [None if k == 0 else dict(task, n=k) for k in split_counts(n, self.workers)]

    # -- main.py: one iteration's data -----------------------------------------------------
    def self_play(self, model, iteration, n, max_steps, sims, length, select_mode, temperature, c_puct, puzzle="2x2"):
        """``n`` self-play episodes of ``puzzle`` (by name) split over the workers: one ``EpisodeResults``
        (episodes in worker order; ``seconds`` = wall time of the whole step)."""
        start = time.perf_counter()
        params = self._shares(
            n,
            length=length,
            max_steps=max_steps,
            sims=sims,
            select_mode=select_mode,
            temperature=temperature,
            c_puct=c_puct,
            puzzle=puzzle,
        )
        return concat_results(self.map("selfplay", model, iteration, params), start)

    def go_self_play(self, model, recipe, seeds: np.ndarray) -> EpisodeResults:
        """Go self-play (``Go_Training.play_games``) of one game per seed, the seeds split into contiguous
        shares: one ``EpisodeResults`` in seed order, equal to the in-process call's. One call per
        iteration, so the weights are sent afresh each time; the games draw from their seeds only."""
        start = time.perf_counter()
        self._weights = None
        bounds = np.cumsum([0, *split_counts(len(seeds), self.workers)])
        params = [
            dict(recipe=recipe, seeds=seeds[lo:hi]) if hi > lo else None for lo, hi in zip(bounds[:-1], bounds[1:])
        ]
        return concat_results(self.map("goselfplay", model, 0, params), start)

    def lookahead(self, model, iteration, n, length, double_estimate=False, policy_temperature=0.0, puzzle="2x2"):
        """``--targets lookahead``: about ``n`` scramble-path states of ``puzzle`` (by name) drawn and
        given targets by the workers. Returns ``cubes, z, pi`` (worker order)."""
        params = self._shares(
            n,
            length=length,
            double_estimate=double_estimate,
            policy_temperature=policy_temperature,
            puzzle=puzzle,
        )
        parts = self.map("lookahead", model, iteration, params)
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))

    def seed_sample(self, kind, model, iteration, n, length, puzzle="2x2"):
        """``--targets adi|scramble|diffusion``: ``Seed_System_Targets.seed_training_sample`` of ``puzzle``
        (by name) split over the workers."""
        params = self._shares(n, kind=kind, length=length, puzzle=puzzle)
        parts = self.map("seed", model, iteration, params)
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))

    # -- evaluate.py: cubes drawn by the driver, split into contiguous chunks ----------------
    def evaluate(self, model, cubes, solver, options, sims, max_steps, seed, c_puct, puzzle="2x2"):
        """``Evaluation_Modes.play_cubes`` of each contiguous chunk of ``cubes`` (of ``puzzle``, by
        name) on a worker: the ``SolverRun``s in order (``Evaluation_Modes.concat_runs`` joins them)."""
        bounds = np.cumsum([0, *split_counts(len(cubes), self.workers)])
        params = [
            None
            if hi == lo
            else dict(
                cubes=cubes[lo:hi],
                solver=solver,
                options=options,
                sims=sims,
                max_steps=max_steps,
                seed=seed,
                c_puct=c_puct,
                puzzle=puzzle,
            )
            for lo, hi in zip(bounds[:-1], bounds[1:])
        ]
        return self.map("evaluate", model, 0, params)


def concat_results(parts: list[EpisodeResults], start: float) -> EpisodeResults:
    """The workers' ``EpisodeResults`` as one: episodes in worker order, ``seconds`` the wall time since
    ``start`` (``time.perf_counter``)."""
    finals = [r.final_inputs for r in parts]
    merged = EpisodeResults(
        start_cubes=np.concatenate([r.start_cubes for r in parts]),
        actions=[a for r in parts for a in r.actions],
        solved=np.concatenate([r.solved for r in parts]),
        states=[s for r in parts for s in r.states],
        policies=[p for r in parts for p in r.policies],
        simulations=sum(r.simulations for r in parts),
        seconds=time.perf_counter() - start,
        network_states=sum(r.network_states for r in parts),
        game=parts[0].game,
        final_values=np.concatenate([r.final_values for r in parts]),
        final_inputs=None if any(f is None for f in finals) else np.concatenate(finals),
    )
    for key in set(vars(parts[0])) - {f.name for f in dataclasses.fields(EpisodeResults)}:
        if isinstance(getattr(parts[0], key), list):  # play_lockstep's extra fields: a list per episode
            setattr(merged, key, [x for r in parts for x in getattr(r, key)])
    return merged


def self_play_fn(pool: WorkerPool | None, iteration: int, in_process):
    """``in_process`` (``Self_Play.generate_self_play_data``) itself when ``pool`` is None (the
    default run, untouched); else a function of the same arguments that returns ``(None, solve_rate,
    results)`` from the pool (``return_results`` is implied; ``device``, ``rng`` and
    ``progress`` are the driver's and go unused: workers run on CPU with their own streams)."""
    if pool is None:
        return in_process

    def play(
        model, n, max_steps, sims, length, select_mode="sample", temperature=1.0, *, c_puct, game="2x2", **_driver_only
    ):
        res = pool.self_play(model, iteration, n, max_steps, sims, length, select_mode, temperature, c_puct, game)
        return None, res.solve_rate, res

    return play
