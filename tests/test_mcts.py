"""The batched MCTS engine against the plain one-tree reference (tests/reference_mcts.py).

Both engines are fed the same evaluations: a random-weight ``PolicyValueNet`` in float64
whose outputs are rounded to 6 decimals, so that evaluating a state alone (reference) or in
a batch of leaves (engine) gives bit-identical numbers and the visit counts must match
exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from MCTS_Core import MCTS, NetworkEvaluator
from Policy_Value_Net import PolicyValueNet
from reference_mcts import ReferenceMCTS
from Rubik2x2Env import (
    NUM_ACTIONS,
    SOLVED_STICKERS,
    apply_move_idx,
    apply_moves,
    batch_onehot,
    encode_onehot,
    is_solved,
    legal_action_mask,
    parse_moves,
    scramble_moves,
    solved_cube,
)

C_PUCT = 1.3
NUM_ROOTS = 20


pytestmark = pytest.mark.usefixtures("torch_one_thread")


# --------------------------------------------------------------------------- shared evaluations
class RoundedNet(torch.nn.Module):
    """A random-weight float64 ``PolicyValueNet`` whose outputs are rounded to 6 decimals.

    Takes the float32 one-hots that ``NetworkEvaluator`` sends, so it can also be the
    ``model`` of a real ``MCTS``/``NetworkEvaluator``.
    """

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        logits, value = self.net(x.double())
        return torch.round(logits, decimals=6), torch.round(value, decimals=6)


@pytest.fixture(scope="module")
def model() -> RoundedNet:
    torch.manual_seed(1234)
    return RoundedNet(PolicyValueNet().double()).eval()


def rounded_eval(model: torch.nn.Module, cubes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(n, 24)`` cubes -> priors ``(n, 12)`` float32 and values ``(n,)``: the same arithmetic
    as ``NetworkEvaluator.forward``, written out so that the plain-evaluator tests do not
    depend on it."""
    with torch.no_grad():
        logits, value = model(torch.from_numpy(batch_onehot(np.asarray(cubes).reshape(-1, 24))))
        priors = torch.softmax(logits, dim=-1)
    return priors.float().numpy(), value.float().reshape(-1).numpy()


class CountingEvaluator:
    """The batched evaluator of the engine; records every batch of states it is asked for
    and, given a ``memo``, stores each state's outputs there."""

    def __init__(self, model, memo: dict | None = None):
        self.model = model
        self.memo = memo
        self.calls: list[np.ndarray] = []

    def __call__(self, cubes):
        self.calls.append(np.array(cubes))
        priors, values = rounded_eval(self.model, cubes)
        if self.memo is not None:
            for c, p, v in zip(np.asarray(cubes, np.int8), priors, values):
                self.memo.setdefault(c.tobytes(), (p, float(v)))
        return priors, values


@pytest.fixture(scope="module")
def memo() -> dict:
    """Network outputs per state (``cube.tobytes()``), shared by the module's searches."""
    return {}


@pytest.fixture(scope="module")
def reference_evaluate(model, memo):
    """One state per call (the reference's interface). Memoised: the reference is slow, and
    a state's outputs do not depend on the batch it was evaluated in (float64, rounded)."""

    def evaluate(cube, obs=None):
        key = np.asarray(cube, dtype=np.int8).tobytes()
        if key not in memo:
            p, v = rounded_eval(model, np.asarray(cube).reshape(1, 24))
            memo[key] = (p[0], float(v[0]))
        return memo[key]

    return evaluate


def trailing_face_count(moves) -> int:
    """How many times in a row the face of the last move was turned at the end of ``moves``."""
    count = 0
    for m in reversed(list(moves)):
        if m // 2 != moves[-1] // 2:
            break
        count += 1
    return count


@pytest.fixture(scope="module")
def roots():
    """20 roots scrambled with 1..14 moves; mask, last action and face count from the scramble.
    The last two end with a face turned 2 and 3 times in a row (rule 2 at the root)."""
    rng = np.random.default_rng(2024)
    scrambles = [scramble_moves(rng, 1, k)[0].tolist() for k in range(1, 15)]
    scrambles += [scramble_moves(rng, 1, int(k))[0].tolist() for k in rng.integers(1, 15, size=NUM_ROOTS - 16)]
    scrambles += [parse_moves("F' R L U U"), parse_moves("R' B D D D")]
    cubes, masks, lasts, counts = [], [], [], []
    for moves in scrambles:
        cubes.append(apply_moves(SOLVED_STICKERS, moves))
        lasts.append(moves[-1])
        counts.append(trailing_face_count(moves))
        masks.append(legal_action_mask(lasts[-1], counts[-1]))
    assert len(cubes) == NUM_ROOTS and counts[-2:] == [2, 3]
    return np.array(cubes, dtype=np.int8), np.array(masks), np.array(lasts), np.array(counts)


def reference_visits(evaluate, roots, sims) -> np.ndarray:
    cubes, masks, lasts, counts = roots
    ref = ReferenceMCTS(evaluate, c_puct=C_PUCT, num_simulations=sims)
    return np.stack([ref.run(c, m, int(la), int(n)) for c, m, la, n in zip(cubes, masks, lasts, counts)])


@pytest.fixture(scope="module")
def reference_results(model, memo, reference_evaluate, roots):
    # Speed only: evaluate the states of these searches in batches first (one batched
    # search fills the memo); the reference then mostly reads the same numbers back.
    MCTS(None, c_puct=C_PUCT, num_simulations=200, evaluator=CountingEvaluator(model, memo)).run_batch(*roots)
    return {sims: reference_visits(reference_evaluate, roots, sims) for sims in (50, 200)}


# --------------------------------------------------------------------------- equivalence with the reference
@pytest.mark.slow
@pytest.mark.parametrize("sims", [50, 200])
def test_batched_engine_equals_reference(model, roots, reference_results, sims):
    cubes, masks, lasts, counts = roots
    evaluator = CountingEvaluator(model)
    visits = MCTS(None, c_puct=C_PUCT, num_simulations=sims, evaluator=evaluator).run_batch(cubes, masks, lasts, counts)
    expected = reference_results[sims]
    assert visits.shape == (NUM_ROOTS, NUM_ACTIONS) and visits.dtype == np.float32
    unsolved = sum(not is_solved(c) for c in cubes)
    assert unsolved >= NUM_ROOTS - 1 and (expected.sum(axis=1) > 0).sum() == unsolved  # real searches
    np.testing.assert_array_equal(visits, expected)
    # Lockstep: one call for the unsolved roots, then at most one call per simulation step.
    assert len(evaluator.calls) <= sims and len(evaluator.calls[0]) == unsolved
    assert max(len(call) for call in evaluator.calls) <= NUM_ROOTS


@pytest.mark.slow
@pytest.mark.parametrize("sims", [50, 200])
def test_engine_with_network_evaluator_and_cache_equals_reference(model, roots, reference_results, sims):
    """The production path: ``MCTS(model)`` builds a caching ``NetworkEvaluator``."""
    cubes, masks, lasts, counts = roots
    mcts = MCTS(model, c_puct=C_PUCT, num_simulations=sims, use_cache=True)
    assert isinstance(mcts.evaluator, NetworkEvaluator) and mcts.evaluator.use_cache
    visits = mcts.run_batch(cubes, masks, lasts, counts)
    np.testing.assert_array_equal(visits, reference_results[sims])
    # The cache did its job: fewer states reached the network than were requested.
    assert mcts.evaluator.network_states < mcts.evaluator.requested_states
    # A second search over the same roots is served from the cache and gives the same counts.
    before = mcts.evaluator.network_states
    np.testing.assert_array_equal(mcts.run_batch(cubes, masks, lasts, counts), reference_results[sims])
    assert mcts.evaluator.network_states == before


def test_network_evaluator_matches_the_network_with_and_without_cache(model):
    rng = np.random.default_rng(5)
    moves = scramble_moves(rng, 30, 6)
    cubes = np.stack([apply_moves(SOLVED_STICKERS, m) for m in moves])
    assert len({c.tobytes() for c in cubes}) == 30
    cubes = np.concatenate([cubes, cubes[:10]])  # repeated states inside one batch
    expected_p, expected_v = rounded_eval(model, cubes)
    cached = NetworkEvaluator(model, use_cache=True)
    plain = NetworkEvaluator(model, use_cache=False)
    for evaluator in (plain, cached):
        p, v = evaluator(cubes)
        assert p.shape == (40, NUM_ACTIONS) and v.shape == (40,)
        np.testing.assert_array_equal(p, expected_p)
        np.testing.assert_array_equal(v, expected_v)
    assert cached.network_states == 30  # each distinct state evaluated once
    p, v = cached(cubes[::-1])  # all from the cache, in the order asked
    np.testing.assert_array_equal(p, expected_p[::-1])
    np.testing.assert_array_equal(v, expected_v[::-1])
    assert cached.network_states == 30
    cached.clear()  # after training the cache must be emptied
    cached(cubes[:3])
    assert cached.network_states == 33


@pytest.mark.slow
def test_illegal_root_actions_never_visited(model, memo, reference_evaluate):
    rng = np.random.default_rng(7)
    batch = 6
    moves = scramble_moves(rng, batch, 7)
    cubes = np.stack([apply_moves(SOLVED_STICKERS, m) for m in moves])
    masks = rng.random((batch, NUM_ACTIONS)) < 0.5
    masks[:, 3] = True  # at least one legal action per root
    assert (~masks).sum() >= batch * 3
    visits = MCTS(None, num_simulations=100, evaluator=CountingEvaluator(model, memo)).run_batch(cubes, masks)
    assert (visits[~masks] == 0).all()
    assert (visits.sum(axis=1) > 0).all()
    # The same as the reference, with these masks and no move history.
    ref = ReferenceMCTS(reference_evaluate, C_PUCT, 100)
    np.testing.assert_array_equal(visits, np.stack([ref.run(c, m) for c, m in zip(cubes, masks)]))


@pytest.mark.slow
def test_run_equals_run_batch_of_one_root(model):
    cube = apply_moves(solved_cube(), parse_moves("F R' U L D' B R"))
    mask = legal_action_mask(2, 1)  # as if the last move were R
    mcts = MCTS(None, num_simulations=80, evaluator=CountingEvaluator(model))
    single = mcts.run(cube, encode_onehot(cube), mask)  # the original's signature
    assert single.shape == (NUM_ACTIONS,) and single.dtype == np.float32
    np.testing.assert_array_equal(single, mcts.run_batch(cube.reshape(1, 24), mask[None])[0])
    np.testing.assert_array_equal(single, mcts.run_batch(cube.reshape(1, 6, 2, 2), mask[None])[0])
    assert single[3] == 0  # R' masked
    # Without a mask every action is allowed at the root.
    np.testing.assert_array_equal(mcts.run(cube), mcts.run_batch(cube.reshape(1, 24))[0])


def test_solved_root_gives_zero_visits(model):
    rotated = apply_moves(solved_cube(), parse_moves("R L'"))  # a whole-cube rotation: solved
    scrambled = apply_moves(solved_cube(), parse_moves("R U"))
    evaluator = CountingEvaluator(model)
    mcts = MCTS(None, num_simulations=40, evaluator=evaluator)
    assert (mcts.run(solved_cube()) == 0).all()
    assert (mcts.run(rotated) == 0).all()
    visits = mcts.run_batch(np.stack([solved_cube(), scrambled, rotated]))
    assert (visits[0] == 0).all() and (visits[2] == 0).all()
    assert visits[1].sum() > 0  # the unsolved tree in the same batch is searched
    # Solved roots are never sent to the network.
    assert all(is_solved(c) is False for call in evaluator.calls for c in call)


def expected_root_total(cube: np.ndarray, visits: np.ndarray, sims: int) -> float:
    """Simulation 1 expands the root; every later one adds 1 to a root child, plus 1 more when
    that child is the leaf: the first visit of an unsolved child, every visit of a solved one."""
    total = sims - 1
    for a in np.flatnonzero(visits):
        child_solved = is_solved(apply_move_idx(cube, a))
        total += visits[a] / 2 if child_solved else 1
    return total


@pytest.mark.parametrize("scramble", ["R", "U F", "R U F' L D B'", "F' L' R' B' D"])
def test_root_visit_totals(model, scramble):
    cube = apply_moves(solved_cube(), parse_moves(scramble))
    for sims in (1, 2, 13, 60):
        visits = MCTS(None, num_simulations=sims, evaluator=CountingEvaluator(model)).run(cube)
        assert visits.sum() == expected_root_total(cube, visits, sims)
        if sims == 1:
            assert visits.sum() == 0  # the only simulation expanded the root
        if sims == 2:
            assert visits.sum() == 2 and np.count_nonzero(visits) == 1  # a new leaf counts twice


def neutral_net() -> PolicyValueNet:
    """Uniform priors and value 0 everywhere: the root's children are tried in index order
    until a solving one is found (Q = 1), which then wins every later simulation up to about
    85 (where an untried child's exploration term reaches 1). Solving cannot flake."""
    net = PolicyValueNet()
    with torch.no_grad():
        for head in (net.policy_head, net.value_head):
            head.weight.zero_()
            head.bias.zero_()
    return net


# Random-weight nets for which the claim holds. An untrained value head is often saturated
# (values near +1 on most states); then a child with a large prior keeps winning and the
# solved child may never be tried within 50 simulations -- the reference does exactly the
# same (e.g. seeds 2, 4, 5 fail the same way), so that is the original's search, not an engine bug.
RANDOM_NET_SEEDS = [0, 1, 3]


@pytest.mark.parametrize("seed", RANDOM_NET_SEEDS + ["neutral"])
def test_untrained_net_solves_every_one_move_scramble(seed):
    if seed == "neutral":
        net = neutral_net()
    else:
        torch.manual_seed(seed)
        net = PolicyValueNet()  # float32, as used in practice
    mcts = MCTS(net, num_simulations=50)
    cubes = np.stack([apply_move_idx(SOLVED_STICKERS, a) for a in range(NUM_ACTIONS)])
    visits = mcts.run_batch(cubes)
    for a in range(NUM_ACTIONS):
        best = int(np.argmax(visits[a]))
        assert is_solved(apply_move_idx(cubes[a], best)), f"scramble {a}: greedy move {best} does not solve"
        # The single-root API agrees.
        np.testing.assert_array_equal(mcts.run(cubes[a], None, np.ones(NUM_ACTIONS, bool)), visits[a])


def test_constructor_validation():
    with pytest.raises(ValueError):
        MCTS(None)
    with pytest.raises(ValueError):
        MCTS(None, num_simulations=0, evaluator=lambda c: None)
    with pytest.raises(ValueError):
        MCTS(None, num_actions=6, evaluator=lambda c: None)
    m = MCTS(PolicyValueNet())
    assert (m.num_actions, m.c_puct, m.num_simulations) == (12, 1.3, 200)  # the original's defaults
