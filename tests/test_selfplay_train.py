"""Self-play targets and batching, the AlphaZero loss, and the training pass."""

import numpy as np
import pytest
import torch

from Action_MCTS import pick_action_from_mcts
from MCTS_Core import MCTS
from Policy_Value_Net import PolicyValueNet
from reference_mcts import ReferenceMCTS
from Rubik2x2Env import SOLVED_STICKERS, Rubik2x2Env, apply_moves, batch_onehot, batch_scramble, encode_onehot
from Self_Play import generate_self_play_data, play_episodes, solved_value, visits_to_policy
from Train_Network import alphazero_loss, train_on_targets


def rounded_evaluators(seed=0):
    """A float64 random net with outputs rounded: batch size cannot change its answers."""
    torch.manual_seed(seed)
    net = PolicyValueNet().double().eval()

    def batch(cubes):
        with torch.no_grad():
            logits, v = net(torch.from_numpy(batch_onehot(cubes)).double())
        return np.round(torch.softmax(logits, -1).numpy(), 6).astype(np.float32), np.round(
            v.numpy().reshape(-1), 6
        ).astype(np.float32)

    def one(cube, obs=None):
        p, v = batch(np.asarray(cube).reshape(1, 24))
        return p[0], v[0]

    return batch, one


def reference_dataset(start_cubes, evaluate_one, sims, max_steps):
    """Episodes one at a time, env + plain search + greedy pick, as the original plays them."""
    search = ReferenceMCTS(evaluate_one, num_simulations=sims)
    env = Rubik2x2Env(max_steps=max_steps)
    data, solved = [], []
    for cube in start_cubes:
        obs, info = env.reset(options={"cube": cube})
        episode, done = [], info["solved"]
        steps = 0
        while not done and steps < max_steps:
            visits = search.run(env.cube, info["action_mask"], env.last_action, env.face_count)
            episode.append((obs, visits / visits.sum()))
            obs, _, done, _, info = env.step(pick_action_from_mcts(visits, "greedy"))
            steps += 1
        z = solved_value(steps) if done else -1.0
        data += [(o, p, z) for o, p in episode]
        solved.append(done)
    return data, float(np.mean(solved))


@pytest.mark.slow
def test_greedy_self_play_equals_one_episode_at_a_time():
    batch_eval, one_eval = rounded_evaluators(1)
    starts, _ = batch_scramble(np.random.default_rng(3), 6, 3)
    mcts = MCTS(None, num_simulations=40, evaluator=batch_eval)
    res = play_episodes(None, starts, 6, 40, "greedy", mcts=mcts)
    want, want_rate = reference_dataset(starts, one_eval, 40, 6)
    got = res.dataset()
    assert len(got) == len(want) and res.solve_rate == want_rate
    for (o1, p1, z1), (o2, p2, z2) in zip(got, want):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_allclose(p1, p2, rtol=0, atol=1e-7)
        assert z1 == pytest.approx(z2)
    assert 0 < want_rate  # the comparison covers solved episodes too


def test_sample_mode_is_reproducible_with_a_seed():
    torch.manual_seed(0)
    net = PolicyValueNet()
    runs = [generate_self_play_data(net, 5, 4, 20, 4, "sample", 1.0, rng=np.random.default_rng(7)) for _ in range(2)]
    (d1, r1), (d2, r2) = runs
    assert r1 == r2 and len(d1) == len(d2) > 0
    for a, b in zip(d1, d2):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        assert a[2] == b[2]


def test_targets_pi_and_z():
    pi = visits_to_policy(np.array([[0, 2, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0] * 12], dtype=np.float32))
    np.testing.assert_allclose(pi[0, :3], [0, 0.25, 0.75])
    np.testing.assert_allclose(pi[1], np.full(12, 1 / 12))
    assert solved_value(1) == pytest.approx(0.97)
    assert solved_value(10) == pytest.approx(0.7)
    assert solved_value(20) == pytest.approx(0.4) and solved_value(35) == pytest.approx(0.4)


def test_dataset_values_follow_episode_outcome():
    torch.manual_seed(0)
    data, rate, res = generate_self_play_data(
        PolicyValueNet(), 6, 3, 50, 1, "greedy", 1.0, rng=np.random.default_rng(0), return_results=True
    )
    assert rate == 1.0  # one-move scrambles: solved with the first move
    assert len(data) == 6 and all(z == pytest.approx(0.97) for _, _, z in data)
    for obs, pi, _ in data:
        assert obs.shape == (144,) and obs.dtype == np.float32
        assert pi.shape == (12,) and pi.sum() == pytest.approx(1.0)
    # Unsolvable within 1 move: every state gets -1.
    data, rate = generate_self_play_data(PolicyValueNet(), 4, 1, 10, 6, "greedy", 1.0, rng=np.random.default_rng(1))
    assert rate == 0.0 and all(z == -1.0 for _, _, z in data)


def test_self_play_scrambles_and_plays_the_game_it_is_given():
    """``game="3x3"``: the episodes start from 3x3 scrambles and search the 3x3's moves; the dataset is the 3x3
    network's inputs (324), and a one-move scramble is solved with its first move (the heads zeroed: uniform
    priors, value 0, so the search finds the one solving child among 12)."""
    torch.manual_seed(0)
    net = PolicyValueNet(324, hidden_sizes=(32,))
    with torch.no_grad():
        for head in (net.policy_head, net.value_head):
            head.weight.zero_()
            head.bias.zero_()
    data, rate, res = generate_self_play_data(
        net, 6, 3, 50, 1, "greedy", 1.0, rng=np.random.default_rng(0), return_results=True, game="3x3"
    )
    assert res.game == "3x3" and res.start_cubes.shape == (6, 54) and res.states[0].shape == (1, 54)
    assert rate == 1.0 and len(data) == 6 and all(z == pytest.approx(0.97) for _, _, z in data)
    assert all(obs.shape == (324,) and pi.shape == (12,) for obs, pi, _ in data)


def test_alphazero_loss_matches_hand_computation():
    logits = torch.tensor([[2.0, 0.0, -1.0] + [0.0] * 9, [0.0] * 12])
    value = torch.tensor([[0.5], [-0.2]])
    pi = torch.zeros(2, 12)
    pi[0, 0], pi[0, 1] = 0.75, 0.25
    pi[1, 5] = 1.0
    z = torch.tensor([1.0, -1.0])
    loss, ploss, vloss = alphazero_loss(logits, value, pi, z)
    logsumexp0 = np.log(np.exp(2.0) + np.exp(0.0) * 10 + np.exp(-1.0))
    ce0 = -(0.75 * (2.0 - logsumexp0) + 0.25 * (0.0 - logsumexp0))
    ce1 = np.log(12.0)
    want_v = ((0.5 - 1.0) ** 2 + (-0.2 + 1.0) ** 2) / 2
    want_p = (ce0 + ce1) / 2
    assert vloss.item() == pytest.approx(want_v, rel=1e-6)
    assert ploss.item() == pytest.approx(want_p, rel=1e-6)
    assert loss.item() == pytest.approx(1.0 * want_v + 1.2 * want_p, rel=1e-6)


def test_bce_value_loss_by_hand_and_its_gradient_is_the_value_error():
    """--value-loss bce: cross-entropy of (1 + tanh u) / 2 to (1 + z) / 2 minus the target's
    entropy (the KL divergence); its gradient in the pre-tanh value u is v - z, however
    saturated u is."""
    u = torch.tensor([[-4.0], [0.3], [5.0]], requires_grad=True)
    z = torch.tensor([0.97, 0.5, -1.0])
    _, _, vloss = alphazero_loss(torch.zeros(3, 12), u, torch.full((3, 12), 1 / 12), z, value_loss="bce")
    v = np.tanh(u.detach().numpy()[:, 0].astype(np.float64))
    p, q = (1 + v) / 2, (1 + z.numpy().astype(np.float64)) / 2

    def plogq(a, b):  # a * log(a / b), 0 where a is 0
        return np.where(a > 0, a * np.log(np.where(a > 0, a, 1) / b), 0.0)

    assert vloss.item() == pytest.approx((plogq(q, p) + plogq(1 - q, 1 - p)).mean(), rel=1e-4)
    vloss.backward()
    np.testing.assert_allclose(3 * u.grad[:, 0].numpy(), v - z.numpy(), rtol=1e-5)
    exact = torch.atanh(torch.tensor([[0.4]]))
    _, _, at_target = alphazero_loss(
        torch.zeros(1, 12), exact, torch.full((1, 12), 1 / 12), torch.tensor([0.4]), value_loss="bce"
    )
    assert abs(at_target.item()) < 1e-6


def test_training_lowers_the_loss_and_returns_seed_tuple():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    cubes, moves = batch_scramble(rng, 128, 1)
    # Learnable targets: the inverse of the scramble move, value 0.97.
    data = []
    for c, m in zip(cubes, moves[:, 0]):
        pi = np.zeros(12, np.float32)
        pi[m ^ 1] = 1.0
        data.append((encode_onehot(c), pi, 0.97))
    model = PolicyValueNet()
    _, first, _, _ = train_on_targets(model, data, batch_size=32, epochs=1, lr=1e-3, seed=0)
    out = train_on_targets(model, data, batch_size=32, epochs=8, lr=1e-3, seed=0)
    assert len(out) == 4 and out[0] is model
    _, loss, ploss, vloss = out
    assert loss < 0.3 * first
    assert loss == pytest.approx(1.0 * vloss + 1.2 * ploss, rel=1e-4)


def test_training_is_reproducible_with_a_seed():
    data = [(np.eye(144, dtype=np.float32)[i], np.full(12, 1 / 12, np.float32), 0.5) for i in range(40)]
    results = []
    for _ in range(2):
        torch.manual_seed(1)
        results.append(train_on_targets(PolicyValueNet(), data, batch_size=8, epochs=2, seed=3)[1])
    assert results[0] == results[1]


def test_remaining_value_target_counts_moves_still_needed():
    torch.manual_seed(0)
    starts = np.stack([apply_moves(SOLVED_STICKERS, [0, 2, 4]), apply_moves(SOLVED_STICKERS, [0, 2, 4, 6, 8, 10, 1])])
    res = play_episodes(PolicyValueNet(), starts, 3, 10, "greedy")
    res.solved[:] = [True, False]  # pretend: episode 0 solved in its moves, episode 1 not
    n = len(res.actions[0])
    episode, remaining = res.state_values("episode"), res.state_values("remaining")
    np.testing.assert_allclose(episode[0], np.full(n, solved_value(n)))
    np.testing.assert_allclose(remaining[0], [solved_value(n - t) for t in range(n)])
    assert (episode[1] == -1).all() and (remaining[1] == -1).all()
    assert [z for _, _, z in res.dataset("remaining")][:n] == pytest.approx(remaining[0].tolist())
    with pytest.raises(ValueError):
        res.state_values("bogus")


def test_distance_loss_is_the_cross_entropy_with_the_target_distance():
    from Train_Network import distance_target

    z = torch.tensor([1.0, 1 - 0.03 * 3, 1 - 0.03 * 10.75, -1.0])
    target = distance_target(z, 20)
    want_target = torch.zeros(4, 20)
    want_target[0, 0] = want_target[1, 3] = want_target[3, 19] = 1.0  # whole moves; beyond the head: clipped
    want_target[2, 10], want_target[2, 11] = 0.25, 0.75  # 10.75 moves: two-hot, mean 10.75
    assert torch.allclose(target, want_target, atol=1e-5)
    whole = torch.arange(20, dtype=torch.float32)
    assert torch.equal(distance_target(1 - 0.03 * whole, 20), torch.eye(20))  # float32 targets stay one-hot
    logits = torch.randn(4, 20, generator=torch.Generator().manual_seed(0))
    policy = torch.zeros(4, 12)
    pi = torch.full((4, 12), 1 / 12)
    loss, ploss, vloss = alphazero_loss(policy, logits, pi, z, value_weight=2.0, value_loss="distance")
    want = -(want_target * torch.log_softmax(logits, dim=-1)).sum(-1).mean()
    assert vloss.item() == pytest.approx(want.item(), rel=1e-5)
    assert loss.item() == pytest.approx(2.0 * want.item() + 1.2 * np.log(12), rel=1e-6)
