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

Beyond the original, every result carries solution lengths measured against the optimal
solution (``Optimal_Solver.py``): ``mean_ratio_to_optimal`` is the mean of
``moves played / optimal moves`` over the solved episodes (1.0 = always optimal).
"""

from __future__ import annotations

import os

if __name__ == "__main__":
    # Only when run as a script (importing this module changes nothing), and before torch
    # is imported. Waiting OpenMP threads go to sleep at once instead of spinning: beside
    # another busy process on the same 2 cores (training, say) spinning made this
    # evaluation 2-3x slower with 2,000 episodes and 10-30x slower with a few, while on an
    # idle machine spinning gains 4-24% (spec, section 8; most with small batches).
    # Export GOMP_SPINCOUNT=10000000 on an idle machine to get that back.
    os.environ.setdefault("GOMP_SPINCOUNT", "0")
    import Cli

    Cli.quiet_interrupts()  # Ctrl-C while torch loads: one line, not a traceback

import argparse  # noqa: E402
import time  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # files only: never needs a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import Cli  # noqa: E402
from Cli import (  # noqa: E402
    C_PUCT,
    EVAL_SIMULATIONS,
    MAX_MOVES,
    DeviceError,
    HelpFormatter,
    add_device_flag,
    fail,
    resolve_device,
    show_progress,
)
from Optimal_Solver import MAX_DISTANCE, get_solver  # noqa: E402
from Plot_Scatter import save_figure  # noqa: E402
from Policy_Value_Net import CheckpointError, eval_mode, load_model  # noqa: E402
from Rubik2x2Env import SOLVED_STICKERS, apply_moves, batch_scramble, format_moves, parse_moves  # noqa: E402
from Run_IO import OutputError, check_writable, find_checkpoint, read_json, remove_stale_temps, write_json  # noqa: E402
from Self_Play import EpisodeResults, play_episodes  # noqa: E402

SCRAMBLE_RESULT_FILE = "eval_scramble_result.json"
SCRAMBLE_CHART_FILE = "eval_bar_chart.png"
DISTANCE_RESULT_FILE = "eval_by_distance.json"
DISTANCE_CHART_FILE = "eval_by_distance.png"
# The original passes temperature 0.3 to its greedy evaluation episodes; greedy play ignores it.
ORIGINAL_EVAL_TEMPERATURE = 0.3


class ScrambleFileError(Exception):
    """A scramble file cannot be used. The message is one sentence naming the bad line(s)."""


# --------------------------------------------------------------------------- statistics
def _mean(values) -> float | None:
    """Mean rounded for the JSON, or None (JSON null) when there is nothing to average."""
    values = np.asarray(values, dtype=np.float64)
    return round(float(values.mean()), 4) if len(values) else None


def summarize(solved: np.ndarray, lengths: np.ndarray, optimal: np.ndarray) -> dict:
    """Statistics of a group of episodes.

    ``mean_length`` averages the moves of the solved episodes only (an unsolved episode
    always stops at the move limit, which says nothing about solution length);
    ``mean_optimal`` averages the true distance of ALL start positions of the group (how
    hard the group really is); ``mean_ratio_to_optimal`` averages ``moves / optimal`` over
    the solved episodes whose start was not already solved (optimal > 0).
    """
    solved = np.asarray(solved, dtype=bool)
    lengths, optimal = np.asarray(lengths), np.asarray(optimal)
    with_ratio = solved & (optimal > 0)
    return {
        "episodes": int(len(solved)),
        "solved": int(solved.sum()),
        "solve_rate": float(solved.mean()) if len(solved) else 0.0,
        "mean_length": _mean(lengths[solved]),
        "mean_optimal": _mean(optimal),
        "mean_ratio_to_optimal": _mean(lengths[with_ratio] / optimal[with_ratio]),
    }


# --------------------------------------------------------------------------- pure evaluations
def play_greedy(
    model,
    start_cubes: np.ndarray,
    num_simulations: int,
    max_episode_steps: int,
    *,
    device,
    seed: int,
    c_puct: float = C_PUCT,
    progress: bool = False,
    desc: str = "eval",
) -> EpisodeResults:
    """Greedy MCTS episodes from all ``start_cubes (E, 24)`` in one lockstep batch."""
    with eval_mode(model):
        return play_episodes(
            model,
            start_cubes,
            max_episode_steps,
            num_simulations,
            select_mode="greedy",
            temperature=ORIGINAL_EVAL_TEMPERATURE,
            rng=np.random.default_rng(seed),
            device=device,
            c_puct=c_puct,
            progress=progress,
            desc=desc,
        )


def scramble_range_cubes(seed: int, n_runs: int, min_len: int, max_len: int) -> np.ndarray:
    """``n_runs`` random scrambles of every length ``min_len..max_len`` (the scramble rule of
    training: no move followed by its inverse), drawn from a fresh stream of ``seed``."""
    if not 1 <= min_len <= max_len:
        raise ValueError("scramble lengths must satisfy 1 <= min_len <= max_len")
    rng = np.random.default_rng(seed)
    return np.concatenate([batch_scramble(rng, n_runs, k)[0] for k in range(min_len, max_len + 1)])


def scramble_range_rows(run: EpisodeResults, optimal: np.ndarray, min_len: int, n_runs: int) -> list[dict]:
    """One dict per scramble length of the episodes of ``scramble_range_cubes``: the
    original's keys ``scramble_len`` and ``solve_rate``, then ``summarize``'s."""
    rows = []
    for i in range(len(run.solved) // n_runs):
        group = slice(i * n_runs, (i + 1) * n_runs)
        stats = summarize(run.solved[group], run.lengths[group], optimal[group])
        rows.append({"scramble_len": min_len + i, "solve_rate": stats.pop("solve_rate"), **stats})
    return rows


def distance_cubes(seed: int, n_runs: int, min_dist: int, max_dist: int) -> tuple[np.ndarray, np.ndarray]:
    """``min(n_runs, positions at d)`` distinct uniformly drawn positions at every true
    distance ``d`` in ``min_dist..max_dist``: the cubes and their distances."""
    if not 1 <= min_dist <= max_dist <= MAX_DISTANCE:
        raise ValueError(f"distances must satisfy 1 <= min_dist <= max_dist <= {MAX_DISTANCE}")
    solver = get_solver()
    rng = np.random.default_rng(seed)
    distances = list(range(min_dist, max_dist + 1))
    counts = [min(n_runs, solver.count_at_distance(d)) for d in distances]
    cubes = np.concatenate([solver.random_cubes_at_distance(rng, d, n) for d, n in zip(distances, counts)])
    return cubes, np.repeat(distances, counts)


def distance_rows(run: EpisodeResults, optimal: np.ndarray) -> list[dict]:
    """One dict per true distance of the episodes of ``distance_cubes``."""
    solver = get_solver()
    rows = []
    for d in np.unique(optimal).tolist():
        group = optimal == d
        stats = summarize(run.solved[group], run.lengths[group], optimal[group])
        del stats["mean_optimal"]  # it is d itself
        rows.append({"distance": d, "positions": solver.count_at_distance(d), **stats})
    return rows


def scramble_file_records(
    run: EpisodeResults, scrambles: list[tuple[int, str, list[int]]], optimal: np.ndarray
) -> list[dict]:
    """A dict per scramble of a file: ``line, scramble, solution, solved, length, optimal``."""
    return [
        {
            "line": line,
            "scramble": text,
            "solution": format_moves(actions),
            "solved": bool(solved),
            "length": len(actions),
            "optimal": int(opt),
        }
        for (line, text, _), actions, solved, opt in zip(scrambles, run.actions, run.solved, optimal)
    ]


def search_settings(runs: int, num_simulations: int, max_episode_steps: int, **more) -> dict:
    """The settings of an evaluation, under the key names its JSON stores them."""
    return {
        "runs_per_distance": runs,
        "num_simulations": num_simulations,
        "max_episode_steps": max_episode_steps,
        **more,
    }


def plot_rate_and_ratio(path: str, xs, rows, xlabel: str, color: str, title: str, overall_ratio=None) -> str:
    """Two panels saved as ``path``: solve rate (%) and mean length/optimal of ``rows`` against ``xs``."""
    fig, (ax_rate, ax_ratio) = plt.subplots(1, 2, figsize=(13, 4.8))
    _bars(ax_rate, xs, [100 * r["solve_rate"] for r in rows], color, "{:.0f}")
    ax_rate.set_ylim(0, 109)
    ax_rate.set_xlabel(xlabel)
    ax_rate.set_ylabel("solve rate (%)")
    ax_rate.set_title(title)
    _ratio_panel(ax_ratio, xs, [r.get("mean_ratio_to_optimal") for r in rows], xlabel)
    if overall_ratio is not None:
        ax_ratio.set_title(f"Solution length / optimal (solved episodes; overall {overall_ratio:.2f})")
    fig.tight_layout()
    save_figure(fig, path)
    return path


def plot_scramble_rows(path: str, rows: list[dict], settings: dict | None = None) -> str:
    """The original's bar chart of solve rate (%) by scramble length, beside the mean
    length/optimal ratio of the solved episodes."""
    return plot_rate_and_ratio(
        path,
        [r["scramble_len"] for r in rows],
        rows,
        "scramble length (random moves)",
        "tab:blue",
        "Solve rate by scramble length" + _settings_text(settings),
    )


def plot_distance_data(path: str, data: dict, show_settings: bool = True) -> str:
    """Solve rate (%) and mean length/optimal by true distance, from ``evaluate_by_distance``'s data."""
    rows = data["by_distance"]
    return plot_rate_and_ratio(
        path,
        [r["distance"] for r in rows],
        rows,
        "true distance (optimal quarter turns)",
        "tab:green",
        "Solve rate by true distance"
        + _settings_text(data["settings"] if show_settings else None, "positions at most per distance"),
        data["overall"].get("mean_ratio_to_optimal"),
    )


# --------------------------------------------------------------------------- the evaluator
class ScrambleEvaluator:
    """The original's evaluator: greedy MCTS episodes from random scrambles, JSON and charts.
    Its methods keep the original's names over the pure functions above.

    ``model_path`` None means the usual lookup (``./rubik_policy_value.pt``, else
    ``pretrained/rubik_policy_value.pt``); ``model`` passes an in-memory network instead
    (``main.py`` does so after training). Raises ``CheckpointError`` or ``DeviceError`` (one
    sentence) when no usable model or device is found. Scrambles and sampled positions are
    drawn from ``seed``, so the same seed evaluates the same cubes.
    """

    def __init__(
        self, model_path=None, device="auto", n_runs=100, log_dir="training_logs", seed=0, model=None, c_puct=C_PUCT
    ):
        if n_runs < 1:
            raise ValueError("n_runs must be at least 1")
        if model is not None:
            # The search must run where the weights are: use the model's own device rather
            # than moving the caller's model.
            self.model = model
            self.device = next(model.parameters()).device
            self.model_path = None
        else:
            self.device = device if isinstance(device, torch.device) else resolve_device(device or "auto")
            self.model_path = find_checkpoint(model_path)
            self.model = load_model(self.model_path, self.device)
        self.n_runs = int(n_runs)
        self.log_dir = log_dir
        self.seed = int(seed)
        self.c_puct = float(c_puct)
        self.results: list[dict] | None = None  # rows of the latest evaluate_scramble_range
        self.distance_results: dict | None = None  # data of the latest evaluate_by_distance
        self.settings: dict | None = None  # search_settings of the latest evaluate_scramble_range (its JSON has none)
        self.last_run: EpisodeResults | None = None  # the raw episodes of the latest call

    def play(
        self,
        start_cubes: np.ndarray,
        num_simulations: int,
        max_episode_steps: int,
        progress: bool = False,
        desc: str = "eval",
    ) -> EpisodeResults:
        """``play_greedy`` with this evaluator's model, device, seed and c_puct."""
        self.last_run = play_greedy(
            self.model,
            start_cubes,
            num_simulations,
            max_episode_steps,
            device=self.device,
            seed=self.seed,
            c_puct=self.c_puct,
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
        ``mean_length``, ``mean_optimal`` and ``mean_ratio_to_optimal`` (see ``summarize``).
        """
        cubes = scramble_range_cubes(self.seed, self.n_runs, min_len, max_len)
        run = self.play(cubes, num_simulations, max_episode_steps, progress, desc=f"eval lengths {min_len}-{max_len}")
        self.results = scramble_range_rows(run, get_solver().batch_distance(cubes), min_len, self.n_runs)
        self.settings = search_settings(self.n_runs, num_simulations, max_episode_steps)
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
        cubes, optimal = distance_cubes(self.seed, self.n_runs, min_dist, max_dist)
        run = self.play(
            cubes, num_simulations, max_episode_steps, progress, desc=f"eval distances {min_dist}-{max_dist}"
        )
        self.distance_results = {
            "settings": search_settings(
                self.n_runs, num_simulations, max_episode_steps, seed=self.seed, checkpoint=self.model_path
            ),
            "by_distance": distance_rows(run, optimal),
            "overall": summarize(run.solved, run.lengths, optimal),
        }
        write_json(os.path.join(self.log_dir, DISTANCE_RESULT_FILE), self.distance_results)
        return self.distance_results

    def plot_distance_results(self, filename: str = DISTANCE_CHART_FILE) -> str:
        """``plot_distance_data`` of the latest results, else of the saved JSON. Returns the PNG path."""
        fresh = self.distance_results is not None
        data = self.distance_results if fresh else self._load(DISTANCE_RESULT_FILE)
        return plot_distance_data(os.path.join(self.log_dir, filename), data, show_settings=fresh)

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
        cubes = np.stack([apply_moves(SOLVED_STICKERS, moves) for _, _, moves in scrambles])
        run = self.play(cubes, num_simulations, max_episode_steps, progress, desc="eval scramble file")
        return scramble_file_records(run, scrambles, get_solver().batch_distance(cubes))

    def overall(self) -> dict:
        """``summarize`` of every episode of the latest call."""
        run = self.last_run
        return summarize(run.solved, run.lengths, get_solver().batch_distance(run.start_cubes))

    def _load(self, filename: str):
        path = os.path.join(self.log_dir, filename)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path} does not exist: run the evaluation first.")
        return read_json(path)


# --------------------------------------------------------------------------- chart helpers
def _settings_text(settings: dict | None, each: str = "episodes each") -> str:
    if not settings:
        return ""
    return (
        f"\n({settings['runs_per_distance']} {each}, greedy MCTS {settings['num_simulations']} sims, "
        f"{settings['max_episode_steps']} moves max)"
    )


def _bars(ax, xs, ys, color, label_format, all_xs=None) -> None:
    bars = ax.bar(xs, ys, color=color, alpha=0.85)
    ax.bar_label(bars, labels=[label_format.format(y) for y in ys], fontsize=7, padding=1)
    all_xs = xs if all_xs is None else all_xs
    ax.set_xticks(all_xs)
    ax.set_xlim(min(all_xs) - 0.6, max(all_xs) + 0.6)  # both panels share the x range
    ax.grid(axis="y", alpha=0.3)


def _ratio_panel(ax, xs, ratios, xlabel: str) -> None:
    """Mean solution length / optimal length; a missing value (nothing solved) is no bar."""
    present = [(x, r) for x, r in zip(xs, ratios) if r is not None]
    if present:
        _bars(ax, [x for x, _ in present], [r for _, r in present], "tab:orange", "{:.2f}", all_xs=xs)
        ax.set_ylim(0, max(1.2, 1.12 * max(r for _, r in present)))
    else:
        ax.text(0.5, 0.5, "no solved episodes (or no length data)", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks(xs)
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="optimal")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("moves played / optimal moves")
    ax.set_title("Solution length / optimal (solved episodes)")
    ax.legend(loc="lower right")


# --------------------------------------------------------------------------- scramble files
def read_scramble_file(path: str) -> list[tuple[int, str, list[int]]]:
    """``(line number, text, actions)`` for each scramble line of ``path``.

    Blank lines and lines starting with ``#`` are skipped. Every line is checked before
    anything runs; unknown moves raise ``ScrambleFileError`` naming the line(s).
    """
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ScrambleFileError(f"cannot read the scramble file '{path}' ({exc.__class__.__name__}: {exc}).") from None
    scrambles, bad = [], []
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            scrambles.append((number, text, parse_moves(text)))
        except ValueError as exc:
            bad.append((number, str(exc)))
    if bad:
        first_line, first_error = bad[0]
        also = (
            f" (also line{'s' if len(bad) > 2 else ''} {', '.join(str(n) for n, _ in bad[1:])})" if len(bad) > 1 else ""
        )
        raise ScrambleFileError(f"{path} line {first_line}: {first_error}{also}.")
    if not scrambles:
        raise ScrambleFileError(f"{path} holds no scrambles (blank lines and # comments are skipped).")
    return scrambles


# --------------------------------------------------------------------------- tables
def format_table(headers: list[str], rows: list[list], left: tuple[int, ...] = ()) -> str:
    """A plain text table: columns right-aligned except those in ``left`` (move strings)."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values) -> str:
        return "  ".join(
            v.ljust(w) if i in left else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _pct(rate: float) -> str:
    return f"{100 * rate:.1f}%"


# --------------------------------------------------------------------------- command line
def parse_args(argv=None) -> argparse.Namespace:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    g = p.add_argument_group("what to evaluate (defaults = the original project)")
    g.add_argument("--min-len", type=Cli.scramble_len, default=1, help="shortest scramble length evaluated")
    g.add_argument("--max-len", type=Cli.scramble_len, default=20, help="longest scramble length evaluated")
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
    g.add_argument("--min-dist", type=int, default=1, help="smallest true distance with --by-distance")
    g.add_argument(
        "--max-dist",
        type=int,
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
        "--out",
        type=Cli.nonempty_path,
        metavar="OUT.json",
        help="results of --scrambles (default: <log-dir>/eval_scrambles.json)",
    )
    g = p.add_argument_group("search")
    g.add_argument("--sims", type=Cli.simulations, default=EVAL_SIMULATIONS, help="MCTS simulations per move")
    g.add_argument(
        "--max-steps",
        type=Cli.move_limit,
        default=MAX_MOVES,
        help="moves allowed per episode before it counts as unsolved",
    )
    g.add_argument("--c-puct", type=Cli.positive_float, default=C_PUCT, help="PUCT exploration constant")
    g = p.add_argument_group("run")
    g.add_argument(
        "--seed", type=Cli.seed, default=0, help="seed of the scrambles / sampled positions (same seed, same cubes)"
    )
    g.add_argument(
        "--checkpoint",
        type=Cli.nonempty_path,
        help="model file (default: ./rubik_policy_value.pt, else pretrained/rubik_policy_value.pt)",
    )
    add_device_flag(g)
    g.add_argument(
        "--log-dir", type=Cli.nonempty_path, default="training_logs", help="folder of the result JSON files and charts"
    )
    g.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: when stderr is a terminal)",
    )
    args = p.parse_args(argv)
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
        (args.out is None or args.scrambles is not None, "--out is for --scrambles"),
    ]
    for ok, message in checks:
        if not ok:
            p.error(message)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    progress = show_progress(args.progress)
    start = time.perf_counter()
    try:
        # Check the scramble file before loading anything: a typo fails fast.
        scrambles = read_scramble_file(args.scrambles) if args.scrambles else None
        # ... and the output locations: a run must not end in a failed write.
        if args.out:
            check_writable(args.out)
            remove_stale_temps(os.path.dirname(os.path.abspath(args.out)))
        else:
            check_writable(args.log_dir, folder=True)
            remove_stale_temps(args.log_dir)
        evaluator = ScrambleEvaluator(
            args.checkpoint, args.device, args.runs, args.log_dir, args.seed, c_puct=args.c_puct
        )
    except (CheckpointError, DeviceError, ScrambleFileError, OutputError) as exc:
        return fail(exc)
    print(f"Loaded model {evaluator.model_path} on {evaluator.device}.")
    search = f"greedy MCTS, {args.sims} simulations per move, {args.max_steps} moves max"

    if scrambles is not None:
        out = args.out or os.path.join(args.log_dir, "eval_scrambles.json")
        print(f"Solving {len(scrambles)} scrambles from {args.scrambles} ({search}).")
        records = evaluator.solve_scrambles(scrambles, args.sims, args.max_steps, progress)
        shown = records[:50]  # a large test set stays readable: the JSON has everything
        print(
            format_table(
                ["line", "scramble", "solved", "moves", "optimal", "solution"],
                [
                    [
                        r["line"],
                        r["scramble"],
                        "yes" if r["solved"] else "no",
                        r["length"],
                        r["optimal"],
                        r["solution"] or "(none)",
                    ]
                    for r in shown
                ],
                left=(1, 5),
            )
        )
        if len(records) > len(shown):
            print(f"... {len(records) - len(shown)} more lines in {out}")
        stats = summarize(
            np.array([r["solved"] for r in records]),
            np.array([r["length"] for r in records]),
            np.array([r["optimal"] for r in records]),
        )
        print(
            f"Solved {stats['solved']}/{stats['episodes']} ({_pct(stats['solve_rate'])}); mean moves {_cell(stats['mean_length'])}, "  # noqa: E501
            f"mean moves/optimal {_cell(stats['mean_ratio_to_optimal'])} (solved scrambles)."
        )
        write_json(out, records)
        print(f"Saved {out}.")
    elif args.by_distance:
        print(
            f"Evaluating up to {args.runs} positions at each true distance {args.min_dist}..{args.max_dist} ({search})."
        )
        data = evaluator.evaluate_by_distance(args.min_dist, args.max_dist, args.sims, args.max_steps, progress)
        print(
            format_table(
                ["distance", "positions", "episodes", "solved", "solve rate", "mean moves", "moves/optimal"],
                [
                    [
                        r["distance"],
                        r["positions"],
                        r["episodes"],
                        r["solved"],
                        _pct(r["solve_rate"]),
                        r["mean_length"],
                        r["mean_ratio_to_optimal"],
                    ]
                    for r in data["by_distance"]
                ],
            )
        )
        o = data["overall"]
        print(
            f"Overall: solved {o['solved']}/{o['episodes']} ({_pct(o['solve_rate'])}); mean moves/optimal {_cell(o['mean_ratio_to_optimal'])}."  # noqa: E501
        )
        chart = evaluator.plot_distance_results()
        print(f"Saved {os.path.join(args.log_dir, DISTANCE_RESULT_FILE)} and {chart}.")
    else:
        print(f"Evaluating {args.runs} scrambles of each length {args.min_len}..{args.max_len} ({search}).")
        results = evaluator.evaluate_scramble_range(args.min_len, args.max_len, args.sims, args.max_steps, progress)
        print(
            format_table(
                ["scramble len", "episodes", "solved", "solve rate", "mean moves", "mean optimal", "moves/optimal"],
                [
                    [
                        r["scramble_len"],
                        r["episodes"],
                        r["solved"],
                        _pct(r["solve_rate"]),
                        r["mean_length"],
                        r["mean_optimal"],
                        r["mean_ratio_to_optimal"],
                    ]
                    for r in results
                ],
            )
        )
        o = evaluator.overall()
        print(
            f"Overall: solved {o['solved']}/{o['episodes']} ({_pct(o['solve_rate'])}); mean moves/optimal {_cell(o['mean_ratio_to_optimal'])}."  # noqa: E501
        )
        chart = evaluator.plot_scramble_results()
        print(f"Saved {os.path.join(args.log_dir, SCRAMBLE_RESULT_FILE)} and {chart}.")

    run = evaluator.last_run
    wall = time.perf_counter() - start
    print(
        f"Wall time {wall:.1f} s ({run.simulations:,} simulations in {run.seconds:.1f} s of search, "
        f"{run.simulations / max(run.seconds, 1e-9):,.0f} simulations/s)."
    )
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
