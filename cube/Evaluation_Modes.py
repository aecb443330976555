"""The evaluation modes of ``evaluate.py`` as functions over an evaluator.

How an evaluation solves its cubes (``play_cubes``: the original's lockstep greedy MCTS, or any
solver of ``Solvers.py``; ``Workers`` runs it on a worker too), the statistics of a group of
episodes (``summarize``), and each mode's cubes and results: scramble lengths, true distances,
a file of scrambles and uniformly random positions. ``evaluate.ScrambleEvaluator`` is the thin
class over them that keeps the latest results and writes the files; ``Evaluation_All_Positions``
holds the mode against every position, ``Evaluation_Report`` the charts and text tables.

A mode function takes the evaluator ``ev`` and uses its ``seed``, ``n_runs``, ``puzzle``,
``play``, ``lengths_of`` and ``solver_settings``; it returns results and writes nothing.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from tqdm.auto import tqdm

from cube import Kociemba_Solver
from cube.Puzzles import Puzzle, get_puzzle
from cube.Solvers import SolverOptions, SolverRun, solve_cubes, verify_batch
from Optimal_Solver import MAX_DISTANCE, get_solver
from Rubik2x2Env import MOVE_PERMS, NUM_ACTIONS, NUM_STICKERS, format_moves, parse_moves
from Self_Play import EpisodeResults, play_greedy

LOCKSTEP_SOLVERS = ("mcts", "greedy", "gumbel")  # advance many cubes at once: one call per batch


class ScrambleFileError(Exception):
    """A scramble file cannot be used. The message is one sentence naming the bad line(s)."""


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


# --------------------------------------------------------------------------- playing
def play_cubes(
    solver: str,
    start_cubes: np.ndarray,
    options: SolverOptions,
    *,
    model,
    device,
    puzzle: Puzzle,
    workers=None,
    progress: bool = False,
    desc: str = "eval",
) -> SolverRun:
    """Solve every start cube (``(n, puzzle.num_stickers)``) with ``solver``: simulations, move
    limit, c_puct and seed from ``options``. ``mcts``: ``play_greedy``, all cubes in one lockstep
    batch (the original's evaluation, unchanged); the others through ``Solvers.solve_cubes``.
    ``workers`` (a ``Workers.WorkerPool``; None = this process) plays contiguous chunks of the
    cubes on its workers. Raises RuntimeError when a reported solve does not replay."""
    start_cubes = np.asarray(start_cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    if workers is not None:
        run = concat_runs(
            workers.evaluate(
                model,
                start_cubes,
                solver,
                options,
                options.sims,
                options.max_moves,
                options.seed,
                options.c_puct,
                puzzle=puzzle.name,
            )
        )
    elif solver == "mcts":
        run = _play_mcts(model, start_cubes, options, device, puzzle, progress, desc)
    else:
        run = _solve_in_chunks(solver, start_cubes, options, model, device, puzzle, progress, desc)
    if not np.array_equal(replay_solved(run.start_cubes, run.actions, puzzle), run.solved):
        raise RuntimeError(f"the {solver} solver reported a solve that its moves do not replay")
    return run


def _play_mcts(
    model, start_cubes: np.ndarray, options: SolverOptions, device, puzzle: Puzzle, progress: bool, desc: str
) -> SolverRun:
    """``play_greedy`` of every cube of ``puzzle`` in one lockstep batch, as a ``SolverRun`` (nodes:
    the simulations of the moves played; seconds: the batch's time shared evenly)."""
    run = play_greedy(
        model,
        start_cubes,
        options.sims,
        options.max_moves,
        device=device,
        seed=options.seed,
        c_puct=options.c_puct,
        progress=progress,
        desc=desc,
        game=puzzle,
    )
    return SolverRun(
        **{f.name: getattr(run, f.name) for f in dataclasses.fields(EpisodeResults)},
        solver="mcts",
        nodes=run.lengths.astype(np.int64) * options.sims,
        cube_seconds=np.full(len(start_cubes), run.seconds / max(len(start_cubes), 1)),
    )


def _solve_in_chunks(
    solver: str, cubes: np.ndarray, opts: SolverOptions, model, device, puzzle: Puzzle, progress: bool, desc: str
) -> SolverRun:
    """``Solvers.solve_cubes`` over ``cubes``: lockstep solvers in one call, the others in
    chunks under a progress bar."""
    chunk = len(cubes) if solver in LOCKSTEP_SOLVERS else max(1, min(256, -(-len(cubes) // 100)))
    results = []
    start = time.perf_counter()
    with tqdm(total=len(cubes), desc=desc, unit="cube", leave=False, disable=not progress) as bar:
        for lo in range(0, len(cubes), max(chunk, 1)):
            part = cubes[lo : lo + chunk]
            results += solve_cubes(solver, part, model=model, options=opts, device=device, puzzle=puzzle)
            bar.update(len(part))
    nodes = np.array([r.nodes for r in results], dtype=np.int64)
    return SolverRun(
        start_cubes=cubes.copy(),
        actions=[list(r.moves) for r in results],
        solved=np.array([r.solved for r in results], dtype=bool),
        simulations=int(nodes.sum()) if solver == "gumbel" else 0,
        seconds=time.perf_counter() - start,
        solver=solver,
        nodes=nodes,
        cube_seconds=np.array([r.seconds for r in results], dtype=np.float64),
    )


# --------------------------------------------------------------------------- statistics
def mean_or_none(values) -> float | None:
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
        "mean_length": mean_or_none(lengths[solved]),
        **_reference_stats("optimal", solved, lengths, optimal),
    }
    if kociemba is not None:
        stats.update(_reference_stats("kociemba", solved, lengths, kociemba))
    stats.update(cost_stats(nodes, seconds))
    return stats


def _reference_stats(name: str, solved: np.ndarray, lengths: np.ndarray, reference) -> dict:
    """``mean_<name>`` over all episodes and ``mean_ratio_to_<name>`` over the solved ones whose
    reference length is above 0 (None for both when the reference is unknown)."""
    if reference is None:
        return {f"mean_{name}": None, f"mean_ratio_to_{name}": None}
    reference = np.asarray(reference)
    with_ratio = solved & (reference > 0)
    return {
        f"mean_{name}": mean_or_none(reference),
        f"mean_ratio_to_{name}": mean_or_none(lengths[with_ratio] / reference[with_ratio]),
    }


def cost_stats(nodes=None, seconds=None) -> dict:
    """``mean_nodes`` and ``mean_seconds`` per cube (those given)."""
    out = {}
    if nodes is not None:
        out["mean_nodes"] = round(float(np.mean(nodes)), 2) if len(nodes) else None
    if seconds is not None:
        out["mean_seconds"] = round(float(np.mean(seconds)), 6) if len(seconds) else None
    return out


def run_costs(run, group=slice(None)) -> tuple:
    """The per-cube nodes and seconds of ``run`` (a ``SolverRun``) in ``group``, else Nones."""
    if not isinstance(run, SolverRun):
        return None, None
    return run.nodes[group], run.cube_seconds[group]


# --------------------------------------------------------------------------- each mode's cubes and rows


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
            *run_costs(run, group),
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
        stats = summarize(run.solved[group], run.lengths[group], optimal[group], *run_costs(run, group))
        del stats["mean_optimal"]  # it is d itself
        rows.append({"distance": d, "positions": solver.count_at_distance(d), **stats})
    return rows


def scramble_file_records(
    run: EpisodeResults, scrambles: list[tuple[int, str, list[int]]], optimal: np.ndarray | None, kociemba=None
) -> list[dict]:
    """A dict per scramble of a file: ``line, scramble, solution, solved, length, optimal``
    (and ``nodes``, ``seconds`` when ``run`` is a ``SolverRun``). ``optimal`` None (the 3x3):
    ``optimal`` is null, and with ``kociemba`` lengths each record has ``kociemba`` too."""
    nodes, seconds = run_costs(run)
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


# --------------------------------------------------------------------------- optimal scrambles
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


# --------------------------------------------------------------------------- the modes
def scramble_range_mode(
    ev, min_len: int, max_len: int, num_simulations: int, max_episode_steps: int, progress: bool
) -> tuple[list[dict], dict]:
    """``ev.n_runs`` random scrambles of every length ``min_len..max_len``, all played in one
    batch: ``(scramble_range_rows, settings)`` (the settings name the puzzle beside the 2x2)."""
    cubes = scramble_range_cubes(ev.seed, ev.n_runs, min_len, max_len, ev.puzzle)
    run = ev.play(cubes, num_simulations, max_episode_steps, progress, desc=f"eval lengths {min_len}-{max_len}")
    optimal, kociemba = ev.lengths_of(cubes)
    rows = scramble_range_rows(run, optimal, min_len, ev.n_runs, kociemba)
    settings = search_settings(
        ev.n_runs,
        num_simulations,
        max_episode_steps,
        **ev.solver_settings(num_simulations, max_episode_steps),
        **({} if ev.puzzle.name == "2x2" else {"puzzle": ev.puzzle.name}),
    )
    return rows, settings


def distance_mode(
    ev, min_dist: int, max_dist: int, num_simulations: int, max_episode_steps: int, progress: bool
) -> dict:
    """Positions drawn by true distance (``distance_cubes``), all played in one batch:
    ``{"settings", "by_distance": distance_rows, "overall": summarize}``."""
    cubes, optimal = distance_cubes(ev.seed, ev.n_runs, min_dist, max_dist)
    run = ev.play(cubes, num_simulations, max_episode_steps, progress, desc=f"eval distances {min_dist}-{max_dist}")
    return {
        "settings": search_settings(
            ev.n_runs,
            num_simulations,
            max_episode_steps,
            seed=ev.seed,
            checkpoint=ev.model_path,
            **ev.solver_settings(num_simulations, max_episode_steps),
        ),
        "by_distance": distance_rows(run, optimal),
        "overall": summarize(run.solved, run.lengths, optimal, *run_costs(run)),
    }


def uniform_mode(
    ev, n: int, num_simulations: int, max_episode_steps: int, progress: bool
) -> tuple[list[dict], np.ndarray | None]:
    """``n`` uniformly random positions (``Puzzle.random_states``, drawn from ``ev.seed``; the 2x2
    with replacement from all 3,674,160), solved in one batch: ``scramble_file_records`` with
    each position's number as its ``line`` and a scramble that makes it from solved: an
    optimal one (2x2) or kociemba's solution reversed (3x3). Also returns the kociemba lengths
    (``(n,)`` int64; None for the 2x2)."""
    cubes = ev.puzzle.random_states(np.random.default_rng(ev.seed), n)
    if ev.puzzle.reference == "optimal":
        makers = [ev.puzzle.parse_moves(text) for text in optimal_scrambles(cubes)]
    else:  # actions come in (move, inverse) pairs
        makers = [[a ^ 1 for a in reversed(Kociemba_Solver.solve(cube))] for cube in cubes]
    scrambles = [(i + 1, format_moves(moves), moves) for i, moves in enumerate(makers)]
    run = ev.play(cubes, num_simulations, max_episode_steps, progress, desc="eval uniform")
    lengths = np.array([len(moves) for moves in makers], dtype=np.int64)
    if ev.puzzle.reference == "optimal":
        return scramble_file_records(run, scrambles, lengths, None), None
    return scramble_file_records(run, scrambles, None, lengths), lengths


def scramble_file_mode(
    ev, scrambles: list[tuple[int, str, list[int]]], num_simulations: int, max_episode_steps: int, progress: bool
) -> list[dict]:
    """Solve ``(line number, text, actions)`` scrambles (see ``read_scramble_file``) in one
    batch: ``scramble_file_records``."""
    cubes = np.stack([ev.puzzle.replay(ev.puzzle.solved, moves) for _, _, moves in scrambles])
    run = ev.play(cubes, num_simulations, max_episode_steps, progress, desc="eval scramble file")
    return scramble_file_records(run, scrambles, *ev.lengths_of(cubes))
