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
beam of 1,000 of docs/puzzles.md, ``Puzzle.default_solver``) picks how cubes are
solved in every mode: ``greedy``, ``beam``, ``astar``, ``bestfirst`` (no network needed) or
``gumbel`` (see ``Solvers.py``). Every solve is checked by replaying its moves, and every
result also reports the states each solver generated (``mean_nodes``; MCTS: simulations)
and its seconds per cube (``mean_seconds``).

Beyond the original, every result carries solution lengths measured against the optimal
solution (``Optimal_Solver.py``): ``mean_ratio_to_optimal`` is the mean of
``moves played / optimal moves`` over the solved episodes (1.0 = always optimal).

``--puzzle 3x3`` evaluates the 3x3 (``Puzzles.py``) by scramble length (1..26 by default), on
a scramble file, or with ``--uniform N`` on N uniformly random positions, with ``--solver``
greedy, beam, astar or bestfirst and the model ``rubik3x3_policy_value.pt`` (or
``--checkpoint``); results go to ``training_logs_3x3/`` unless ``--log-dir`` says otherwise.
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
import dataclasses  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # files only: never needs a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import Cli  # noqa: E402
import Workers  # noqa: E402
from Cli import (  # noqa: E402
    C_PUCT,
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
from Optimal_Solver import MAX_DISTANCE, NUM_STATES, get_solver  # noqa: E402
from Plot_Scatter import save_figure  # noqa: E402
from Policy_Value_Net import CheckpointError, load_model  # noqa: E402
from Puzzles import Puzzle, add_puzzle_flag, get_puzzle  # noqa: E402
from Rubik2x2Env import (  # noqa: E402
    MOVE_PERMS,
    NUM_ACTIONS,
    NUM_STICKERS,
    format_moves,
    parse_moves,
)
from Run_IO import OutputError, atomic_write, check_writable, find_checkpoint, read_json, remove_stale_temps, write_json  # noqa: E402,E501
from Self_Play import EpisodeResults, play_greedy  # noqa: E402
from Solvers import (  # noqa: E402
    NETWORK_SOLVERS,
    SolverOptions,
    SolverRun,
    add_solver_arguments,
    check_network,
    network_fns,
    options_from_args,
    resolve_solver,
    solve_cubes,
    solver_puzzle_problem,
    solver_settings,
    verify_batch,
)

SCRAMBLE_RESULT_FILE = "eval_scramble_result.json"
UNIFORM_RESULT_FILE = "eval_uniform.json"
SCRAMBLE_CHART_FILE = "eval_bar_chart.png"
DISTANCE_RESULT_FILE = "eval_by_distance.json"
DISTANCE_CHART_FILE = "eval_by_distance.png"
ALL_POSITIONS_RESULT_FILE = "eval_all_positions.json"
ALL_POSITIONS_CHART_FILE = "eval_all_positions.png"
ALL_POSITIONS_FAILURES_FILE = "all_positions_failures.jsonl"
ALL_POSITIONS_SAMPLE = 100_000  # uniform positions of --all-positions with a solver other than greedy
FAR_DISTANCE = 13  # ... plus every position at this distance or more (90,556 positions)
LOCKSTEP_SOLVERS = ("mcts", "greedy", "gumbel")  # advance many cubes at once: one call per batch
SEARCH_CHUNK = 1024  # cubes per lockstep tree search (mcts, gumbel) in --all-positions: bounds memory


class ScrambleFileError(Exception):
    """A scramble file cannot be used. The message is one sentence naming the bad line(s)."""


class AllPositionsError(Exception):
    """``--all-positions`` cannot run as asked. The message is one sentence."""


def replay_solved(start_cubes: np.ndarray, actions: list[list[int]], puzzle: Puzzle | str | None = None) -> np.ndarray:
    """``(n,)`` bool: replaying each move list from its start cube solves it."""
    lengths = np.array([len(a) for a in actions], dtype=np.int64)
    moves = np.zeros((len(actions), max(int(lengths.max(initial=0)), 1)), np.int64)
    for i, a in enumerate(actions):
        moves[i, : len(a)] = a
    return verify_batch(start_cubes, moves, lengths, puzzle)


def concat_runs(runs: list[SolverRun]) -> SolverRun:
    """One ``SolverRun`` of several played one after another (cubes in order)."""
    return SolverRun(
        start_cubes=np.concatenate([r.start_cubes for r in runs]),
        actions=[a for r in runs for a in r.actions],
        solved=np.concatenate([r.solved for r in runs]),
        simulations=sum(r.simulations for r in runs),
        seconds=sum(r.seconds for r in runs),
        network_states=sum(r.network_states for r in runs),
        solver=runs[0].solver,
        nodes=np.concatenate([r.nodes for r in runs]),
        cube_seconds=np.concatenate([r.cube_seconds for r in runs]),
    )


# --------------------------------------------------------------------------- statistics
def _mean(values) -> float | None:
    """Mean rounded for the JSON, or None (JSON null) when there is nothing to average."""
    values = np.asarray(values, dtype=np.float64)
    return round(float(values.mean()), 4) if len(values) else None


def summarize(
    solved: np.ndarray, lengths: np.ndarray, optimal: np.ndarray | None, nodes=None, seconds=None, kociemba=None
) -> dict:
    """Statistics of a group of episodes.

    ``mean_length`` averages the moves of the solved episodes only (an unsolved episode
    always stops at the move limit, which says nothing about solution length);
    ``mean_optimal`` averages the true distance of ALL start positions of the group (how
    hard the group really is); ``mean_ratio_to_optimal`` averages ``moves / optimal`` over
    the solved episodes whose start was not already solved (optimal > 0). With ``nodes``
    and ``seconds`` (per episode) also ``mean_nodes`` and ``mean_seconds`` over ALL episodes.
    ``optimal`` None (the 3x3: unknown): both optimal statistics are None; then ``kociemba``
    (the reference solutions' quarter-turn lengths) gives ``mean_kociemba`` and
    ``mean_ratio_to_kociemba`` the same way.
    """
    solved = np.asarray(solved, dtype=bool)
    lengths = np.asarray(lengths)
    stats = {
        "episodes": int(len(solved)),
        "solved": int(solved.sum()),
        "solve_rate": float(solved.mean()) if len(solved) else 0.0,
        "mean_length": _mean(lengths[solved]),
        **_reference_stats("optimal", solved, lengths, optimal),
    }
    if kociemba is not None:
        stats.update(_reference_stats("kociemba", solved, lengths, kociemba))
    stats.update(_cost_stats(nodes, seconds))
    return stats


def _reference_stats(name: str, solved: np.ndarray, lengths: np.ndarray, reference) -> dict:
    """``mean_<name>`` over all episodes and ``mean_ratio_to_<name>`` over the solved ones whose
    reference length is above 0 (None for both when the reference is unknown)."""
    if reference is None:
        return {f"mean_{name}": None, f"mean_ratio_to_{name}": None}
    reference = np.asarray(reference)
    with_ratio = solved & (reference > 0)
    return {
        f"mean_{name}": _mean(reference),
        f"mean_ratio_to_{name}": _mean(lengths[with_ratio] / reference[with_ratio]),
    }


def _cost_stats(nodes=None, seconds=None) -> dict:
    """``mean_nodes`` and ``mean_seconds`` per cube (those given)."""
    out = {}
    if nodes is not None:
        out["mean_nodes"] = round(float(np.mean(nodes)), 2) if len(nodes) else None
    if seconds is not None:
        out["mean_seconds"] = round(float(np.mean(seconds)), 6) if len(seconds) else None
    return out


def _run_costs(run, group=slice(None)) -> tuple:
    """The per-cube nodes and seconds of ``run`` (a ``SolverRun``) in ``group``, else Nones."""
    if not isinstance(run, SolverRun):
        return None, None
    return run.nodes[group], run.cube_seconds[group]


# --------------------------------------------------------------------------- pure evaluations


def scramble_range_cubes(
    seed: int, n_runs: int, min_len: int, max_len: int, puzzle: Puzzle | str | None = None
) -> np.ndarray:
    """``n_runs`` random scrambles of every length ``min_len..max_len`` (the scramble rule of
    training: no move followed by its inverse), drawn from a fresh stream of ``seed``."""
    if not 1 <= min_len <= max_len:
        raise ValueError("scramble lengths must satisfy 1 <= min_len <= max_len")
    puzzle = get_puzzle(puzzle)
    rng = np.random.default_rng(seed)
    return np.concatenate([puzzle.scramble(rng, n_runs, k)[0] for k in range(min_len, max_len + 1)])


def _group(values, group):
    return None if values is None else values[group]


def scramble_range_rows(
    run: EpisodeResults, optimal: np.ndarray | None, min_len: int, n_runs: int, kociemba=None
) -> list[dict]:
    """One dict per scramble length of the episodes of ``scramble_range_cubes``: the
    original's keys ``scramble_len`` and ``solve_rate``, then ``summarize``'s (``optimal``
    None and ``kociemba`` lengths for the 3x3)."""
    rows = []
    for i in range(len(run.solved) // n_runs):
        group = slice(i * n_runs, (i + 1) * n_runs)
        stats = summarize(
            run.solved[group],
            run.lengths[group],
            _group(optimal, group),
            *_run_costs(run, group),
            kociemba=_group(kociemba, group),
        )
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
        stats = summarize(run.solved[group], run.lengths[group], optimal[group], *_run_costs(run, group))
        del stats["mean_optimal"]  # it is d itself
        rows.append({"distance": d, "positions": solver.count_at_distance(d), **stats})
    return rows


def scramble_file_records(
    run: EpisodeResults, scrambles: list[tuple[int, str, list[int]]], optimal: np.ndarray | None, kociemba=None
) -> list[dict]:
    """A dict per scramble of a file: ``line, scramble, solution, solved, length, optimal``
    (and ``nodes``, ``seconds`` when ``run`` is a ``SolverRun``). ``optimal`` None (the 3x3):
    ``optimal`` is null, and with ``kociemba`` lengths each record has ``kociemba`` too."""
    nodes, seconds = _run_costs(run)
    optimal = [None] * len(scrambles) if optimal is None else [int(opt) for opt in optimal]
    records = [
        {
            "line": line,
            "scramble": text,
            "solution": format_moves(actions),
            "solved": bool(solved),
            "length": len(actions),
            "optimal": opt,
        }
        for (line, text, _), actions, solved, opt in zip(scrambles, run.actions, run.solved, optimal)
    ]
    if kociemba is not None:
        for record, length in zip(records, np.asarray(kociemba).tolist()):
            record["kociemba"] = int(length)
    if nodes is not None:
        for record, n, sec in zip(records, nodes.tolist(), seconds.tolist()):
            record.update(nodes=int(n), seconds=round(float(sec), 6))
    return records


def search_settings(runs: int, num_simulations: int, max_episode_steps: int, **more) -> dict:
    """The settings of an evaluation, under the key names its JSON stores them."""
    return {
        "runs_per_distance": runs,
        "num_simulations": num_simulations,
        "max_episode_steps": max_episode_steps,
        **more,
    }


# --------------------------------------------------------------------------- every position
def all_positions_sample(seed: int, sample: int, limit: int | None = None) -> np.ndarray:
    """Sorted distinct position indices: ``sample`` drawn uniformly (without replacement)
    from ``seed``, plus every position at distance 13 or 14 (``limit``: at most that many of
    those, drawn uniformly; 0 = the uniform sample alone)."""
    rng = np.random.default_rng(seed)
    uniform = rng.choice(NUM_STATES, size=min(sample, NUM_STATES), replace=False)
    far = np.flatnonzero(get_solver().table >= FAR_DISTANCE)
    if limit is not None and limit < len(far):
        far = rng.choice(far, size=limit, replace=False)
    return np.union1d(uniform, far)


def optimal_solutions(cubes: np.ndarray) -> list[list[int]]:
    """An optimal solution of every cube, as ``OptimalSolver.solve`` finds it (at each step
    the lowest action one move closer), for many cubes at once."""
    solver = get_solver()
    cubes = np.array(cubes, dtype=np.int8).reshape(-1, NUM_STICKERS)
    distance = solver.batch_distance(cubes)
    solutions: list[list[int]] = [[] for _ in range(len(cubes))]
    while (rows := np.flatnonzero(distance > 0)).size:
        children = cubes[rows][:, MOVE_PERMS]  # [k, 12, 24]
        closer = solver.batch_distance(children.reshape(-1, NUM_STICKERS)).reshape(-1, NUM_ACTIONS)
        action = np.argmax(closer == distance[rows, None] - 1, axis=1)
        for r, a in zip(rows.tolist(), action.tolist()):
            solutions[r].append(a)
        cubes[rows] = children[np.arange(len(rows)), action]
        distance[rows] -= 1
    return solutions


def optimal_scrambles(cubes: np.ndarray) -> list[str]:
    """A shortest scramble that makes each cube from the solved one: the inverse of an
    optimal solution (moves reversed, each inverted: action ``a ^ 1``)."""
    return [format_moves([a ^ 1 for a in reversed(sol)]) for sol in optimal_solutions(cubes)]


def failure_records(index: np.ndarray, moves: list[list[int]]) -> list[dict]:
    """One dict per unsolved position: ``index``, ``stickers`` (the D-L-B-home cube the solver
    started from), ``distance``, ``scramble`` (optimal length, makes that cube from solved) and
    ``moves`` (what the solver played)."""
    from All_Positions import cubes_at

    index = np.asarray(index, dtype=np.int64)
    cubes = cubes_at(index)
    distance = get_solver().table[index]
    return [
        {
            "index": int(i),
            "stickers": cube.tolist(),
            "distance": int(d),
            "scramble": scramble,
            "moves": format_moves(m),
        }
        for i, cube, d, scramble, m in zip(index.tolist(), cubes, distance.tolist(), optimal_scrambles(cubes), moves)
    ]


def all_positions_rows(index, solved, lengths, values=None, nodes=None, seconds=None) -> list[dict]:
    """``All_Positions.report_by_distance`` of the positions ``index``, each row also giving
    ``positions_at_distance`` (how many exist) and, when given, ``mean_nodes`` and ``mean_seconds``."""
    from All_Positions import report_by_distance

    solver = get_solver()
    distance = solver.table[np.asarray(index, dtype=np.int64)].astype(np.int64)
    rows = report_by_distance(distance, np.asarray(solved, bool), np.asarray(lengths), values)
    for row in rows:
        row["positions_at_distance"] = solver.count_at_distance(row["distance"])
        at = distance == row["distance"]
        row.update(_cost_stats(None if nodes is None else nodes[at], None if seconds is None else seconds[at]))
    return rows


def all_positions_overall(index, solved, lengths) -> dict:
    """Positions, solved, solve rate and mean moves/optimal over every position evaluated."""
    distance = get_solver().table[np.asarray(index, dtype=np.int64)].astype(np.int64)
    solved, lengths = np.asarray(solved, bool), np.asarray(lengths)
    ok = solved & (distance > 0)
    return {
        "positions": int(len(solved)),
        "solved": int(solved.sum()),
        "solve_rate": float(solved.mean()) if len(solved) else 0.0,
        "mean_ratio_to_optimal": _mean(lengths[ok] / distance[ok]),
    }


def greedy_every_position(
    model, *, start=None, max_moves: int = MAX_MOVES, device=None, progress: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[list[int]]]:
    """The greedy solver from every position (``start``: only those indices, for tests) at table
    speed (``All_Positions.greedy_all``): ``(index, solved, lengths, values, failed_moves)``
    with the network's value of each start position and the moves played from each unsolved
    one (in order). All positions: the network's value of every position is read once into a
    table; a few: the values are read as the games need them. Needs an orientation-invariant
    network (``model.canonical``)."""
    from tqdm.auto import tqdm

    from All_Positions import _CHUNK, cubes_at, greedy_all, network_value_table

    if not getattr(model, "canonical", False):
        raise AllPositionsError(
            "--all-positions with --solver greedy reads one value per position, which needs an "
            "orientation-invariant network (main.py --canonical-orientation or --canonical-symmetry); "
            "pass --sample N to evaluate a uniform sample with this one instead."
        )
    if start is None:
        index = np.arange(NUM_STATES)
        table = network_value_table(model, device, progress=progress)
        values, value_of = table, table
    else:
        index = np.asarray(start, dtype=np.int64)
        value_fn, _ = network_fns(model, device)

        def value_of(idx: np.ndarray) -> np.ndarray:
            idx = np.asarray(idx)
            return value_fn(cubes_at(idx.ravel())).astype(np.float64).reshape(idx.shape)

        values = value_of(index)
    solved, lengths = np.zeros(len(index), bool), np.zeros(len(index), np.int64)
    for lo in tqdm(range(0, len(index), _CHUNK), desc="greedy", unit="chunk", leave=False, disable=not progress):
        part = slice(lo, lo + _CHUNK)
        solved[part], lengths[part], _ = greedy_all(value_of, index[part], max_moves)
    # The failures again, moves recorded (few, unless the network is poor).
    failed_moves = []
    failed = index[~solved]
    for lo in range(0, len(failed), _CHUNK):
        _, played, moves = greedy_all(value_of, failed[lo : lo + _CHUNK], max_moves, record_moves=True)
        failed_moves += [m[:k].tolist() for m, k in zip(moves, played)]
    return index, solved, lengths, np.asarray(values, np.float64), failed_moves


def write_jsonl(path: str, records: list[dict]) -> None:
    """One JSON object per line, written atomically."""
    atomic_write(path, lambda f: f.write("".join(json.dumps(r) + "\n" for r in records).encode()), mode="wb")


def plot_all_positions(path: str, data: dict) -> str:
    """Three panels by true distance: solve rate (%), moves/optimal of the solved positions, and
    the network's value read as moves against the true distance (mean; share within 0.5)."""
    rows = [r for r in data["by_distance"] if r["distance"] > 0]
    xs = [r["distance"] for r in rows]
    fig, (ax_rate, ax_ratio, ax_value) = plt.subplots(1, 3, figsize=(18, 4.8))
    settings = data["settings"]
    _bars(ax_rate, xs, [100 * r["solve_rate"] for r in rows], "tab:green", "{:.1f}")
    ax_rate.set_ylim(0, 109)
    ax_rate.set_xlabel("true distance (optimal quarter turns)")
    ax_rate.set_ylabel("solve rate (%)")
    what = "every position" if settings["mode"] == "all" else f"{settings['positions']:,} positions"
    ax_rate.set_title(f"Solve rate by true distance\n({what}, {settings['solver']} solver)")
    _ratio_panel(ax_ratio, xs, [r.get("mean_ratio_to_optimal") for r in rows], "true distance (optimal quarter turns)")
    with_value = [r for r in rows if "value_moves_mean" in r]
    if with_value:
        d = [r["distance"] for r in with_value]
        ax_value.plot(d, [r["value_moves_mean"] for r in with_value], "o-", color="tab:purple", label="mean")
        ax_value.plot(d, d, "--", color="black", linewidth=1, label="exact")
        for r in with_value:
            ax_value.annotate(
                f"{100 * r['value_within_half_move']:.0f}%",
                (r["distance"], r["value_moves_mean"]),
                textcoords="offset points",
                xytext=(0, 6),
                ha="center",
                fontsize=7,
            )
        ax_value.set_xticks(xs)
        ax_value.legend(loc="upper left")
        ax_value.grid(alpha=0.3)
    else:
        ax_value.text(0.5, 0.5, "no network values", ha="center", va="center", transform=ax_value.transAxes)
    ax_value.set_xlabel("true distance (optimal quarter turns)")
    ax_value.set_ylabel("value read as moves, (1 - v) / 0.03")
    ax_value.set_title("Value as moves (labels: share within 0.5 of the truth)")
    fig.tight_layout()
    save_figure(fig, path)
    return path


def plot_rate_and_ratio(
    path: str, xs, rows, xlabel: str, color: str, title: str, overall_ratio=None, reference: str = "optimal"
) -> str:
    """Two panels saved as ``path``: solve rate (%) and mean length/``reference`` (optimal, or
    kociemba for the 3x3) of ``rows`` against ``xs``."""
    fig, (ax_rate, ax_ratio) = plt.subplots(1, 2, figsize=(13, 4.8))
    _bars(ax_rate, xs, [100 * r["solve_rate"] for r in rows], color, "{:.0f}")
    ax_rate.set_ylim(0, 109)
    ax_rate.set_xlabel(xlabel)
    ax_rate.set_ylabel("solve rate (%)")
    ax_rate.set_title(title)
    _ratio_panel(ax_ratio, xs, [r.get(f"mean_ratio_to_{reference}") for r in rows], xlabel, reference)
    if overall_ratio is not None:
        ax_ratio.set_title(f"Solution length / {reference} (solved episodes; overall {overall_ratio:.2f})")
    fig.tight_layout()
    save_figure(fig, path)
    return path


def plot_scramble_rows(path: str, rows: list[dict], settings: dict | None = None) -> str:
    """The original's bar chart of solve rate (%) by scramble length, beside the mean
    length/optimal ratio of the solved episodes (length/kociemba for rows that have it: the 3x3)."""
    return plot_rate_and_ratio(
        path,
        [r["scramble_len"] for r in rows],
        rows,
        "scramble length (random moves)",
        "tab:blue",
        "Solve rate by scramble length" + _settings_text(settings),
        reference="kociemba" if rows and "mean_ratio_to_kociemba" in rows[0] else "optimal",
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

    ``solver`` (``Solvers.SOLVER_NAMES``; default ``mcts``, the original's search, played as
    before) and ``solver_options`` (``Solvers.SolverOptions``; the simulations, move limit,
    c_puct and seed always come from the evaluation's own arguments) choose how cubes are
    solved. ``bestfirst`` needs no network: no model is loaded for it.

    ``workers`` (a ``Workers.WorkerPool``; None = this process, as always) splits the cubes
    of every ``play`` into contiguous chunks, one per worker, after they were drawn here.

    ``puzzle`` (``Puzzles``; default the 2x2): which cube. The model file looked up is the
    puzzle's, a model for another cube is refused (``CheckpointError``, or ValueError for an
    in-memory one), and so is a solver that cannot search it (ValueError). The 3x3 has no exact
    distances: its results carry kociemba's lengths instead (``lengths_of``), and
    ``evaluate_by_distance`` and ``evaluate_all_positions`` are the 2x2's only.
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
        problem = solver_puzzle_problem(solver, self.puzzle)
        if problem:
            raise ValueError(problem)
        self.solver = solver
        self.solver_options = solver_options if solver_options is not None else SolverOptions()
        if model is None and solver not in NETWORK_SOLVERS:
            self.device = device if isinstance(device, torch.device) else resolve_device(device or "auto")
            self.model_path = None
            self.model = None
        elif model is not None:
            # The search must run where the weights are: use the model's own device rather
            # than moving the caller's model.
            check_network(model, self.puzzle)
            self.model = model
            self.device = next(model.parameters()).device
            self.model_path = None
        else:
            self.device = device if isinstance(device, torch.device) else resolve_device(device or "auto")
            self.model_path = find_checkpoint(model_path, self.puzzle.checkpoint)
            self.model = load_model(self.model_path, self.device, self.puzzle)
        self.workers = workers
        self.n_runs = int(n_runs)
        self.log_dir = log_dir
        self.seed = int(seed)
        self.c_puct = float(c_puct)
        self.results: list[dict] | None = None  # rows of the latest evaluate_scramble_range
        self.distance_results: dict | None = None  # data of the latest evaluate_by_distance
        self.settings: dict | None = None  # search_settings of the latest evaluate_scramble_range (its JSON has none)
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
        """Solve every start cube with this evaluator's solver. ``mcts``: ``play_greedy`` with
        this evaluator's model, device, seed and c_puct, all cubes in one lockstep batch (the
        original's evaluation, unchanged); the others through ``Solvers.solve_cubes``."""
        start_cubes = np.asarray(start_cubes, dtype=np.int8).reshape(-1, self.puzzle.num_stickers)
        n = max(len(start_cubes), 1)
        if self.workers is not None:
            opts = self.options(num_simulations, max_episode_steps)
            run = concat_runs(
                self.workers.evaluate(
                    self.model,
                    start_cubes,
                    self.solver,
                    opts,
                    num_simulations,
                    max_episode_steps,
                    self.seed,
                    self.c_puct,
                    puzzle=self.puzzle.name,
                )
            )
        elif self.solver == "mcts":
            run = play_greedy(
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
            run = SolverRun(
                **{f.name: getattr(run, f.name) for f in dataclasses.fields(EpisodeResults)},
                solver="mcts",
                nodes=run.lengths.astype(np.int64) * num_simulations,
                cube_seconds=np.full(len(start_cubes), run.seconds / n),
            )
        else:
            run = self._solve(start_cubes, self.options(num_simulations, max_episode_steps), progress, desc)
        if not np.array_equal(replay_solved(run.start_cubes, run.actions, self.puzzle), run.solved):
            raise RuntimeError(f"the {self.solver} solver reported a solve that its moves do not replay")
        self.last_run = run
        return run

    def _solve(self, cubes: np.ndarray, opts: SolverOptions, progress: bool, desc: str) -> SolverRun:
        """``Solvers.solve_cubes`` over ``cubes``: lockstep solvers in one call, the others in
        chunks under a progress bar."""
        from tqdm.auto import tqdm

        chunk = len(cubes) if self.solver in LOCKSTEP_SOLVERS else max(1, min(256, -(-len(cubes) // 100)))
        results = []
        start = time.perf_counter()
        with tqdm(total=len(cubes), desc=desc, unit="cube", leave=False, disable=not progress) as bar:
            for lo in range(0, len(cubes), max(chunk, 1)):
                part = cubes[lo : lo + chunk]
                results += solve_cubes(
                    self.solver, part, model=self.model, options=opts, device=self.device, puzzle=self.puzzle
                )
                bar.update(len(part))
        nodes = np.array([r.nodes for r in results], dtype=np.int64)
        return SolverRun(
            start_cubes=cubes.copy(),
            actions=[list(r.moves) for r in results],
            solved=np.array([r.solved for r in results], dtype=bool),
            simulations=int(nodes.sum()) if self.solver == "gumbel" else 0,
            seconds=time.perf_counter() - start,
            solver=self.solver,
            nodes=nodes,
            cube_seconds=np.array([r.seconds for r in results], dtype=np.float64),
        )

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
        cubes = scramble_range_cubes(self.seed, self.n_runs, min_len, max_len, self.puzzle)
        run = self.play(cubes, num_simulations, max_episode_steps, progress, desc=f"eval lengths {min_len}-{max_len}")
        optimal, kociemba = self.lengths_of(cubes)
        self.results = scramble_range_rows(run, optimal, min_len, self.n_runs, kociemba)
        self.settings = search_settings(
            self.n_runs,
            num_simulations,
            max_episode_steps,
            **self.solver_settings(num_simulations, max_episode_steps),
            **({} if self.puzzle.name == "2x2" else {"puzzle": self.puzzle.name}),
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
        cubes, optimal = distance_cubes(self.seed, self.n_runs, min_dist, max_dist)
        run = self.play(
            cubes, num_simulations, max_episode_steps, progress, desc=f"eval distances {min_dist}-{max_dist}"
        )
        self.distance_results = {
            "settings": search_settings(
                self.n_runs,
                num_simulations,
                max_episode_steps,
                seed=self.seed,
                checkpoint=self.model_path,
                **self.solver_settings(num_simulations, max_episode_steps),
            ),
            "by_distance": distance_rows(run, optimal),
            "overall": summarize(run.solved, run.lengths, optimal, *_run_costs(run)),
        }
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
        100,000) plus every position at distances 13-14, reported by true distance.

        Saves ``<log_dir>/eval_all_positions.json`` (``{"settings", "by_distance", "overall"}``)
        and ``all_positions_failures.jsonl`` (``failure_records``). ``limit`` (tests): the
        greedy table mode plays only ``limit`` evenly spaced positions; the sample mode takes
        at most ``limit`` of the positions at distances 13-14. Raises ``AllPositionsError``
        when the greedy table mode gets a network that is not orientation-invariant.
        """
        self._need_exact("evaluation against every position")
        from All_Positions import cubes_at

        start_time = time.perf_counter()
        settings = {
            "mode": "all" if self.solver == "greedy" and sample is None else "sample",
            "max_episode_steps": max_episode_steps,
            "seed": self.seed,
            "checkpoint": self.model_path,
            **self.solver_settings(num_simulations, max_episode_steps),
        }
        if settings["mode"] == "all":
            start = None if limit is None else np.unique(np.linspace(0, NUM_STATES - 1, limit).astype(np.int64))
            index, solved, lengths, values, failed_moves = greedy_every_position(
                self.model, start=start, max_moves=max_episode_steps, device=self.device, progress=progress
            )
            nodes = seconds = None
            if limit is not None:
                settings["limit"] = limit
        else:
            sample = ALL_POSITIONS_SAMPLE if sample is None else sample
            settings.update(sample=sample, far_distance=FAR_DISTANCE, limit=limit)
            index = all_positions_sample(self.seed, sample, limit)
            cubes = cubes_at(index)
            chunk = SEARCH_CHUNK if self.solver in ("mcts", "gumbel") else len(cubes)
            runs = []
            from tqdm.auto import tqdm

            for lo in tqdm(
                range(0, len(cubes), chunk), desc="all positions", unit="batch", leave=False, disable=not progress
            ):
                runs.append(self.play(cubes[lo : lo + chunk], num_simulations, max_episode_steps, progress=False))
            run = self.last_run = concat_runs(runs)
            solved, lengths, nodes, seconds = run.solved, run.lengths, run.nodes, run.cube_seconds
            values = None
            if self.model is not None:
                value_fn, _ = network_fns(self.model, self.device)
                values = value_fn(cubes).astype(np.float64)
            failed_moves = [run.actions[i] for i in np.flatnonzero(~solved).tolist()]
        settings["positions"] = int(len(index))
        rows = all_positions_rows(index, solved, lengths, values, nodes, seconds)
        overall = all_positions_overall(index, solved, lengths)
        overall["seconds"] = round(time.perf_counter() - start_time, 3)
        overall.update(_cost_stats(nodes, seconds))
        self.all_positions_results = {"settings": settings, "by_distance": rows, "overall": overall}
        write_json(os.path.join(self.log_dir, ALL_POSITIONS_RESULT_FILE), self.all_positions_results)
        write_jsonl(
            os.path.join(self.log_dir, ALL_POSITIONS_FAILURES_FILE), failure_records(index[~solved], failed_moves)
        )
        return self.all_positions_results

    def plot_all_positions_results(self, filename: str = ALL_POSITIONS_CHART_FILE) -> str:
        """``plot_all_positions`` of the latest results, else of the saved JSON. Returns the PNG path."""
        data = self.all_positions_results or self._load(ALL_POSITIONS_RESULT_FILE)
        return plot_all_positions(os.path.join(self.log_dir, filename), data)

    def plot_distance_results(self, filename: str = DISTANCE_CHART_FILE) -> str:
        """``plot_distance_data`` of the latest results, else of the saved JSON. Returns the PNG path."""
        fresh = self.distance_results is not None
        data = self.distance_results if fresh else self._load(DISTANCE_RESULT_FILE)
        return plot_distance_data(os.path.join(self.log_dir, filename), data, show_settings=fresh)

    # -- the 3x3: uniformly random positions ----------------------------------------------
    def solve_uniform(
        self, n: int, num_simulations=EVAL_SIMULATIONS, max_episode_steps=MAX_MOVES, progress=False
    ) -> list[dict]:
        """``n`` uniformly random positions (``Puzzle.random_states``, drawn from ``seed``; the 2x2
        with replacement from all 3,674,160), solved in one batch: ``scramble_file_records`` with
        each position's number as its ``line`` and a scramble that makes it from solved: an
        optimal one (2x2) or kociemba's solution reversed (3x3)."""
        cubes = self.puzzle.random_states(np.random.default_rng(self.seed), n)
        if self.puzzle.reference == "optimal":
            makers = [self.puzzle.parse_moves(text) for text in optimal_scrambles(cubes)]
        else:
            from Kociemba_Solver import solve

            makers = [[a ^ 1 for a in reversed(solve(cube))] for cube in cubes]  # actions come in (move, inverse) pairs
        scrambles = [(i + 1, format_moves(moves), moves) for i, moves in enumerate(makers)]
        run = self.play(cubes, num_simulations, max_episode_steps, progress, desc="eval uniform")
        if self.puzzle.reference == "optimal":
            return scramble_file_records(run, scrambles, np.array([len(m) for m in makers], dtype=np.int64), None)
        self.last_kociemba = np.array([len(moves) for moves in makers], dtype=np.int64)
        return scramble_file_records(run, scrambles, None, self.last_kociemba)

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
        cubes = np.stack([self.puzzle.replay(self.puzzle.solved, moves) for _, _, moves in scrambles])
        run = self.play(cubes, num_simulations, max_episode_steps, progress, desc="eval scramble file")
        return scramble_file_records(run, scrambles, *self.lengths_of(cubes))

    def overall(self) -> dict:
        """``summarize`` of every episode of the latest call (the 3x3: against the kociemba
        lengths that call computed)."""
        run = self.last_run
        if self.puzzle.reference != "optimal":
            return summarize(run.solved, run.lengths, None, *_run_costs(run), kociemba=self.last_kociemba)
        return summarize(run.solved, run.lengths, get_solver().batch_distance(run.start_cubes), *_run_costs(run))

    def _load(self, filename: str):
        path = os.path.join(self.log_dir, filename)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path} does not exist: run the evaluation first.")
        return read_json(path)


# --------------------------------------------------------------------------- chart helpers
def _settings_text(settings: dict | None, each: str = "episodes each") -> str:
    if not settings:
        return ""
    puzzle = f"{settings['puzzle']}, " if "puzzle" in settings else ""  # only beside the 2x2, the default
    return (
        f"\n({puzzle}{settings['runs_per_distance']} {each}, {solver_text(settings.get('solver', 'mcts'), settings['num_simulations'])}, "  # noqa: E501
        f"{settings['max_episode_steps']} moves max)"
    )


def solver_text(solver: str, num_simulations: int) -> str:
    """How a chart or a line names the solver: ``greedy MCTS 1000 sims``, ``beam solver``..."""
    if solver == "mcts":
        return f"greedy MCTS {num_simulations} sims"
    if solver == "gumbel":
        return f"greedy Gumbel search {num_simulations} sims"
    return f"{solver} solver"


def _bars(ax, xs, ys, color, label_format, all_xs=None) -> None:
    bars = ax.bar(xs, ys, color=color, alpha=0.85)
    ax.bar_label(bars, labels=[label_format.format(y) for y in ys], fontsize=7, padding=1)
    all_xs = xs if all_xs is None else all_xs
    ax.set_xticks(all_xs)
    ax.set_xlim(min(all_xs) - 0.6, max(all_xs) + 0.6)  # both panels share the x range
    ax.grid(axis="y", alpha=0.3)


def _ratio_panel(ax, xs, ratios, xlabel: str, reference: str = "optimal") -> None:
    """Mean solution length / optimal (or kociemba's) length; a missing value (nothing solved) is no bar."""
    present = [(x, r) for x, r in zip(xs, ratios) if r is not None]
    if present:
        _bars(ax, [x for x, _ in present], [r for _, r in present], "tab:orange", "{:.2f}", all_xs=xs)
        ax.set_ylim(0, max(1.2, 1.12 * max(r for _, r in present)))
    else:
        ax.text(0.5, 0.5, "no solved episodes (or no length data)", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks(xs)
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label=reference)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"moves played / {reference} moves")
    ax.set_title(f"Solution length / {reference} (solved episodes)")
    ax.legend(loc="lower right")


# --------------------------------------------------------------------------- scramble files
def read_scramble_file(path: str) -> list[tuple[int, str, list[int]]]:
    """``(line number, text, actions)`` for each scramble line of ``path``.

    A ``#`` starts a comment (to the end of its line); blank lines and comment lines are
    skipped, and a UTF-8 byte-order mark (as some editors write) is ignored. Every line is
    checked before anything runs; unknown moves raise ``ScrambleFileError`` naming the line(s).
    """
    try:
        with open(path, encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ScrambleFileError(f"cannot read the scramble file '{path}' ({exc.__class__.__name__}: {exc}).") from None
    scrambles, bad = [], []
    for number, raw in enumerate(lines, start=1):
        text = raw.partition("#")[0].strip()
        if not text:
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
    g = p.add_argument_group("workers (beyond the original)")
    Workers.add_arguments(g)
    add_solver_arguments(p)
    g = p.add_argument_group("every position (beyond the original)")
    g.add_argument(
        "--all-positions",
        action="store_true",
        help="evaluate against every position: all 3,674,160 with --solver greedy (orientation-invariant "
        "network), else a uniform --sample plus every position at distances 13-14",
    )
    g.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help=f"uniform positions of --all-positions (default: {ALL_POSITIONS_SAMPLE:,}; with --solver greedy: "
        "every position), plus every position at distances 13-14",
    )
    g.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="a smaller check: with --sample, at most N of the positions at distances 13-14 (0 = the uniform sample "
        "alone); with --solver greedy and no --sample, N evenly spaced positions instead of all",
    )
    args = p.parse_args(argv)
    puzzle = get_puzzle(args.puzzle)
    for key, default in (
        ("max_steps", puzzle.default_max_moves),
        ("max_len", puzzle.eval_max_len),
        ("log_dir", puzzle.log_dir),
    ):
        if getattr(args, key) is None:
            setattr(args, key, default)
    resolve_solver(args)  # no --solver: the puzzle's default solver and budgets
    exact = puzzle.reference == "optimal"
    more_checks = [
        (
            args.uniform is None or not (args.by_distance or args.scrambles or args.all_positions),
            "--uniform is a mode of its own",
        ),
        (exact or not args.by_distance, f"--by-distance needs the 2x2's exact distances; the {args.puzzle} has none"),
        (exact or not args.all_positions, f"--all-positions is the 2x2's; the {args.puzzle} has too many positions"),
        (solver_puzzle_problem(args.solver, args.puzzle) is None, solver_puzzle_problem(args.solver, args.puzzle)),
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
    for ok, message in more_checks:
        if not ok:
            p.error(message)
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
            remove_stale_temps(os.path.dirname(os.path.realpath(args.out)))  # where its temp files go
        else:
            check_writable(args.log_dir, folder=True)
            remove_stale_temps(args.log_dir)
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
    if args.solver == "mcts":
        search = f"greedy MCTS, {args.sims} simulations per move, {args.max_steps} moves max"
    else:
        shown = solver_settings(args.solver, evaluator.options(args.sims, args.max_steps))
        search = f"solver {args.solver}: " + ", ".join(f"{k}={v}" for k, v in shown.items())
    if args.puzzle != "2x2":
        search = f"{args.puzzle}, {search}"
    ref = evaluator.puzzle.reference  # "optimal" (2x2) or "kociemba" (3x3): the lengths solutions are measured by

    if args.all_positions:
        try:
            data = evaluator.evaluate_all_positions(args.sample, args.sims, args.max_steps, progress, args.limit)
        except AllPositionsError as exc:
            return fail(exc)
        settings = data["settings"]
        what = "every position" if settings["mode"] == "all" else "a uniform sample plus distances 13-14"
        print(f"Evaluated {settings['positions']:,} positions ({what}; {search}).")
        print(
            format_table(
                [
                    "distance",
                    "positions",
                    "solved",
                    "solve rate",
                    "moves/optimal",
                    "value moves",
                    "max error",
                    "within 0.5",
                    "mean nodes",
                ],
                [
                    [
                        r["distance"],
                        r["positions"],
                        r["solved"],
                        _pct(r["solve_rate"]),
                        r["mean_ratio_to_optimal"],
                        r.get("value_moves_mean"),
                        r.get("value_max_error"),
                        None if "value_within_half_move" not in r else _pct(r["value_within_half_move"]),
                        r.get("mean_nodes"),
                    ]
                    for r in data["by_distance"]
                ],
            )
        )
        o = data["overall"]
        print(
            f"Overall: solved {o['solved']:,}/{o['positions']:,} ({_pct(o['solve_rate'])}); "
            f"mean moves/optimal {_cell(o['mean_ratio_to_optimal'])}; {o['seconds']:.1f} s."
        )
        chart = evaluator.plot_all_positions_results()
        print(
            f"Saved {os.path.join(args.log_dir, ALL_POSITIONS_RESULT_FILE)}, {chart} and "
            f"{os.path.join(args.log_dir, ALL_POSITIONS_FAILURES_FILE)} ({o['positions'] - o['solved']:,} unsolved)."
        )
        return 0

    if scrambles is not None or args.uniform:
        if args.uniform:
            out = args.out or os.path.join(args.log_dir, UNIFORM_RESULT_FILE)
            print(f"Solving {args.uniform} uniformly random positions ({search}).")
            records = evaluator.solve_uniform(args.uniform, args.sims, args.max_steps, progress)
        else:
            out = args.out or os.path.join(args.log_dir, "eval_scrambles.json")
            print(f"Solving {len(scrambles)} scrambles from {args.scrambles} ({search}).")
            records = evaluator.solve_scrambles(scrambles, args.sims, args.max_steps, progress)
        shown = records[:50]  # a large test set stays readable: the JSON has everything
        print(
            format_table(
                ["line", "scramble", "solved", "moves", ref, "solution"],
                [
                    [
                        r["line"],
                        r["scramble"],
                        "yes" if r["solved"] else "no",
                        r["length"],
                        r[ref],
                        r["solution"] or "(none)",
                    ]
                    for r in shown
                ],
                left=(1, 5),
            )
        )
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
            f"Solved {stats['solved']}/{stats['episodes']} ({_pct(stats['solve_rate'])}); mean moves {_cell(stats['mean_length'])}, "  # noqa: E501
            f"mean moves/{ref} {_cell(stats[f'mean_ratio_to_{ref}'])} (solved scrambles)."
        )
        if args.uniform:
            nodes, seconds = (np.array([r[key] for r in records]) for key in ("nodes", "seconds"))
            print(
                f"Per position: {ref} {_cell(stats[f'mean_{ref}'])} moves, {nodes.mean():,.0f} states generated, "
                f"{seconds.mean():.2f} s (at most {seconds.max():.2f} s)."
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
                ["scramble len", "episodes", "solved", "solve rate", "mean moves", f"mean {ref}", f"moves/{ref}"],
                [
                    [
                        r["scramble_len"],
                        r["episodes"],
                        r["solved"],
                        _pct(r["solve_rate"]),
                        r["mean_length"],
                        r[f"mean_{ref}"],
                        r[f"mean_ratio_to_{ref}"],
                    ]
                    for r in results
                ],
            )
        )
        o = evaluator.overall()
        print(
            f"Overall: solved {o['solved']}/{o['episodes']} ({_pct(o['solve_rate'])}); mean moves/{ref} {_cell(o[f'mean_ratio_to_{ref}'])}."  # noqa: E501
        )
        chart = evaluator.plot_scramble_results()
        print(f"Saved {os.path.join(args.log_dir, SCRAMBLE_RESULT_FILE)} and {chart}.")

    run = evaluator.last_run
    wall = time.perf_counter() - start
    if args.solver in ("mcts", "gumbel"):
        print(
            f"Wall time {wall:.1f} s ({run.simulations:,} simulations in {run.seconds:.1f} s of search, "
            f"{run.simulations / max(run.seconds, 1e-9):,.0f} simulations/s)."
        )
    else:
        print(
            f"Wall time {wall:.1f} s ({int(run.nodes.sum()):,} states generated in {run.seconds:.1f} s of search, "
            f"{run.cube_seconds.mean() if len(run.cube_seconds) else 0:.4f} s per cube)."
        )
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
