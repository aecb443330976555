"""Solver_Views (``--views``): the 3x3's inverse positions, every view's solution mapped back to a solution
of the cube, and the best of several views never longer than the first view alone."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from cube import Solvers as S
from cube.Puzzles import get_puzzle
from cube.Solver_Base import verify
from cube.Solver_Views import View, cube_moves, disguise, view_count_limit, view_list

P3 = get_puzzle("3x3")
P2 = get_puzzle("2x2")


def scrambles(puzzle, rng: np.random.Generator, count: int, length: int):
    moves = rng.integers(0, 12, size=(count, length))
    cubes = np.stack([puzzle.replay(puzzle.solved, [int(a) for a in row]) for row in moves])
    return cubes, moves


def inverted(moves) -> list[int]:
    return [int(a) ^ 1 for a in moves[::-1]]  # moves come in (move, inverse) pairs


def test_the_inverse_of_a_scramble_is_its_inverted_moves_reversed():
    cubes, moves = scrambles(P3, np.random.default_rng(0), 100, 25)
    inverses = P3.inverse_states(cubes)
    assert all((inverses[i] == P3.replay(P3.solved, inverted(m))).all() for i, m in enumerate(moves))
    assert (P3.inverse_states(inverses) == cubes).all() and (P3.inverse_states(P3.solved[None]) == P3.solved).all()
    assert P2.inverse_states is None


def test_views_alternate_the_cube_and_its_inverse_and_the_2x2_has_symmetries_only():
    assert view_list(P3, 5) == [View(0, False), View(0, True), View(1, False), View(1, True), View(2, False)]
    assert view_list(P2, 3) == [View(0, False), View(1, False), View(2, False)]
    assert (view_count_limit(P3), view_count_limit(P2)) == (96, 48)
    with pytest.raises(ValueError, match="views must be 1..48 for the 2x2"):
        view_list(P2, 49)


def test_every_view_maps_a_solution_of_its_disguise_back_to_one_of_the_cube():
    """A known solution of each disguise (the scramble undone, renamed; for an inverse, the scramble itself)
    becomes, through ``cube_moves``, moves that solve the cube."""
    rng = np.random.default_rng(1)
    cubes, moves = scrambles(P3, rng, 6, 12)
    move_map = importlib.import_module("cube.Cube_Model").symmetries(3)[2]
    for view in view_list(P3, 96):
        starts, _, _ = disguise(cubes, None, None, view, P3)
        for start, cube, scramble in zip(starts, cubes, moves):
            known = move_map[view.symmetry][scramble if view.inverse else inverted(scramble)]
            assert verify(start, known, P3)  # the disguise is a real cube that the known moves solve
            assert verify(cube, cube_moves(known, view, move_map), P3)


def test_the_history_of_a_disguise_is_renamed_and_an_inverse_starts_fresh():
    cubes, _ = scrambles(P3, np.random.default_rng(2), 3, 5)
    last, count = np.array([0, 5, -1]), np.array([1, 2, 0])
    move_map = importlib.import_module("cube.Cube_Model").symmetries(3)[2]
    _, mirrored_last, mirrored_count = disguise(cubes, last, count, View(1, False), P3)
    assert mirrored_last.tolist() == [move_map[1][0], move_map[1][5], -1] and mirrored_count.tolist() == [1, 2, 0]
    _, inverse_last, inverse_count = disguise(cubes, last, count, View(1, True), P3)
    assert inverse_last.tolist() == [-1, -1, -1] and inverse_count.tolist() == [0, 0, 0]


def noisy_value(cubes: np.ndarray) -> np.ndarray:
    """Stickers in place, plus a fixed pseudo-random bonus per state: a heuristic that reads a cube and its
    disguises differently, as a network does."""
    cubes = np.asarray(cubes)
    hashed = (cubes.astype(np.int64) * np.arange(1, cubes.shape[1] + 1)).sum(axis=1) * 2654435761 % 1000
    return (cubes == P3.solved).mean(axis=1) + hashed / 4000


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["beam", "greedy"])
def test_the_best_of_views_is_a_replayed_solution_never_longer_than_the_first_view(solver):
    cubes, _ = scrambles(P3, np.random.default_rng(3), 12, 6)
    common = dict(value_fn=noisy_value, puzzle=P3, beam_width=64, max_moves=30, max_nodes=10**7)
    one = S.solve_cubes(solver, cubes, **common)
    best = S.solve_cubes(solver, cubes, views=6, **common)
    for cube, a, b in zip(cubes, one, best):
        assert b.solved == verify(cube, b.moves, P3)
        assert not a.solved or (b.solved and len(b.moves) <= len(a.moves))
        assert solver == "beam" or b.nodes >= a.nodes  # the beam stops a cube's views once one solved it
    solved_one, solved_best = sum(r.solved for r in one), sum(r.solved for r in best)
    length = lambda results: sum(len(r.moves) for r in results if r.solved)  # noqa: E731
    assert solved_best > solved_one or length(best) < length(one)  # the other views found something


def test_views_are_refused_where_a_solver_has_none():
    with pytest.raises(ValueError, match="--views is for beam, astar and greedy"):
        S.solve_cubes("bestfirst", P3.solved, puzzle=P3, views=2)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--solver", "beam", "--views", "49"], "--views is at most 48 for the 2x2"),
        (["--solver", "mcts", "--views", "2"], "--views is for --solver beam, astar and greedy, not mcts"),
    ],
)
def test_the_scripts_refuse_views_a_solver_or_puzzle_lacks(flags, message, capsys):
    import evaluate

    with pytest.raises(SystemExit) as exc:
        evaluate.parse_args(flags)
    assert exc.value.code == 2 and message in capsys.readouterr().err
    assert S.options_from_args(evaluate.parse_args(["--puzzle", "3x3", "--views", "96"])).views == 96


@pytest.mark.slow
def test_stopping_a_cubes_other_views_once_one_solved_keeps_every_solution_and_saves_states():
    """The beam stops a cube's other views once one has solved it (``siblings``): they are a depth deeper by
    then, so the shortest solution, which is all ``solve_from_views`` keeps, is the same as when every view
    runs to its own end, and fewer states are generated."""
    from cube.Solver_Views import solve_from_views

    cubes, _ = scrambles(P3, np.random.default_rng(4), 10, 8)
    opts = S.SolverOptions(beam_width=64, beam_rank="value", max_moves=30, max_nodes=10**7, views=8)
    args = (S.Solving(None, noisy_value, None, "cpu", P3),)
    stopped = solve_from_views(S.SOLVERS["beam"].run, cubes, None, None, opts, P3, *args, stops_views=True)
    full = solve_from_views(S.SOLVERS["beam"].run, cubes, None, None, opts, P3, *args)
    assert S.SOLVERS["beam"].stops_views and not S.SOLVERS["astar"].stops_views
    assert [(r.moves, r.solved) for r in stopped] == [(r.moves, r.solved) for r in full]
    assert all(a.nodes <= b.nodes for a, b in zip(stopped, full)) and sum(r.solved for r in full) >= 5
    assert sum(r.nodes for r in stopped) < 0.95 * sum(r.nodes for r in full)


@pytest.mark.slow
def test_the_view_stop_bench_runs_and_finds_the_same_solutions(capsys):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import bench_view_stop

    assert bench_view_stop.main(["--cubes", "2", "--beam-width", "8", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("cube ") == 2 and out.count(" | without: ") == 2 and "without / with: " in out


@pytest.mark.slow
def test_the_end_table_bench_runs(capsys):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import bench_ends

    assert bench_ends.main(["--cubes", "2", "--beam-width", "8", "--threads", "1", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count(" | without: ") == 2 and "shorter: with on " in out and "without / with: " in out
