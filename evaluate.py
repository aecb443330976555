"""Evaluate a trained solver: solve rate by scramble length (the original's evaluation), by true
distance, or on a fixed file of scrambles.

Every episode is greedy MCTS (1000 simulations per move, the tree rebuilt each move) for at
most 40 moves, as in the original project. All episodes of a run (every scramble length, or
every distance, or every line of a scramble file) are played in ONE batched call of
``Self_Play.play_episodes``: the searches of all unsolved cubes advance in lockstep, so the
network sees large batches, which is what makes the default 2,000-episode run affordable on
a CPU.

Modes:

* default: scramble lengths ``--min-len..--max-len`` (1..20), ``--runs`` (100) random
  scrambles each -> ``<log-dir>/eval_scramble_result.json`` and ``eval_bar_chart.png``.
* ``--by-distance``: ``--runs`` distinct random positions at each TRUE distance
  ``--min-dist..--max-dist`` (1..14, quarter turns, from the optimal solver) ->
  ``<log-dir>/eval_by_distance.json`` and ``eval_by_distance.png``.
* ``--scrambles FILE``: one move string per line (blank lines and ``#`` comments skipped)
  -> ``--out`` JSON with each line's solution, its length and the optimal length.
* ``--all-positions``: against every one of the 3,674,160 positions -> ``<log-dir>/
  eval_all_positions.json``, ``eval_all_positions.png`` and ``all_positions_failures.jsonl``
  (every unsolved position: index, stickers, true distance, an optimal scramble that makes
  it, the moves played). ``--solver greedy`` plays them all from a table of the network's
  values (an orientation-invariant network is needed); any other solver plays a uniform
  sample of ``--sample`` positions (100,000) plus every position at distances 13 and 14.

``--solver`` (default ``mcts``, the original's search, exactly as above; the 3x3's default is the
multi-view mixed beam of docs/puzzles.md, ``Puzzle.default_solver_options``) picks how cubes are
solved in every mode: ``greedy``, ``beam``, ``astar``, ``bestfirst`` (no network needed) or
``gumbel`` (see ``Solvers.py``). Every solve is checked by replaying its moves, and every
result also reports the states each solver generated (``mean_nodes``; MCTS: simulations)
and its seconds per cube (``mean_seconds``).

Beyond the original, every result carries solution lengths measured against the optimal
solution (``Optimal_Solver.py``): ``mean_ratio_to_optimal`` is the mean of
``moves played / optimal moves`` over the solved episodes (1.0 = always optimal).

``--puzzle 3x3`` evaluates the 3x3 (``Puzzles.py``) by scramble length (1..26 by default), on
a scramble file, or with ``--uniform N`` on N uniformly random positions, with any ``--solver``
(mcts and gumbel play it through the same game interface as the 2x2) and the model
``rubik3x3_policy_value.pt`` (or ``--checkpoint``); results go to ``training_logs_3x3/`` unless
``--log-dir`` says otherwise.
No exact distances exist for it, so ``optimal`` is null and the reference is kociemba's
two-phase solution, in quarter turns: ``kociemba`` per scramble, ``mean_kociemba`` and
``mean_ratio_to_kociemba`` per group (an upper bound on the optimal length, so a ratio below 1
is possible). ``--by-distance`` and ``--all-positions`` need the 2x2's exact table.

* ``--uniform N``: N positions drawn uniformly: on the 2x2 from all 3,674,160 (with
  replacement), on the 3x3 from all 43 quintillion (``Rubik3x3Env.random_states``: cubie
  permutations and orientations under the cube's three parity rules, exact) -> ``--out`` JSON
  (default ``<log-dir>/eval_uniform.json``) with the fields of ``--scrambles``: ``line`` is the
  position's number, ``scramble`` a move string that makes it (2x2: an optimal one; 3x3:
  kociemba's solution reversed), then ``solution``, ``solved``, ``length``, ``optimal`` (3x3:
  null), ``kociemba`` (3x3 only), ``nodes`` and ``seconds``. ``--time-limit`` bounds the
  seconds per cube.
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a signal during the slow imports below ends the script as at any moment
    from run import Process_Signals

    Process_Signals.start_script()

import os

if __name__ == "__main__":
    # Only when run as a script (importing this module changes nothing), and before torch is
    # imported (libgomp reads it once, when torch loads it): an os.environ change, which ruff's
    # E402 allows before imports (nothing else runs before them). Waiting OpenMP threads go to sleep at
    # once instead of spinning: beside another busy process on the same 2 cores (training, say)
    # spinning made this evaluation 2-3x slower with 2,000 episodes and 10-30x slower with a
    # few, while on an idle machine spinning gains 4-24% (spec, section 8; most with small
    # batches). Export GOMP_SPINCOUNT=10000000 on an idle machine to get that back.
    os.environ.setdefault("GOMP_SPINCOUNT", "0")

import argparse
import dataclasses
import time

import numpy as np
import torch

from cube.Cube_Checkpoints import load_model
from cube.Evaluation_All_Positions import ALL_POSITIONS_SAMPLE, AllPositionsError, all_positions_mode, write_jsonl
from cube.Evaluation_Modes import (
    ScrambleFileError,
    distance_mode,
    play_cubes,
    read_scramble_file,
    run_costs,
    scramble_file_mode,
    scramble_range_mode,
    summarize,
    uniform_mode,
)
from cube.Evaluation_Report import (
    all_positions_table,
    cell,
    distance_table,
    pct,
    plot_all_positions,
    plot_distance_data,
    plot_scramble_rows,
    scramble_range_table,
    scramble_records_table,
)
from cube.Puzzles import C_PUCT, Puzzle, add_puzzle_flag, get_puzzle
from cube.Solvers import (
    NETWORK_SOLVERS,
    SolverOptions,
    SolverRun,
    add_solver_arguments,
    check_network,
    options_from_args,
    resolve_solver,
    solver_settings,
)
from go import Go_Args, Go_Match
from Optimal_Solver import MAX_DISTANCE, get_solver
from run import Cli, Workers
from run.Cli import (
    EVAL_SIMULATIONS,
    MAX_MOVES,
    DeviceError,
    HelpFormatter,
    add_checkpoint_flag,
    add_device_flag,
    fail,
    resolve_device,
    show_progress,
)
from run.Run_IO import (
    CheckpointError,
    OutputError,
    check_writable,
    find_checkpoint,
    read_json,
    remove_stale_temps,
    write_json,
)

SCRAMBLE_RESULT_FILE = "eval_scramble_result.json"
SCRAMBLES_RESULT_FILE = "eval_scrambles.json"
UNIFORM_RESULT_FILE = "eval_uniform.json"
SCRAMBLE_CHART_FILE = "eval_bar_chart.png"
DISTANCE_RESULT_FILE = "eval_by_distance.json"
DISTANCE_CHART_FILE = "eval_by_distance.png"
ALL_POSITIONS_RESULT_FILE = "eval_all_positions.json"
ALL_POSITIONS_CHART_FILE = "eval_all_positions.png"
ALL_POSITIONS_FAILURES_FILE = "all_positions_failures.jsonl"


# --------------------------------------------------------------------------- the evaluator
class ScrambleEvaluator:
    """The original's evaluator: greedy MCTS episodes from random scrambles, JSON and charts.
    Its methods keep the original's names over the evaluation modes (``Evaluation_Modes``,
    ``Evaluation_All_Positions``): each runs its mode, keeps the latest results and writes them.

    ``model_path`` None means the usual lookup (``./rubik_policy_value.pt``, else
    ``pretrained/rubik_policy_value.pt``); ``model`` passes an in-memory network instead
    (``main.py`` does so after training). Raises ``CheckpointError`` or ``DeviceError`` (one
    sentence) when no usable model or device is found. Scrambles and sampled positions are
    drawn from ``seed``, so the same seed evaluates the same cubes.

    ``solver`` (``Solvers.SOLVER_NAMES``; default ``mcts``, the original's search, played as
    before) and ``solver_options`` (``Solvers.SolverOptions``; the simulations, move limit,
    c_puct and seed always come from the evaluation's own arguments) choose how cubes are
    solved. ``bestfirst`` needs no network: no model is loaded for it.

    ``workers`` (a ``Workers.WorkerPool``; None = this process, as always) splits the cubes
    of every ``play`` into contiguous chunks, one per worker, after they were drawn here.

    ``puzzle`` (``Puzzles``; default the 2x2): which cube. The model file looked up is the
    puzzle's, and a model for another cube is refused (``CheckpointError``, or ValueError for an
    in-memory one); every solver plays every puzzle. The 3x3 has no exact distances: its results
    carry kociemba's lengths instead (``lengths_of``), and ``evaluate_by_distance`` and
    ``evaluate_all_positions`` are the 2x2's only.
    """

    def __init__(
        self,
        model_path=None,
        device="auto",
        n_runs=100,
        log_dir="training_logs",
        seed=0,
        model=None,
        c_puct=C_PUCT,
        solver="mcts",
        solver_options: SolverOptions | None = None,
        workers: Workers.WorkerPool | None = None,
        puzzle: Puzzle | str | None = None,
    ):
        if n_runs < 1:
            raise ValueError("n_runs must be at least 1")
        self.puzzle = get_puzzle(puzzle)
        self.solver = solver
        self.solver_options = solver_options if solver_options is not None else SolverOptions()
        self.model_path = None
        self.model = model
        if model is not None:
            # The search must run where the weights are: use the model's own device rather
            # than moving the caller's model.
            check_network(model, self.puzzle)
            self.device = next(model.parameters()).device
        else:
            self.device = device if isinstance(device, torch.device) else resolve_device(device or "auto")
        if model is None and solver in NETWORK_SOLVERS:
            self.model_path = find_checkpoint(model_path, self.puzzle.checkpoint)
            self.model = load_model(self.model_path, self.device, self.puzzle)
        self.workers = workers
        self.n_runs = int(n_runs)
        self.log_dir = log_dir
        self.seed = int(seed)
        self.c_puct = float(c_puct)
        self.results: list[dict] | None = None  # rows of the latest evaluate_scramble_range
        self.distance_results: dict | None = None  # data of the latest evaluate_by_distance
        self.settings: dict | None = None  # search settings of the latest evaluate_scramble_range (its JSON has none)
        self.last_run: SolverRun | None = None  # the raw episodes of the latest call
        self.all_positions_results: dict | None = None  # data of the latest evaluate_all_positions
        self.last_kociemba: np.ndarray | None = None  # 3x3: kociemba's lengths of the latest start cubes

    def lengths_of(self, cubes: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(optimal, kociemba)`` quarter-turn lengths of ``cubes``: the true distances (2x2)
        and None, or None and the lengths of kociemba's solutions (3x3)."""
        if self.puzzle.reference == "optimal":
            return get_solver().batch_distance(cubes), None
        self.last_kociemba = self.puzzle.reference_lengths(cubes)
        return None, self.last_kociemba

    def _need_exact(self, mode: str) -> None:
        if self.puzzle.reference != "optimal":
            raise ValueError(f"{mode} needs the exact distances of the 2x2; the {self.puzzle.name} has none")

    def options(self, num_simulations: int, max_episode_steps: int) -> SolverOptions:
        """The solver's options for one evaluation: the evaluation's own settings win."""
        return dataclasses.replace(
            self.solver_options, sims=num_simulations, max_moves=max_episode_steps, c_puct=self.c_puct, seed=self.seed
        )

    def solver_settings(self, num_simulations: int, max_episode_steps: int) -> dict:
        """``solver`` and ``solver_options`` as a result file's settings record them."""
        return {
            "solver": self.solver,
            "solver_options": solver_settings(self.solver, self.options(num_simulations, max_episode_steps)),
        }

    def play(
        self,
        start_cubes: np.ndarray,
        num_simulations: int,
        max_episode_steps: int,
        progress: bool = False,
        desc: str = "eval",
    ) -> SolverRun:
        """Solve every start cube with this evaluator's solver, model, device, seed, c_puct and
        workers (``Evaluation_Modes.play_cubes``: ``mcts`` is the original's evaluation, all
        cubes in one lockstep batch, unchanged)."""
        self.last_run = play_cubes(
            self.solver,
            start_cubes,
            self.options(num_simulations, max_episode_steps),
            model=self.model,
            device=self.device,
            puzzle=self.puzzle,
            workers=self.workers,
            progress=progress,
            desc=desc,
        )
        return self.last_run

    # -- the original's evaluation: solve rate by scramble length -------------------------
    def evaluate_scramble_range(
        self, min_len=1, max_len=20, num_simulations=EVAL_SIMULATIONS, max_episode_steps=MAX_MOVES, progress=False
    ) -> list[dict]:
        """``n_runs`` random scrambles of every length ``min_len..max_len``, all played in one batch.

        Returns and saves ``<log_dir>/eval_scramble_result.json``: one dict per length with
        ``scramble_len``, ``solve_rate`` (the original's keys), ``episodes``, ``solved``,
        ``mean_length``, ``mean_optimal`` and ``mean_ratio_to_optimal`` (see ``summarize``; the
        3x3: also ``mean_kociemba`` and ``mean_ratio_to_kociemba``).
        """
        self.results, self.settings = scramble_range_mode(
            self, min_len, max_len, num_simulations, max_episode_steps, progress
        )
        write_json(os.path.join(self.log_dir, SCRAMBLE_RESULT_FILE), self.results)
        return self.results

    def plot_scramble_results(self, filename: str = SCRAMBLE_CHART_FILE) -> str:
        """``plot_scramble_rows`` of the latest results, else of the saved JSON. Returns the PNG path."""
        rows = self.results if self.results is not None else self._load(SCRAMBLE_RESULT_FILE)
        return plot_scramble_rows(
            os.path.join(self.log_dir, filename), rows, self.settings if self.results is not None else None
        )

    # -- beyond the original: solve rate by true distance ---------------------------------
    def evaluate_by_distance(
        self,
        min_dist=1,
        max_dist=MAX_DISTANCE,
        num_simulations=EVAL_SIMULATIONS,
        max_episode_steps=MAX_MOVES,
        progress=False,
    ) -> dict:
        """Positions drawn by true distance (``distance_cubes``), all played in one batch.

        A random scramble of k moves is often much closer than k to solved; sampling by
        distance measures difficulty exactly. Returns and saves
        ``<log_dir>/eval_by_distance.json``: ``{"settings", "by_distance": [...], "overall"}``.
        """
        self._need_exact("evaluation by distance")
        self.distance_results = distance_mode(self, min_dist, max_dist, num_simulations, max_episode_steps, progress)
        write_json(os.path.join(self.log_dir, DISTANCE_RESULT_FILE), self.distance_results)
        return self.distance_results

    # -- beyond the original: every position ---------------------------------------------
    def evaluate_all_positions(
        self,
        sample: int | None = None,
        num_simulations=EVAL_SIMULATIONS,
        max_episode_steps=MAX_MOVES,
        progress=False,
        limit: int | None = None,
    ) -> dict:
        """Every position (greedy solver, ``sample`` None) or a uniform ``sample`` (default
        100,000) plus every position at distances 13-14, reported by true distance
        (``Evaluation_All_Positions.all_positions_mode``).

        Saves ``<log_dir>/eval_all_positions.json`` (``{"settings", "by_distance", "overall"}``)
        and ``all_positions_failures.jsonl`` (``failure_records``). ``limit`` (tests): the
        greedy table mode plays only ``limit`` evenly spaced positions; the sample mode takes
        at most ``limit`` of the positions at distances 13-14. Raises ``AllPositionsError``
        when the greedy table mode gets a network that is not orientation-invariant.
        """
        self._need_exact("evaluation against every position")
        data, failures, run = all_positions_mode(self, sample, num_simulations, max_episode_steps, progress, limit)
        if run is not None:
            self.last_run = run
        self.all_positions_results = data
        write_json(os.path.join(self.log_dir, ALL_POSITIONS_RESULT_FILE), data)
        write_jsonl(os.path.join(self.log_dir, ALL_POSITIONS_FAILURES_FILE), failures)
        return data

    def plot_all_positions_results(self, filename: str = ALL_POSITIONS_CHART_FILE) -> str:
        """``plot_all_positions`` of the latest results, else of the saved JSON. Returns the PNG path."""
        data = self.all_positions_results or self._load(ALL_POSITIONS_RESULT_FILE)
        return plot_all_positions(os.path.join(self.log_dir, filename), data)

    def plot_distance_results(self, filename: str = DISTANCE_CHART_FILE) -> str:
        """``plot_distance_data`` of the latest results, else of the saved JSON. Returns the PNG path."""
        fresh = self.distance_results is not None
        data = self.distance_results if fresh else self._load(DISTANCE_RESULT_FILE)
        return plot_distance_data(os.path.join(self.log_dir, filename), data, show_settings=fresh)

    # -- uniformly random positions -------------------------------------------------------
    def solve_uniform(
        self, n: int, num_simulations=EVAL_SIMULATIONS, max_episode_steps=MAX_MOVES, progress=False
    ) -> list[dict]:
        """``n`` uniformly random positions (``Puzzle.random_states``, drawn from ``seed``; the 2x2
        with replacement from all 3,674,160), solved in one batch: ``scramble_file_records`` with
        each position's number as its ``line`` and a scramble that makes it from solved: an
        optimal one (2x2) or kociemba's solution reversed (3x3)."""
        records, kociemba = uniform_mode(self, n, num_simulations, max_episode_steps, progress)
        if kociemba is not None:
            self.last_kociemba = kociemba
        return records

    # -- beyond the original: a fixed test set --------------------------------------------
    def solve_scrambles(
        self,
        scrambles: list[tuple[int, str, list[int]]],
        num_simulations=EVAL_SIMULATIONS,
        max_episode_steps=MAX_MOVES,
        progress=False,
    ) -> list[dict]:
        """Solve ``(line number, text, actions)`` scrambles (see ``read_scramble_file``) in one
        batch: ``scramble_file_records``."""
        return scramble_file_mode(self, scrambles, num_simulations, max_episode_steps, progress)

    def overall(self) -> dict:
        """``summarize`` of every episode of the latest call (the 3x3: against the kociemba
        lengths that call computed)."""
        run = self.last_run
        if self.puzzle.reference != "optimal":
            return summarize(run.solved, run.lengths, None, *run_costs(run), kociemba=self.last_kociemba)
        return summarize(run.solved, run.lengths, get_solver().batch_distance(run.start_cubes), *run_costs(run))

    def _load(self, filename: str):
        path = os.path.join(self.log_dir, filename)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path} does not exist: run the evaluation first.")
        return read_json(path)


# --------------------------------------------------------------------------- command line
def parse_args(argv=None) -> argparse.Namespace:
    """The command line: the flags in the order --help lists them, then the puzzle's defaults and
    the checks (a bad combination: one sentence on stderr, exit status 2)."""
    p = Cli.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    _add_mode_flags(p)
    _add_search_and_run_flags(p)
    g = p.add_argument_group("workers (beyond the original)")
    Workers.add_arguments(g)
    add_solver_arguments(p)
    _add_all_positions_flags(p)
    args = p.parse_args(argv)
    _fill_puzzle_defaults(args)
    _check_args(p, args)
    return args


def _add_mode_flags(p: argparse.ArgumentParser) -> None:
    """What to evaluate: scramble lengths, --by-distance, --scrambles, --uniform and --out."""
    g = p.add_argument_group("what to evaluate (defaults = the original project)")
    add_puzzle_flag(g)
    g.add_argument("--min-len", type=Cli.scramble_len, default=1, help="shortest scramble length evaluated")
    g.add_argument(
        "--max-len",
        type=Cli.scramble_len,
        default=None,
        help="longest scramble length evaluated (default: 20; 26 for the 3x3)",
    )
    g.add_argument(
        "--runs",
        type=Cli.episodes,
        default=100,
        help="episodes per scramble length (or per distance with --by-distance)",
    )
    g.add_argument(
        "--by-distance",
        action="store_true",
        help="sample positions by their true distance (optimal solver) instead of scramble length",
    )
    g.add_argument("--min-dist", type=Cli.integer, default=1, help="smallest true distance with --by-distance")
    g.add_argument(
        "--max-dist",
        type=Cli.integer,
        default=MAX_DISTANCE,
        help=f"largest true distance with --by-distance (at most {MAX_DISTANCE})",
    )
    g.add_argument(
        "--scrambles",
        type=Cli.nonempty_path,
        metavar="FILE",
        help="solve the scrambles of FILE (one move string per line, # comments) instead",
    )
    g.add_argument(
        "--uniform",
        type=Cli.episodes,
        default=None,
        metavar="N",
        help="solve N uniformly random positions instead (the 2x2: drawn from all 3,674,160, optimal lengths "
        "beside; the 3x3: from its cubies, kociemba's lengths beside)",
    )
    g.add_argument(
        "--out",
        type=Cli.nonempty_path,
        metavar="OUT.json",
        help="results of --scrambles or --uniform (default: <log-dir>/eval_scrambles.json, eval_uniform.json)",
    )


def _add_search_and_run_flags(p: argparse.ArgumentParser) -> None:
    """The search (--sims, --max-steps, --c-puct) and the run (seed, checkpoint, device, folders)."""
    g = p.add_argument_group("search")
    g.add_argument("--sims", type=Cli.simulations, default=EVAL_SIMULATIONS, help="MCTS simulations per move")
    g.add_argument(
        "--max-steps",
        type=Cli.move_limit,
        default=None,
        help=f"moves allowed per episode before it counts as unsolved (default: {MAX_MOVES}; "
        f"{get_puzzle('3x3').default_max_moves} for the 3x3)",
    )
    g.add_argument("--c-puct", type=Cli.positive_float, default=C_PUCT, help="PUCT exploration constant")
    g = p.add_argument_group("run")
    g.add_argument(
        "--seed", type=Cli.seed, default=0, help="seed of the scrambles / sampled positions (same seed, same cubes)"
    )
    add_checkpoint_flag(g)
    add_device_flag(g)
    g.add_argument(
        "--log-dir",
        type=Cli.nonempty_path,
        default=None,
        help="folder of the result JSON files and charts (default: training_logs; training_logs_3x3 for the 3x3)",
    )
    g.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: when stderr is a terminal)",
    )


def _add_all_positions_flags(p: argparse.ArgumentParser) -> None:
    """--all-positions, --sample and --limit."""
    g = p.add_argument_group("every position (beyond the original)")
    g.add_argument(
        "--all-positions",
        action="store_true",
        help="evaluate against every position: all 3,674,160 with --solver greedy (orientation-invariant "
        "network), else a uniform --sample plus every position at distances 13-14",
    )
    g.add_argument(
        "--sample",
        type=Cli.integer,
        default=None,
        metavar="N",
        help=f"uniform positions of --all-positions (default: {ALL_POSITIONS_SAMPLE:,}; with --solver greedy: "
        "every position), plus every position at distances 13-14",
    )
    g.add_argument(
        "--limit",
        type=Cli.integer,
        default=None,
        metavar="N",
        help="a smaller check: with --sample, at most N of the positions at distances 13-14 (0 = the uniform sample "
        "alone); with --solver greedy and no --sample, N evenly spaced positions instead of all",
    )


def _fill_puzzle_defaults(args: argparse.Namespace) -> None:
    """The puzzle's move limit, longest scramble and folder where no flag gave them, and its
    default solver and budgets where no --solver was given."""
    puzzle = get_puzzle(args.puzzle)
    for key, default in (
        ("max_steps", puzzle.default_max_moves),
        ("max_len", puzzle.eval_max_len),
        ("log_dir", puzzle.log_dir),
    ):
        if getattr(args, key) is None:
            setattr(args, key, default)
    resolve_solver(args)  # no --solver: the puzzle's default solver and budgets


def _check_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The first bad flag or combination ends the run through ``p.error`` (exit status 2)."""
    exact = get_puzzle(args.puzzle).reference == "optimal"
    more_checks = [
        (
            args.uniform is None or not (args.by_distance or args.scrambles or args.all_positions),
            "--uniform is a mode of its own",
        ),
        (exact or not args.by_distance, f"--by-distance needs the 2x2's exact distances; the {args.puzzle} has none"),
        (exact or not args.all_positions, f"--all-positions is the 2x2's; the {args.puzzle} has too many positions"),
        (not (args.all_positions and (args.by_distance or args.scrambles)), "--all-positions is a mode of its own"),
        (args.sample is None or args.all_positions, "--sample is for --all-positions"),
        (args.sample is None or args.sample >= 1, "--sample must be at least 1"),
        (args.limit is None or args.limit >= 0, "--limit must be at least 0"),
        (args.limit is None or args.all_positions, "--limit is for --all-positions"),
        (
            args.limit != 0 or args.solver != "greedy" or args.sample is not None,
            "--limit 0 leaves no positions to play; give at least 1",
        ),
    ]
    checks = [
        (args.runs >= 1, "--runs must be at least 1"),
        (args.sims >= 1, "--sims must be at least 1"),
        (args.max_steps >= 1, "--max-steps must be at least 1"),
        (args.c_puct > 0, "--c-puct must be positive"),
        (1 <= args.min_len <= args.max_len, "--min-len must be between 1 and --max-len"),
        (
            1 <= args.min_dist <= args.max_dist <= MAX_DISTANCE,
            f"--min-dist and --max-dist must satisfy 1 <= min <= max <= {MAX_DISTANCE}",
        ),
        (not (args.by_distance and args.scrambles), "--by-distance and --scrambles are different modes: give one"),
        (args.out is None or args.scrambles is not None or args.uniform, "--out is for --scrambles and --uniform"),
    ]
    for ok, message in more_checks + checks:
        if not ok:
            p.error(message)


def main(argv=None) -> int:
    if Go_Args.wants_go(argv):  # a Go board: its matches (Go_Match.py)
        return Go_Match.match_main(argv)
    args = parse_args(argv)
    progress = show_progress(args.progress)
    start = time.perf_counter()
    try:
        # Check the scramble file before loading anything: a typo fails fast.
        scrambles = read_scramble_file(args.scrambles) if args.scrambles else None
        _check_output_locations(args)  # ... and where results go: a run must not end in a failed write
        evaluator = ScrambleEvaluator(
            args.checkpoint,
            args.device,
            args.runs,
            args.log_dir,
            args.seed,
            c_puct=args.c_puct,
            solver=args.solver,
            solver_options=options_from_args(args),
            workers=Workers.from_args(args),
            puzzle=args.puzzle,
        )
    except (CheckpointError, DeviceError, ScrambleFileError, OutputError, Workers.WorkerError) as exc:
        return fail(exc)
    if evaluator.model is not None:
        print(f"Loaded model {evaluator.model_path} on {evaluator.device}.")
    else:
        print(f"Solver {args.solver} needs no model.")
    search = _search_text(args, evaluator)
    if args.all_positions:
        try:
            _report_all_positions(args, evaluator, search, progress)
        except AllPositionsError as exc:
            return fail(exc)
        return 0
    if scrambles is not None or args.uniform:
        _report_scrambles(args, evaluator, scrambles, search, progress)
    elif args.by_distance:
        _report_by_distance(args, evaluator, search, progress)
    else:
        _report_scramble_range(args, evaluator, search, progress)
    print(_wall_time_text(args.solver, evaluator.last_run, time.perf_counter() - start))
    return 0


def _check_output_locations(args: argparse.Namespace) -> None:
    """Raises ``OutputError`` when ``--out`` (else ``--log-dir``) cannot be written; removes the
    temporary files an interrupted run left where the results go."""
    if args.out:
        check_writable(args.out)
        remove_stale_temps(os.path.dirname(os.path.realpath(args.out)))  # where its temp files go
    else:
        check_writable(args.log_dir, folder=True)
        remove_stale_temps(args.log_dir)


def _search_text(args: argparse.Namespace, evaluator: ScrambleEvaluator) -> str:
    """How the lines name the search: ``greedy MCTS, 1000 simulations per move, 40 moves max``,
    or the solver and its settings; the puzzle first beside the 2x2."""
    if args.solver == "mcts":
        search = f"greedy MCTS, {args.sims} simulations per move, {args.max_steps} moves max"
    else:
        shown = solver_settings(args.solver, evaluator.options(args.sims, args.max_steps))
        search = f"solver {args.solver}: " + ", ".join(f"{k}={v}" for k, v in shown.items())
    return search if args.puzzle == "2x2" else f"{args.puzzle}, {search}"


def _report_all_positions(args: argparse.Namespace, evaluator: ScrambleEvaluator, search: str, progress) -> None:
    """--all-positions: evaluate, print the table by distance and the overall line, save the chart."""
    data = evaluator.evaluate_all_positions(args.sample, args.sims, args.max_steps, progress, args.limit)
    settings = data["settings"]
    what = "every position" if settings["mode"] == "all" else "a uniform sample plus distances 13-14"
    print(f"Evaluated {settings['positions']:,} positions ({what}; {search}).")
    print(all_positions_table(data["by_distance"]))
    o = data["overall"]
    print(
        f"Overall: solved {o['solved']:,}/{o['positions']:,} ({pct(o['solve_rate'])}); "
        f"mean moves/optimal {cell(o['mean_ratio_to_optimal'])}; {o['seconds']:.1f} s."
    )
    chart = evaluator.plot_all_positions_results()
    print(
        f"Saved {os.path.join(args.log_dir, ALL_POSITIONS_RESULT_FILE)}, {chart} and "
        f"{os.path.join(args.log_dir, ALL_POSITIONS_FAILURES_FILE)} ({o['positions'] - o['solved']:,} unsolved)."
    )


def _report_scrambles(args: argparse.Namespace, evaluator: ScrambleEvaluator, scrambles, search: str, progress):
    """--scrambles FILE or --uniform N: solve, print the first 50 records and the summary, save the JSON."""
    ref = evaluator.puzzle.reference  # "optimal" (2x2) or "kociemba" (3x3): the lengths solutions are measured by
    if args.uniform:
        out = args.out or os.path.join(args.log_dir, UNIFORM_RESULT_FILE)
        print(f"Solving {args.uniform} uniformly random positions ({search}).")
        records = evaluator.solve_uniform(args.uniform, args.sims, args.max_steps, progress)
    else:
        out = args.out or os.path.join(args.log_dir, SCRAMBLES_RESULT_FILE)
        print(f"Solving {len(scrambles)} scrambles from {args.scrambles} ({search}).")
        records = evaluator.solve_scrambles(scrambles, args.sims, args.max_steps, progress)
    shown = records[:50]  # a large test set stays readable: the JSON has everything
    print(scramble_records_table(shown, ref))
    if len(records) > len(shown):
        print(f"... {len(records) - len(shown)} more lines in {out}")
    solved, lengths = np.array([r["solved"] for r in records]), np.array([r["length"] for r in records])
    reference = np.array([r[ref] for r in records])
    stats = (
        summarize(solved, lengths, reference)
        if ref == "optimal"
        else summarize(solved, lengths, None, **{ref: reference})
    )
    print(
        f"Solved {stats['solved']}/{stats['episodes']} ({pct(stats['solve_rate'])}); mean moves {cell(stats['mean_length'])}, "  # noqa: E501
        f"mean moves/{ref} {cell(stats[f'mean_ratio_to_{ref}'])} (solved scrambles)."
    )
    if args.uniform:
        optimal = evaluator.puzzle.uniform_optimal_mean  # the ground truth first, kociemba's lengths beside it
        if optimal is not None and stats["solved"]:
            print(
                f"The optimal mean of uniformly random positions is {optimal} quarter turns: these solutions are "
                f"{stats['mean_length'] / optimal:.3f} times it (of those solved)."
            )
        nodes, seconds = (np.array([r[key] for r in records]) for key in ("nodes", "seconds"))
        print(
            f"Per position: {ref} {cell(stats[f'mean_{ref}'])} moves, {nodes.mean():,.0f} states generated, "
            f"{seconds.mean():.2f} s (at most {seconds.max():.2f} s)."
        )
    write_json(out, records)
    print(f"Saved {out}.")


def _report_by_distance(args: argparse.Namespace, evaluator: ScrambleEvaluator, search: str, progress) -> None:
    """--by-distance: evaluate, print the table and the overall line, save the chart."""
    print(f"Evaluating up to {args.runs} positions at each true distance {args.min_dist}..{args.max_dist} ({search}).")
    data = evaluator.evaluate_by_distance(args.min_dist, args.max_dist, args.sims, args.max_steps, progress)
    print(distance_table(data["by_distance"]))
    o = data["overall"]
    print(
        f"Overall: solved {o['solved']}/{o['episodes']} ({pct(o['solve_rate'])}); mean moves/optimal {cell(o['mean_ratio_to_optimal'])}."  # noqa: E501
    )
    chart = evaluator.plot_distance_results()
    print(f"Saved {os.path.join(args.log_dir, DISTANCE_RESULT_FILE)} and {chart}.")


def _report_scramble_range(args: argparse.Namespace, evaluator: ScrambleEvaluator, search: str, progress) -> None:
    """The original's evaluation by scramble length: evaluate, print the table and the overall line, save the chart."""
    ref = evaluator.puzzle.reference
    print(f"Evaluating {args.runs} scrambles of each length {args.min_len}..{args.max_len} ({search}).")
    results = evaluator.evaluate_scramble_range(args.min_len, args.max_len, args.sims, args.max_steps, progress)
    print(scramble_range_table(results, ref))
    o = evaluator.overall()
    print(
        f"Overall: solved {o['solved']}/{o['episodes']} ({pct(o['solve_rate'])}); mean moves/{ref} {cell(o[f'mean_ratio_to_{ref}'])}."  # noqa: E501
    )
    chart = evaluator.plot_scramble_results()
    print(f"Saved {os.path.join(args.log_dir, SCRAMBLE_RESULT_FILE)} and {chart}.")


def _wall_time_text(solver: str, run: SolverRun, wall: float) -> str:
    """The last line: wall time, and the search's simulations (MCTS, Gumbel) or states generated."""
    if solver in ("mcts", "gumbel"):
        return (
            f"Wall time {wall:.1f} s ({run.simulations:,} simulations in {run.seconds:.1f} s of search, "
            f"{run.simulations / max(run.seconds, 1e-9):,.0f} simulations/s)."
        )
    return (
        f"Wall time {wall:.1f} s ({int(run.nodes.sum()):,} states generated in {run.seconds:.1f} s of search, "
        f"{run.cube_seconds.mean() if len(run.cube_seconds) else 0:.4f} s per cube)."
    )


if __name__ == "__main__":
    Cli.run_script(main)
