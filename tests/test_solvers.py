"""The solvers of ``Solvers.py`` against ground truth: with the exact value (``1 - 0.03 d`` from
the optimal solver's table) greedy, beam and A* (lambda = 1) find optimal solutions; every
claimed solve replays; budgets hold; the mcts wrapper plays exactly what the evaluation plays.
"""

from __future__ import annotations

import argparse
import types

import numpy as np
import pytest
import torch

from cube import Solver_Base as B
from cube import Solvers as S
from cube import Tree_Searches as T
from cube.Puzzles import get_puzzle, value_as_moves
from engine.Value_Scale import TIE_TOLERANCE, greedy_choice
from Optimal_Solver import get_solver
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import (
    MOVE_PERMS,
    NO_ACTION,
    ROTATION_PERMS,
    SOLVED_STICKERS,
    apply_moves,
    batch_rotate,
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
    return B.exact_value_fn(solver)


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


def test_value_as_moves():
    values = np.array([1.0, 1 - 0.03 * 5, 1.2, -1.0])
    assert value_as_moves(values, at_least=0.0) == pytest.approx([0.0, 5.0, 0.0, 2 / 0.03])
    assert value_as_moves(values) == pytest.approx([0.0, 5.0, -0.2 / 0.03, 2 / 0.03])  # unbounded: a measure


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
    r = T.astar(cube, exact, last=1, count=2, lam=1.0)
    assert r.solved and r.moves[0] not in (0, 1) and legal_under_mask(r.moves, 1, 2)


def test_beam_exact_is_optimal(by_distance, exact, solver):
    cubes = np.concatenate([c[:2] for c in by_distance.values()])
    results = S.solve_cubes("beam", cubes, value_fn=exact, beam_width=8)
    check_results(cubes, results)
    assert [len(r.moves) for r in results] == solver.batch_distance(cubes).tolist()
    assert all(legal_under_mask(r.moves) for r in results)


def test_beam_policy_rank(by_distance, solver):
    def policy_fn(states):  # logits that favour the moves towards solved
        children = states[:, MOVE_PERMS].reshape(-1, 24)
        return -5.0 * solver.batch_distance(children).reshape(-1, 12)

    cubes = np.concatenate([by_distance[d][:2] for d in (4, 9, 13)])
    results = S.solve_cubes("beam", cubes, policy_fn=policy_fn, beam_rank="policy", beam_width=4)
    check_results(cubes, results)
    assert [len(r.moves) for r in results] == solver.batch_distance(cubes).tolist()
    with pytest.raises(ValueError, match="policy_fn"):
        T.beam(cubes[0], value_fn=lambda c: np.zeros(len(c)), rank="policy")


def test_bestfirst_solves_short_scrambles_and_keeps_its_budget(by_distance):
    cubes, _ = batch_scramble(np.random.default_rng(3), 12, 4)
    results = S.solve_cubes("bestfirst", cubes)
    check_results(cubes, results)
    assert all(r.solved and legal_under_mask(r.moves) for r in results)
    tiny = S.solve_cubes("bestfirst", by_distance[6], max_nodes=30)
    check_results(by_distance[6], tiny)
    assert all(not r.solved and r.moves == [] and r.nodes <= 30 for r in tiny)
    assert T.seed_heuristic(SOLVED_STICKERS, 0)[0] == 24
    assert T.seed_heuristic(SOLVED_STICKERS, 2)[0] == 24 - 8


def test_budgets_are_not_solves(by_distance, exact):
    cube = by_distance[12][:1]
    for name, extra in (("astar", {}), ("beam", {"beam_width": 50})):
        (r,) = S.solve_cubes(name, cube, value_fn=exact, max_nodes=100, **extra)
        assert not r.solved and r.moves == [] and r.nodes <= 100
    (r,) = S.solve_cubes("greedy", cube, value_fn=exact, max_moves=5)
    assert not r.solved and len(r.moves) == 5


class FakeClock:
    """A search's clock that advances only when told."""

    spent = 0.0

    def __call__(self) -> float:
        return self.spent


def timed_beam(cube, limit, value_fn, width=4, rank="value", per_state=0.01):
    """One 2x2 ``_beam_search`` whose clock advances ``per_state`` fake seconds for each state it has
    evaluated: its result, the sizes of its requests and the seconds it spent."""
    clock, sizes = FakeClock(), []
    search = T._beam_search(cube, NO_ACTION, 0, width, 30, 10**9, rank, limit, clock, get_puzzle("2x2"))
    try:
        request = next(search)
        while True:
            sizes.append(len(request))
            clock.spent += per_state * len(request)
            request = search.send(value_fn(request))
    except StopIteration as stop:
        return stop.value, sizes, clock.spent


def nothing(states):
    return np.zeros(len(states))


@pytest.mark.parametrize("limit", [0.5, 1.0, 2.0, 3.0, 5.0])
def test_a_beam_out_of_time_narrows_within_its_limit(by_distance, limit):
    """Each state read costs a hundredth of a fake second and the values say nothing (all 0): the beam runs
    its full width while a depth fits, then on fewer of its best states, within a depth's jitter of the
    limit (the first depths grow the beam twelvefold, so their cost is not yet the last one's)."""
    result, sizes, spent = timed_beam(by_distance[14][0], limit, nothing)
    _, full_sizes, full_spent = timed_beam(by_distance[14][0], None, nothing)
    assert not result.solved and full_spent > 2 * limit  # the limit binds
    assert limit - 0.01 * max(sizes) < spent <= limit + 0.01 * max(sizes)
    narrowed = next((i for i, n in enumerate(sizes) if i and n < max(sizes)), len(sizes))  # first narrowed depth
    assert sizes[:narrowed] == full_sizes[:narrowed] and all(n < max(sizes) for n in sizes[narrowed:])
    if limit >= 3:  # late enough for half the time left to hold a narrower beam's depth
        assert len(sizes) - narrowed >= 2


@pytest.mark.parametrize("rank", ["value", "mixed"])
def test_a_narrowing_beam_solves_what_stopping_at_the_limit_could_not(by_distance, exact, rank):
    """A 14-move cube whose full-width search (64) needs three times the limit: the beam narrows where the
    limit would stop it, to the width that shares the time left among the depths its (exact) value says
    are to go, and is solved in 14 moves within the limit."""
    if rank == "mixed":
        uniform = np.zeros(12)
        fn = lambda states: np.column_stack([exact(states), np.tile(uniform, (len(states), 1))])  # noqa: E731
    else:
        fn = exact
    for cube in by_distance[14]:
        _, full_sizes, full_spent = timed_beam(cube, None, fn, 64, rank)
        limit = full_spent / 3
        result, sizes, spent = timed_beam(cube, limit, fn, 64, rank)
        assert result.solved and len(result.moves) == 14 and spent <= limit + 0.01 * max(sizes)
        assert B.verify(cube[None], result.moves, get_puzzle("2x2"))
        narrowed = next(i for i, n in enumerate(sizes) if i > 3 and n < full_sizes[i] / 4)
        assert narrowed < 10 and max(sizes[narrowed:]) < 2 * min(sizes[narrowed:])  # one width to the end


def test_lockstep_shares_a_rounds_time_by_the_states_each_search_had_read(monkeypatch):
    """Two searches in one lockstep call, one asking for 1 state a round and one for 3: the second's clock
    runs three times as fast (a narrowed beam is charged for its own share of the network's work), and
    each has its share of a round on its clock when it reads it after the reply. The clock is a fake one
    that only the network's calls advance (10 ms each): a loaded machine's own delays must not count."""
    clocks: dict[int, list[float]] = {0: [], 1: []}
    now = [0.0]
    monkeypatch.setattr(T, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))

    def start(i, clock):
        def search():
            for _ in range(4):
                clocks[i].append(clock())
                yield np.zeros((1 + 2 * i, 4), np.int8)
            return T.SolveResult([], False, 0, 0.0)

        return search()

    def slow(states):
        now[0] += 0.01
        return np.zeros(len(states))

    T._lockstep(start, 2, slow, chunk=2)
    one, three = (np.diff(clocks[i]) for i in (0, 1))  # each read sees the last round's share already
    assert np.allclose(three, 3 * one) and np.allclose(one, 0.0025)


@pytest.mark.slow
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
        children = states[:, MOVE_PERMS].reshape(-1, 24)
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
    args = parser.parse_args([])
    S.resolve_solver(args)  # no --solver (and no --puzzle): the 2x2's mcts, with every default
    assert args.solver == "mcts" and S.options_from_args(args) == S.SolverOptions()
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
    frontier = [(int(T.seed_heuristic(cube, 0)[0]), 0)]  # ascending; new equals go right
    explored = {cube.tobytes()}
    while frontier:
        _, node = frontier.pop()
        state, steps = nodes[node][0], nodes[node][1]
        for a in T.SEED_ACTION_ORDER.tolist():
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
            score = int(T.seed_heuristic(child, steps + 1)[0])
            frontier.insert(bisect.bisect_right([s for s, _ in frontier], score), (score, len(nodes) - 1))
    return []


def test_bestfirst_follows_the_seed():
    cubes, _ = batch_scramble(np.random.default_rng(5), 8, 5)
    for cube, r in zip(cubes, S.solve_cubes("bestfirst", cubes)):
        assert r.moves == seed_bestfirst_reference(cube)


def test_gumbel_solver_plays_the_greedy_gumbel_episodes():
    from engine.Gumbel_Self_Play import play_gumbel_episodes

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


# --------------------------------------------------------------------------- lockstep beam and A*
# The single-cube beam and A* exactly as they were before the lockstep driver (one network
# call per cube per step), frozen here as the reference the lockstep versions must match.
def reference_beam(cube, value_fn=None, policy_fn=None, last=NO_ACTION, count=0, beam_width=100, max_depth=40,
                   max_nodes=200_000, rank="value", batch_state_keys=None):  # fmt: skip
    from Rubik2x2Env import batch_apply_moves, batch_is_solved

    if batch_state_keys is None:  # states are "the same" when their stickers are
        from Rubik2x2Env import batch_state_keys

    root = np.asarray(cube, dtype=np.int8).reshape(1, 24)
    if batch_is_solved(root)[0]:
        return S.SolveResult([], True, 0, 0.0)
    states, (lasts, counts) = root, B.start_history(1, last, count)
    paths = np.zeros((1, 0), np.intp)
    cum = np.zeros(1)
    held = {int(batch_state_keys(root)[0])}  # every state a beam has held
    nodes = 0
    for _ in range(max_depth):
        legal = legal_action_mask(lasts, counts)
        if nodes + int(legal.sum()) > max_nodes:
            break
        parent, action = np.nonzero(legal)
        children = batch_apply_moves(states[parent], action)
        nodes += len(children)
        solved = np.flatnonzero(batch_is_solved(children))
        if len(solved):
            moves = paths[parent[solved[0]]].tolist() + [int(action[solved[0]])]
            return S.SolveResult(moves, S.verify(root, moves), nodes, 0.0)
        if rank == "value":
            score = np.asarray(value_fn(children), dtype=np.float64)
        else:
            score = cum[parent] + B.log_softmax(policy_fn(states))[parent, action]
        order = np.argsort(-score, kind="stable")
        _, first = np.unique(batch_state_keys(children[order]), return_index=True)
        order = order[np.sort(first)]
        keys = batch_state_keys(children[order])
        order = order[[int(k) not in held for k in keys]]
        if rank == "mixed":  # the policy's best proposals, ordered by value
            order = order[: T.MIXED_PROPOSALS * beam_width]
            order = order[np.argsort(-np.asarray(value_fn(children[order]), np.float64), kind="stable")]
        keep = order[:beam_width]
        if not len(keep):
            break
        held.update(int(k) for k in batch_state_keys(children[keep]))
        states, paths, cum = children[keep], np.column_stack([paths[parent[keep]], action[keep]]), score[keep]
        counts = next_face_count(lasts[parent[keep]], counts[parent[keep]], action[keep])
        lasts = action[keep]
    return S.SolveResult([], False, nodes, 0.0)


def reference_astar(cube, value_fn, last=NO_ACTION, count=0, lam=0.6, batch=100, max_nodes=200_000):
    import heapq
    import itertools

    from Rubik2x2Env import batch_is_solved, batch_state_keys

    root = np.asarray(cube, dtype=np.int8).reshape(1, 24)
    if batch_is_solved(root)[0]:
        return S.SolveResult([], True, 0, 0.0)
    last, count = B.start_history(1, last, count)
    graph = T._Graph(24)
    graph.add(batch_state_keys(root), root, 0, 0.0, -1, last, count)
    tiebreak = itertools.count()
    open_heap = [(0.0, 0, next(tiebreak), 0, 0)]
    goal, goal_g, nodes = -1, np.inf, 0
    while open_heap and (goal < 0 or open_heap[0][0] < round(lam * goal_g, T.F_DECIMALS)):
        room = min(batch, (max_nodes - nodes) // 12)
        popped = []
        while open_heap and len(popped) < room:
            _, _, _, node, g = heapq.heappop(open_heap)
            if g == graph.g[node] and g < graph.closed_g[node]:
                graph.closed_g[node] = g
                popped.append(node)
            if goal >= 0 and open_heap and open_heap[0][0] >= round(lam * goal_g, T.F_DECIMALS):
                break
        if not popped:
            break
        nodes, goal, goal_g = reference_expand(
            graph, np.array(popped), value_fn, lam, open_heap, tiebreak, nodes, goal, goal_g
        )
    if goal < 0:
        return S.SolveResult([], False, nodes, 0.0)
    moves = graph.path(goal)
    return S.SolveResult(moves, S.verify(root, moves), nodes, 0.0)


def reference_expand(graph, parents, value_fn, lam, open_heap, tiebreak, nodes, goal, goal_g):
    import heapq

    from Rubik2x2Env import batch_apply_moves, batch_is_solved, batch_state_keys

    legal = legal_action_mask(graph.action[parents], graph.count[parents])
    row, action = np.nonzero(legal)
    parent = parents[row]
    state = batch_apply_moves(graph.state[parent], action)
    g = graph.g[parent] + 1
    nodes += len(state)
    keys = batch_state_keys(state)
    order = np.lexsort((np.arange(len(keys)), g, keys))
    first = order[np.unique(keys[order], return_index=True)[1]]
    first.sort()
    keys, state, g, parent, action = keys[first], state[first], g[first], parent[first], action[first]
    count = next_face_count(graph.action[parent], graph.count[parent], action)
    known = np.fromiter((graph.index.get(k, -1) for k in keys.tolist()), dtype=np.int64, count=len(keys))
    better = np.flatnonzero(known >= 0)
    better = better[g[better] < graph.g[known[better]]]
    ids = known[better]
    graph.g[ids], graph.parent[ids], graph.action[ids], graph.count[ids] = (
        g[better],
        parent[better],
        action[better],
        count[better],
    )
    new = np.flatnonzero(known < 0)
    solved = batch_is_solved(state[new])
    h = np.zeros(len(new))
    if (~solved).any():
        h[~solved] = value_as_moves(value_fn(state[new[~solved]]), at_least=0.0)
    new_ids = graph.add(keys[new], state[new], g[new], h, parent[new], action[new], count[new])
    touched = np.concatenate([ids, new_ids])
    is_goal = batch_is_solved(graph.state[touched])
    for node in touched[is_goal].tolist():
        if graph.g[node] < goal_g:
            goal, goal_g = node, graph.g[node]
    f = np.round(lam * graph.g[touched] + graph.h[touched], T.F_DECIMALS)
    for node, f_node, g_node in zip(
        touched[~is_goal].tolist(), f[~is_goal].tolist(), graph.g[touched[~is_goal]].tolist()
    ):
        heapq.heappush(open_heap, (f_node, -g_node, next(tiebreak), node, g_node))
    return nodes, goal, goal_g


@pytest.fixture(scope="module")
def lockstep_cubes(by_distance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """57 cubes (the solved one and four at each distance 1..14) and a move history for each:
    most fresh, some just turned (``U'`` once or twice) so the mask differs between cubes."""
    cubes = np.concatenate([SOLVED_STICKERS[None]] + list(by_distance.values()))
    last = np.full(len(cubes), NO_ACTION)
    count = np.zeros(len(cubes), int)
    last[3::5], count[3::5] = 1, 1
    last[4::7], count[4::7] = 1, 2
    return cubes, last, count


@pytest.fixture(scope="module")
def value_tables(solver, exact) -> dict:
    """Value functions that are functions of the position alone (so a cube's values cannot
    depend on which other cubes share its network call): the exact value, a random table, a
    coarse random table full of ties, and a random network memoised per position (its first
    value of a position is kept: the network's float rounding varies with the batch). The network is
    narrow: its values are as arbitrary as a wide one's, and its many small forwards (one per A* step
    of the batch-1 searches) cost a tenth as much."""
    rng = np.random.default_rng(11)
    noise = rng.uniform(0.5, 1.0, 3_674_160).astype(np.float32)
    coarse = (1 - 0.03 * rng.integers(0, 15, 3_674_160)).astype(np.float32)
    torch.manual_seed(3)
    net_value, _ = S.network_fns(PolicyValueNet(hidden_sizes=(64, 64)))
    from Rubik2x2Env import batch_state_keys

    memo: dict[int, float] = {}

    def net(cubes):
        keys = batch_state_keys(cubes).tolist()
        todo = [i for i, k in enumerate(keys) if k not in memo]
        if todo:
            memo.update(zip([keys[i] for i in todo], net_value(cubes[todo]).tolist()))
        return np.array([memo[k] for k in keys], np.float32)

    return {
        "exact": exact,
        "random table": lambda c: noise[solver.index(c)],
        "tied table": lambda c: coarse[solver.index(c)],
        "memoised net": net,
    }


def same_steps(got, want) -> list[int]:
    """Indices of the cubes whose (moves, solved, nodes) differ."""
    return [
        i for i, (a, b) in enumerate(zip(got, want)) if (a.moves, a.solved, a.nodes) != (b.moves, b.solved, b.nodes)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("fn_name", ["exact", "random table", "tied table", "memoised net"])
@pytest.mark.parametrize("width", [1, 8, 32])
def test_beam_lockstep_matches_one_cube_at_a_time(lockstep_cubes, value_tables, fn_name, width):
    cubes, last, count = lockstep_cubes
    fn = value_tables[fn_name]
    budget = 3000
    want = [reference_beam(c, fn, None, a, k, width, 16, budget) for c, a, k in zip(cubes, last, count)]
    for chunk in (T.LOCKSTEP_CHUNK, 7):
        got = S.beam_lockstep(cubes, fn, None, last, count, width, 16, budget, chunk=chunk)
        check_results(cubes, got)
        assert same_steps(got, want) == []
        assert all(r.nodes <= budget for r in got)
    alone = [T.beam(c, fn, None, a, k, width, 16, budget) for c, a, k in zip(cubes[::6], last[::6], count[::6])]
    assert same_steps(alone, want[::6]) == []


@pytest.mark.slow
@pytest.mark.parametrize("fn_name", ["exact", "tied table"])
@pytest.mark.parametrize("width", [1, 8])
def test_beam_by_position_matches_its_reference(lockstep_cubes, value_tables, fn_name, width):
    cubes, last, count = lockstep_cubes
    fn, keys = value_tables[fn_name], get_puzzle("2x2").position_keys  # both tables read positions
    want = [
        reference_beam(c, fn, None, a, k, width, 16, 3000, batch_state_keys=keys) for c, a, k in zip(cubes, last, count)
    ]
    got = S.beam_lockstep(cubes, fn, None, last, count, width, 16, 3000, chunk=7, by_position=True)
    check_results(cubes, got)
    assert same_steps(got, want) == []


def test_beam_lockstep_policy_rank_matches(lockstep_cubes, solver):
    rng = np.random.default_rng(12)
    table = rng.normal(size=3_674_160).astype(np.float32)

    def policy_fn(states):  # random logits, a function of the position
        return table[(solver.index(states)[:, None] + 7919 * np.arange(12)) % len(table)]

    cubes, last, count = lockstep_cubes
    want = [reference_beam(c, None, policy_fn, a, k, 6, 14, rank="policy") for c, a, k in zip(cubes, last, count)]
    got = S.solve_cubes("beam", cubes, policy_fn=policy_fn, last=last, count=count, beam_rank="policy",
                        beam_width=6, max_moves=14)  # fmt: skip
    check_results(cubes, got)
    assert same_steps(got, want) == []


@pytest.mark.parametrize("fn_name", ["exact", "tied table"])
def test_beam_mixed_rank_matches_reference(lockstep_cubes, value_tables, solver, fn_name):
    """The policy proposes, the value picks: against the plain reference, with the two heads
    given as separate functions (one forward for both in ``network_fns``)."""
    rng = np.random.default_rng(13)
    table = rng.normal(size=3_674_160).astype(np.float32)

    def policy_fn(states):
        return table[(solver.index(states)[:, None] + 7919 * np.arange(12)) % len(table)]

    cubes, last, count = lockstep_cubes
    value_fn = value_tables[fn_name]
    want = [reference_beam(c, value_fn, policy_fn, a, k, 3, 14, rank="mixed") for c, a, k in zip(cubes, last, count)]
    got = S.solve_cubes("beam", cubes, value_fn=value_fn, policy_fn=policy_fn, last=last, count=count,
                        beam_rank="mixed", beam_width=3, max_moves=14)  # fmt: skip
    check_results(cubes, got)
    assert same_steps(got, want) == []
    assert sum(r.solved for r in got) > 0


def test_network_with_value_is_one_forward_of_both_heads(lockstep_cubes):
    torch.manual_seed(0)
    value_fn, policy_fn = B.network_fns(PolicyValueNet())
    cubes = lockstep_cubes[0][:3]
    both = policy_fn.with_value(cubes)
    assert both.shape == (3, 13)
    np.testing.assert_array_equal(both[:, 0], value_fn(cubes))
    np.testing.assert_array_equal(both[:, 1:], policy_fn(cubes))


@pytest.mark.slow
@pytest.mark.parametrize("fn_name", ["exact", "random table", "tied table", "memoised net"])
@pytest.mark.parametrize(("lam", "batch"), [(0.6, 100), (1.0, 1), (1.0, 10), (0.3, 7)])
def test_astar_lockstep_matches_one_cube_at_a_time(lockstep_cubes, value_tables, fn_name, lam, batch):
    cubes, last, count = lockstep_cubes
    fn = value_tables[fn_name]
    budget = 3000 if fn_name == "exact" else 500 if batch == 1 else 1500  # batch 1: ~1 node a step
    want = [reference_astar(c, fn, a, k, lam, batch, budget) for c, a, k in zip(cubes, last, count)]
    for chunk in (T.LOCKSTEP_CHUNK, 5):
        got = S.astar_lockstep(cubes, fn, last, count, lam, batch, budget, chunk=chunk)
        check_results(cubes, got)
        assert same_steps(got, want) == []
        assert all(r.nodes <= budget for r in got)
    alone = [T.astar(c, fn, a, k, lam, batch, budget) for c, a, k in zip(cubes[::6], last[::6], count[::6])]
    assert same_steps(alone, want[::6]) == []


@pytest.mark.slow
def test_lockstep_exact_optimal_and_one_call_per_step(lockstep_cubes, exact, solver):
    cubes = lockstep_cubes[0]
    calls = []

    def counted(states):
        calls.append(len(states))
        return exact(states)

    dist = solver.batch_distance(cubes).tolist()
    for name, extra in (("beam", {"beam_width": 8}), ("astar", {"astar_lambda": 1.0, "astar_batch": 10})):
        calls.clear()
        results = S.solve_cubes(name, cubes, value_fn=counted, max_nodes=20_000, **extra)
        check_results(cubes, results)
        assert [len(r.moves) for r in results] == dist and all(r.solved for r in results)
        assert all(legal_under_mask(r.moves) for r in results)
        # One network call per step for all cubes: as many calls as the longest search's steps.
        alone = []
        for cube in cubes:
            before = len(calls)
            S.solve_cubes(name, cube, value_fn=counted, max_nodes=20_000, **extra)
            alone.append(len(calls) - before)
        lockstep_calls = len(calls) - sum(alone)
        assert lockstep_calls == max(alone) < sum(alone)


@pytest.mark.slow
def test_lockstep_groups_bound_the_network_batch(lockstep_cubes, exact):
    cubes = lockstep_cubes[0]
    sizes = []

    def spy(states):
        sizes.append(len(states))
        return exact(states)

    S.beam_lockstep(cubes, spy, beam_width=8, chunk=5)
    assert max(sizes) <= 5 * 8 * 12
    sizes.clear()
    S.astar_lockstep(cubes, spy, batch=10, chunk=4)
    assert max(sizes) <= 4 * 10 * 12


def test_lockstep_budgets_and_shared_seconds(lockstep_cubes, exact, solver):
    cubes = lockstep_cubes[0]
    dist = solver.batch_distance(cubes)
    for name in ("beam", "astar"):
        results = S.solve_cubes(name, cubes, value_fn=exact, max_nodes=60, beam_width=50, astar_batch=50)
        check_results(cubes, results)
        assert all(r.nodes <= 60 for r in results)
        assert all(r.solved == (r.moves != []) or d == 0 for r, d in zip(results, dist))
        assert not any(r.solved for r, d in zip(results, dist) if d >= 6)  # 60 nodes cannot reach them
        # A time limit already spent after the first round: nothing beyond it is searched, and
        # every cube gets its group's time shared evenly (astar: groups of 20 at 200,000 nodes).
        timed = S.solve_cubes(name, cubes, value_fn=exact, seconds=1e-9, beam_width=50, astar_batch=50)
        check_results(cubes, timed)
        assert not any(r.solved for r, d in zip(timed, dist) if d >= 3)
        groups = -(-len(cubes) // (T.LOCKSTEP_NODES // S.SolverOptions().max_nodes)) if name == "astar" else 1
        assert len({r.seconds for r in timed}) == groups and all(r.seconds > 0 for r in timed)


def test_position_keys_equal_exactly_for_one_position_up_to_a_turn(solver):
    puzzle = get_puzzle("2x2")
    cubes, _ = batch_scramble(np.random.default_rng(5), 200, 12)
    turned = batch_rotate(cubes, np.random.default_rng(6).integers(0, len(ROTATION_PERMS), len(cubes)))
    assert np.array_equal(puzzle.position_keys(cubes), puzzle.position_keys(turned))
    # Equal keys exactly where the optimal solver's index (positions up to a turn) is equal.
    children = np.concatenate([puzzle.apply(cubes, np.full(len(cubes), a)) for a in range(12)])
    keys, index = puzzle.position_keys(children), solver.index(children)
    assert len(np.unique(keys)) == len(np.unique(index))
    assert len(np.unique(np.stack([keys, index]), axis=1)[0]) == len(np.unique(index))
    # U and D (and each move and the same turn of the opposite face) give one position.
    for a, b in ((0, 10), (1, 11), (2, 6), (3, 7), (4, 8), (5, 9)):
        assert np.array_equal(keys[a * 200 : (a + 1) * 200], keys[b * 200 : (b + 1) * 200])
    three = get_puzzle("3x3")
    c3, _ = three.scramble(np.random.default_rng(1), 5, 8)
    assert np.array_equal(three.position_keys(c3), three.state_keys(c3))


def test_evaluate_once_serves_each_position_once(solver, exact):
    puzzle = get_puzzle("2x2")
    seen = []

    def counting(cubes):
        seen.append(len(cubes))
        return exact(cubes)

    counting.reads_positions = True
    cubes, _ = batch_scramble(np.random.default_rng(3), 50, 9)
    children = np.concatenate([puzzle.apply(cubes, np.full(50, a)) for a in range(12)])
    once = S.evaluate_once(counting, puzzle, by_position=True)
    assert np.array_equal(once(children), exact(children)) and once.reads_positions
    assert seen[-1] == len(np.unique(solver.index(children))) <= 6 * 50
    by_stickers = S.evaluate_once(counting, puzzle)  # exact duplicates only
    assert np.array_equal(by_stickers(np.concatenate([children, children])), exact(np.concatenate([children] * 2)))
    assert seen[-1] == len(np.unique(puzzle.state_keys(children))) == len(children)
    # solve_cubes serves the value searches through it: the same solutions as the plain function.
    plain = S.greedy(cubes, exact)
    served = S.solve_cubes("greedy", cubes, value_fn=exact)
    assert [r.moves for r in served] == [r.moves for r in plain]
    assert S.network_fns(PolicyValueNet(canonical_symmetry=True))[0].reads_positions
    assert not S.network_fns(PolicyValueNet())[0].reads_positions


# --------------------------------------------------------------------------- issue 29: the beam's keys and widening
def test_beam_keys_are_the_exact_keys_or_their_hash(lockstep_cubes):
    """The 2x2's beam keys are its exact keys; the 3x3's one hash of its two fields: equal for
    equal cubes, distinct for the distinct children of random 3x3 states."""
    cubes = lockstep_cubes[0]
    two = get_puzzle("2x2")
    assert np.array_equal(T.beam_keys(two, False, cubes), two.state_keys(cubes))
    assert np.array_equal(T.beam_keys(two, True, cubes), two.position_keys(cubes))
    three = get_puzzle("3x3")
    states = three.random_states(np.random.default_rng(4), 2000)
    children = np.concatenate([three.apply(states, np.full(len(states), a)) for a in range(12)] + [states])
    keys = T.beam_keys(three, False, children)
    assert keys.dtype == np.int64 and np.array_equal(keys[-len(states) :], T.beam_keys(three, False, states.copy()))
    assert len(np.unique(keys)) == len(np.unique(three.state_keys(children))) == len(children)


@pytest.mark.slow
@pytest.mark.parametrize("fn_name", ["random table", "memoised net"])
def test_widening_beam_keeps_the_shortest_of_its_widths(lockstep_cubes, value_tables, fn_name):
    """Widening from width 1 to 16 (no time pressure) returns, per cube, the shortest solution of
    the beams of widths 1, 2, 4, 8, 16 (the first of equal length) and their nodes together up to it."""
    cubes, last, count = lockstep_cubes
    fn = value_tables[fn_name]
    for cube, a, k in zip(cubes[::3], last[::3], count[::3]):
        rounds = [T.beam(cube, fn, None, int(a), int(k), w, 20, 50_000 * w) for w in (1, 2, 4, 8, 16)]
        got = T.beam_widening(cube, fn, None, int(a), int(k), 1, 20, 50_000, seconds=600.0, max_width=16)
        solved = [r for r in rounds if r.solved]
        assert got.solved == S.verify(cube, got.moves) == bool(solved)
        if solved:
            assert got.moves == min(solved, key=lambda r: len(r.moves)).moves


def test_beam_widen_flag_needs_a_time_limit(capsys):
    p = argparse.ArgumentParser()
    S.add_solver_arguments(p)
    p.add_argument("--puzzle", default="2x2")
    args = p.parse_args(["--solver", "beam", "--beam-widen", "--time-limit", "5"])
    S.resolve_solver(args)
    assert S.options_from_args(args).beam_widen and S.options_from_args(args).seconds == 5
    args = p.parse_args(["--solver", "beam", "--beam-widen"])
    with pytest.raises(SystemExit) as exc:
        S.resolve_solver(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--beam-widen needs --time-limit" in err and err.count("\n") == 1
    with pytest.raises(ValueError, match="needs --time-limit"):
        S.solve_cubes("beam", SOLVED_STICKERS[None], value_fn=lambda c: np.zeros(len(c)), beam_widen=True)


@pytest.mark.parametrize("size", [2, 3])
def test_cube_symmetries_keep_solved_and_rename_moves(size):
    """Each of the 48 symmetries fixes the solved cube and maps a move's result to the result of its
    renamed move; they are 48 different maps, the identity first and the left-right mirror second."""
    from cube import Cube_Model

    perms, colours, move_map = Cube_Model.symmetries(size)
    model = Cube_Model.CubeModel(size)
    cubes, _ = model.batch_scramble(np.random.default_rng(size), 20, 25)
    assert len({p.tobytes() + c.tobytes() for p, c in zip(perms, colours)}) == 48
    np.testing.assert_array_equal(perms[0], np.arange(model.num_stickers))
    assert move_map[1].tolist() == [1, 0, 7, 6, 5, 4, 3, 2, 9, 8, 11, 10]  # U -> U', R -> L', ...
    for k in range(48):
        assert sorted(move_map[k]) == list(range(12))
        np.testing.assert_array_equal(colours[k][model.solved[perms[k]]], model.solved)
        for a in range(12):
            actions = np.full(len(cubes), a)
            moved = colours[k][model.batch_apply_moves(cubes, actions)[:, perms[k]]]
            renamed = model.batch_apply_moves(colours[k][cubes[:, perms[k]]], np.full(len(cubes), move_map[k, a]))
            np.testing.assert_array_equal(moved, renamed)


def test_network_averaged_over_all_symmetries_reads_every_disguise_alike():
    """With all 48 symmetries the averaged value is the same for a cube in any disguise, and the averaged
    logits follow the renamed moves; with 1 it is the plain network; a bad count is refused."""
    from cube import Cube_Model

    puzzle = get_puzzle("3x3")
    torch.manual_seed(0)
    net = PolicyValueNet(obs_dim=puzzle.obs_dim)
    cubes, _ = puzzle.scramble(np.random.default_rng(0), 5, 20)
    plain_value, plain_policy = B.network_fns(net, puzzle=puzzle)
    with torch.no_grad():
        logits, value = net(torch.from_numpy(puzzle.encode(cubes)))  # the network read directly
    np.testing.assert_allclose(plain_value(cubes), value.reshape(-1).numpy(), atol=1e-6)
    np.testing.assert_allclose(plain_policy(cubes), logits.numpy(), atol=1e-5)
    value_fn, policy_fn = B.network_fns(net, puzzle=puzzle, symmetries=48, batch=96)
    perms, colours, move_map = Cube_Model.symmetries(3)
    values, both = value_fn(cubes), policy_fn.with_value(cubes)
    assert not np.allclose(values, plain_value(cubes), atol=1e-4)  # the average is not the plain reading
    np.testing.assert_allclose(both[:, 0], values, atol=1e-6)
    for k in (1, 7, 30):
        disguised = colours[k][cubes[:, perms[k]]]
        np.testing.assert_allclose(value_fn(disguised), values, atol=1e-5)
        np.testing.assert_allclose(policy_fn(disguised)[:, move_map[k]], both[:, 1:], atol=1e-5)
    with pytest.raises(ValueError, match="symmetries"):
        B.network_fns(net, puzzle=puzzle, symmetries=49)


# ---------------------------------------------------------------- the greedy tie rule (every machine alike)
def test_greedy_choice_treats_near_equal_values_as_a_tie_won_by_the_lowest_action():
    inf = np.inf
    scores = np.array(
        [
            [0.5, 0.5 + TIE_TOLERANCE / 10, 0.4],  # a rounding apart: the lower action
            [-inf, 0.3, 0.3 - TIE_TOLERANCE / 2],  # an illegal action never wins
            [0.1, inf, 0.9],  # a solved child always does
            [0.2, 0.2 + 2 * TIE_TOLERANCE, -inf],  # a real difference is no tie
        ]
    )
    assert greedy_choice(scores).tolist() == [0, 1, 1, 1]


def test_greedy_plays_the_same_moves_under_another_machines_rounding(isolated_solver_cache):
    """The exact value has many exact ties (children at one distance); a value a float rounding apart
    on every read, as another CPU's kernels or another batch would give, plays the same moves."""
    exact = B.exact_value_fn()
    rng = np.random.default_rng(5)

    def rounded_otherwise(cubes: np.ndarray) -> np.ndarray:
        values = exact(cubes)
        return values + rng.uniform(-1e-7, 1e-7, values.shape)

    cubes = get_solver().random_cubes(np.random.default_rng(4), 300)
    plain, noisy = S.greedy_batch(cubes, exact), S.greedy_batch(cubes, rounded_otherwise)
    for a, b in zip(plain, noisy):
        np.testing.assert_array_equal(a, b)
    assert plain[2].all()  # the exact value solves every cube
