"""evaluate.py --game goN --score-games N (go/Score_Check.py): every position's score head set against the
margin its own game ended with, from the player to move's side, the errors against a plain computation,
and the script end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from go.Go_Game import go_game
from go.Go_Training import GoRecipe
from go.Score_Check import replay, score_check, summarize, summary_lines
from run.Checkpoints import save_checkpoint

pytestmark = pytest.mark.usefixtures("torch_one_thread")
TINY = GoRecipe(history=2, filters=8, blocks=1, komi_input=True, score_heads=True, score_utility=0.1)


def test_the_errors_by_hand():
    predicted, final = np.array([1.0, -2.0, 3.0, 0.0]), np.array([2.0, -2.0, 0.0, -4.0])
    result = summarize(predicted, final, np.array([0, 1, 2, 30]), {"mean_black_margin": 1.0})
    assert result["positions"] == 4 and result["mae"] == pytest.approx((1 + 0 + 3 + 4) / 4)
    # the baseline says +1 for Black to move, -1 for White: |1-2|, |-1+2|, |1-0|, |1+4|
    assert result["baseline_mae"] == pytest.approx((1 + 1 + 1 + 5) / 4)
    assert result["mean_signed_error"] == pytest.approx((-1 + 0 + 3 + 4) / 4)
    stages = {s["moves"]: (s["positions"], s["mae"]) for s in result["by_stage"]}
    assert stages == {"move 1": (1, 1.0), "moves 2-5": (2, 1.5), "moves 21+": (1, 4.0)}


def test_every_position_is_read_and_set_against_its_games_final_margin():
    torch.manual_seed(0)
    model = TINY.network().eval()
    result = score_check(model, 5, 3.5, 3, 4, 1.0, sample_moves=4, rng=np.random.default_rng(1))
    game = go_game(5, 3.5, **model.game_options)
    lengths, margins = result["game_lengths"], result["black_margins"]
    assert len(lengths) == 3 and sum(lengths) == result["positions"] == len(result["points"]["final"])
    assert result["komi"] == 3.5 and 1 <= result["distinct_games"] <= 3 and 0 <= result["ownership_accuracy"] <= 1
    start = 0
    for length, margin in zip(lengths, margins):
        final = np.array(result["points"]["final"][start : start + length])
        np.testing.assert_array_equal(final, margin * np.resize([1.0, -1.0], length))  # Black moves first
        start += length
    # the first position of every game is the empty board at komi 3.5, read one row at a time
    with torch.inference_mode():
        empty = model.heads(torch.from_numpy(game.encode(game.eval_input(game.initial_state(1)))))["score"]
    firsts = np.cumsum([0] + lengths[:-1])
    np.testing.assert_allclose(np.array(result["points"]["predicted"])[firsts], 5 * float(empty), atol=2e-3)
    errors = np.abs(np.array(result["points"]["predicted"]) - np.array(result["points"]["final"]))
    assert result["mae"] == pytest.approx(errors.mean(), abs=1e-3)  # the rounded points


def test_a_belief_networks_expected_margin_is_checked_too():
    torch.manual_seed(0)
    model = GoRecipe(**{**TINY.__dict__, "score_belief": True}).network().eval()
    result = score_check(model, 5, 3.5, 2, 4, 1.0, sample_moves=4, rng=np.random.default_rng(1))
    game = go_game(5, 3.5, **model.game_options)
    beliefs, final = np.array(result["points"]["belief"]), np.array(result["points"]["final"])
    assert len(beliefs) == result["positions"]
    assert result["belief_mae"] == pytest.approx(np.abs(beliefs - final).mean(), abs=1e-3)  # the rounded points
    with torch.inference_mode():
        lead = float(model.heads(torch.from_numpy(game.encode(game.eval_input(game.initial_state(1)))))["lead"])
    firsts = np.cumsum([0] + result["game_lengths"][:-1])  # each game's empty board, Black to move
    np.testing.assert_allclose(beliefs[firsts], lead, atol=2e-3)
    assert "score belief: mean absolute error" in "\n".join(summary_lines(result))


def test_positions_are_the_rows_the_moves_were_played_from():
    game = go_game(5, history=2, komi_input=True)
    rows, _ = replay(game, [12, 13, 25])
    state = game.initial_state(1)
    np.testing.assert_array_equal(rows[0], game.eval_input(state)[0])
    state = game.step(game.step(state, np.array([12])), np.array([13]))
    np.testing.assert_array_equal(rows[2], game.eval_input(state)[0])
    assert rows.shape == (3, 2 * 25 + 2)


def test_a_network_without_a_score_head_is_refused_with_a_sentence(capsys):
    from go.Go_Match import match_main

    assert match_main(["--game", "go5", "--score-games", "2", "--sims", "2", "--out-dir", "unused"]) == 2
    assert "no score head" in capsys.readouterr().err


def test_the_script_writes_its_results_and_chart(tmp_path, capsys):
    from go.Go_Match import match_main

    torch.manual_seed(0)
    save_checkpoint(TINY.network(), str(tmp_path / "tiny.pt"))
    argv = ["--game", "go5", "--checkpoint", str(tmp_path / "tiny.pt"), "--score-games", "2", "--sims", "3",
            "--no-symmetric", "--out-dir", str(tmp_path / "out"), "--seed", "3"]  # fmt: skip
    assert match_main(argv) == 0
    printed = capsys.readouterr().out
    assert "score head: mean absolute error" in printed and "ownership head:" in printed
    result = json.loads((tmp_path / "out" / "score_check.json").read_text())
    assert result["games"] == 2 and result["sample_moves"] == 4 and result["komi"] == 24.5
    assert (tmp_path / "out" / "score_check.png").stat().st_size > 10_000
    assert match_main(argv) == 0  # the same seed, the same games
    assert json.loads((tmp_path / "out" / "score_check.json").read_text()) == result
