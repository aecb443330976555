"""The anytime beam (``Solver_Anytime``, ``--first-width``): a cheap first round answers, the configured search gets
the budgets it left and can only shorten the answer. No test reads the wall clock: a stub search reports the seconds
it took, or a fake clock that only the value's calls advance times the real beam."""

from __future__ import annotations

import dataclasses
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from cube import Solver_Anytime as A
from cube import Solvers as S
from cube import Tree_Searches as T
from cube.Puzzles import get_puzzle
from cube.Solver_Base import SolveResult, exact_value_fn, verify
from Optimal_Solver import get_solver

P3 = get_puzzle("3x3")
DEFAULT = dataclasses.replace(S.SolverOptions(max_moves=P3.default_max_moves), **P3.default_solver_options)


def scrambled(count: int, length: int, seed: int) -> np.ndarray:
    return P3.scramble(np.random.default_rng(seed), count, length)[0]


class StubSearch:
    """A ``Solver_Anytime.Round`` that records the options of each call and answers from a script of results."""

    def __init__(self, *answers: SolveResult):
        self.answers, self.calls = list(answers), []

    def __call__(self, cubes, last, count, opts):
        self.calls.append(opts)
        return [self.answers[len(self.calls) - 1]]


def solution(length: int, nodes: int = 1000, seconds: float = 1.0, solved: bool = True) -> SolveResult:
    return SolveResult([0] * length if solved else [], solved, nodes, seconds)


# --------------------------------------------------------------------------- the rounds' options
def test_the_3x3_default_starts_with_two_views_of_1000_and_the_whole_budgets():
    first = A.first_round(DEFAULT)
    assert (first.beam_width, first.views, first.first_width, first.beam_widen) == (1000, 2, 0, False)
    assert (first.seconds, first.max_nodes, first.max_moves, first.ends) == (60.0, 16_000_000, 100, 6)
    assert A.first_round(dataclasses.replace(DEFAULT, first_width=0)) is None  # off
    # never wider, nor from more views, than the search itself; none where it would only repeat it
    narrow = A.first_round(dataclasses.replace(DEFAULT, beam_width=8))
    assert (narrow.beam_width, narrow.views) == (8, 2)
    assert A.first_round(dataclasses.replace(DEFAULT, beam_width=8, views=2)) is None


def test_the_second_round_gets_the_budgets_left_and_only_the_depths_that_could_beat_the_first():
    rest = A.second_round(DEFAULT, solution(25, nodes=300_000, seconds=7.5))
    assert (rest.seconds, rest.max_nodes, rest.first_width) == (52.5, 15_700_000, 0)
    assert (rest.beam_width, rest.views) == (4000, 8)
    assert rest.max_moves == 25 - 1 - 6  # a beam finishing at depth k with the end table of 6 gives k + 6 moves
    assert A.second_round(dataclasses.replace(DEFAULT, ends=0), solution(25)).max_moves == 24
    assert A.second_round(DEFAULT, solution(0, seconds=3.0, solved=False)).max_moves == 100  # nothing to beat
    assert A.second_round(dataclasses.replace(DEFAULT, seconds=None), solution(25)).seconds is None
    assert A.second_round(DEFAULT, solution(25, seconds=60.0)) is None  # the time is spent
    assert A.second_round(DEFAULT, solution(25, nodes=16_000_000)) is None  # the states are spent
    assert A.second_round(DEFAULT, solution(7)) is None  # 7 moves with an end table of 6: nothing shorter to find


# --------------------------------------------------------------------------- --target-seconds: the sized width
TIMED = DEFAULT  # the 3x3's default: a target of 25 s


def predicted(first: SolveResult, width: int, opts=TIMED) -> float:
    """The cube's seconds ``sized_width`` predicts at ``width``: the first round's seconds times one plus the second
    round's rows (8 views of ``width`` over the depths that could beat the first) over the first's (2 views of 1,000
    over at least ``len(moves) - ends`` depths)."""
    depth = T.depth_to_beat(len(first.moves), opts.ends)
    return first.seconds * (1 + opts.views * width * depth / (2 * 1000 * (len(first.moves) - opts.ends)))


@pytest.mark.parametrize("seconds, width", [(2.0, 4000), (1.5, 4000), (1.0, 5657), (0.5, 11314), (0.2, 32000)])
def test_the_second_round_is_the_widest_the_first_rounds_speed_predicts_to_end_by_the_target(seconds, width):
    first = solution(25, nodes=10_000, seconds=seconds)
    rest = A.second_round(TIMED, first)
    assert rest.beam_width == width and rest.target_seconds is None and rest.views == 8
    # the widest of the list: within the target, and the next step up past it (or the list's end, 8 times)
    assert width == 4000 or predicted(first, width) <= 25.0
    wider = [round(4000 * f) for f in A.WIDTH_FACTORS if round(4000 * f) > width]
    assert not wider or predicted(first, wider[0]) > 25.0
    untimed = dataclasses.replace(DEFAULT, target_seconds=None)
    assert A.second_round(untimed, first).beam_width == 4000  # without a target: the configured width


def test_the_sized_width_ends_within_a_time_limit_below_the_target():
    first = solution(25, nodes=10_000, seconds=0.5)  # 11,314 within the target of 25 s (above)
    limited = dataclasses.replace(TIMED, seconds=12.0)
    width = A.second_round(limited, first).beam_width
    assert width < 11314 and predicted(first, width) <= 12.0
    wider = [round(4000 * f) for f in A.WIDTH_FACTORS if round(4000 * f) > width]
    assert predicted(first, wider[0]) > 12.0  # the widest within the limit
    assert A.second_round(dataclasses.replace(TIMED, seconds=90.0), first).beam_width == 11314  # the target's


def test_the_sized_width_fits_the_states_left_and_needs_a_solved_first_round():
    fast = solution(25, nodes=10_000, seconds=0.2)  # time for 8 times the width (above)
    # states, scaled as the seconds are: 400,000 in the first round allow 8,000 within 16,000,000 but not 11,314
    assert A.second_round(TIMED, dataclasses.replace(fast, nodes=400_000)).beam_width == 8000
    assert A.second_round(dataclasses.replace(TIMED, max_nodes=200_000), fast).beam_width == 4000
    assert (
        A.second_round(TIMED, dataclasses.replace(fast, moves=[], solved=False)).beam_width == 4000
    )  # nothing to time
    assert A.second_round(dataclasses.replace(TIMED, first_width=0), fast).beam_width == 4000  # no first round


def test_target_seconds_needs_a_first_round_and_reaches_the_search(capsys):
    import evaluate

    assert S.options_from_args(evaluate.parse_args(["--puzzle", "3x3", "--target-seconds", "25"])).target_seconds == 25
    with pytest.raises(SystemExit) as exc:
        evaluate.parse_args(["--puzzle", "3x3", "--first-width", "0", "--target-seconds", "25"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--target-seconds needs --first-width" in err and err.count("\n") == 1


# --------------------------------------------------------------------------- keeping the shortest
@pytest.mark.parametrize(
    "second, kept",
    [
        (solution(22, nodes=5000, seconds=20.0), 22),  # shorter: replaces the first
        (solution(25, nodes=5000, seconds=20.0), 25),  # as long: the first stays
        (solution(30, nodes=5000, seconds=20.0), 25),  # longer (a search that ignored its depth): the first stays
        (solution(0, nodes=5000, seconds=20.0, solved=False), 25),  # out of time, no solution: the first stays
    ],
)
def test_the_second_round_never_replaces_the_first_solution_by_a_longer_one_or_none(second, kept):
    search = StubSearch(solution(25, nodes=1000, seconds=2.0), second)
    [got] = A.solve_anytime(search, scrambled(1, 20, 0), None, None, DEFAULT)
    assert got.solved and len(got.moves) == kept
    assert (got.nodes, got.seconds) == (6000, 22.0)  # both rounds' states and seconds
    assert [(o.beam_width, o.views) for o in search.calls] == [(1000, 2), (4000, 8)]


def test_a_first_round_that_spent_the_time_limit_is_the_answer_and_an_unsolved_one_leaves_the_whole_depth():
    spent = StubSearch(solution(27, seconds=61.0))
    [got] = A.solve_anytime(spent, scrambled(1, 20, 0), None, None, DEFAULT)
    assert got.solved and len(got.moves) == 27 and len(spent.calls) == 1
    missed = StubSearch(solution(0, seconds=5.0, solved=False), solution(23, seconds=30.0))
    [got] = A.solve_anytime(missed, scrambled(1, 20, 0), None, None, DEFAULT)
    assert got.solved and len(got.moves) == 23 and missed.calls[1].max_moves == 100 and missed.calls[1].seconds == 55


def test_without_a_cheaper_first_round_the_search_runs_once_for_every_cube():
    sizes = []

    def search(cubes, last, count, opts):
        sizes.append((len(cubes), opts.beam_width, opts.views))
        return [solution(20)] * len(cubes)

    got = A.solve_anytime(
        search, scrambled(3, 20, 0), None, None, dataclasses.replace(DEFAULT, views=2, beam_width=900)
    )
    assert sizes == [(3, 900, 2)] and len(got) == 3  # in one call, as without --first-width


# --------------------------------------------------------------------------- the real beam
@pytest.fixture(scope="module")
def solver(isolated_solver_cache):
    return get_solver()


@pytest.fixture(scope="module")
def far_cubes(solver) -> np.ndarray:
    """2x2 positions 9 to 14 moves from solved, three at each of four distances."""
    return np.concatenate([solver.random_cubes_at_distance(np.random.default_rng(d), d, 3) for d in (9, 11, 13, 14)])


@pytest.fixture(scope="module")
def rough(solver):
    """The 2x2's exact value plus a fixed pseudo-random error of up to 5 moves per state: a narrow beam on it goes
    astray now and then, a wide one rarely."""

    def value(cubes: np.ndarray) -> np.ndarray:
        hashed = (cubes.astype(np.int64) * np.arange(1, cubes.shape[1] + 1)).sum(axis=1) * 2654435761 % 1000
        return 1 - 0.03 * solver.batch_distance(cubes) + 0.15 * hashed / 1000

    return value


def test_the_anytime_beam_keeps_the_shorter_of_its_rounds_solutions_each_replayed(rough, far_cubes):
    """With a value that is a pure function of the state (the exact distance plus a fixed pseudo-random error of up
    to 5 moves) and no time limit, the anytime beam's solution is exactly the shorter of what its first round alone
    and the configured search alone find (the first's on a tie): the second round's depth cap (with the end table's
    radius) only drops depths that could not win, so the narrow first round's long solutions are shortened."""
    two = get_puzzle("2x2")
    common = dict(value_fn=rough, beam_rank="value", max_moves=40, max_nodes=10**7, ends=3)
    first = S.solve_cubes("beam", far_cubes, beam_width=2, **common)
    search = S.solve_cubes("beam", far_cubes, beam_width=16, views=4, **common)
    anytime = S.solve_cubes("beam", far_cubes, beam_width=16, views=4, first_width=2, **common)
    length = lambda r: len(r.moves) if r.solved else np.inf  # noqa: E731
    for cube, a, b, got in zip(far_cubes, first, search, anytime):
        assert got.solved == verify(cube, got.moves, two) == (a.solved or b.solved)
        assert length(got) == min(length(a), length(b))
        if a.solved and length(a) <= length(b):
            assert got.moves == a.moves
        assert got.nodes <= a.nodes + b.nodes
    assert sum(length(a) > length(b) for a, b in zip(first, search)) >= 4  # the second round shortened these


def test_the_first_round_answers_where_a_narrow_beam_can(solver, far_cubes):
    """With the exact value a beam of width 1 walks a shortest path, so a first round of one view of 1 answers every
    cube optimally, and the wider search after it, with nothing shorter to find, leaves its solutions as they are."""
    two = get_puzzle("2x2")
    got = S.solve_cubes("beam", far_cubes, value_fn=exact_value_fn(solver), beam_width=50, views=4, first_width=1)
    first = S.solve_cubes("beam", far_cubes, value_fn=exact_value_fn(solver), beam_width=1)
    assert [len(r.moves) for r in got] == solver.batch_distance(far_cubes).tolist()
    assert [r.moves for r in got] == [r.moves for r in first] and all(a.nodes > b.nodes for a, b in zip(got, first))
    assert all(verify(cube, r.moves, two) for cube, r in zip(far_cubes, got))


def test_under_a_clock_only_the_value_advances_the_rounds_share_the_time_limit(monkeypatch, rough, far_cubes):
    """A fake clock that the value's calls alone advance (1 s each; a loaded machine's other delays do not count). On
    a cube whose narrow first round goes astray: with the time the configured search needs left after the first
    round, the answer is the configured search's; with a third of it, the first round's or one in between. Either
    way the second round ran on the time the first left and stopped within a depth (1 s) of the limit."""
    now = [0.0]
    monkeypatch.setattr(T, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))

    def slow_value(cubes):
        now[0] += 1.0
        return rough(cubes)

    cube = far_cubes[2:3]
    common = dict(value_fn=slow_value, beam_rank="value", max_moves=40, max_nodes=10**7)
    [first] = S.solve_cubes("beam", cube, beam_width=2, **common)
    [search] = S.solve_cubes("beam", cube, beam_width=16, views=4, **common)
    assert first.solved and search.solved and len(search.moves) < len(first.moves)
    for left in (search.seconds + 2.0, search.seconds / 3):
        limit = first.seconds + left
        [got] = S.solve_cubes("beam", cube, beam_width=16, views=4, first_width=2, seconds=limit, **common)
        assert got.solved and len(search.moves) <= len(got.moves) <= len(first.moves)
        assert len(got.moves) == len(search.moves) or left < search.seconds
        assert first.seconds + 1.0 < got.seconds <= limit + 1.0


def test_a_target_widens_the_real_beams_second_round_within_the_target(monkeypatch, rough, far_cubes):
    """A fake clock that the value's calls advance by a millisecond a row, so that a round's seconds grow with its
    rows as the sized width assumes: with a target of a hundred first rounds the second round is wider than configured,
    each cube ends within the target with a replayed solution no longer than its first round's, and the six
    solutions are no longer in all than the unsized anytime beam's."""
    now = [0.0]
    monkeypatch.setattr(T, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))

    def timed_value(cubes):
        now[0] += 0.001 * len(cubes)
        return rough(cubes)

    widths = []
    sized = A.sized_width
    monkeypatch.setattr(
        A, "sized_width", lambda o, *a: widths.append((o.target_seconds, sized(o, *a))) or widths[-1][1]
    )
    two = get_puzzle("2x2")
    common = dict(value_fn=timed_value, beam_rank="value", max_moves=40, max_nodes=10**7, beam_width=16, views=4)
    lengths = {"plain": 0, "sized": 0}
    for cube in far_cubes[:6]:
        [first] = S.solve_cubes("beam", cube, **{**common, "beam_width": 2, "views": 1})  # the first round alone
        [plain] = S.solve_cubes("beam", cube, first_width=2, **common)
        target = 100 * first.seconds  # the configured second round has 32 times its rows
        [got] = S.solve_cubes("beam", cube, first_width=2, target_seconds=target, **common)
        assert got.solved and verify(cube, got.moves, two) and len(got.moves) <= len(first.moves)
        assert got.seconds <= target + 1e-9
        lengths["plain"] += len(plain.moves)
        lengths["sized"] += len(got.moves)
    assert len(widths) == 12 and all(width > 16 for target, width in widths if target)
    assert lengths["sized"] <= lengths["plain"]


# --------------------------------------------------------------------------- the command line and the bench
def test_the_3x3s_default_is_the_anytime_beam_and_first_width_0_turns_it_off(capsys):
    import evaluate

    default = S.options_from_args(evaluate.parse_args(["--puzzle", "3x3"]))
    assert (default.first_width, default.first_views, default.beam_width, default.views) == (1000, 2, 4000, 8)
    assert S.options_from_args(evaluate.parse_args(["--puzzle", "3x3", "--first-width", "0"])).first_width == 0
    assert S.options_from_args(evaluate.parse_args([])).first_width == 0  # the 2x2's MCTS, as always
    with pytest.raises(SystemExit) as exc:
        evaluate.parse_args(["--solver", "beam", "--first-views", "49"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--first-views is at most 48 for the 2x2" in err and err.count("\n") == 1


@pytest.mark.slow
def test_the_anytime_bench_runs_every_variant_beside_a_busy_core(capsys):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import bench_anytime

    argv = ["--cubes", "2", "--beam-width", "8", "--threads", "1", "--busy", "--seed", "3", "--variants", "today",
            "anytime", "sized", "--target-seconds", "5"]  # fmt: skip
    assert bench_anytime.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count(" | anytime: ") == 2 and out.count(" | sized: ") == 2 and "busy core: True" in out
    assert all(f"{label}: solved " in out for label in ("today", "anytime", "sized"))
    assert "shorter: today on " in out and ", anytime on " in out and ", sized on " in out
