"""Go_Training: root noise only at the root, self-play games with +-1 outcome targets, the replay buffer's
window, symmetric batches, and a training iteration that lowers nothing to NaN."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from go.Go_Net import belief_value
from go.Go_Training import (
    GameBuffer,
    GoRecipe,
    dirichlet_noise,
    dirichlet_over,
    hopeless_weights,
    make_optimizer,
    play_games,
    sample_batch,
    sampled_colours,
    self_play,
    train_iteration,
)
from MCTS_Core import MCTS, NetworkEvaluator

pytestmark = pytest.mark.usefixtures("torch_one_thread")
TINY = GoRecipe(
    max_moves=12, history=2, filters=8, blocks=1, simulations=6, games=3, train_steps=3, batch_size=8, gate_games=0
)


def fixed_evaluator(inputs):
    n = len(inputs)
    return np.full((n, 26), 1 / 26, np.float32), np.zeros(n, np.float32)


def test_dirichlet_noise_covers_only_legal_moves():
    legal = np.array([[True, False, True, True], [False, False, False, True]])
    noise = dirichlet_over(legal, 0.3, np.random.default_rng(0))
    np.testing.assert_allclose(noise.sum(axis=1), 1.0)
    assert (noise[~legal] == 0).all() and noise[1, 3] == 1.0


def test_noise_goes_into_the_roots_priors_only():
    game = TINY.game()
    state = game.initial_state(2)
    kwargs = dict(num_simulations=20, evaluator=fixed_evaluator, game=game, c_puct=0.3)
    noise = dirichlet_noise(0.3, 0.25, [np.random.default_rng(0), np.random.default_rng(1)])
    noisy = MCTS(None, **kwargs).search(state, root_noise=noise)
    plain = MCTS(None, **kwargs).search(state)
    roots = noisy.tree_base
    assert not np.allclose(noisy.stats[roots, 2], plain.stats[roots, 2])
    np.testing.assert_allclose(noisy.stats[roots, 2].sum(axis=1), plain.stats[roots, 2].sum(axis=1))
    inner = np.setdiff1d(np.flatnonzero(noisy.expanded[:-1]), roots)
    rows = noisy.stats[inner, 2]
    assert len(inner) and (rows[np.isfinite(rows)] == 0.3 * np.float64(np.float32(1 / 26))).all()


def test_go_has_no_c_puct_of_its_own():
    """Go's PUCT constant is its recipe's or its agent's: a search given none is refused, not run at the cubes'."""
    with pytest.raises(ValueError, match="c_puct"):
        MCTS(None, evaluator=fixed_evaluator, game=TINY.game())


def test_self_play_games_end_with_outcome_targets_from_the_player_to_move():
    torch.manual_seed(0)
    results = self_play(TINY.network(), TINY, np.random.default_rng(0))
    assert results.solved.all() and (results.lengths <= 12).all()
    for actions, targets, final in zip(results.actions, results.state_values("outcome"), results.final_values):
        assert final in (-1.0, 1.0)  # komi 24.5: no draws
        np.testing.assert_array_equal(np.abs(targets), 1.0)
        np.testing.assert_array_equal(targets[:-1], -targets[1:])  # the player to move alternates
        assert targets[-1] == -final  # the last mover's outcome is the opposite of the final state's mover's


@pytest.mark.slow
def test_buffer_keeps_the_last_fraction_of_games():
    torch.manual_seed(0)
    buffer = GameBuffer(fraction=0.5, min_games=2)
    for _ in range(3):
        buffer.add(self_play(TINY.network(), TINY, np.random.default_rng(1), games=2))
    assert buffer.games_added == 6 and len(buffer.games) == 3
    rows, pis, zs = buffer.arrays()
    assert len(rows) == len(pis) == len(zs) == len(buffer)


def test_augmented_batches_keep_policies_and_values():
    torch.manual_seed(0)
    buffer = GameBuffer(1.0, 1)
    buffer.add(self_play(TINY.network(), TINY, np.random.default_rng(2)))
    game, data = TINY.game(), buffer.arrays()
    plain = sample_batch(game, data, 16, np.random.default_rng(5), augment=False)
    turned = sample_batch(game, data, 16, np.random.default_rng(5), augment=True)
    assert turned[0].shape == (16, 5, 5, 5) and torch.equal(plain[2], turned[2])
    torch.testing.assert_close(turned[1].sum(dim=1), torch.ones(16))
    torch.testing.assert_close(turned[1][:, 25], plain[1][:, 25])  # the pass stays put
    assert torch.equal(turned[0].sum(dim=(2, 3)), plain[0].sum(dim=(2, 3)))  # stones moved, not changed
    assert not torch.equal(turned[0], plain[0])


def test_a_training_iteration_reports_its_metrics():
    torch.manual_seed(0)
    recipe = GoRecipe(**{**TINY.__dict__, "lr_milestones": (2,), "augment": True})
    model = recipe.network()
    optimizer, scheduler = make_optimizer(model, recipe)
    metrics = train_iteration(model, optimizer, scheduler, GameBuffer(0.125, 3), recipe, np.random.default_rng(0))
    assert metrics["games"] == 3 and metrics["buffer_samples"] == metrics["samples"] > 0
    assert np.isfinite([metrics["loss"], metrics["policy_loss"], metrics["value_loss"]]).all()
    assert 0.0 <= metrics["black_wins"] <= 1.0 and optimizer.param_groups[0]["lr"] == pytest.approx(1e-3)


def test_hopeless_positions_train_the_value_only():
    """With ``hopeless`` a sample valued below -hopeless for its player to move gets no policy weight (its
    policy loss no gradient), every sample keeps its value weight; at 0 the loss is the seed's, unweighted."""
    from Train_Network import alphazero_loss

    values = torch.tensor([[-0.95], [-0.5], [0.9], [-0.8]], requires_grad=True)
    assert hopeless_weights(values, 0.0) is None
    weights = hopeless_weights(values, 0.8)
    assert weights.tolist() == [[0.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    logits = torch.zeros(4, 26, requires_grad=True)
    pis = torch.softmax(torch.randn(4, 26, generator=torch.Generator().manual_seed(0)), 1)
    zs = torch.tensor([-1.0, 1.0, 1.0, -1.0])
    _, policy_loss, value_loss = alphazero_loss(logits, values, pis, zs, sample_weights=weights)
    policy_loss.backward()
    assert logits.grad[0].abs().sum() == 0 and (logits.grad[1:].abs().sum(1) > 0).all()
    plain = alphazero_loss(logits, values, pis, zs)
    assert value_loss.item() == pytest.approx(plain[2].item())
    torch.manual_seed(0)
    recipe = GoRecipe(**{**TINY.__dict__, "hopeless": 0.5})
    model = recipe.network()
    optimizer, scheduler = make_optimizer(model, recipe)
    metrics = train_iteration(model, optimizer, scheduler, GameBuffer(0.125, 3), recipe, np.random.default_rng(0))
    assert 0.0 <= metrics["hopeless_share"] <= 1.0 and np.isfinite(metrics["loss"])


@pytest.mark.parametrize("score", [0.55, 0.6])
def test_the_arena_keeps_a_network_that_scores_over_the_threshold_else_restores_the_last(monkeypatch, score):
    from go import Go_Training

    torch.manual_seed(0)
    recipe = GoRecipe(**{**TINY.__dict__, "gate_games": 4})
    model = recipe.network()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    seen = []
    monkeypatch.setattr(Go_Training, "gate", lambda m, kept, r, rng: seen.append(kept) or score)
    optimizer, scheduler = make_optimizer(model, recipe)
    metrics = train_iteration(model, optimizer, scheduler, GameBuffer(0.125, 3), recipe, np.random.default_rng(0))
    assert all(torch.equal(seen[0][k], before[k]) for k in before)  # the arena met the weights before training
    same = all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
    assert same == (score == 0.55) and metrics["gate_kept"] == float(score > 0.55)


@pytest.mark.slow
def test_the_arena_scores_its_games_and_repeats_with_its_seed():
    from go.Go_Training import gate

    torch.manual_seed(0)
    recipe = GoRecipe(**{**TINY.__dict__, "gate_games": 4})
    model, other = recipe.network(), recipe.network().state_dict()
    score = gate(model, other, recipe, np.random.default_rng(0))
    assert score in {k / 8 for k in range(9)}  # 4 games, a draw counts half
    assert gate(model, other, recipe, np.random.default_rng(0)) == score


def same_games(a, b) -> bool:
    """The same moves, policy targets and outcomes, bit for bit."""
    return (
        a.actions == b.actions
        and all(np.array_equal(x, y) for x, y in zip(a.policies, b.policies))
        and np.array_equal(a.final_values, b.final_values)
    )


@pytest.mark.slow
@pytest.mark.parametrize("search", ["puct", "gumbel"])
def test_a_game_depends_on_its_seed_only(search):
    """Each game draws from its own seed, so games split over workers are the games played together."""
    torch.manual_seed(0)
    recipe = GoRecipe(**{**TINY.__dict__, "search": search})
    model, seeds = recipe.network(), np.array([11, 12, 13])
    together = play_games(model, recipe, seeds)
    first, rest = play_games(model, recipe, seeds[:1]), play_games(model, recipe, seeds[1:])
    assert len(set(map(tuple, together.actions))) == 3  # three different games
    assert same_games(first, play_games(model, recipe, seeds[:1]))
    assert together.actions == first.actions + rest.actions
    for part, games in ((first, slice(0, 1)), (rest, slice(1, 3))):
        for x, y in zip(together.policies[games], part.policies):
            np.testing.assert_array_equal(x, y)


def test_gumbel_self_play_targets_the_improved_policy():
    torch.manual_seed(0)
    recipe = GoRecipe(**{**TINY.__dict__, "search": "gumbel"})
    results = play_games(recipe.network(), recipe, np.array([3, 4]))
    assert results.solved.all()
    for pis, actions in zip(results.policies, results.actions):
        np.testing.assert_allclose(pis.sum(axis=1), 1.0, rtol=1e-5)
        assert (pis[np.arange(len(actions)), actions] > 0).all()  # the move played is a legal one


def test_sampled_colours_split_games_by_share_and_draw_nothing_at_zero():
    rngs = [np.random.default_rng(seed) for seed in range(4000)]
    assert not sampled_colours(rngs, 0.0).any()
    assert [rng.random() for rng in rngs[:3]] == [np.random.default_rng(s).random() for s in range(3)]  # untouched
    colours = sampled_colours([np.random.default_rng(seed) for seed in range(4000)], 0.5)
    shares = [np.mean(colours == c) for c in (1, -1, 0)]
    np.testing.assert_allclose(shares, [0.25, 0.25, 0.5], atol=0.03)


def test_the_sampled_side_draws_its_moves_and_the_other_plays_its_most_visited():
    torch.manual_seed(0)
    recipe = GoRecipe(**{**TINY.__dict__, "sampled_side": 1.0, "opening_moves": 0, "simulations": 12})
    seeds = np.arange(8)
    results = play_games(recipe.network(), recipe, seeds)
    colours = sampled_colours([np.random.default_rng(int(s)) for s in seeds], 1.0)
    off_argmax = {1: 0, -1: 0}
    for colour, actions, policies in zip(colours, results.actions, results.policies):
        for ply, (action, policy) in enumerate(zip(actions, policies)):
            mover = 1 if ply % 2 == 0 else -1  # Black moves first
            most = policy[action] == policy.max()
            if mover != colour:
                assert most  # greedy: a most visited move
            off_argmax[mover] += not most
    assert set(colours) == {1, -1} and off_argmax[1] > 0 and off_argmax[-1] > 0


def test_a_sampled_side_with_epsilon_one_plays_uniform_moves_other_than_pass():
    torch.manual_seed(0)
    recipe = GoRecipe(
        **{**TINY.__dict__, "sampled_side": 1.0, "sampled_epsilon": 1.0, "opening_moves": 0, "simulations": 4}
    )
    seeds = np.arange(8)
    results = play_games(recipe.network(), recipe, seeds)
    colours = sampled_colours([np.random.default_rng(int(s)) for s in seeds], 1.0)
    unvisited = 0
    for colour, actions, policies in zip(colours, results.actions, results.policies):
        for ply, (action, policy) in enumerate(zip(actions, policies)):
            mover = 1 if ply % 2 == 0 else -1
            if mover == colour:
                assert action != 25  # never a pass while a point is legal (12 moves cannot fill the board)
                unvisited += policy[action] == 0  # 4 simulations visit few moves: a uniform draw leaves them
            else:
                assert policy[action] == policy.max()
    assert unvisited > 0


@pytest.mark.slow
def test_a_sampled_side_with_its_own_search_searches_less_and_plays_its_most_visited_at_temperature_zero():
    torch.manual_seed(0)
    recipe = GoRecipe(
        **{
            **TINY.__dict__,
            "sampled_side": 1.0,
            "sampled_simulations": 3,
            "sampled_c_puct": 0.1,
            "sampled_temperature": 0.0,
            "opening_moves": 0,
            "simulations": 12,
        }
    )
    seeds = np.arange(6)
    results = play_games(recipe.network(), recipe, seeds)
    colours = sampled_colours([np.random.default_rng(int(s)) for s in seeds], 1.0)
    spread = {True: [], False: []}  # moves with visits, for the sampled colour and the other
    for colour, actions, policies in zip(colours, results.actions, results.policies):
        for ply, (action, policy) in enumerate(zip(actions, policies)):
            assert policy[action] == policy.max()  # both colours greedy
            spread[(1 if ply % 2 == 0 else -1) == colour].append(np.count_nonzero(policy))
    assert set(colours) == {1, -1}
    assert max(spread[True]) <= 3 < max(spread[False])  # 3 simulations reach at most 3 moves
    # the simulations counted are each colour's own: 3 a sampled move, 12 another
    sampled_moves = len(spread[True])
    assert results.simulations == 3 * sampled_moves + 12 * len(spread[False])


def test_playout_cap_randomization_records_only_the_full_searches():
    """With a full-search share of one half, about half of the other colour's moves search cheaply and
    train nothing: the buffer keeps exactly the full searches; at a share of 1 nothing is drawn, so the
    games are the seed's."""
    torch.manual_seed(0)
    model = TINY.network()
    recipe = GoRecipe(**{**TINY.__dict__, "full_search_share": 0.5, "fast_simulations": 2, "games": 4})
    results = self_play(model, recipe, np.random.default_rng(0))
    recorded = np.concatenate(results.recorded)
    assert 0.2 < recorded.mean() < 0.8 and set(recorded.tolist()) == {0.0, 1.0}
    searched = sum(len(r) for r in results.recorded) * TINY.simulations - (recorded == 0).sum() * 4
    assert results.simulations == searched  # the cheap ones searched 2 simulations, not 6
    buffer = GameBuffer(1.0, 4)
    buffer.add(results)
    assert len(buffer.games) == 4 and len(buffer) == int(recorded.sum())
    kept = np.concatenate([rows for rows, _, _ in buffer.games])
    everything = np.concatenate(results.states)
    np.testing.assert_array_equal(kept, everything[recorded > 0])
    plain = self_play(model, TINY, np.random.default_rng(0), games=4)
    full = self_play(model, GoRecipe(**{**TINY.__dict__, "fast_simulations": 2}), np.random.default_rng(0), games=4)
    assert plain.actions == full.actions and all(np.concatenate(full.recorded) == 1)


def test_bfloat16_reads_and_trains_a_belief_network_close_to_float32():
    """``precision`` bf16 (Go_Training.GoRecipe): the evaluator's priors and values within bfloat16's rounding of
    float32's (fp32 exactly the network's own outputs), the belief's value read in float32 (a komi that
    decides by half a point keeps its sign), and a training iteration whose losses stay finite."""
    torch.manual_seed(0)
    recipe = dataclasses.replace(
        TINY, komi_input=True, komi_spread=2.0, score_heads=True, score_utility=0.1, score_belief=True, precision="bf16"
    )
    model, game = recipe.network().eval(), recipe.game()
    results = self_play(model, recipe, np.random.default_rng(0))
    inputs = np.concatenate(results.states)[:16]  # self-play's positions, each with its game's komi
    fp32, bf16 = (NetworkEvaluator(model, game=game, precision=p).forward(inputs) for p in ("fp32", "bf16"))
    with torch.inference_mode():
        logits, value = model(torch.from_numpy(game.encode(inputs)))
    np.testing.assert_array_equal(fp32[0], torch.softmax(logits, -1).numpy())
    np.testing.assert_array_equal(fp32[1], value.reshape(-1).numpy())
    np.testing.assert_allclose(bf16[0], fp32[0], atol=0.02)
    np.testing.assert_allclose(bf16[1], fp32[1], atol=0.05)
    # a belief sure of a board margin of -25 gives +1 at komi 25.5 and -1 at 24.5, under autocast as in float32
    sure = torch.full((2, 51), -30.0, dtype=torch.bfloat16)
    sure[:, 0] = 30.0
    with torch.autocast("cpu", dtype=torch.bfloat16):
        won, _ = belief_value(sure, torch.tensor([25.5, 24.5]))
    assert won.dtype == torch.float32 and won.reshape(-1).tolist() == pytest.approx([1.0, -1.0], abs=1e-6)
    assert sum(len(p) for p in results.policies) > 0
    optimizer, scheduler = make_optimizer(model, recipe)
    before = [p.detach().clone() for p in model.parameters()]
    metrics = train_iteration(model, optimizer, scheduler, GameBuffer(0.5, 3, True), recipe, np.random.default_rng(1))
    assert np.isfinite([metrics[k] for k in ("loss", "policy_loss", "value_loss", "belief_loss")]).all()
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_an_unknown_precision_is_refused_when_the_evaluator_is_made():
    with pytest.raises(ValueError, match="unknown precision"):
        NetworkEvaluator(TINY.network(), game=TINY.game(), precision="fp16")
