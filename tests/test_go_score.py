"""Go that knows the komi and the score (issue 48): the komi per state and as a network input, the score
utility of finished games, the score and ownership heads and their targets, old checkpoints, and a
training run with them that resumes as one session."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import main
from go.Arena import agent_player
from go.Go_Board import BLACK, KOMI_PLANE_SCALE, WHITE, GoBoard, board_from_text
from go.Go_Game import go_game, score_term
from go.Go_Net import GoNet, load_go_model
from go.Go_Run import buffer_problem
from go.Go_Training import (
    GameBuffer,
    GoRecipe,
    draw_komi,
    make_optimizer,
    sample_batch,
    self_play,
    train_iteration,
)
from run.Checkpoints import save_checkpoint

pytestmark = pytest.mark.usefixtures("torch_one_thread")
TINY = GoRecipe(
    max_moves=12, history=2, filters=8, blocks=1, simulations=6, games=3, train_steps=3, batch_size=8, gate_games=0,
    komi_input=True, komi_spread=2.0, score_heads=True, score_utility=0.1,
)  # fmt: skip
# Black owns the left two columns and White the right two; the middle column is shared (neither's).
SPLIT = board_from_text(["XX.OO", "XX.OO", "XX.OO", "XX.OO", "XX.OO"])


def test_each_state_scores_with_its_own_komi_and_keeps_it_through_moves():
    rules = GoBoard(5, komi=24.5, history=2, komi_input=True)
    state = rules.initial_state(3)
    state["board"][:] = SPLIT
    state["komi"] = np.array([0.5, -0.5, 7.0], np.float32)
    np.testing.assert_array_equal(rules.score(state), [-0.5, 0.5, -7.0])  # 10 - 10 - komi
    np.testing.assert_array_equal(rules.score({"board": state["board"]}), np.full(3, -24.5))  # the rules' komi
    after = rules.step(state, np.array([25, 25, 25]))
    np.testing.assert_array_equal(after["komi"], state["komi"])


def test_the_komi_plane_is_the_komi_the_player_to_move_receives():
    game = go_game(5, history=2, komi_input=True)
    state = game.initial_state(2)
    state["komi"] = np.array([24.5, -3.0], np.float32)
    state["to_play"][1] = WHITE
    rows = game.eval_input(state)
    assert rows.shape == (2, 2 * 25 + 2) and list(rows[:, -2]) == [49, -6]  # half points, before the player
    planes = game.encode(rows)
    assert planes.shape == (2, 6, 5, 5)
    np.testing.assert_allclose(planes[:, -1, 2, 2], [-24.5 / KOMI_PLANE_SCALE, -3.0 / KOMI_PLANE_SCALE])
    np.testing.assert_array_equal(planes, game.rules.encode(state))  # the row holds all the planes need


def test_a_game_without_the_komi_input_keeps_the_seeds_planes_and_rows():
    old, new = go_game(5), go_game(5, komi_input=True)
    state = old.initial_state(1)
    assert old.obs_shape == (17, 5, 5) and new.obs_shape == (18, 5, 5)
    assert old.eval_input(state).shape == (1, 8 * 25 + 1) and old.name == "go5" and new.name != old.name


def test_the_score_utility_of_a_finished_game_mixes_win_and_margin():
    game = go_game(5, komi=0.5, score_utility=0.2)
    state = game.new_states(SPLIT[None])
    state["passes"][:] = 2
    for to_play, margin in ((BLACK, -0.5), (WHITE, 0.5)):
        state["to_play"][:] = to_play
        want = 0.8 * np.sign(margin) + 0.2 * np.tanh(margin / 5)
        np.testing.assert_allclose(game.terminal_value(state), [want])
        np.testing.assert_allclose(game.margins(state), [margin])
    assert go_game(5, komi=0.5).terminal_value(state)[0] == 1.0  # no utility: the plain win


def test_forward_mixes_value_and_score_by_the_saved_utility(tmp_path):
    torch.manual_seed(0)
    net = GoNet(5, 18, 8, 1, score_heads=True, score_utility=0.25).eval()
    x = torch.randn(4, 18, 5, 5)
    heads = net.heads(x)
    assert heads["ownership"].shape == (4, 25) and bool((heads["ownership"].abs() <= 1).all())
    _, value = net(x)
    torch.testing.assert_close(value, 0.75 * heads["value"] + 0.25 * score_term(heads["score"]))
    save_checkpoint(net, str(tmp_path / "score.pt"))
    loaded = load_go_model(str(tmp_path / "score.pt"), 5)
    assert loaded.game_options == {"history": 8, "komi_input": True, "score_utility": 0.25}
    torch.testing.assert_close(loaded(x)[1], value)


def test_an_old_checkpoint_loads_and_plays_the_game_it_always_did():
    model = load_go_model("pretrained/go5_policy_value.pt", 5)
    assert not model.has_score and model.game_options == {"history": 8, "komi_input": False, "score_utility": 0.0}
    assert go_game(5, **model.game_options) == go_game(5)
    agent = agent_player(model, 4, 0.3)
    agent.new_game(go_game(5), BLACK)
    with pytest.raises(ValueError, match="needs the game"):
        agent.new_game(go_game(5, komi_input=True), BLACK)


def test_komi_draws_are_half_points_around_the_fair_komi_and_repeat_with_the_seed():
    draws = [draw_komi(TINY, np.random.default_rng(seed)) for seed in range(400)]
    assert all(k % 1 == 0.5 for k in draws)
    assert abs(np.median(draws) - 25) <= 1 and {24.5, 25.5} <= set(draws) and max(draws) - min(draws) > 8
    assert draws == [draw_komi(TINY, np.random.default_rng(seed)) for seed in range(400)]


def test_score_targets_are_each_players_final_margin_outcome_and_owners():
    torch.manual_seed(0)
    results = self_play(TINY.network(), TINY, np.random.default_rng(0))
    game = TINY.game()
    buffer = GameBuffer(1.0, 1, score_targets=True)
    buffer.add(results, game)
    komis = results.final_inputs[:, -2] / 2
    assert len(set(komis.tolist())) > 1  # each game its own komi
    for (rows, _, zs, margins, owners), final, komi in zip(buffer.games, results.final_inputs, komis):
        state = game.rules.initial_state(1)
        state["board"][0] = final[:25]
        black = game.rules.ownership(state["board"])[0]
        side = rows[:, -1]
        np.testing.assert_allclose(margins, side * ((black == 1).sum() - (black == -1).sum() - komi))
        np.testing.assert_array_equal(zs, np.sign(margins))
        np.testing.assert_array_equal(owners, side[:, None] * black[None, :])
        np.testing.assert_array_equal(rows[:, -2], 2 * komi)  # every state of the game saw its komi


def test_augmented_owners_turn_with_the_board():
    """Under every symmetry a sample's owners map as its board does: on a finished position (the left
    columns Black's, the right White's), each stone of either side is owned by its colour."""
    game = TINY.game()
    state = game.new_states(np.stack([SPLIT, SPLIT.reshape(5, 5).T.reshape(-1)]))  # two orientations
    state["to_play"][1] = WHITE
    rows = game.eval_input(state)
    black = game.rules.ownership(state["board"])
    side = rows[:, -1].astype(np.int8)
    data = (rows, np.full((2, 26), 1 / 26, np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32),
            (black * side[:, None]).astype(np.int8))  # fmt: skip
    obs, _, _, _, owners = sample_batch(game, data, 64, np.random.default_rng(4), augment=True)
    own, theirs = obs[:, 0].flatten(1), obs[:, 1].flatten(1)  # the player's and the opponent's stones
    assert bool((owners[own == 1] == 1).all()) and bool((owners[theirs == 1] == -1).all())
    assert bool((owners[(own == 0) & (theirs == 0)] == 0).all())  # the shared middle column
    assert len({tuple(o.tolist()) for o in owners}) == 4  # every distinct image of the split board drawn


def test_a_damaged_score_buffer_is_named():
    torch.manual_seed(0)
    buffer = GameBuffer(1.0, 1, score_targets=True)
    buffer.add(self_play(TINY.network(), TINY, np.random.default_rng(0), games=1), TINY.game())
    games = [[torch.from_numpy(part) for part in game] for game in buffer.games]
    assert buffer_problem(games, TINY) is None
    games[0][4] = games[0][4] * 3
    assert "owners" in buffer_problem(games, TINY)
    assert "rows, policies, values, margins, owners" in buffer_problem([games[0][:3]], TINY)


def test_a_training_iteration_trains_the_score_heads():
    torch.manual_seed(0)
    model = TINY.network()
    optimizer, scheduler = make_optimizer(model, TINY)
    buffer = GameBuffer(1.0, 3, score_targets=True)
    metrics = train_iteration(model, optimizer, scheduler, buffer, TINY, np.random.default_rng(0))
    assert np.isfinite([metrics[k] for k in ("loss", "score_loss", "ownership_loss", "score_error")]).all()
    assert metrics["score_error"] > 0


def test_the_score_head_learns_final_margins():
    """On a fixed buffer of finished games, 300 steps bring the score head's error in points well below the
    error of always predicting the mean margin (what a head that learned nothing of the board does)."""
    torch.manual_seed(0)
    recipe = GoRecipe(**{**TINY.__dict__, "train_steps": 300, "batch_size": 32, "lr": 3e-3, "simulations": 2})
    buffer = GameBuffer(1.0, 12, score_targets=True)
    buffer.add(self_play(recipe.network(), recipe, np.random.default_rng(0), games=12), recipe.game())
    margins = buffer.arrays()[3]
    baseline = float(np.abs(margins - margins.mean()).mean())
    model = recipe.network()
    optimizer, scheduler = make_optimizer(model, recipe)
    from go.Go_Training import train_steps

    train_steps(model, optimizer, scheduler, buffer, recipe, np.random.default_rng(1))
    obs, _, _, margins, _ = sample_batch(recipe.game(), buffer.arrays(), 256, np.random.default_rng(2), False)
    with torch.inference_mode():
        error = float((model.heads(obs)["score"].reshape(-1) * 5 - margins).abs().mean())
    assert error < 0.6 * baseline, (error, baseline)


@pytest.mark.parametrize("belief", [False, True])
def test_the_agent_gives_score_leads_with_a_score_head(belief):
    """kata-analyze's scoreLead: the score head's margin, or the score belief's where the network has one
    (it applies the komi exactly); the GUI's and ``--empty-board``'s expected margins read the same."""
    from go.Go_Match import empty_board
    from gui.Go_Estimate import position_estimate

    torch.manual_seed(0)
    model = GoRecipe(**{**TINY.__dict__, "score_belief": belief}).network().eval()
    game = go_game(5, history=2, komi_input=True, score_utility=0.1)
    agent = agent_player(model, 8, 0.3)
    agent.new_game(game, BLACK)
    state = game.initial_state(1)
    tree = agent.think(state)
    leads = agent.score_leads(tree)
    assert leads.shape == (26,) and np.isfinite(leads).all()
    with torch.inference_mode():
        child = model.heads(torch.from_numpy(game.encode(game.eval_input(game.step(state, np.array([12]))))))
        root = model.heads(torch.from_numpy(game.encode(game.eval_input(state))))
    margin = lambda heads: float(heads["lead"][0, 0]) if belief else 5 * float(heads["score"][0, 0])
    assert leads[12] == pytest.approx(-margin(child), abs=1e-4)  # batches of 26 and 1 row
    assert position_estimate(model, game, state).black_margin == pytest.approx(margin(root), abs=1e-5)
    komi = float(game.rules.komi_of(state)[0])  # evaluate.py --empty-board's expected margin reads the same
    assert empty_board(model, 5, komi, 2, 1.0)["network_score"] == pytest.approx(margin(root), abs=1e-5)


@pytest.mark.slow
def test_a_score_run_resumed_equals_one_session(tmp_path):
    tiny = "--game go5 --games 2 --simulations 4 --train-steps 2 --batch-size 8 --filters 8 --blocks 1".split()
    tiny += "--gate-games 0 --buffer-min-games 2 --komi-input --komi-spread 2 --score-heads --score-utility 0.1".split()
    tiny += ["--augment", "--score-belief"]

    def train(name, iterations):
        paths = ["--checkpoint", str(tmp_path / f"{name}.pt"), "--log-dir", str(tmp_path / f"{name}_logs")]
        return main.main([*tiny, *paths, "--num-iters", str(iterations)])

    assert train("once", 3) == 0 and train("twice", 2) == 0 and train("twice", 3) == 0
    a, b = (torch.load(tmp_path / f"{n}.pt", weights_only=True) for n in ("once", "twice"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert "score_out.weight" in a and "belief_out.weight" in a and float(a["score_utility"]) == pytest.approx(0.1)


def test_lr_drops_divide_the_rate_by_10_at_each_share_of_the_budget_passed():
    from go.Go_Training import lr_at

    recipe = GoRecipe(lr=0.02, lr_drops=(0.6, 0.85), lr_milestones=())
    assert [lr_at(recipe, t) for t in (0.0, 0.599, 0.6, 0.849)] == pytest.approx([0.02, 0.02, 0.002, 0.002])
    assert lr_at(recipe, 0.9) == pytest.approx(0.0002) and lr_at(recipe, 5.0) == pytest.approx(0.0002)
    assert lr_at(GoRecipe(lr=0.02), 0.9) == 0.02  # no drops: the step milestones' scheduler alone


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--lr-drops", "0.5", "--time-budget", "0"], "give one"),
        (["--lr-drops", "0.5", "--lr-milestones", "100"], "one or the other"),
        (["--lr-drops", "0.8", "0.5"], "go up"),
        (["--lr-drops", "1.5"], "between 0 and 1"),
    ],
)
def test_bad_lr_drops_are_refused_with_a_sentence(flags, message, capsys):
    from go import Go_Args

    with pytest.raises(SystemExit) as exit_:
        Go_Args.parse_args(["--game", "go5", "--time-budget", "10", "--lr-milestones", *flags])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_run_drops_its_rate_by_the_time_spent(tmp_path):
    from conftest import main_in_process

    tiny = "--game go5 --games 2 --simulations 4 --train-steps 2 --batch-size 8 --filters 8 --blocks 1".split()
    tiny += "--gate-games 0 --buffer-min-games 2 --num-iters 2 --time-budget 1 --lr-milestones".split()
    done = main_in_process(tmp_path, *tiny, "--lr-drops", "0.0001", "0.0002")  # 6 and 12 ms of the minute
    assert done.returncode == 0, done.stderr
    rates = [line.split("| lr ")[1].split()[0] for line in done.stdout.splitlines() if line.startswith("iter")]
    assert rates == ["1e-02", "1e-04"]
