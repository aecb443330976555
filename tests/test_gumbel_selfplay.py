"""Gumbel self-play (main.py --search gumbel): the completed-Q policy targets, the search-based
value targets (--value-target search / bootstrap) by hand, legal play, the replay buffer it
fills, the flags' checks and the --recipe alphazero preset end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from conftest import REPO
from cube.Run_State import Curriculum, ReplayBuffer, Run
from engine.Gumbel_MCTS import GumbelMCTS
from engine.Gumbel_Self_Play import GumbelEpisodeResults, bootstrap_returns, gumbel_self_play, play_gumbel_episodes
from main import parse_args, selfplay_step, torch_threads
from Plot_Scatter import METRIC_KEYS
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import (
    NUM_ACTIONS,
    SOLVED_STICKERS,
    apply_move_idx,
    batch_apply_moves,
    batch_is_solved,
    legal_action_mask,
    next_face_count,
)
from run.Recipes import RECIPES
from test_main import run_main

pytestmark = pytest.mark.usefixtures("torch_one_thread")


# --------------------------------------------------------------------------- value targets by hand
def test_bootstrap_returns_by_hand():
    v = np.array([0.5, 0.6, 0.8])
    # Solved in 3 moves, 2 steps: 2 moves then the root value of state 2; from state 1 on the
    # solved cube (worth 1) is within reach: 1 - 0.03 * moves to go.
    np.testing.assert_allclose(bootstrap_returns(v, True, 2), [0.8 - 0.06, 1 - 0.06, 1 - 0.03], rtol=1e-6)
    # Unsolved: the last searched state (2) is as far as a target can look.
    np.testing.assert_allclose(bootstrap_returns(v, False, 2), [0.8 - 0.06, 0.8 - 0.03, 0.8], rtol=1e-6)
    np.testing.assert_allclose(bootstrap_returns(v, False, 0), v, rtol=1e-6)  # the search's root value
    np.testing.assert_allclose(bootstrap_returns(v, True, 0), v, rtol=1e-6)
    np.testing.assert_allclose(bootstrap_returns(v, True, 40), [0.91, 0.94, 0.97], rtol=1e-6)  # Monte Carlo
    # Clipped to the tanh's range; a k-move scramble bounds state t at k + t moves out.
    np.testing.assert_allclose(bootstrap_returns(np.array([-0.99, -0.99]), False, 1), [-1.0, -0.99], rtol=1e-6)
    bounded = bootstrap_returns(np.array([-0.99, -0.99]), False, 1, start_depth=5)
    np.testing.assert_allclose(bounded, [1 - 0.03 * 5, 1 - 0.03 * 6], rtol=1e-6)
    assert bootstrap_returns(v, True, 2).dtype == np.float32 and len(bootstrap_returns(v[:0], True, 3)) == 0


def test_bootstrap_max_takes_the_best_of_the_0_to_n_step_returns():
    # State 1 was a detour: the search read state 0 at 0.9 (about 3 moves), then a sampled move
    # went to a state read 0.6; the 2-step return of state 0 counts the detour, its 0-step one not.
    v = np.array([0.9, 0.6, 0.8, 0.85])
    got = bootstrap_returns(v, False, 2, best_of_steps=True)
    returns = [bootstrap_returns(v, False, k) for k in range(3)]  # 0-, 1- and 2-step
    np.testing.assert_allclose(got, np.max(returns, axis=0), rtol=1e-6)
    np.testing.assert_allclose(got, [0.9, 0.85 - 0.06, 0.85 - 0.03, 0.85], rtol=1e-6)
    np.testing.assert_allclose(bootstrap_returns(v, True, 9, best_of_steps=True), [0.9, 0.91, 0.94, 0.97], rtol=1e-6)
    np.testing.assert_allclose(bootstrap_returns(v, False, 0, best_of_steps=True), v, rtol=1e-6)
    bounded = bootstrap_returns(np.array([-0.99, -0.99]), False, 1, start_depth=5, best_of_steps=True)
    np.testing.assert_allclose(bounded, [1 - 0.03 * 5, 1 - 0.03 * 6], rtol=1e-6)  # the depth bound still holds


def test_episode_results_give_search_targets_and_keep_outcome_targets():
    res = GumbelEpisodeResults(
        np.zeros((2, 24), np.int8),
        [[0, 2, 4], [1, 3]],
        np.array([True, False]),
        states=[np.zeros((3, 24), np.int8), np.zeros((2, 24), np.int8)],
        policies=[np.full((3, 12), 1 / 12, np.float32), np.full((2, 12), 1 / 12, np.float32)],
        root_values=[np.array([0.5, 0.6, 0.8], np.float32), np.array([0.1, -0.2], np.float32)],
        best_q=[np.array([0.7, 0.8, 0.97], np.float32), np.array([0.3, 0.0], np.float32)],
    )
    search = res.state_values("search")
    np.testing.assert_allclose(np.concatenate(search), [0.5, 0.6, 0.8, 0.1, -0.2], rtol=1e-6)
    boot = res.state_values("bootstrap", bootstrap_steps=1)
    np.testing.assert_allclose(np.concatenate(boot), [0.57, 0.77, 0.97, -0.23, -0.2], rtol=1e-6)
    assert [z for _, _, z in res.dataset("bootstrap", bootstrap_steps=1)] == pytest.approx(np.concatenate(boot))
    np.testing.assert_allclose(res.state_values("remaining")[0], [0.91, 0.94, 0.97], rtol=1e-6)  # Self_Play's
    assert (res.state_values("episode")[1] == -1).all()
    best = res.state_values("bootstrap", bootstrap_steps=1, search_value="best")
    np.testing.assert_allclose(np.concatenate(best), [0.77, 0.94, 0.97, -0.03, 0.0], rtol=1e-6)
    best_max = res.state_values("bootstrap-max", bootstrap_steps=1, search_value="best")
    np.testing.assert_allclose(np.concatenate(best_max), [0.77, 0.94, 0.97, 0.3, 0.0], rtol=1e-6)
    with pytest.raises(ValueError):
        res.state_values("search", search_value="median")
    res.start_depth = 2  # from 2-move scrambles: state t is at most 2 + t moves out
    bounded = res.state_values("bootstrap", bootstrap_steps=1)
    np.testing.assert_allclose(np.concatenate(bounded), [0.94, 0.91, 0.97, 0.94, 0.91], rtol=1e-6)
    unbounded = res.state_values("bootstrap", bootstrap_steps=1, depth_bound=False)
    np.testing.assert_allclose(np.concatenate(unbounded), np.concatenate(boot), rtol=1e-6)


# --------------------------------------------------------------------------- the completed-Q policy target
PRIOR = np.arange(1, NUM_ACTIONS + 1, dtype=np.float64) / np.arange(1, NUM_ACTIONS + 1).sum()


def flat_evaluator(cubes):
    """The same priors ``PRIOR`` and value 0.5 for every cube."""
    n = len(cubes)
    return np.tile(PRIOR.astype(np.float32), (n, 1)), np.full(n, 0.5, np.float32)


@pytest.mark.parametrize("first", [0, 5, 11])
def test_policy_target_is_the_completed_q_policy_by_hand(first):
    """One move from solved, 12 simulations visit each of the 12 moves once: Q = 1 - 0.03 for
    the moves that solve (the inverse, and the opposite face turned the same way: the same
    position turned as a whole), 0.5 - 0.03 for the others. Completed Q rescaled over the
    legal moves: 1 and 0; sigma = (50 + max N = 1) * 0.1 * q_hat; target softmax(log prior + sigma)."""
    start = apply_move_idx(SOLVED_STICKERS, first)[None]
    solving = batch_is_solved(batch_apply_moves(np.repeat(start, NUM_ACTIONS, 0), np.arange(NUM_ACTIONS)))
    assert solving.sum() == 2 and solving[first ^ 1]
    res = play_gumbel_episodes(flat_evaluator, start, 12, 5, np.random.default_rng(0))
    assert solving[res.actions[0]].all() and len(res.actions[0]) == 1 and res.solved.all()
    sigma = np.where(solving, 5.1, 0.0)
    expected = PRIOR * np.exp(sigma) / (PRIOR * np.exp(sigma)).sum()
    np.testing.assert_allclose(res.policies[0][0], expected, rtol=1e-5)
    root = (0.5 + 2 * 0.97 + 10 * 0.47) / 13  # (v_raw + sum W) / (1 + sum N)
    np.testing.assert_allclose(res.state_values("search")[0], [root], rtol=1e-6)
    np.testing.assert_allclose(res.state_values("search", search_value="best")[0], [0.97], rtol=1e-6)
    both = GumbelMCTS(num_simulations=12, evaluator=flat_evaluator).run_batch(
        np.concatenate([start, SOLVED_STICKERS[None]])
    )
    np.testing.assert_allclose(both.best_q(), [0.97, 1.0], rtol=1e-6)  # a solved root is not searched
    np.testing.assert_allclose(res.state_values("bootstrap", bootstrap_steps=3)[0], [0.97], rtol=1e-6)


# --------------------------------------------------------------------------- self-play and the buffer
def test_gumbel_self_play_plays_legal_moves_from_its_scrambles():
    torch.manual_seed(0)
    res = gumbel_self_play(PolicyValueNet(), 6, 8, 8, 4, np.random.default_rng(3))
    assert res.start_depth == 4 and res.simulations == 8 * sum(map(len, res.actions))
    for start, states, pis, moves, solved in zip(res.start_cubes, res.states, res.policies, res.actions, res.solved):
        assert states.shape == (len(moves), 24) and pis.shape == (len(moves), NUM_ACTIONS)
        cube, last, count = start.copy(), -1, 0
        for state, pi, move in zip(states, pis, moves):
            np.testing.assert_array_equal(state, cube)
            legal = legal_action_mask(np.array([last]), np.array([count]))[0]
            assert legal[move] and (pi[~legal] == 0).all() and pi.sum() == pytest.approx(1.0, abs=1e-5)
            cube = batch_apply_moves(cube[None], np.array([move]))[0]
            count = int(next_face_count(np.array([last]), np.array([count]), np.array([move]))[0])
            last = move
        assert bool(batch_is_solved(cube[None])[0]) == solved


def test_selfplay_step_fills_the_buffer_with_gumbel_targets():
    args = parse_args(["--search", "gumbel", "--value-target", "bootstrap", "--sims", "4", "--episodes-per-iter", "5"])
    args.max_episode_steps, args.batch_size, args.min_buffer_batches = 6, 4, 1
    torch.manual_seed(0)
    run = Run(
        PolicyValueNet(),
        Curriculum(3),
        ReplayBuffer(1000),
        np.random.default_rng(1),
        {k: [] for k in METRIC_KEYS},
    )
    targets = selfplay_step(args, run, torch.device("cpu"), False)
    buf = run.buffer
    n = len(buf)
    assert 5 <= n <= 30 and targets.sample is not None and "gumbel sims 4" in targets.what
    assert buf.cubes.shape == (n, 24) and buf.cubes.dtype == np.int8
    assert buf.pis.shape == (n, NUM_ACTIONS) and buf.pis.dtype == np.float32 and buf.zs.shape == (n,)
    np.testing.assert_allclose(buf.pis.sum(1), 1.0, rtol=1e-5)
    assert (np.abs(buf.zs) <= 1).all() and (buf.zs >= 1 - 0.03 * (3 + 5)).all()  # depth bound: 3 + t moves


# --------------------------------------------------------------------------- flags and the preset
def test_flags_default_to_the_original_and_check_their_combinations(tmp_path):
    a = parse_args([])
    assert (a.search, a.value_target, a.value_loss, a.sims) == ("puct", "episode", "mse", [300, 600, 800])
    assert parse_args(["--sims", "16"]).sims == [16, 16, 16]
    for bad in (
        ["--sims", "1", "2"],
        ["--value-target", "search"],
        ["--search", "gumbel", "--targets", "lookahead"],
        ["--search", "gumbel", "--workers", "2"],
    ):
        with pytest.raises(SystemExit):
            parse_args(bad)


def test_alphazero_recipe_sets_its_flags_and_sims_overrides_every_length():
    a = parse_args(["--recipe", "alphazero"])
    for key, value in RECIPES["alphazero"].items():
        assert getattr(a, key) == value, key
    assert (a.targets, a.search, a.canonical_symmetry) == ("selfplay", "gumbel", True)
    assert parse_args(["--recipe", "alphazero", "--sims", "16"]).sims == [16, 16, 16]
    off = parse_args(["--recipe", "alphazero", "--no-canonical-symmetry", "--no-keep-optimizer", "--no-depth-bound"])
    assert not (off.canonical_symmetry or off.keep_optimizer or off.depth_bound)  # each change can be switched off


def test_threads_flag_sets_torch_threads_for_the_run_and_restores_them():
    """--threads (the preset's 1): torch's CPU threads while main() runs, as they were after."""
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(0):  # 0 = torch's default: left alone
        assert torch.get_num_threads() == before
    assert parse_args(["--recipe", "alphazero"]).threads == 1 and parse_args([]).threads == 0
    with pytest.raises(SystemExit):
        parse_args(["--threads", "-1"])


@pytest.mark.slow
def test_alphazero_recipe_runs_and_resumes_like_an_uninterrupted_run(tmp_path):
    tiny = ["--recipe", "alphazero", "--episodes-per-iter", "6", "--sims", "4", "--skip-eval"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    out = run_main(tmp_path / "a", "--num-iters", "3", *tiny)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("iter ")]
    assert len(lines) == 3 and all("gumbel sims 4" in line for line in lines)
    assert run_main(tmp_path / "b", "--num-iters", "1", *tiny).returncode == 0
    out = run_main(tmp_path / "b", "--num-iters", "3", *tiny)
    assert out.returncode == 0 and "Resuming" in out.stdout
    a, b = (json.loads((tmp_path / x / "logs" / "metrics.json").read_text()) for x in "ab")
    assert a["iterations"] == b["iterations"] == [1, 2, 3]
    assert a["solve_rates"] == b["solve_rates"] and a["num_samples"] == b["num_samples"]
    assert a["losses"] == pytest.approx(b["losses"], rel=1e-5)


@pytest.mark.slow
def test_time_budget_stops_a_run_and_its_resumption(tmp_path):
    """--time-budget (the preset's 90 minutes): no iteration starts once the completed ones took
    that long, counted over every session of the run (saved in the training state)."""
    out = run_main(tmp_path, "--num-iters", "5", "--time-budget", "0.0001", "--skip-eval")
    assert out.returncode == 0, out.stderr
    assert len([line for line in out.stdout.splitlines() if line.startswith("iter ")]) == 1
    assert "Time budget spent" in out.stdout
    state = torch.load(tmp_path / "m.train_state.pt", weights_only=True)
    assert state["iteration"] == 1 and state["seconds"] > 0.006
    out = run_main(tmp_path, "--num-iters", "5", "--time-budget", "0.0001", "--skip-eval")
    assert out.returncode == 0 and "Nothing to train" in out.stdout and "iter " not in out.stdout


@pytest.mark.slow
def test_shipped_selfplay_model_solves_far_positions_with_the_gumbel_solver():
    """pretrained/alphazero_selfplay.pt (the preset's own run) through --solver gumbel at 200
    simulations, as docs/alphazero_selfplay.md measures it: 24 positions 12-14 moves out, drawn
    with a seed the docs do not use, solved within 1.2x their optimal length."""
    from cube.Cube_Checkpoints import load_model
    from cube.Solvers import solve_cubes
    from Optimal_Solver import get_solver

    solver = get_solver()
    rng = np.random.default_rng(2026)
    cubes = np.concatenate([solver.random_cubes_at_distance(rng, d, 8) for d in (12, 13, 14)])
    optimal = np.repeat([12, 13, 14], 8)
    model = load_model(str(REPO / "pretrained" / "alphazero_selfplay.pt"))
    results = solve_cubes("gumbel", cubes, model=model, sims=200)
    assert all(r.solved for r in results)
    assert all(len(r.moves) <= 1.2 * d for r, d in zip(results, optimal))
