"""The Go window (``python PyGame.py --game go5``) headless, with SDL's dummy video driver: clicks and keys
are posted as pygame events and the app's own frame function runs them; what the window shows is checked
by the colours of pixels at the board's points (``Go_View.GoView.point_center``).

The agent is replaced by stubs where a test needs it to be predictable or slow (``agent_factory``): one
that always passes, one that thinks until it is cancelled. The real agents (the rollout MCTS without a
model, the network with a throwaway ``GoNet`` checkpoint) play in the scripted runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame is imported: no real window
os.environ["SDL_AUDIODRIVER"] = "dummy"
os.environ["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"

import numpy as np
import pygame
import pytest
import torch

import PyGame
from conftest import REPO
from go.Go_Board import BLACK, KOMI_PLANE_SCALE, WHITE, parse_vertex
from go.Go_Game import go_play_game
from go.Go_Net import GoNet
from go.Go_Play import Cancelled
from gui import Go_Estimate, Go_Gui, Go_View, Gui_Theme
from run.Checkpoints import save_checkpoint

VIEW = Go_View.GoView(Go_Gui.BOARD_RECT, 5)  # the geometry of the window's 5x5 board
PASS = 25


def point(vertex: str) -> int:
    return parse_vertex(vertex, 5)


class PassingPlayer:
    """An agent that always passes (value 0.25, all visits on the pass)."""

    last_value = 0.25
    last_visits = np.eye(PASS + 1)[PASS]

    def new_game(self, game, colour):
        pass

    def genmove(self, state):
        return PASS


class StuckPlayer(PassingPlayer):
    """An agent that thinks until its search is cancelled (``cancel``: the worker's event)."""

    def __init__(self, cancel: threading.Event):
        self.cancel = cancel

    def genmove(self, state):
        if not self.cancel.wait(timeout=30.0):
            raise AssertionError("the search was never cancelled")
        raise Cancelled


@pytest.fixture
def make_app():
    apps = []

    def make(agent=PassingPlayer, model=None, **kwargs):  # agent None: the real one (the model's search)
        app = Go_Gui.GoApp(5, model, "test", 8, **kwargs)
        if agent is not None:
            app.match.agent_factory = lambda game, cancel: agent(cancel) if agent is StuckPlayer else agent()
        apps.append(app)
        app.step_frame(0.0)
        return app

    yield make
    for app in apps:
        app.close()


def click_at(app: Go_Gui.GoApp, pos) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))
    app.step_frame(0.02)


def click(app: Go_Gui.GoApp, name: str) -> None:
    click_at(app, app.buttons[name].rect.center)


def pixel(surface: pygame.Surface, vertex: str) -> tuple[int, int, int]:
    return tuple(surface.get_at(VIEW.point_center(point(vertex))))[:3]


def run_until(app: Go_Gui.GoApp, condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the GUI"
        app.step_frame(0.05)
        time.sleep(0.005)  # let the worker thread have the GIL


def count_pixels(surface: pygame.Surface, rect: pygame.Rect, color) -> int:
    arr = pygame.surfarray.pixels3d(surface.subsurface(rect))
    count = int(np.all(arr == np.array(color, dtype=arr.dtype), axis=-1).sum())
    del arr  # release the surface lock
    return count


def run_gui(*args: str, cwd=REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, str(REPO / "PyGame.py"), "--game", "go5", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


# --------------------------------------------------------------------------- geometry
def test_every_point_and_only_points_take_a_click():
    for action in range(PASS):
        x, y = VIEW.point_center(action)
        quarter = VIEW.spacing / 4
        for dx, dy in ((0, 0), (quarter, -quarter), (-quarter, quarter)):
            assert VIEW.hit((x + dx, y + dy)) == action
    corner = VIEW.point_center(point("A5"))
    assert VIEW.hit((corner[0] - VIEW.spacing * 0.6, corner[1])) is None  # off the board's edge
    assert VIEW.hit((Go_Gui.PANEL_X + 20, 300)) is None
    assert VIEW.point_center(point("A1"))[1] > VIEW.point_center(point("A5"))[1]  # row 1 at the bottom
    assert VIEW.point_center(point("E1"))[0] > VIEW.point_center(point("A1"))[0]


# --------------------------------------------------------------------------- playing in the window
def test_a_click_places_a_stone_where_clicked_and_the_agent_replies(make_app):
    app = make_app()
    assert pixel(app.screen, "C3") != Go_View.BLACK_STONE
    click_at(app, VIEW.point_center(point("C3")))
    assert app.match.moves[0] == point("C3")
    run_until(app, lambda: not app.match.thinking)
    assert app.match.moves == [point("C3"), PASS] and app.match.to_play == BLACK
    assert pixel(app.screen, "C3") == Go_View.BLACK_STONE
    assert pixel(app.screen, "B2") != Go_View.BLACK_STONE
    assert app.match.last_search.top == [(PASS, 1.0)]  # the agent's top moves by visit share


def test_an_illegal_click_is_refused_with_a_message(make_app):
    app = make_app()
    click_at(app, VIEW.point_center(point("C3")))
    run_until(app, lambda: not app.match.thinking)
    click_at(app, VIEW.point_center(point("C3")))
    assert app.match.moves == [point("C3"), PASS]
    assert "taken" in app.message[0] and app.message[1] == Gui_Theme.WARN


def test_undo_takes_back_the_move_and_the_agents_reply(make_app):
    app = make_app()
    click(app, "Undo")
    assert "Nothing" in app.message[0]
    for vertex in ("C3", "B2"):
        click_at(app, VIEW.point_center(point(vertex)))
        run_until(app, lambda: not app.match.thinking)
    click(app, "Undo")
    assert app.match.moves == [point("C3"), PASS] and app.match.to_play == BLACK
    assert pixel(app.screen, "B2") != Go_View.BLACK_STONE and pixel(app.screen, "C3") == Go_View.BLACK_STONE
    press_key(app, pygame.K_u)
    assert app.match.moves == [] and pixel(app.screen, "C3") != Go_View.BLACK_STONE


def press_key(app: Go_Gui.GoApp, key: int) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode="", scancode=0))
    app.step_frame(0.02)


def test_pass_pass_ends_the_game_with_the_score_and_the_territory(make_app):
    app = make_app()
    click_at(app, VIEW.point_center(point("C3")))
    run_until(app, lambda: not app.match.thinking)  # the agent passes
    assert app.match.result is None and pixel(app.screen, "A1") != Go_View.TERRITORY[BLACK]
    click(app, "Pass")
    assert app.match.result.text() == "B+0.5"  # 25 points of Black's area - 24.5
    assert "B+0.5" in app.message[0] and "You win" in app.message[0]
    assert pixel(app.screen, "A1") == Go_View.TERRITORY[BLACK] and pixel(app.screen, "E5") == Go_View.TERRITORY[BLACK]
    assert pixel(app.screen, "C3") == Go_View.BLACK_STONE
    info = pygame.Rect(Go_Gui.PANEL_X, 350, Go_Gui.PANEL_W, 200)
    assert count_pixels(app.screen, info, Gui_Theme.ACCENT) > 0  # "Result: B+0.5" in the panel
    assert not app.button_enabled("Pass")
    click(app, "Undo")  # back before the last pass: the game goes on
    assert app.match.result is None and pixel(app.screen, "A1") != Go_View.TERRITORY[BLACK]


def test_resign_and_new_game_with_another_colour_and_komi(make_app):
    app = make_app()
    click(app, "komi+")  # no move yet: the game restarts with it at once
    assert app.match.game.komi == 25.5
    click_at(app, VIEW.point_center(point("C3")))
    click(app, "White")  # a move is on the board: for the next game
    assert app.match.human == BLACK and app.choice["colour"] == WHITE
    run_until(app, lambda: not app.match.thinking)
    click(app, "Resign")
    assert app.match.result.text() == "W+R" and "agent wins" in app.message[0]
    click(app, "New")
    assert app.match.human == WHITE and app.match.game.komi == 25.5
    run_until(app, lambda: app.match.moves)  # the agent opens as Black
    assert app.match.moves == [PASS] and app.match.to_play == WHITE


def test_the_komi_buttons_stop_at_the_flags_bound(make_app):
    from run.Cli import MAX_KOMI

    app = make_app()
    app.choice["komi"] = MAX_KOMI - 0.5
    for _ in range(2):
        click(app, "komi+")
    assert app.match.game.komi == app.choice["komi"] == MAX_KOMI
    app.choice["komi"] = -MAX_KOMI
    click(app, "komi-")
    assert app.match.game.komi == -MAX_KOMI


def test_the_window_stays_responsive_while_the_agent_thinks(make_app):
    app = make_app(agent=StuckPlayer)
    click_at(app, VIEW.point_center(point("C3")))
    worker = app.match.worker
    assert worker is not None and worker.is_alive()
    for _ in range(5):  # frames go on while the search runs: a frame that waited for it would
        app.step_frame(0.05)  # come back only once the worker gave up (30 s), the worker dead
        assert worker.is_alive() and not worker.done and not worker.cancel_event.is_set()
    status = pygame.Rect(Go_Gui.PANEL_X - 10, 560, Go_Gui.PANEL_W + 10, 30)
    assert count_pixels(app.screen, status, Gui_Theme.ACCENT) > 0  # "The agent is thinking..."
    click(app, "Undo")  # cancels the search and takes back C3
    assert not app.match.thinking and app.match.moves == []
    worker.join(timeout=5.0)
    assert not worker.is_alive() and worker.result is None


# --------------------------------------------------------------------------- scripted runs and flags
@pytest.mark.slow
def test_scripted_game_to_the_end_shows_stones_score_and_territory(tmp_path):
    shot = tmp_path / "go.png"
    record = "B1 D1 B2 D2 B3 D3 B4 D4 B5 D5 pass pass"  # Black owns column A, White column E, C is neutral
    out = run_gui("--moves", record, "--screenshot", str(shot), "--quit-when-done")
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()  # the agent (the rollout MCTS, or a shipped network) never moved
    assert line.startswith(f'moves="{record}" result=W+24.5 captured_by_black=0 captured_by_white=0 agent=')
    assert line.endswith("agent_value=n/a")
    image = pygame.image.load(str(shot))
    assert image.get_size() == (Go_Gui.WIDTH, Go_Gui.HEIGHT)
    assert pixel(image, "B3") == Go_View.BLACK_STONE and pixel(image, "D3") == Go_View.WHITE_STONE
    assert pixel(image, "A3") == Go_View.TERRITORY[BLACK] and pixel(image, "E3") == Go_View.TERRITORY[WHITE]
    assert pixel(image, "C3") not in Go_View.TERRITORY.values()  # reaches both colours: nobody's


@pytest.mark.slow
def test_scripted_agent_move_with_a_network(tmp_path):
    torch.manual_seed(0)
    model = tmp_path / "go5.pt"
    save_checkpoint(GoNet(5, filters=8, blocks=1), str(model))
    shot = tmp_path / "go.png"
    out = run_gui("--checkpoint", str(model), "--sims", "8", "--moves", "C3", "--screenshot", str(shot),
                  "--quit-when-done")  # fmt: skip
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert line.startswith('moves="C3 ') and "agent=network" in line and "agent_value=n/a" not in line
    assert pixel(pygame.image.load(str(shot)), "C3") == Go_View.BLACK_STONE


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, words",
    [
        (["--moves", "C3 Z9"], "Z9"),
        (["--moves", "C3 C3"], "move 2"),
        (["--komi", "nan"], "komi"),
        (["--komi", "-1e300"], "--komi: must be between -1000 and 1000"),  # a value, not a flag
        (["--moves", "C3 c٣"], "c٣"),
        (["--c-puct", "1e308"], "--c-puct: must be at most"),
        (["--checkpoint", "missing.pt"], "missing.pt"),
        (["--colour", "red"], "colour"),
    ],
)
def test_bad_input_is_one_sentence_and_status_2(args, words, tmp_path):
    out = run_gui(*args, cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and words in out.stderr


def test_cube_flags_take_the_game_flag_too():
    assert PyGame.parse_args(["--game", "3x3"]).puzzle == "3x3"
    assert PyGame.parse_args([]).puzzle == "2x2"
    assert PyGame.go_requested(["--game", "go7"]) and not PyGame.go_requested(["--game", "2x2"])
    assert Go_Gui.parse_args(["--game", "go7", "--moves", "a1 pass"]).moves == [42, 49]


def test_a_game_past_the_self_play_cap_goes_on_in_the_window(make_app):
    # The 120-move capture fight of tests/data (self-play's cap is 50 on 5x5) replayed in the window: every
    # move is taken, the game is not over, and two passes then end it with the area score.
    app = make_app()
    record = (REPO / "tests" / "data" / "go5_capture_fight.txt").read_text().splitlines()[-1].split()
    assert Go_Gui.replay(app, [parse_vertex(v, 5) for v in record]) is None
    assert len(app.match.moves) == len(record) and app.match.result is None
    app.match.play(PASS)
    app.match.play(PASS)
    assert app.match.result is not None and app.match.result.score is not None


# --------------------------------------------------------------------------- score and ownership heads
class FixedHeads(torch.nn.Module):
    """Score and ownership heads that answer the same of every position, from the player to move's side: a
    margin of 0.5 N (2.5 points on 5x5) and A5 (point 0) owned at 0.75, every other point 0."""

    has_score = True

    def __init__(self):
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros(1))  # the device position_estimate reads

    def heads(self, x):
        owners = torch.zeros(len(x), PASS)
        owners[:, 0] = 0.75
        return {"score": torch.full((len(x), 1), 0.5), "ownership": owners}


def network_file(tmp_path, score: bool = True):
    """A throwaway 5x5 checkpoint: score and ownership heads and the komi plane (18 planes), or neither (as
    the shipped go5 and go7 networks)."""
    torch.manual_seed(0)
    net = GoNet(5, 18, 8, 1, score_heads=True, score_utility=0.1) if score else GoNet(5, filters=8, blocks=1)
    path = tmp_path / ("score.pt" if score else "old.pt")
    save_checkpoint(net, str(path))
    return path


def load_network(path):
    return Go_Gui.load_model(Go_Gui.parse_args(["--checkpoint", str(path)]))[0]


def margin_lines(app: Go_Gui.GoApp) -> list[str]:
    return [text for text, _ in Go_Gui.info_lines(app) if text.startswith("Expected margin: ")]


def head_margin(model, app: Go_Gui.GoApp) -> float:
    """The score head's margin in points of the current position, from the player to move's side."""
    game = app.match.game
    with torch.inference_mode():
        planes = torch.from_numpy(game.encode(game.eval_input(app.match.state)))
        return float(model.heads(planes)["score"][0, 0]) * game.size


def ownership_square(action: int) -> pygame.Rect:
    side = round(VIEW.spacing * Go_View.OWNERSHIP_SIDE)
    square = pygame.Rect(0, 0, side, side)
    square.center = VIEW.point_center(action)
    return square


def same_pixels(a: pygame.Surface, b: pygame.Surface, rect: pygame.Rect) -> bool:
    return np.array_equal(pygame.surfarray.array3d(a.subsurface(rect)), pygame.surfarray.array3d(b.subsurface(rect)))


def test_the_estimate_turns_the_heads_to_blacks_side():
    game = go_play_game(5)
    black_to_move = game.initial_state(1)
    white_to_move = game.step(black_to_move, np.array([point("C3")]))
    for state, mover in ((black_to_move, BLACK), (white_to_move, WHITE)):
        estimate = Go_Estimate.position_estimate(FixedHeads(), game, state)
        assert estimate.black_margin == 2.5 * mover and estimate.margin_for(mover) == 2.5
        assert estimate.margin_for(-mover) == -2.5
        assert estimate.ownership[0] == pytest.approx(0.75 * mover) and not estimate.ownership[1:].any()
    assert Go_Estimate.position_estimate(None, game, black_to_move) is None
    assert Go_Estimate.position_estimate(GoNet(5, filters=8, blocks=1), game, black_to_move) is None


def test_the_panel_shows_the_agents_expected_margin_from_its_side(make_app, tmp_path):
    model = load_network(network_file(tmp_path))
    app = make_app(model=model)  # the agent plays White; Black (the person) to move
    [line] = margin_lines(app)
    assert line.endswith(" points (White)")
    assert float(line.split()[2]) == pytest.approx(-head_margin(model, app), abs=0.051)  # one decimal shown
    click(app, "White")  # no move yet: a new game at once; the agent (Black) passes, White to move
    run_until(app, lambda: app.match.moves)
    [line] = margin_lines(app)
    assert line.endswith(" points (Black)")
    assert float(line.split()[2]) == pytest.approx(-head_margin(model, app), abs=0.051)
    summary = Go_Gui.summary_line(app)
    assert f"agent_margin={line.split()[2]} " in summary
    app.match.play(PASS)  # two passes: the result line has the real margin; the estimate goes
    assert app.match.over and not margin_lines(app) and "agent_margin=n/a" in Go_Gui.summary_line(app)


def test_the_ownership_overlay_shades_every_point_by_the_head(make_app, tmp_path):
    app = make_app(model=load_network(network_file(tmp_path)))
    click_at(app, VIEW.point_center(point("C3")))
    run_until(app, lambda: not app.match.thinking)  # the agent passes; C3's stone gets a square too
    off = app.screen.copy()
    press_key(app, pygame.K_o)
    assert app.show_ownership and "Ownership map on" in app.message[0]
    on, owners = app.screen.copy(), app.estimate().ownership
    checked = 0
    for action in range(PASS):
        assert not same_pixels(off, on, ownership_square(action))  # the square's outline at least
        if action == point("C3") or abs(owners[action]) < 0.2:
            continue
        quarter = ownership_square(action).w // 4  # off the lines, inside the square: wood when off
        x, y = VIEW.point_center(action)
        darker = sum(on.get_at((x + quarter, y + quarter))[:3]) < sum(off.get_at((x + quarter, y + quarter))[:3])
        assert darker == (owners[action] > 0)  # Black's area darker, White's lighter
        checked += 1
    assert checked > 0
    click(app, "Owners")  # the button toggles it too
    assert not app.show_ownership and same_pixels(off, app.screen, Go_Gui.BOARD_RECT)


def test_without_an_ownership_head_the_toggle_says_so(make_app, tmp_path):
    old = load_network(network_file(tmp_path, score=False))
    for model, words in ((old, "This network has no ownership head"), (None, "There is no network")):
        app = make_app(model=model)
        before = app.screen.copy()
        press_key(app, pygame.K_o)
        assert not app.show_ownership and words in app.message[0] and app.message[1] == Gui_Theme.WARN
        assert same_pixels(before, app.screen, Go_Gui.BOARD_RECT) and not margin_lines(app)
        assert "agent_margin=n/a" in Go_Gui.summary_line(app)


def test_the_komi_a_person_sets_is_the_komi_the_network_sees(make_app, tmp_path, monkeypatch):
    model = load_network(network_file(tmp_path))
    seen = []  # every input of the search (forward) and of the panel's estimate (heads)
    model.register_forward_pre_hook(lambda module, args: seen.append(args[0].clone()))
    heads = model.heads
    monkeypatch.setattr(model, "heads", lambda x: seen.append(x.clone()) or heads(x))
    app = make_app(agent=None, model=model)  # the real agent: PUCT over the model
    click(app, "komi+")  # no move yet: each click starts the game again at once
    click(app, "komi+")
    seen.clear()  # the panel's estimates at komi 24.5 and 25.5
    click(app, "White")
    game = app.match.game
    assert game.komi == 26.5 and game.eval_input(app.match.state)[0, -2] == 53  # half points
    run_until(app, lambda: app.match.moves)  # the agent (Black) searched its first move
    app.draw(app.screen)
    assert len(seen) > 2
    for planes in seen:  # the komi plane is the komi the player to move receives: White +komi, Black -komi
        black_to_move = planes[:, -2, 0, 0]
        komi = torch.where(black_to_move > 0.5, -26.5, 26.5) / KOMI_PLANE_SCALE
        assert torch.allclose(planes[:, -1], komi[:, None, None].expand_as(planes[:, -1]))


@pytest.mark.slow
def test_scripted_run_shows_the_margin_and_the_overlay(tmp_path):
    shots, margins = {}, {}
    for name, args in (("off", []), ("on", ["--ownership"])):
        shot = tmp_path / f"{name}.png"
        out = run_gui("--checkpoint", str(network_file(tmp_path)), "--colour", "white", "--moves", "C3",
                      "--screenshot", str(shot), "--quit-when-done", *args)  # fmt: skip
        assert out.returncode == 0, out.stderr  # White (the person) to move: the agent never searches
        margins[name] = re.search(r" agent_margin=([+-]\d+\.\d) ", out.stdout).group(1)
        shots[name] = pygame.image.load(str(shot))
    assert margins["on"] == margins["off"]
    assert all(not same_pixels(shots["off"], shots["on"], ownership_square(a)) for a in range(PASS))
    old = run_gui("--checkpoint", str(network_file(tmp_path, score=False)), "--ownership", "--moves", "C3 D3",
                  "--quit-when-done")  # fmt: skip
    assert old.returncode == 0 and " agent_margin=n/a " in old.stdout, old.stderr
