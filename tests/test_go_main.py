"""Go through the scripts: a tiny ``main.py --game go5`` run end to end, its resume (bit-identical to a run
that was never stopped, also after SIGTERM), the refusals between Go and cube files, ``evaluate.py --game
go5`` against random and ``test.py --game go5``."""

from __future__ import annotations

import json
import os
import shutil
import signal

import pytest
import torch

import evaluate
import main
import test as show_script
from go import Go_Args, Go_Run
from go.Go_Training import GoRecipe
from run.Run_Files import state_path_for

TINY = (
    "--game go5 --games 2 --simulations 4 --train-steps 2 --batch-size 8 --filters 8 --blocks 1 --gate-games 0".split()
)
TINY += ["--buffer-min-games", "2", "--snapshot-every", "2"]


def train(tmp_path, name: str, iterations: int, *more: str) -> int:
    argv = [*TINY, "--num-iters", str(iterations), "--checkpoint", str(tmp_path / f"{name}.pt")]
    return main.main([*argv, "--log-dir", str(tmp_path / f"{name}_logs"), *more])


def weights(path) -> dict:
    return torch.load(path, weights_only=True)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A 3-iteration run made in two sessions (2, then 3 iterations): its folder."""
    folder = tmp_path_factory.mktemp("go5")
    assert train(folder, "resumed", 2) == 0
    assert train(folder, "resumed", 3) == 0
    return folder


@pytest.mark.slow
def test_tiny_run_writes_its_outputs(tiny_run):
    metrics = json.loads((tiny_run / "resumed_logs" / "metrics.json").read_text())
    assert metrics["iterations"] == [1, 2, 3]
    assert (tiny_run / "resumed_logs" / "training_metrics.png").is_file()
    assert (tiny_run / "resumed_iter0002.pt").is_file() and not (tiny_run / "resumed_iter0003.pt").exists()
    assert os.path.isfile(state_path_for(str(tiny_run / "resumed.pt")))


@pytest.mark.slow
def test_resumed_run_equals_one_session(tiny_run, tmp_path):
    assert train(tmp_path, "once", 3) == 0
    a, b = weights(tmp_path / "once.pt"), weights(tiny_run / "resumed.pt")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_two_workers_give_the_weights_of_one_process(tiny_run, tmp_path):
    assert train(tmp_path, "workers", 3, "--workers", "2") == 0
    a, b = weights(tmp_path / "workers.pt"), weights(tiny_run / "resumed.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_sigterm_stops_after_a_commit_and_the_same_command_continues(tiny_run, tmp_path, monkeypatch, capsys):
    real = Go_Run.train_iteration
    calls = []

    def iteration_then_sigterm(*args):
        calls.append(1)
        values = real(*args)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return values

    monkeypatch.setattr(Go_Run, "train_iteration", iteration_then_sigterm)
    assert train(tmp_path, "stopped", 3) == 130
    assert "Run the same command" in capsys.readouterr().out
    assert json.loads((tmp_path / "stopped_logs" / "metrics.json").read_text())["iterations"] == [1]
    monkeypatch.setattr(Go_Run, "train_iteration", real)
    assert train(tmp_path, "stopped", 3) == 0
    a, b = weights(tmp_path / "stopped.pt"), weights(tiny_run / "resumed.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_other_flags_a_cube_command_and_a_cube_checkpoint_are_refused(tiny_run, tmp_path, capsys):
    assert train(tiny_run, "resumed", 3, "--games", "3") == 2
    assert "--games 2" in capsys.readouterr().err
    cube = ["--checkpoint", str(tiny_run / "resumed_iter0002.pt"), "--log-dir", str(tmp_path / "cube")]
    assert main.main([*cube, "--num-iters", "1", "--skip-eval"]) == 2
    assert "is a Go network for 5x5" in capsys.readouterr().err
    assert main.main([*cube, "--num-iters", "1", "--skip-eval", "--checkpoint", str(tiny_run / "resumed.pt")]) == 2
    assert "Go run's training state" in capsys.readouterr().err
    shutil.copy("pretrained/rubik_policy_value.pt", tmp_path / "cube.pt")
    assert train(tmp_path, "cube", 1) == 2
    assert "is a cube network" in capsys.readouterr().err
    assert evaluate.main(["--game", "go5", "--checkpoint", "pretrained/rubik_policy_value.pt"]) == 2
    assert "cube network" in capsys.readouterr().err
    assert evaluate.main(["--game", "go5", "--opponent", "gnugo", "--gnugo", str(tmp_path / "no_gnugo")]) == 2
    assert "apt-get install gnugo" in capsys.readouterr().err


@pytest.mark.slow
def test_match_against_random_and_one_game_shown(tiny_run, tmp_path, capsys):
    model = str(tiny_run / "resumed.pt")
    argv = ["--game", "go5", "--opponent", "random", "--games", "4", "--sims", "4", "--out-dir", str(tmp_path)]
    assert evaluate.main([*argv, "--checkpoints", model, str(tiny_run / "resumed_iter0002.pt")]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert [r["all"]["games"] for r in results] == [4, 4]
    assert all(r["black"]["games"] == 2 for r in results)
    assert all(sum(r["openings"].values()) == 2 for r in results)
    assert len(list((tmp_path / "sgf" / "01_resumed").glob("*.sgf"))) == 4  # one folder per model
    assert len(list((tmp_path / "sgf" / "02_resumed_iter0002").glob("*.sgf"))) == 4
    assert (tmp_path / "win_rate.png").is_file()
    capsys.readouterr()
    assert show_script.main(["--game", "go5", "--checkpoint", model, "--sims", "2", "--opponent", "random"]) == 0
    out = capsys.readouterr().out
    assert "A B C D E" in out and "Result: " in out


def test_one_game_shown_resigns_by_the_match_rule(capsys):
    """test.py's game resigns by ``--resign-threshold`` as a match does: every value lies below 1, so Black,
    first to move, resigns at its third move (the game's 5th): White wins by resignation after 4 moves."""
    argv = ["--game", "go5", "--sims", "2", "--opponent", "self", "--resign-threshold", "1"]
    assert show_script.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("resigns") == 1 and "Result: W+R after 4 moves" in out


def test_match_without_a_checkpoint_plays_the_shipped_model(tmp_path):
    argv = ["--game", "go5", "--opponent", "random", "--games", "2", "--sims", "2", "--out-dir", str(tmp_path)]
    assert evaluate.main(argv) == 0
    (result,) = json.loads((tmp_path / "results.json").read_text())
    assert result["checkpoint"].endswith(os.path.join("pretrained", "go5_policy_value.pt"))
    assert result["all"]["games"] == 2 and len(list((tmp_path / "sgf" / "go5_policy_value").glob("*.sgf"))) == 2


def test_recipes_set_defaults_that_flags_override():
    go5 = Go_Args.recipe_of(Go_Args.parse_args(["--game", "go5", "--recipe", "go5", "--games", "8"]))
    assert (go5.games, go5.buffer_min_games, go5.augment, go5.size) == (8, 128, True, 5)
    seed = Go_Args.parse_args(["--game", "go7", "--recipe", "minizero"])
    assert Go_Args.recipe_of(seed) == GoRecipe(size=7) and (seed.num_iters, seed.time_budget) == (100, 120)
    assert seed.checkpoint == "go7_policy_value.pt" and seed.log_dir == "training_logs_go7"


def test_a_go_recipe_names_its_board_go7_has_three_hours_and_go9_eight(capsys):
    assert Go_Args.wants_go(["--recipe", "go5"]) and Go_Args.wants_go(["--recipe=go7", "--seed", "1"])
    assert not Go_Args.wants_go(["--recipe", "3x3"]) and not Go_Args.wants_go(["--seed", "3"])
    go5 = Go_Args.parse_args(["--recipe", "go5"])
    assert (go5.game, go5.time_budget, Go_Args.recipe_of(go5).size) == ("go5", 120, 5)
    go7 = Go_Args.parse_args(["--recipe", "go7"])
    assert (go7.game, go7.time_budget, go7.train_steps, Go_Args.recipe_of(go7).size) == ("go7", 180, 100, 7)
    scored = Go_Args.recipe_of(Go_Args.parse_args(["--recipe", "go7-score"]))
    assert (scored.size, scored.komi_input, scored.score_heads, scored.score_utility) == (7, True, True, 0.1)
    assert scored.game().komi == 8.5  # the board's komi; self-play draws each game's around the fair 9
    go9 = Go_Args.parse_args(["--recipe", "go9"])
    assert (go9.game, go9.time_budget, go9.train_steps, go9.checkpoint) == ("go9", 480, 150, "go9_policy_value.pt")
    assert Go_Args.recipe_of(go9).komi_input and Go_Args.recipe_of(go9).game().size == 9
    # bfloat16 where the CPU has it for the runs still to make; the shipped go5 and go7 recipes as they were trained
    assert Go_Args.recipe_of(go9).precision == scored.precision == "auto"
    assert Go_Args.recipe_of(go5).precision == "fp32"
    assert Go_Args.recipe_of(Go_Args.parse_args(["--recipe", "go5", "--game", "go7"])).size == 7
    with pytest.raises(SystemExit) as stop:
        Go_Args.parse_args(["--game", "go5", "--recipe", "3x3"])
    assert stop.value.code == 2
    with pytest.raises(SystemExit) as stop:
        Go_Args.parse_args(["--seed", "1"])
    assert stop.value.code == 2 and "--game is required" in capsys.readouterr().err


def test_empty_board_report_reads_the_komi_from_the_agents_own_game(tiny_run, tmp_path, capsys):
    model = str(tiny_run / "resumed.pt")
    argv = ["--game", "go5", "--checkpoint", model, "--sims", "8", "--out-dir", str(tmp_path)]
    assert evaluate.main([*argv, "--empty-board", "24.5", "25.5"]) == 0
    rows = json.loads((tmp_path / "empty_board.json").read_text())["empty_board"]
    assert [r["komi"] for r in rows] == [24.5, 25.5]
    # No komi input: the network and the search read the empty board alike at both komi ...
    assert rows[0]["network_value"] == rows[1]["network_value"]
    assert -1 <= rows[0]["search_value"] <= 1 and 0 < sum(rows[0]["top_moves"].values()) <= 1 + 1e-9
    # ... while the greedy game is the same board, scored one point apart.
    assert rows[0]["selfplay_margin"] - rows[1]["selfplay_margin"] == pytest.approx(1.0)
    assert "komi 25.5: network value" in capsys.readouterr().out


@pytest.mark.slow
def test_the_seeds_arena_runs_in_a_training_run(tmp_path, capsys):
    assert train(tmp_path, "gated", 1, "--gate-games", "2", "--gate-threshold", "1") == 0
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("iter ")][0]
    assert "| gate " in line and "% reverted |" in line  # no score is over a threshold of 1


@pytest.mark.slow
def test_any_board_from_5x5_up_trains_and_its_model_plays(tmp_path, capsys):
    """SPEC section 10: any board from 5x5 to 9x9 (19x19 allowed), not only the recipes' 5, 7 and 9."""
    from go.Go_Net import load_go_model

    assert train(tmp_path, "six", 1, "--game", "go6") == 0
    assert load_go_model(str(tmp_path / "six.pt"), 6).size == 6
    assert "(Go go6)" in capsys.readouterr().out
    assert Go_Args.recipe_of(Go_Args.parse_args(["--game", "go19"])).size == 19
    with pytest.raises(SystemExit):
        Go_Args.parse_args(["--game", "go20"])


def test_chart_labels_name_snapshots_by_iteration_and_the_run_file_final():
    from go.Go_Match import checkpoint_label

    assert checkpoint_label("/r/go5_policy_value_iter0400.pt", 0) == "400"
    assert checkpoint_label("/r/go5_policy_value.pt", 6) == "final" and checkpoint_label("/r/other.pt", 2) == "3"


@pytest.mark.parametrize("flag", ["--c-puct", "--dirichlet-alpha"])
def test_huge_search_constants_are_one_sentence_and_status_2(flag, capsys):
    from go import Go_Args

    with pytest.raises(SystemExit) as stop:
        Go_Args.parse_args(["--game", "go5", flag, "1e308"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"{flag} is at most 1e+06" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_bfloat16_run_says_so_and_an_unknown_precision_is_refused(tmp_path, capsys):
    assert train(tmp_path, "bf16", 1, "--precision", "bf16") == 0
    start = [x for x in capsys.readouterr().out.splitlines() if x.startswith("Training on ")]
    assert start == [start[0]] and "(Go go5, bfloat16)" in start[0]
    assert torch.isfinite(torch.cat([w.flatten().float() for w in weights(tmp_path / "bf16.pt").values()])).all()
    with pytest.raises(SystemExit) as stop:
        Go_Args.parse_args(["--game", "go5", "--precision", "fp16"])
    assert stop.value.code == 2 and "invalid choice: 'fp16'" in capsys.readouterr().err
