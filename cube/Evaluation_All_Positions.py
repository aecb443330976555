"""The evaluation against every position of the 2x2 (``evaluate.py --all-positions``).

``--solver greedy`` plays all 3,674,160 positions from a table of the network's values
(``greedy_every_position``; an orientation-invariant network is needed); any other solver plays
a uniform sample (``ALL_POSITIONS_SAMPLE``) plus every position at distance ``FAR_DISTANCE`` or
more. Results are reported by true distance (``all_positions_rows``), and every unsolved
position is kept for inspection (``failure_records``, written as JSON lines by ``write_jsonl``).
"""

from __future__ import annotations

import json
import time

import numpy as np
from tqdm.auto import tqdm

from cube.All_Positions import _CHUNK, cubes_at, greedy_all, network_value_table, report_by_distance
from cube.Evaluation_Modes import concat_runs, cost_stats, mean_or_none, optimal_scrambles
from cube.Solvers import network_fns
from Optimal_Solver import NUM_STATES, get_solver
from Rubik2x2Env import format_moves
from run.Cli import MAX_MOVES
from run.Run_IO import atomic_write

ALL_POSITIONS_SAMPLE = 100_000  # uniform positions of --all-positions with a solver other than greedy
FAR_DISTANCE = 13  # ... plus every position at this distance or more (90,556 positions)
SEARCH_CHUNK = 1024  # cubes per lockstep tree search (mcts, gumbel) in --all-positions: bounds memory


class AllPositionsError(Exception):
    """``--all-positions`` cannot run as asked. The message is one sentence."""


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


def failure_records(index: np.ndarray, moves: list[list[int]]) -> list[dict]:
    """One dict per unsolved position: ``index``, ``stickers`` (the D-L-B-home cube the solver
    started from), ``distance``, ``scramble`` (optimal length, makes that cube from solved) and
    ``moves`` (what the solver played)."""
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
    solver = get_solver()
    distance = solver.table[np.asarray(index, dtype=np.int64)].astype(np.int64)
    rows = report_by_distance(distance, np.asarray(solved, bool), np.asarray(lengths), values)
    for row in rows:
        row["positions_at_distance"] = solver.count_at_distance(row["distance"])
        at = distance == row["distance"]
        row.update(cost_stats(None if nodes is None else nodes[at], None if seconds is None else seconds[at]))
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
        "mean_ratio_to_optimal": mean_or_none(lengths[ok] / distance[ok]),
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


def all_positions_mode(
    ev, sample: int | None, num_simulations: int, max_episode_steps: int, progress: bool, limit: int | None
) -> tuple[dict, list[dict], object]:
    """Every position (greedy solver, ``sample`` None) or a uniform ``sample`` (default
    100,000) plus every position at distances 13-14, reported by true distance.

    Returns ``({"settings", "by_distance", "overall"}, failure_records, run)``: ``run`` is the
    ``SolverRun`` of the sampled positions (None for the greedy table). ``limit`` (tests): the
    greedy table mode plays only ``limit`` evenly spaced positions; the sample mode takes at most
    ``limit`` of the positions at distances 13-14. Raises ``AllPositionsError`` when the greedy
    table mode gets a network that is not orientation-invariant.
    """
    start_time = time.perf_counter()
    settings = {
        "mode": "all" if ev.solver == "greedy" and sample is None else "sample",
        "max_episode_steps": max_episode_steps,
        "seed": ev.seed,
        "checkpoint": ev.model_path,
        **ev.solver_settings(num_simulations, max_episode_steps),
    }
    if settings["mode"] == "all":
        run = None
        start = None if limit is None else np.unique(np.linspace(0, NUM_STATES - 1, limit).astype(np.int64))
        index, solved, lengths, values, failed_moves = greedy_every_position(
            ev.model, start=start, max_moves=max_episode_steps, device=ev.device, progress=progress
        )
        nodes = seconds = None
        if limit is not None:
            settings["limit"] = limit
    else:
        sample = ALL_POSITIONS_SAMPLE if sample is None else sample
        settings.update(sample=sample, far_distance=FAR_DISTANCE, limit=limit)
        index = all_positions_sample(ev.seed, sample, limit)
        run, values = _play_sample(ev, cubes_at(index), num_simulations, max_episode_steps, progress)
        solved, lengths, nodes, seconds = run.solved, run.lengths, run.nodes, run.cube_seconds
        failed_moves = [run.actions[i] for i in np.flatnonzero(~solved).tolist()]
    settings["positions"] = int(len(index))
    rows = all_positions_rows(index, solved, lengths, values, nodes, seconds)
    overall = all_positions_overall(index, solved, lengths)
    overall["seconds"] = round(time.perf_counter() - start_time, 3)
    overall.update(cost_stats(nodes, seconds))
    data = {"settings": settings, "by_distance": rows, "overall": overall}
    return data, failure_records(index[~solved], failed_moves), run


def _play_sample(ev, cubes: np.ndarray, num_simulations: int, max_episode_steps: int, progress: bool):
    """``ev.play`` of ``cubes`` (tree searches ``SEARCH_CHUNK`` at a time): the joined
    ``SolverRun`` and the network's value of each cube (float64; None without a network)."""
    chunk = SEARCH_CHUNK if ev.solver in ("mcts", "gumbel") else len(cubes)
    runs = []
    for lo in tqdm(range(0, len(cubes), chunk), desc="all positions", unit="batch", leave=False, disable=not progress):
        runs.append(ev.play(cubes[lo : lo + chunk], num_simulations, max_episode_steps, progress=False))
    values = None
    if ev.model is not None:
        value_fn, _ = network_fns(ev.model, ev.device)
        values = value_fn(cubes).astype(np.float64)
    return concat_runs(runs), values
