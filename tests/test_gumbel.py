"""The batched Gumbel search (Gumbel_MCTS.py) against the plain one-tree reference
(tests/reference_gumbel.py), the Sequential Halving schedule, the completed-Q target, masks,
an exact evaluator, and greedy episodes.

Both engines read the same evaluations: each state's outputs are computed once and memoised,
so the visit counts, actions, policy targets and values must match exactly.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from engine.Gumbel_MCTS import (
    NO_ACTION,
    GumbelMCTS,
    considered_visit_table,
    considered_visits,
    transformed_q,
)
from engine.Gumbel_Self_Play import play_gumbel_episodes
from Policy_Value_Net import PolicyValueNet
from reference_gumbel import ReferenceGumbel, halving_schedule
from Rubik2x2Env import (
    NUM_ACTIONS,
    SOLVED_STICKERS,
    apply_move_idx,
    apply_moves,
    batch_apply_moves,
    batch_onehot,
    batch_state_keys,
    is_solved,
    legal_action_mask,
    parse_moves,
    scramble_moves,
)

NUM_ROOTS = 20
BUDGETS = [2, 4, 16, 50, 200]
TINY = float(np.finfo(np.float32).tiny)

pytestmark = pytest.mark.usefixtures("torch_one_thread")


# --------------------------------------------------------------------------- evaluators
class MemoEvaluator:
    """Batched ``cubes (n, 24) -> (priors (n, 12) float32, values (n,) float32)``; each state's
    outputs are computed once by ``fn`` and then read back, whatever batch asks for them."""

    def __init__(self, fn):
        self.fn = fn
        self.memo: dict[bytes, tuple[np.ndarray, np.float32]] = {}
        self.calls: list[int] = []  # batch sizes

    def __call__(self, cubes):
        cubes = np.asarray(cubes, np.int8).reshape(-1, 24)
        self.calls.append(len(cubes))
        keys = [c.tobytes() for c in cubes]
        todo = [i for i, k in enumerate(keys) if k not in self.memo]
        if todo:
            p, v = self.fn(cubes[todo])
            for i, pi, vi in zip(todo, p, v):
                self.memo.setdefault(keys[i], (np.float32(pi), np.float32(vi)))
        priors = np.array([self.memo[k][0] for k in keys], np.float32).reshape(-1, NUM_ACTIONS)
        return priors, np.array([self.memo[k][1] for k in keys], np.float32)


def network_fn(seed=1234):
    torch.manual_seed(seed)
    net = PolicyValueNet().double().eval()

    def fn(cubes):
        with torch.no_grad():
            logits, value = net(torch.from_numpy(batch_onehot(cubes)).double())
        return torch.softmax(logits, -1).numpy(), value.reshape(-1).numpy()

    return fn


def synthetic_fn(cubes):
    """Deterministic pseudo-random priors and values in [-1, 1] from the state's key."""
    keys = batch_state_keys(cubes).astype(np.int64)
    h = (keys[:, None] * np.arange(7, 7 + 12 * 131, 131) + 12345) % 997  # [n, 12]
    e = np.exp(h / 200.0)
    return e / e.sum(1, keepdims=True), (keys % 2001) / 1000.0 - 1.0


def exact_evaluator(solver):
    """Uniform priors, value 1 - 0.03 * (optimal distance)."""

    def fn(cubes):
        d = solver.batch_distance(cubes)
        return np.full((len(cubes), NUM_ACTIONS), 1.0 / NUM_ACTIONS, np.float32), (1.0 - 0.03 * d).astype(np.float32)

    return fn


@pytest.fixture(scope="module")
def evaluators():
    return {"net": MemoEvaluator(network_fn()), "synthetic": MemoEvaluator(synthetic_fn)}


def trailing_face_count(moves) -> int:
    count = 0
    for m in reversed(list(moves)):
        if m // 2 != moves[-1] // 2:
            break
        count += 1
    return count


@pytest.fixture(scope="module")
def roots():
    """20 roots scrambled with 1..14 moves, with their move history; the last two end with a
    face turned 2 and 3 times in a row."""
    rng = np.random.default_rng(2024)
    scrambles = [scramble_moves(rng, 1, k)[0].tolist() for k in range(1, 15)]
    scrambles += [scramble_moves(rng, 1, int(k))[0].tolist() for k in rng.integers(1, 15, size=NUM_ROOTS - 16)]
    scrambles += [parse_moves("F' R L U U"), parse_moves("R' B D D D")]
    cubes = np.array([apply_moves(SOLVED_STICKERS, m) for m in scrambles], np.int8)
    lasts = np.array([m[-1] for m in scrambles])
    counts = np.array([trailing_face_count(m) for m in scrambles])
    gumbel = np.random.default_rng(99).gumbel(size=(NUM_ROOTS, NUM_ACTIONS))
    return cubes, lasts, counts, gumbel


def reference_results(evaluator, roots, sims, max_considered=16, step_reward=-0.03):
    cubes, lasts, counts, gumbel = roots
    ref = ReferenceGumbel(evaluator, sims, max_considered, step_reward)
    return [ref.run(c, g.tolist(), int(la), int(n)) for c, la, n, g in zip(cubes, lasts, counts, gumbel)]


# --------------------------------------------------------------------------- equivalence with the reference
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["net", "synthetic"])
@pytest.mark.parametrize("sims", BUDGETS)
def test_engine_equals_reference(evaluators, roots, kind, sims):
    cubes, lasts, counts, gumbel = roots
    evaluator = evaluators[kind]
    evaluator.calls.clear()
    out = GumbelMCTS(num_simulations=sims, evaluator=evaluator).run_batch(cubes, None, lasts, counts, gumbel=gumbel)
    assert len(evaluator.calls) == sims + 1 and max(evaluator.calls) <= NUM_ROOTS  # lockstep
    expected = reference_results(evaluator, roots, sims)
    assert all(e is not None for e in expected)
    np.testing.assert_array_equal(out.action, [e[0] for e in expected])
    np.testing.assert_array_equal(out.policy, np.array([e[1] for e in expected], np.float32))
    np.testing.assert_array_equal(out.value, np.array([e[2] for e in expected], np.float32))
    np.testing.assert_array_equal(out.visits, [e[3] for e in expected])
    assert (out.visits.sum(1) == sims).all()


def test_engine_equals_reference_with_other_settings(evaluators, roots):
    """Fewer considered actions, and no step reward (MCTS_Core's convention)."""
    cubes, lasts, counts, gumbel = roots
    for m, sims, reward in ((1, 7, -0.03), (2, 9, -0.03), (4, 30, -0.03), (16, 50, 0.0), (3, 40, 0.0)):
        search = GumbelMCTS(num_simulations=sims, max_considered=m, step_reward=reward, evaluator=evaluators["net"])
        out = search.run_batch(cubes, None, lasts, counts, gumbel=gumbel)
        expected = reference_results(evaluators["net"], roots, sims, m, reward)
        np.testing.assert_array_equal(out.visits, [e[3] for e in expected])
        np.testing.assert_array_equal(out.action, [e[0] for e in expected])
        np.testing.assert_array_equal(out.policy, np.array([e[1] for e in expected], np.float32))
        assert ((out.visits > 0).sum(1) <= m).all()


# --------------------------------------------------------------------------- Sequential Halving
def test_considered_visit_schedule():
    assert considered_visits(4, 8).tolist() == [0, 0, 0, 0, 1, 1, 2, 2]
    assert considered_visits(16, 32).tolist() == [0] * 16 + [1] * 8 + [2] * 4 + [3] * 4
    assert considered_visits(2, 5).tolist() == [0, 0, 1, 1, 2]
    assert considered_visits(1, 3).tolist() == [0, 1, 2]
    for m in range(17):
        for n in (1, 2, 3, 7, 16, 33, 50, 200):
            assert considered_visits(m, n).tolist() == halving_schedule(m, n)
    table = considered_visit_table(16, 50)
    assert table.shape == (17, 50) and table[12].tolist() == halving_schedule(12, 50)


def expected_visit_profile(m: int, n: int) -> list[int]:
    """Sorted (descending) root visit counts that the schedule implies: the i-th most visited
    action is visited once for each level k scheduled more than i times."""
    occ = Counter(halving_schedule(m, n))
    return [sum(1 for k in occ if occ[k] > i) for i in range(m)]


@pytest.mark.parametrize("sims", [2, 4, 11, 16, 50, 200])
def test_sequential_halving_uses_n_simulations_and_the_schedule(evaluators, roots, sims):
    cubes, lasts, counts, gumbel = roots
    evaluator = evaluators["net"]
    out = GumbelMCTS(num_simulations=sims, evaluator=evaluator).run_batch(cubes, None, lasts, counts, gumbel=gumbel)
    priors, _ = evaluator(cubes)
    for b in range(NUM_ROOTS):
        legal = legal_action_mask(lasts[b], counts[b])
        m = int(legal.sum())
        visits = out.visits[b]
        assert visits.sum() == sims
        profile = sorted(visits.tolist(), reverse=True)[:m]
        assert profile == expected_visit_profile(m, sims)
        # The first min(m, n) simulations take the top actions by g + logits.
        score = np.where(legal, gumbel[b] + np.log(np.maximum(priors[b].astype(np.float64), TINY)), -np.inf)
        top = set(np.argsort(-score, kind="stable")[: min(m, sims)].tolist())
        assert set(np.flatnonzero(visits).tolist()) == top
        # The chosen action is among the most visited.
        assert visits[out.action[b]] == visits.max()


# --------------------------------------------------------------------------- completed Q and the policy target
def test_completed_q_by_hand():
    n = np.zeros((1, NUM_ACTIONS))
    w = np.zeros((1, NUM_ACTIONS))
    p = np.zeros((1, NUM_ACTIONS))
    legal = np.zeros((1, NUM_ACTIONS), bool)
    legal[0, :4] = True
    n[0, :2], w[0, :2], p[0, :4] = [2, 1], [1.6, 0.5], [0.4, 0.3, 0.2, 0.1]
    sigma = transformed_q(n, w, p, np.array([0.2]), legal)
    # Q = (0.8, 0.5); weighted Q = (0.4*0.8 + 0.3*0.5) / 0.7 = 0.47 / 0.7;
    # v_mix = (0.2 + 3 * 0.47 / 0.7) / 4; completed = (0.8, 0.5, v_mix, v_mix);
    # rescaled by min 0.5, max 0.8; scale (50 + 2) * 0.1 = 5.2.
    v_mix = (0.2 + 3 * 0.47 / 0.7) / 4
    expected = 5.2 * np.array([1.0, 0.0, (v_mix - 0.5) / 0.3, (v_mix - 0.5) / 0.3])
    np.testing.assert_allclose(sigma[0, :4], expected, rtol=1e-12)
    assert abs(v_mix - 0.553571428571) < 1e-9
    # No visits: every completed Q is the raw value, so sigma is 0 (denominator 1e-8).
    np.testing.assert_array_equal(transformed_q(0 * n, 0 * w, p, np.array([0.7]), legal)[0, :4], 0.0)


def test_policy_target_recomputed_from_root_statistics(evaluators, roots):
    cubes, lasts, counts, gumbel = roots
    evaluator = evaluators["synthetic"]
    out = GumbelMCTS(num_simulations=50, evaluator=evaluator).run_batch(cubes, None, lasts, counts, gumbel=gumbel)
    priors, raw = evaluator(cubes)
    for b in range(NUM_ROOTS):
        legal = legal_action_mask(lasts[b], counts[b])
        prior = np.where(legal, priors[b], 0.0)
        prior = prior / prior.sum()
        visited = out.visits[b] > 0
        q = out.q_values[b]
        n = out.visits[b]
        v_mix = (raw[b] + n.sum() * np.average(q[visited], weights=prior[visited])) / (1 + n.sum())
        completed = np.where(visited, q, v_mix)
        low, high = completed[legal].min(), completed[legal].max()
        sigma = (50 + n.max()) * 0.1 * (completed - low) / max(high - low, 1e-8)
        z = np.where(legal, np.log(np.where(legal, prior, 1.0)) + sigma, -np.inf)
        np.testing.assert_allclose(out.policy[b], np.exp(z - z.max()) / np.exp(z - z.max()).sum(), atol=1e-6)
        # The chosen action: best g + logits + sigma among the most visited.
        assert out.action[b] == np.argmax(np.where(n == n.max(), gumbel[b] + z, -np.inf))
        # The root value: the raw value and every backed-up return, averaged.
        np.testing.assert_allclose(out.value[b], (raw[b] + (q * n).sum()) / (1 + n.sum()), rtol=1e-6)


# --------------------------------------------------------------------------- masks
def test_illegal_actions_get_nothing(evaluators):
    rng = np.random.default_rng(7)
    batch = 8
    cubes = np.stack([apply_moves(SOLVED_STICKERS, m) for m in scramble_moves(rng, batch, 7)])
    masks = rng.random((batch, NUM_ACTIONS)) < 0.5
    masks[:, 3] = True
    masks[0] = False
    masks[0, 5] = True  # a single legal action
    out = GumbelMCTS(num_simulations=40, evaluator=evaluators["net"]).run_batch(cubes, masks, rng=rng)
    assert (out.visits[~masks] == 0).all() and (out.policy[~masks] == 0).all()
    assert masks[np.arange(batch), out.action].all() and out.action[0] == 5 and out.visits[0, 5] == 40
    np.testing.assert_allclose(out.policy.sum(1), 1.0, rtol=1e-6)
    # Every node of every tree: visits only on legal actions; children's masks follow the rule.
    tree = out.tree
    nodes = np.flatnonzero(tree.expanded[:-1])
    n, logits = tree.stats[nodes, 0], tree.stats[nodes, 2]
    assert (n[logits == -np.inf] == 0).all()
    inner = nodes[tree.last_action[nodes] != NO_ACTION]
    assert len(inner) > batch
    expected = legal_action_mask(tree.last_action[inner], tree.face_count[inner])
    np.testing.assert_array_equal(tree.stats[inner, 2] > -np.inf, expected)
    with pytest.raises(ValueError):
        GumbelMCTS(num_simulations=4, evaluator=evaluators["net"]).run_batch(cubes[:1], np.zeros((1, 12), bool))


def test_solved_root_is_not_searched(evaluators):
    rotated = apply_moves(SOLVED_STICKERS, parse_moves("R L'"))  # a whole-cube rotation: solved
    scrambled = apply_moves(SOLVED_STICKERS, parse_moves("R U"))
    evaluator = MemoEvaluator(synthetic_fn)
    out = GumbelMCTS(num_simulations=8, evaluator=evaluator).run_batch(
        np.stack([SOLVED_STICKERS, scrambled, rotated]), rng=np.random.default_rng(0)
    )
    assert out.action.tolist()[::2] == [NO_ACTION, NO_ACTION] and out.action[1] >= 0
    assert (out.visits[[0, 2]] == 0).all() and (out.policy[[0, 2]] == 0).all() and (out.value[[0, 2]] == 1).all()
    assert out.visits[1].sum() == 8 and evaluator.calls[0] == 1
    assert GumbelMCTS(num_simulations=8, evaluator=evaluator).run_batch(SOLVED_STICKERS[None]).tree is None


def test_rng_reproducibility(evaluators, roots):
    cubes, lasts, counts, _ = roots
    search = GumbelMCTS(num_simulations=16, evaluator=evaluators["net"], gumbel_scale=0.5)
    a = search.run_batch(cubes, None, lasts, counts, rng=np.random.default_rng(3))
    b = search.run_batch(cubes, None, lasts, counts, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a.gumbel, 0.5 * np.random.default_rng(3).gumbel(size=(NUM_ROOTS, NUM_ACTIONS)))
    for x, y in ((a.action, b.action), (a.policy, b.policy), (a.visits, b.visits)):
        np.testing.assert_array_equal(x, y)
    c = search.run_batch(cubes, None, lasts, counts, gumbel=a.gumbel)
    np.testing.assert_array_equal(a.visits, c.visits)


def test_constructor_validation():
    with pytest.raises(ValueError):
        GumbelMCTS()
    with pytest.raises(ValueError):
        GumbelMCTS(num_simulations=0, evaluator=synthetic_fn)
    assert GumbelMCTS(PolicyValueNet()).max_considered == 16


# --------------------------------------------------------------------------- exact evaluator
@pytest.fixture(scope="module")
def solver(isolated_solver_cache):
    import Optimal_Solver

    return Optimal_Solver.get_solver()


@pytest.mark.slow
@pytest.mark.parametrize("sims", [16, 32, 50, 200])
def test_exact_evaluator_always_moves_closer(solver, sims):
    """Without Gumbel noise (greedy evaluation) the chosen move is optimal at every root. With
    the noise (self-play) the move is a sample of the improved policy: a few roots at small
    budgets move away (measured over 420 roots, two noise seeds: 92-96% closer at 16 simulations,
    96-99% at 32, 98-100% at 50, 99.8-100% at 200; docs/gumbel.md)."""
    rng = np.random.default_rng(sims)
    cubes = np.concatenate([solver.random_cubes_at_distance(rng, d, 5) for d in range(1, 15)])
    dist = solver.batch_distance(cubes)
    greedy = GumbelMCTS(num_simulations=sims, gumbel_scale=0.0, evaluator=exact_evaluator(solver))
    out = greedy.run_batch(cubes, rng=rng)
    np.testing.assert_array_equal(solver.batch_distance(batch_apply_moves(cubes, out.action)), dist - 1)
    noisy = GumbelMCTS(num_simulations=sims, evaluator=exact_evaluator(solver)).run_batch(cubes, rng=rng)
    closer = solver.batch_distance(batch_apply_moves(cubes, noisy.action)) == dist - 1
    assert closer.mean() >= (0.9 if sims < 50 else 0.97)


@pytest.mark.slow
def test_without_step_reward_longer_searches_lose_the_way(solver):
    """Why the step reward: with value 1 at every solved leaf and no cost per move, a
    subtree that found any solution averages towards 1 however long the way, and the chosen
    move gets worse with more simulations even with an exact evaluator."""
    rng = np.random.default_rng(0)
    cubes = np.concatenate([solver.random_cubes_at_distance(rng, d, 10) for d in range(3, 12)])
    dist = solver.batch_distance(cubes)
    rates = []
    for reward in (0.0, -0.03):
        search = GumbelMCTS(None, 200, gumbel_scale=0.0, step_reward=reward, evaluator=exact_evaluator(solver))
        moved = batch_apply_moves(cubes, search.run_batch(cubes).action)
        rates.append((solver.batch_distance(moved) == dist - 1).mean())
    assert rates[0] < 0.97 and rates[1] == 1.0


# --------------------------------------------------------------------------- episodes
def test_play_gumbel_episodes_with_exact_evaluator(solver):
    rng = np.random.default_rng(11)
    starts = np.concatenate([solver.random_cubes_at_distance(rng, d, 1 if d == 0 else 2) for d in range(12)])
    dist = solver.batch_distance(starts)
    res = play_gumbel_episodes(exact_evaluator(solver), starts, 16, 20, rng)  # greedy: no noise
    assert res.solved.all() and res.lengths.tolist() == dist.tolist()  # optimal every time
    assert res.simulations == 16 * int(dist.sum())
    for start, states, pis, moves, values in zip(starts, res.states, res.policies, res.actions, res.root_values):
        assert len(states) == len(pis) == len(moves) == len(values)
        if len(moves):
            np.testing.assert_array_equal(states[0], start)
            np.testing.assert_allclose(pis.sum(1), 1.0, rtol=1e-6)
            for t in range(1, len(moves)):  # the targets respect the episode's move history
                assert (pis[t][~legal_action_mask(moves[t - 1], trailing_face_count(moves[:t]))] == 0).all()
            assert is_solved(apply_moves(start, moves))
    assert len(res.dataset()) == int(dist.sum())


def test_play_gumbel_episodes_with_a_model():
    torch.manual_seed(0)
    net = PolicyValueNet().eval()
    starts = np.stack([apply_move_idx(SOLVED_STICKERS, a) for a in range(NUM_ACTIONS)])
    runs = [play_gumbel_episodes(net, starts, 16, 5, np.random.default_rng(1)) for _ in range(2)]
    assert runs[0].actions == runs[1].actions and runs[0].network_states > 0  # greedy: deterministic
    # 16 simulations try all 12 moves; the solved child's return (0.97) beats the random net's
    # values unless they saturate near 1.
    assert runs[0].solve_rate > 0.5
    noisy = play_gumbel_episodes(net, starts, 4, 3, np.random.default_rng(1), gumbel_scale=1.0)
    assert noisy.simulations == 4 * sum(map(len, noisy.actions)) and all(len(a) <= 3 for a in noisy.actions)
