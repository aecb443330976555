"""The score belief head (``GoNet(score_belief=True)``): a distribution over the final board margin from
which the search reads its win value at the input's komi exactly (issue 48; docs/go.md)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from go.Go_Board import BLACK, WHITE
from go.Go_Game import go_game, score_term
from go.Go_Net import GoNet, belief_targets, belief_value, input_komi, load_go_model
from go.Go_Training import GameBuffer, GoRecipe, make_optimizer, self_play, train_iteration, train_steps
from run.Checkpoints import save_checkpoint
from run.Run_IO import CheckpointError

pytestmark = pytest.mark.usefixtures("torch_one_thread")
TINY = GoRecipe(
    max_moves=12, history=2, filters=8, blocks=1, simulations=6, games=3, train_steps=3, batch_size=8, gate_games=0,
    komi_input=True, komi_spread=2.0, score_heads=True, score_utility=0.1, score_belief=True,
)  # fmt: skip


def _inputs(game, komis, to_play):
    """Network inputs of empty boards at the given komis with the given player to move."""
    state = game.initial_state(len(komis))
    state["komi"] = np.asarray(komis, dtype=np.float32)
    state["to_play"][:] = to_play
    return torch.from_numpy(game.encode(game.eval_input(state)))


@pytest.mark.parametrize(
    "komi, win, lead",
    [
        (-0.5, -0.25 + 0.25 + 0.5, 0.25 * -0.5 + 0.25 * 0.5 + 0.5 * 1.5),
        (-1.5, -0.25 - 0.25 + 0.5, 0.25 * -1.5 + 0.25 * -0.5 + 0.5 * 0.5),
        (-1.0, -0.25 + 0.0 + 0.5, 0.25 * -1 + 0.5 * 1),  # margin 1 at komi -1 is a draw: counts 0
        (2.5, 1.0, 0.25 * 2.5 + 0.25 * 3.5 + 0.5 * 4.5),
    ],
)
def test_the_belief_value_is_the_chance_to_win_minus_to_lose_at_the_komi(komi, win, lead):
    # board margins -2..2 with probabilities 0, 0, 1/4 (margin 0), 1/4 (margin 1), 1/2 (margin 2)
    logits = torch.log(torch.tensor([[1e-30, 1e-30, 0.25, 0.25, 0.5]], dtype=torch.float64))
    value, expected = belief_value(logits, torch.tensor([komi], dtype=torch.float64))
    assert float(value) == pytest.approx(win, abs=1e-9) and float(expected) == pytest.approx(lead, abs=1e-9)


def test_the_input_komi_is_read_back_in_exact_half_points():
    game = go_game(5, history=2, komi_input=True)
    komis = [24.5, 25.5, 7.0, -3.5, 0.0, 63.5]
    x = _inputs(game, komis, WHITE)
    assert input_komi(x).tolist() == komis  # White receives the komi
    assert input_komi(_inputs(game, komis, BLACK)).tolist() == [-k for k in komis]


def test_a_belief_network_flips_its_value_between_komi_24_5_and_25_5():
    """A belief sure that Black ends owning all 25 points: White wins at 25.5 and loses at 24.5, whatever
    else the network has learned; the search's value mixes in the expected margin after komi."""
    torch.manual_seed(0)
    net = GoNet(5, 6, 8, 1, score_heads=True, score_utility=0.2, score_belief=True).eval()
    with torch.no_grad():
        net.belief_out.weight.zero_()
        net.belief_out.bias.fill_(-50.0)
        net.belief_out.bias[0] = 50.0  # class 0: the board margin -25 from the player to move's (White's) side
    game = go_game(5, history=2, komi_input=True, score_utility=0.2)
    x = _inputs(game, [24.5, 25.5], WHITE)
    heads = net.heads(x)
    torch.testing.assert_close(heads["value"].reshape(-1), torch.tensor([-1.0, 1.0]))
    torch.testing.assert_close(heads["lead"].reshape(-1), torch.tensor([-0.5, 0.5]))
    _, value = net(x)
    expected = 0.8 * heads["value"] + 0.2 * score_term(heads["lead"] / 5)
    torch.testing.assert_close(value, expected)


def test_the_policy_moves_with_the_beliefs_value_at_the_komi():
    """The policy sees the komi through the belief's value: a pass logit weighted by it differs between
    komi 24.5 (White lost) and 25.5 (White won), and nothing else does; a new network's term is zero."""
    torch.manual_seed(0)
    net = GoNet(5, 6, 8, 1, score_heads=True, score_belief=True).eval()
    game = go_game(5, history=2, komi_input=True)
    x = _inputs(game, [24.5, 25.5], WHITE)
    with torch.no_grad():
        plain = net.policy_out(net.policy_head(net.blocks(net.stem(x))))
        torch.testing.assert_close(net(x)[0], plain)
        net.belief_out.weight.zero_()
        net.belief_out.bias.fill_(-50.0)
        net.belief_out.bias[0] = 50.0  # sure that White ends owning nothing: lost at 24.5, won at 25.5
        net.policy_global.weight[25, 0] = 3.0  # the pass logit, times the value
    with torch.no_grad():
        logits = net(x)[0]
        torch.testing.assert_close(net.heads(x)["logits"], logits)
    shift = logits - plain
    torch.testing.assert_close(shift[:, 25], torch.tensor([-3.0, 3.0]))
    assert float(shift[:, :25].abs().max()) == 0.0


def test_belief_targets_are_the_board_margin_before_komi_clipped_to_the_board():
    game = go_game(5, history=2, komi_input=True)
    x = _inputs(game, [24.5, 24.5, 7.0, 7.0], WHITE)
    margins = torch.tensor([-0.5, 24.5, 7.0, 40.0])  # after komi, White's side; the last one impossible
    assert belief_targets(x, margins, 5).tolist() == [25 - 25, 0 + 25, 0 + 25, 50]


def test_a_belief_checkpoint_loads_with_its_head_and_older_ones_without(tmp_path):
    torch.manual_seed(0)
    net = TINY.network().eval()
    path = str(tmp_path / "belief.pt")
    save_checkpoint(net, path)
    loaded = load_go_model(path, 5)
    assert loaded.has_belief and loaded.value_out is None
    x = _inputs(TINY.game(), [24.5, 3.0], WHITE)
    torch.testing.assert_close(loaded(x), net(x))
    old = load_go_model("pretrained/go5_score_first/go5_score.pt", 5)  # a komi plane and score heads, no belief
    assert old.has_score and not old.has_belief and old.value_out is not None


def test_the_fourth_runs_network_reads_the_komi_in_its_value_and_its_policy():
    """pretrained/go5_score_fourth (docs/go.md): Black's value of the empty board is -1 at 25.5 and 26.5
    (no area beats that komi), White's after C3 +1 at 25.5 and negative at 24.5, and White's prior on
    passing after C3 lower where passing loses (24.5: 0.47) than where it wins (25.5: 0.72)."""
    model = load_go_model("pretrained/go5_score_fourth/go5_score.pt", 5).eval()
    game = go_game(5, **model.game_options)
    state = game.step(game.initial_state(4), np.full(4, 12))  # C3, the centre
    state["komi"] = np.array([24.5, 25.5, 25.5, 26.5], dtype=np.float32)
    with torch.inference_mode():
        white = model.heads(torch.from_numpy(game.encode(game.eval_input(state))))
        black = model.heads(_inputs(game, [25.5, 26.5], BLACK))
    assert black["value"].reshape(-1).tolist() == pytest.approx([-1.0, -1.0], abs=1e-5)
    value, prior_pass = white["value"].reshape(-1), torch.softmax(white["logits"].float(), 1)[:, -1]
    assert value[0] < 0 and float(value[1]) == pytest.approx(1.0, abs=1e-5)
    assert prior_pass[0] < prior_pass[1] - 0.1


def test_a_belief_needs_score_heads_and_a_komi_plane(tmp_path):
    with pytest.raises(ValueError, match="komi plane"):
        GoNet(5, 5, 8, 1, score_heads=True, score_belief=True)
    with pytest.raises(ValueError, match="score heads"):
        GoNet(5, 6, 8, 1, score_belief=True)
    state = GoNet(5, 6, 8, 1, score_heads=True, score_belief=True).state_dict()
    state["stem.0.weight"] = state["stem.0.weight"][:, :5]  # as if the komi plane were missing
    path = str(tmp_path / "odd.pt")
    torch.save(state, path)
    with pytest.raises(CheckpointError, match="does not fit GoNet"):
        load_go_model(path, 5)


@pytest.mark.parametrize("flags", [["--score-belief"], ["--score-belief", "--komi-input"]])
def test_score_belief_without_its_inputs_is_refused_with_a_sentence(flags, capsys):
    from go import Go_Args

    with pytest.raises(SystemExit) as exit_:
        Go_Args.parse_args(["--game", "go5", *flags])
    assert exit_.value.code == 2 and "--score-belief needs --komi-input and --score-heads" in capsys.readouterr().err


def test_the_recipes_with_score_heads_read_their_value_from_a_belief():
    from go import Go_Args

    for name in ("go5-score", "go7-score", "go9"):
        recipe = Go_Args.recipe_of(Go_Args.parse_args(["--recipe", name]))
        assert recipe.score_belief and recipe.network().has_belief


def test_the_belief_learns_final_board_margins():
    """On a fixed buffer of finished games, training brings the belief's cross-entropy well below a
    uniform belief's and its first iteration reports it."""
    torch.manual_seed(0)
    recipe = GoRecipe(**{**TINY.__dict__, "train_steps": 200, "batch_size": 32, "lr": 3e-3, "simulations": 2})
    buffer = GameBuffer(1.0, 12, score_targets=True)
    buffer.add(self_play(recipe.network(), recipe, np.random.default_rng(0), games=12), recipe.game())
    model = recipe.network()
    optimizer, scheduler = make_optimizer(model, recipe)
    metrics = train_steps(model, optimizer, scheduler, buffer, recipe, np.random.default_rng(1))
    assert metrics["belief_loss"] < 0.5 * np.log(51), metrics  # uniform over the 51 margins: log 51
    fresh = TINY.network()
    rng = np.random.default_rng(0)
    first = train_iteration(fresh, *make_optimizer(fresh, TINY), GameBuffer(1.0, 3, True), TINY, rng)
    assert np.isfinite(first["belief_loss"]) and first["belief_loss"] > 0
