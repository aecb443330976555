"""The solvers of ``Solvers.py`` against ground truth: with the exact value (``1 - 0.03 d`` from
the optimal solver's table) greedy, beam and A* (lambda = 1) find optimal solutions; every
claimed solve replays; budgets hold; the mcts wrapper plays exactly what the evaluation plays.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest
import torch

import Solvers as S
from Optimal_Solver import get_solver
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import (
    NO_ACTION,
    SOLVED_STICKERS,
    apply_moves,
    batch_scramble,
    legal_action_mask,
    next_face_count,
    parse_moves,
)
from Self_Play import play_episodes


@pytest.fixture(scope="module")
def solver(isolated_solver_cache):
    return get_solver()


@pytest.fixture(scope="module")
def exact(solver):
    return S.exact_value_fn(solver)


@pytest.fixture(scope="module")
def by_distance(solver) -> dict[int, np.ndarray]:
    """A few distinct positions at every distance 1..14."""
    rng = np.random.default_rng(7)
    return {d: solver.random_cubes_at_distance(rng, d, 4) for d in range(1, 15)}


def legal_under_mask(moves, last=NO_ACTION, count=0) -> bool:
    """True when every move is allowed by the env's mask after the ones before it."""
    for a in moves:
        if not legal_action_mask(last, count)[a]:
            return False
        last, count = a, int(next_face_count(last, count, a))
    return True


def check_results(cubes, results) -> None:
    """The contract of every solver: one result per cube, solved exactly when the moves replay."""
    assert len(results) == len(cubes)
    for cube, r in zip(cubes, results):
        assert isinstance(r, S.SolveResult)
        assert r.solved == S.verify(cube, r.moves)
        assert r.nodes >= 0 and r.seconds >= 0


def test_value_to_moves():
    assert S.value_to_moves(np.array([1.0, 1 - 0.03 * 5, 1.2, -1.0])) == pytest.approx([0.0, 5.0, 0.0, 2 / 0.03])


def test_greedy_exact_is_optimal_and_legal(by_distance, exact, solver):
    cubes = np.concatenate([SOLVED_STICKERS[None]] + list(by_distance.values()))
    results = S.greedy(cubes, exact)
    check_results(cubes, results)
    assert [len(r.moves) for r in results] == solver.batch_distance(cubes).tolist()
    assert all(r.solved and legal_under_mask(r.moves) for r in results)
    assert results[0] == S.SolveResult([], True, 0, results[0].seconds)
    assert all(r.nodes <= 12 * len(r.moves) for r in results)


def test_greedy_chunks_and_history(by_distance, exact):
    cubes = np.concatenate(list(by_distance.values()))
    whole = S.greedy_batch(cubes, exact)
    chunked = S.greedy_batch(cubes, exact, chunk=5)
    for a, b in zip(whole, chunked):
        np.testing.assert_array_equal(a, b)
    # One U' from solved, reached by U' U': U (the inverse) and U' (a third turn) are masked,
    # so the solve has to turn another face (D, which on a 2x2 undoes U' up to orientation).
    cube = apply_moves(SOLVED_STICKERS, parse_moves("U'"))
    (r,) = S.greedy(cube[None], exact, last=1, count=2)
    assert r.solved and r.moves[0] not in (0, 1) and legal_under_mask(r.moves, 1, 2)


@pytest.mark.parametrize("batch", [1, 10])
def test_astar_lambda_one_is_optimal(by_distance, exact, solver, batch):
    cubes = np.concatenate([c[:2] for c in by_distance.values()])
    results = S.solve_cubes("astar", cubes, value_fn=exact, astar_lambda=1.0, astar_batch=batch, max_nodes=20_000)
    check_results(cubes, results)
    assert [len(r.moves) for r in results] == solver.batch_distance(cubes).tolist()
    assert all(r.solved and legal_under_mask(r.moves) for r in results)


def test_astar_defaults_and_history(by_distance, exact, solver):
    cubes = np.concatenate([by_distance[d][:1] for d in (3, 8, 14)])
    results = S.solve_cubes("astar", cubes, value_fn=exact)
    check_results(cubes, results)
    assert all(r.solved and len(r.moves) >= d for r, d in zip(results, solver.batch_distance(cubes)))
    cube = apply_moves(SOLVED_STICKERS, parse_moves("U'"))
    r = S.astar(cube, exact, last=1, count=2, lam=1.0)
    assert r.solved and r.moves[0] not in (0, 1) and legal_under_mask(r.moves, 1, 2)


def test_beam_exact_is_optimal(by_distance, exact, solver):
    cubes = np.concatenate([c[:2] for c in by_distance.values()])
    results = S.solve_cubes("beam", cubes, value_fn=exact, beam_width=8)
    check_results(cubes, results)
    assert [len(r.moves) for r in results] == solver.batch_distance(cubes).tolist()
    assert all(legal_under_mask(r.moves) for r in results)


def test_beam_policy_rank(by_distance, solver):
    def policy_fn(states):  # logits that favour the moves towards solved
        children = states[:, S.MOVE_PERMS].reshape(-1, 24)
        return -5.0 * solver.batch_distance(children).reshape(-1, 12)

    cubes = np.concatenate([by_distance[d][:2] for d in (4, 9, 13)])
    results = S.solve_cubes("beam", cubes, policy_fn=policy_fn, beam_rank="policy", beam_width=4)
    check_results(cubes, results)
    assert [len(r.moves) for r in results] == solver.batch_distance(cubes).tolist()
    with pytest.raises(ValueError, match="policy_fn"):
        S.beam(cubes[0], value_fn=lambda c: np.zeros(len(c)), rank="policy")


def test_bestfirst_solves_short_scrambles_and_keeps_its_budget(by_distance):
    cubes, _ = batch_scramble(np.random.default_rng(3), 12, 4)
    results = S.solve_cubes("bestfirst", cubes)
    check_results(cubes, results)
    assert all(r.solved and legal_under_mask(r.moves) for r in results)
    tiny = S.solve_cubes("bestfirst", by_distance[6], max_nodes=30)
    check_results(by_distance[6], tiny)
    assert all(not r.solved and r.moves == [] and r.nodes <= 30 for r in tiny)
    assert S.seed_heuristic(SOLVED_STICKERS, 0)[0] == 24
    assert S.seed_heuristic(SOLVED_STICKERS, 2)[0] == 24 - 8


def test_budgets_are_not_solves(by_distance, exact):
    cube = by_distance[12][:1]
    for name, extra in (("astar", {}), ("beam", {"beam_width": 50})):
        (r,) = S.solve_cubes(name, cube, value_fn=exact, max_nodes=100, **extra)
        assert not r.solved and r.moves == [] and r.nodes <= 100
    (r,) = S.solve_cubes("greedy", cube, value_fn=exact, max_moves=5)
    assert not r.solved and len(r.moves) == 5


def test_wrong_values_never_claim_a_solve(by_distance, solver):
    rng = np.random.default_rng(0)

    def away(states):  # the opposite of the truth: prefers positions far from solved
        return 1 - 0.03 * (14 - solver.batch_distance(states))

    def noise(states):
        return rng.uniform(-1, 1, len(states))

    cubes = np.concatenate([by_distance[d][:2] for d in (2, 7, 12)])
    for fn in (away, noise):
        for name in ("greedy", "beam", "astar"):
            results = S.solve_cubes(name, cubes, value_fn=fn, max_nodes=2000, beam_width=5, max_moves=12)
            check_results(cubes, results)
        assert not any(r.solved for r in S.greedy(cubes, away))


def test_mcts_wrapper_plays_exactly_the_evaluation(torch_one_thread):
    torch.manual_seed(0)
    model = PolicyValueNet()
    cubes, _ = batch_scramble(np.random.default_rng(1), 6, 3)
    expected = play_episodes(
        model.eval(), cubes, 5, 8, select_mode="greedy", temperature=0.3, rng=np.random.default_rng(0), c_puct=1.3
    )
    results = S.solve_cubes("mcts", cubes, model=model, sims=8, max_moves=5)
    check_results(cubes, results)
    assert [r.moves for r in results] == expected.actions
    assert [r.solved for r in results] == expected.solved.tolist()
    assert [r.nodes for r in results] == [8 * len(a) for a in expected.actions]
    with pytest.raises(ValueError, match="fresh move history"):
        S.solve_cubes("mcts", cubes, model=model, last=0, count=1)


def test_mcts_with_functions(exact, solver, by_distance):
    def policy_fn(states):
        children = states[:, S.MOVE_PERMS].reshape(-1, 24)
        return -3.0 * solver.batch_distance(children).reshape(-1, 12)

    cubes = np.concatenate([by_distance[d][:1] for d in (1, 3, 5)])
    results = S.solve_cubes("mcts", cubes, value_fn=exact, policy_fn=policy_fn, sims=30, max_moves=10)
    check_results(cubes, results)
    assert all(r.solved for r in results)


def test_network_backed_run_reports_nodes_and_time(torch_one_thread):
    torch.manual_seed(0)
    model = PolicyValueNet()
    model.train()
    cubes, _ = batch_scramble(np.random.default_rng(2), 3, 3)
    for name in ("greedy", "beam", "astar"):
        results = S.solve_cubes(name, cubes, model=model, max_moves=6, max_nodes=600, beam_width=4, astar_batch=5)
        check_results(cubes, results)
        assert all(r.nodes > 0 and r.seconds > 0 for r in results)
    assert model.training  # the network's mode is restored
    value_fn, policy_fn = S.network_fns(model, batch=7)
    assert value_fn(cubes).shape == (3,) and policy_fn(cubes).shape == (3, 12)
    assert value_fn(cubes[:0]).shape == (0,)


def test_solved_cubes_and_unknown_names(exact):
    solved = SOLVED_STICKERS[None]
    for name in ("greedy", "beam", "astar", "bestfirst"):
        (r,) = S.solve_cubes(name, solved, value_fn=exact)
        assert r.solved and r.moves == [] and r.nodes == 0
    with pytest.raises(ValueError, match="unknown solver"):
        S.solve_cubes("dfs", solved, value_fn=exact)
    with pytest.raises(ValueError, match="value_fn"):
        S.solve_cubes("greedy", solved)
    assert set(S.SOLVERS) == set(S.SOLVER_NAMES)


def test_command_line_flags():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--max-steps", type=int, default=40)
    S.add_solver_arguments(parser)
    args = parser.parse_args(["--solver", "astar", "--astar-lambda", "1", "--max-nodes", "500", "--max-steps", "20"])
    opts = S.options_from_args(args)
    assert args.solver == "astar"
    assert (opts.astar_lambda, opts.max_nodes, opts.max_moves, opts.sims, opts.beam_width) == (1.0, 500, 20, 1000, 100)
    assert parser.parse_args([]).solver == "mcts"
    for bad in (["--beam-width", "0"], ["--astar-lambda", "2"], ["--solver", "dfs"], ["--time-limit", "-1"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)


def seed_bestfirst_reference(cube: np.ndarray) -> list[int]:
    """Seed 003's ``solve`` written plainly: a sorted frontier (``SortedSet.pop()`` takes the
    highest score, the newest among equals), all 12 moves in the seed's order, no mask."""
    import bisect

    from Rubik2x2Env import apply_move_idx, batch_is_solved

    def solved(c):
        return bool(batch_is_solved(c[None])[0])

    nodes = [(cube, 0, -1, -1)]  # (state, steps, parent, action)
    frontier = [(int(S.seed_heuristic(cube, 0)[0]), 0)]  # ascending; new equals go right
    explored = {cube.tobytes()}
    while frontier:
        _, node = frontier.pop()
        state, steps = nodes[node][0], nodes[node][1]
        for a in S.SEED_ACTION_ORDER.tolist():
            child = apply_move_idx(state, a)
            if solved(child):
                moves = [a]
                while nodes[node][2] >= 0:
                    moves.append(nodes[node][3])
                    node = nodes[node][2]
                return moves[::-1]
            if child.tobytes() in explored:
                continue
            explored.add(child.tobytes())
            nodes.append((child, steps + 1, node, a))
            score = int(S.seed_heuristic(child, steps + 1)[0])
            frontier.insert(bisect.bisect_right([s for s, _ in frontier], score), (score, len(nodes) - 1))
    return []


def test_bestfirst_follows_the_seed():
    cubes, _ = batch_scramble(np.random.default_rng(5), 8, 5)
    for cube, r in zip(cubes, S.solve_cubes("bestfirst", cubes)):
        assert r.moves == seed_bestfirst_reference(cube)


def test_gumbel_solver_plays_the_greedy_gumbel_episodes():
    from Gumbel_MCTS import play_gumbel_episodes

    torch.manual_seed(0)
    model = PolicyValueNet()
    cubes, _ = batch_scramble(np.random.default_rng(6), 4, 3)
    results = S.solve_cubes("gumbel", cubes, model=model, sims=8, max_moves=5)
    check_results(cubes, results)
    run = play_gumbel_episodes(model.eval(), cubes, 8, 5, np.random.default_rng(0), gumbel_scale=0.0)
    assert [r.moves for r in results] == run.actions
    assert [r.nodes for r in results] == [8 * len(a) for a in run.actions]
    # Functions instead of a model feed the same search.
    value_fn, policy_fn = S.network_fns(model)
    again = S.solve_cubes("gumbel", cubes, value_fn=value_fn, policy_fn=policy_fn, sims=8, max_moves=5)
    assert [r.moves for r in again] == run.actions


def test_gumbel_with_the_exact_value_solves_short_scrambles(solver, exact):
    cubes = np.concatenate([solver.random_cubes_at_distance(np.random.default_rng(8), d, 2) for d in (1, 2, 3)])
    uniform = lambda c: np.zeros((len(c), 12))  # noqa: E731 - no policy: the values decide
    results = S.solve_cubes("gumbel", cubes, value_fn=exact, policy_fn=uniform, sims=32, max_moves=10)
    check_results(cubes, results)
    assert all(r.solved for r in results)


def test_solver_settings_name_each_solvers_options():
    assert "gumbel" in S.SOLVER_NAMES and S.NETWORK_SOLVERS == set(S.SOLVER_NAMES) - {"bestfirst"}
    opts = S.SolverOptions(sims=12, beam_width=7)
    assert S.solver_settings("mcts", opts) == {"sims": 12, "max_moves": 40, "c_puct": 1.3}
    assert S.solver_settings("beam", opts)["beam_width"] == 7
    assert set(S.SOLVER_FIELDS) == set(S.SOLVER_NAMES)
