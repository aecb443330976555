"""The PyGame GUI, headless (SDL's dummy video driver): clicks and keys are posted as pygame
events and the app's own frame function runs them; what the window shows is checked by the
colours of pixels at known sticker positions.

No trained model is needed. Two throwaway checkpoints are made once per module:
``random`` (PolicyValueNet() with a fixed seed) and ``neutral`` (the same with the policy
and value heads zeroed: uniform priors, value 0). A random net's value head is often
saturated, which can hide the solved child from a short search; with the neutral net a
1-move scramble is always solved (every root child is visited within 13 simulations and
the solved one then keeps Q = 1), so the solve tests cannot flake.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
import types
from pathlib import Path

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame is imported: no real window
os.environ["SDL_AUDIODRIVER"] = "dummy"
os.environ["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"

import numpy as np
import pygame
import pytest
import torch

import PyGame
from conftest import REPO  # conftest.py puts it on sys.path
from cube.Puzzles import C_PUCT
from cube.Solvers import options_from_args
from gui import Cube_View, Gui_Solve, Gui_Theme
from Rubik2x2Env import MOVE_NAMES, Rubik2x2Env, apply_move_idx, apply_moves, is_solved, parse_moves, solved_cube

HOME = Gui_Theme.STICKER_COLORS  # colour of each face when solved (U R F D L B)
VIEW = Cube_View.CubeView(PyGame.BOARD_RECT)  # the geometry of the window's board (the app's view)
U, R, F, D, L, B = range(6)


# --------------------------------------------------------------------------- fixtures and helpers
@pytest.fixture
def make_app(checkpoints):
    apps = []

    def make(model: str | Path = "random", **kwargs):
        path = checkpoints[model] if model in checkpoints else model
        kwargs.setdefault("device", "cpu")
        kwargs.setdefault("use_optimal", False)
        kwargs.setdefault("seed", 0)
        app = PyGame.App(str(path), **kwargs)
        apps.append(app)
        app.step_frame(0.0)
        return app

    yield make
    for app in apps:
        app.close()


def click(app: PyGame.App, name: str) -> None:
    """Press and release the left button at a button's centre (or the scramble box's)."""
    pos = app.box_rect.center if name == "box" else app.buttons[name].rect.center
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))
    app.step_frame(0.02)


def press(app: PyGame.App, key: int, char: str = "", shift: bool = False) -> None:
    mod = pygame.KMOD_LSHIFT if shift else pygame.KMOD_NONE
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=mod, unicode=char, scancode=0))
    app.step_frame(0.02)


def net_pixel(app: PyGame.App, face: int, row: int, col: int) -> tuple[int, int, int]:
    return tuple(app.screen.get_at(VIEW.sticker_rect(face, row, col).center))[:3]


def iso_pixel(app: PyGame.App, face: int, row: int, col: int) -> tuple[int, int, int]:
    return tuple(app.screen.get_at(VIEW.iso_sticker_center(face, row, col)))[:3]


def assert_screen_shows(app: PyGame.App, cube: np.ndarray) -> None:
    """Every sticker of the net, and of the 3-D view, has the colour the cube says."""
    stickers = np.asarray(cube).reshape(-1)
    for face in range(6):
        for row in range(2):
            for col in range(2):
                want = HOME[int(stickers[face * 4 + row * 2 + col])]
                assert net_pixel(app, face, row, col) == want, f"net sticker {face},{row},{col}"
                if face in Cube_View.ISO_SHADE:
                    assert iso_pixel(app, face, row, col) == Gui_Theme.shade(want, Cube_View.ISO_SHADE[face])


def run_until(app: PyGame.App, condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the GUI"
        app.step_frame(0.05)
        time.sleep(0.005)  # let the worker thread have the GIL


def status_pixels(app: PyGame.App, color) -> int:
    """How many pixels of the status line have exactly ``color``."""
    region = app.screen.subsurface(pygame.Rect(30, 500, PyGame.WIDTH - 60, 44))
    arr = pygame.surfarray.pixels3d(region)
    count = int(np.all(arr == np.array(color, dtype=arr.dtype), axis=-1).sum())
    del arr  # release the surface lock
    return count


# --------------------------------------------------------------------------- import, flags
@pytest.mark.slow
def test_import_opens_no_window_and_loads_nothing():
    code = "import pygame, PyGame; assert not pygame.display.get_init(); assert pygame.display.get_surface() is None; print('ok')"  # noqa: E501
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_help_lists_the_flags(capsys):
    with pytest.raises(SystemExit) as exc:
        PyGame.parse_args(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    flags = ("--checkpoint", "--device", "--sims", "--c-puct", "--max-steps", "--seed")
    flags += ("--scramble", "--solve", "--screenshot", "--quit-when-done")
    for flag in flags:
        assert flag in text
    args = PyGame.parse_args([])
    assert (args.sims, args.max_steps, args.device, args.checkpoint) == (200, 40, "auto", None)


def test_c_puct_flag_reaches_the_mcts_solve(monkeypatch):
    """``--c-puct`` is the window's MCTS constant (as test.py's), carried by the solver options to the worker."""
    seen = []

    def fake_solve(*args, c_puct, **kwargs):
        seen.append(c_puct)
        return [], ""

    monkeypatch.setattr(Gui_Solve, "solve_with_mcts", fake_solve)
    for argv, expected in (([], C_PUCT), (["--c-puct", "2.5"], 2.5)):
        options = options_from_args(PyGame.parse_args(argv))
        Gui_Solve.SolveWorker(solved_cube(), None, "cpu", 4, 4, "mcts", options).run()
    assert seen == [C_PUCT, 2.5]


def test_scramble_flag_takes_a_length_or_moves(capsys):
    assert PyGame.parse_args(["--scramble", "6"]).scramble == 6
    assert PyGame.parse_args(["--scramble", "R U F'"]).scramble == parse_moves("R U F'")
    for bad in ("R X", "51"):
        with pytest.raises(SystemExit) as exc:
            PyGame.parse_args(["--scramble", bad])
        assert exc.value.code == 2
    assert "valid moves" in capsys.readouterr().err


# --------------------------------------------------------------------------- drawing and moves
def test_starts_solved_and_says_which_model(make_app, checkpoints):
    app = make_app()
    assert app.model is not None and app.model_path == str(checkpoints["random"])
    assert_screen_shows(app, solved_cube())
    assert set(app.buttons) >= set(MOVE_NAMES) | {"Scram", "Solve", "Reset", "Cancel", "sims-", "sims+"}
    assert app.view.rect == VIEW.rect and app.view.hit(VIEW.sticker_rect(F, 0, 0).center) is None


def test_net_layout_is_the_envs():
    """U above F, D below F, L F R B left to right, row 0 on top (as Rubik2x2Env.as_ascii)."""
    rect = VIEW.sticker_rect
    for c in range(2):
        assert rect(U, 1, c).bottom < rect(F, 0, c).top and rect(U, 1, c).x == rect(F, 0, c).x
        assert rect(D, 0, c).top > rect(F, 1, c).bottom and rect(D, 0, c).x == rect(F, 1, c).x
    for left, right in ((L, F), (F, R), (R, B)):
        assert rect(left, 0, 1).right < rect(right, 0, 0).left and rect(left, 0, 1).y == rect(right, 0, 0).y
    for face in range(6):
        assert rect(face, 0, 0).bottom < rect(face, 1, 0).top and rect(face, 0, 0).right < rect(face, 0, 1).left


def test_3d_view_shows_the_front_top_corner(make_app):
    """Checked at screen points chosen by hand, independently of PyGame's sticker geometry:
    around the corner where U, F and R meet (the centre of the view)."""
    app = make_app()
    cx, cy, s = VIEW.iso_center[0], VIEW.iso_center[1], Cube_View.ISO_SCALE
    u_corner = (cx, cy - s // 2)  # U sticker touching F and R: straight above the front edge
    f_corner = (cx - s * 0.43, cy + s * 0.25)  # F sticker touching U and R
    r_corner = (cx + s * 0.43, cy + s * 0.25)  # R sticker touching U and F
    u_back = (cx, cy - s * 3 // 2)  # U sticker touching B and L: the top of the view

    def at(p):
        return tuple(app.screen.get_at((round(p[0]), round(p[1]))))[:3]

    shade = Gui_Theme.shade
    assert at(u_corner) == HOME[U] and at(f_corner) == shade(HOME[F], 0.86) and at(r_corner) == shade(HOME[R], 0.70)
    click(app, "U")  # F's top row comes from R, R's from B
    assert at(f_corner) == shade(HOME[R], 0.86) and at(r_corner) == shade(HOME[B], 0.70) and at(u_corner) == HOME[U]
    click(app, "U'")
    click(app, "R")  # F's right column goes up onto U; U's back-left sticker stays
    assert at(u_corner) == HOME[F] and at(u_back) == HOME[U] and at(r_corner) == shade(HOME[R], 0.70)
    click(app, "R'")
    click(app, "F")  # L's right column turns onto U's front row
    assert at(u_corner) == HOME[L] and at(r_corner) == shade(HOME[U], 0.70)


def test_click_U_then_reset(make_app):
    app = make_app()
    click(app, "U")
    # U turns the top layer clockwise seen from above: F's top row comes from R, L's from F.
    assert net_pixel(app, F, 0, 0) == HOME[R] and net_pixel(app, F, 0, 1) == HOME[R]
    assert net_pixel(app, L, 0, 0) == HOME[F]
    assert net_pixel(app, F, 1, 0) == HOME[F]  # the bottom row does not move
    assert_screen_shows(app, apply_move_idx(solved_cube(), MOVE_NAMES.index("U")))
    click(app, "Reset")
    assert_screen_shows(app, solved_cube())
    assert app.setup_moves == []


def test_every_move_button_draws_the_model_cube(make_app):
    app = make_app()
    cube = solved_cube()
    for a, name in enumerate(MOVE_NAMES):
        click(app, name)
        cube = apply_move_idx(cube, a)
        assert np.array_equal(app.cube, cube)
        assert_screen_shows(app, cube)
    assert app.setup_moves == list(range(12))


def test_keyboard_moves_and_shift_inverse(make_app):
    app = make_app()
    press(app, pygame.K_r, "r")
    # R brings F's right column up onto U (and U's onto B): seen on the net and in 3-D.
    assert net_pixel(app, U, 0, 1) == HOME[F] and net_pixel(app, U, 1, 1) == HOME[F]
    assert iso_pixel(app, U, 1, 1) == Gui_Theme.shade(HOME[F], Cube_View.ISO_SHADE[U])
    assert net_pixel(app, U, 0, 0) == HOME[U]
    press(app, pygame.K_r, "R", shift=True)  # R'
    assert_screen_shows(app, solved_cube())
    for key, char in ((pygame.K_d, "d"), (pygame.K_b, "B"), (pygame.K_l, "l"), (pygame.K_f, "F"), (pygame.K_u, "u")):
        press(app, key, char, shift=char.isupper())  # capitals: Shift held, the inverse move
    assert app.setup_moves == parse_moves("R R' D B' L F' U")
    assert_screen_shows(app, apply_moves(solved_cube(), app.setup_moves))


def test_a_click_on_the_board_plays_the_views_move(make_app):
    """The board view's hit test (how a Go board would take moves): a press and release on one
    action of the board plays it; a press on the board released elsewhere plays nothing."""
    app = make_app()
    r = MOVE_NAMES.index("R")

    class TapView(Cube_View.CubeView):
        def hit(self, pos):
            return r if self.rect.collidepoint(pos) else None

    app.view = TapView(PyGame.BOARD_RECT, app.fonts)
    board, button = VIEW.sticker_rect(F, 0, 0).center, app.buttons["U"].rect.center
    for down, up in ((board, board), (board, button)):
        pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=down, button=1))
        pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=up, button=1))
        app.step_frame(0.02)
    assert app.setup_moves == [r]
    assert_screen_shows(app, apply_move_idx(solved_cube(), r))


# --------------------------------------------------------------------------- scramble box
def test_scramble_box_takes_digits_only_and_caps_the_length(make_app):
    app = make_app()
    click(app, "box")
    assert app.box_focused
    for _ in range(3):
        press(app, pygame.K_BACKSPACE)
    assert app.box_text == ""
    press(app, pygame.K_a, "a")
    press(app, pygame.K_u, "u")  # a letter goes to the focused box (refused), not to the cube
    assert app.box_text == "" and "digits only" in app.message[0]
    assert app.setup_moves == [] and is_solved(app.cube)
    press(app, pygame.K_7, "7")
    press(app, pygame.K_5, "5")
    assert app.box_text == "50" and "capped at 50" in app.message[0]
    press(app, pygame.K_9, "9")
    assert app.box_text == "50"
    press(app, pygame.K_BACKSPACE)
    press(app, pygame.K_RETURN, "\r")  # Enter in the box scrambles
    assert app.box_text == "5" and len(app.setup_moves) == 5
    assert_screen_shows(app, apply_moves(solved_cube(), app.setup_moves))
    press(app, pygame.K_ESCAPE)
    assert not app.box_focused
    press(app, pygame.K_BACKSPACE)  # unfocused: keys no longer edit the box
    assert app.box_text == "5"
    click(app, "box")
    press(app, pygame.K_BACKSPACE)
    press(app, pygame.K_3, "3")
    click(app, "Scram")
    assert len(app.setup_moves) == 3 and not app.box_focused


def test_empty_box_asks_for_a_length(make_app):
    app = make_app()
    click(app, "box")
    press(app, pygame.K_BACKSPACE)
    click(app, "Scram")
    assert "Type a scramble length" in app.message[0] and app.setup_moves == []


# --------------------------------------------------------------------------- model problems
@pytest.mark.parametrize("problem", ["missing", "corrupt"])
def test_bad_model_shows_a_message_and_manual_moves_still_work(make_app, tmp_path, problem):
    path = tmp_path / "model.pt"
    if problem == "corrupt":
        path.write_bytes(b"this is not a checkpoint")
    app = make_app(path)
    assert app.model is None
    assert ("does not exist" if problem == "missing" else "corrupt") in app.model_error
    assert status_pixels(app, Gui_Theme.ERROR) == 0
    click(app, "R")
    click(app, "Solve")
    assert not app.thinking and "Solve needs a model" in app.message[0]
    assert status_pixels(app, Gui_Theme.ERROR) > 0  # the message is drawn, in red
    assert_screen_shows(app, apply_move_idx(solved_cube(), MOVE_NAMES.index("R")))


# --------------------------------------------------------------------------- solving
def test_solve_button_searches_in_a_thread_then_plays_the_moves(make_app):
    app = make_app("neutral", sims=50, anim_ms=60)
    app.scramble(parse_moves("F'"))
    click(app, "Solve")
    assert app.solution_start is not None  # a search was started (it may be over already)
    run_until(app, lambda: not app.thinking)
    assert app.animating and np.array_equal(app.cube, app.solution_start)  # not played yet
    run_until(app, lambda: app.idle())
    assert is_solved(app.cube) and len(app.solution) >= 1
    assert "Solved in" in app.message[0]
    for face in range(6):  # solved in some orientation: every face one colour on screen
        assert len({net_pixel(app, face, r, c) for r in range(2) for c in range(2)}) == 1


def test_space_solves_too(make_app):
    app = make_app("neutral", sims=30, anim_ms=0)
    press(app, pygame.K_u, "u")
    press(app, pygame.K_SPACE, " ")
    run_until(app, lambda: app.idle())
    assert is_solved(app.cube)


@pytest.mark.parametrize("how", ["escape", "button"])
def test_cancel_stops_the_search_and_keeps_the_cube(make_app, how):
    app = make_app("random", sims=3200, max_steps=40)
    app.scramble(10)
    before = app.cube.copy()
    click(app, "Solve")
    worker = app.worker
    assert app.thinking
    app.step_frame(0.05)
    assert status_pixels(app, Gui_Theme.ACCENT) > 0  # "Thinking..." is on screen
    click(app, "U")  # refused while searching: the search works on this cube
    assert np.array_equal(app.cube, before) and "Cancel" in app.message[0]
    if how == "escape":
        press(app, pygame.K_ESCAPE)
    else:
        click(app, "Cancel")
    assert not app.thinking and "cancelled" in app.message[0]
    worker.join(timeout=3.0)
    assert not worker.is_alive(), "the worker should stop within a network call"
    for _ in range(5):
        app.step_frame(0.05)
    assert np.array_equal(app.cube, before) and app.solution == [] and not app.animating
    assert status_pixels(app, Gui_Theme.ACCENT) == 0


def test_sims_buttons_step_through_the_ladder(make_app):
    app = make_app()
    assert app.sims == 200
    click(app, "sims+")
    assert app.sims == 400
    click(app, "sims-")
    click(app, "sims-")
    assert app.sims == 100
    for _ in range(12):
        click(app, "sims-")
    assert app.sims == PyGame.SIM_LADDER[0]
    app2 = make_app(sims=150)  # a value between the steps goes to the neighbouring step
    click(app2, "sims+")
    assert app2.sims == 200


def test_sims_buttons_are_off_for_a_solver_without_simulations(make_app):
    app = make_app(solver="greedy")
    assert not app.uses_sims and not app.button_enabled("sims+")
    click(app, "sims+")
    assert app.sims == 200


def test_solve_with_mcts_keeps_the_seed_signature(checkpoints):
    from cube.Cube_Checkpoints import load_model

    model = load_model(str(checkpoints["neutral"]))
    env = Rubik2x2Env()
    env.reset(options={"scramble": "R"})
    start = env.cube.copy()
    actions, formula = Gui_Solve.solve_with_mcts(env, model, "cpu", num_simulations=50, max_steps=40)
    assert formula == " ".join(MOVE_NAMES[a] for a in actions)
    assert is_solved(apply_moves(start, actions))
    assert np.array_equal(env.cube, start)  # the caller's env is left alone


@pytest.mark.slow
@pytest.mark.parametrize("scramble", ["R U F' L", "F2 D R'", "U R2 B' L D'", "L' B U2 R"])
def test_gui_and_test_py_play_the_same_moves(checkpoints, scramble):
    """One solve path (``Self_Play.greedy_solve``, with the root's move history): the GUI
    and test.py give the same moves for the same network and cube."""
    import importlib.util

    from cube.Cube_Checkpoints import load_model

    spec = importlib.util.spec_from_file_location("rubik_test_runner_gui", Path(PyGame.__file__).with_name("test.py"))
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    model = load_model(str(checkpoints["random"]))  # a random network wanders: many moves, many masks
    record = runner.run_one_episode(model, "cpu", num_simulations=20, max_steps=12, scramble=scramble, out=None)
    env = Rubik2x2Env()
    env.reset(options={"scramble": scramble})
    actions, _ = Gui_Solve.solve_with_mcts(env, model, "cpu", num_simulations=20, max_steps=12)
    assert actions == record["actions"]


def test_optimal_length_is_shown_when_the_solver_is_there(make_app, monkeypatch):
    class FakeSolver:
        def distance(self, cube):
            return 0 if is_solved(cube) else 1

    fake = types.ModuleType("Optimal_Solver")
    fake.get_solver = FakeSolver
    monkeypatch.setitem(sys.modules, "Optimal_Solver", fake)
    app = make_app("neutral", sims=30, anim_ms=0, use_optimal=True)
    app.scramble(parse_moves("D'"))
    click(app, "Solve")
    run_until(app, lambda: app.idle())
    assert app.optimal_text() == "optimal 1" and is_solved(app.cube)


def test_no_optimal_text_when_the_solver_fails(make_app, monkeypatch):
    fake = types.ModuleType("Optimal_Solver")

    def broken():
        raise RuntimeError("no table")

    fake.get_solver = broken
    monkeypatch.setitem(sys.modules, "Optimal_Solver", fake)
    app = make_app("neutral", sims=30, anim_ms=0, use_optimal=True)
    app.scramble(parse_moves("B"))
    click(app, "Solve")
    run_until(app, lambda: app.idle())
    assert app.oracle.state == "unavailable" and app.optimal_text() == ""


# --------------------------------------------------------------------------- scripted mode
def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG file"
    return struct.unpack(">II", data[16:24])


@pytest.mark.slow
def test_scripted_solve_saves_a_screenshot_and_reports(checkpoints, tmp_path):
    shot = tmp_path / "shots" / "gui.png"
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    cmd = [
        sys.executable, "PyGame.py", "--checkpoint", str(checkpoints["neutral"]), "--device", "cpu",
        "--scramble", "R", "--solve", "--sims", "50", "--anim-ms", "50", "--no-optimal",
        "--screenshot", str(shot), "--quit-when-done",
    ]  # fmt: skip
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("solved=True"), out.stdout
    assert 'scramble="R"' in lines[0]
    assert _png_size(shot) == (PyGame.WIDTH, PyGame.HEIGHT)


@pytest.mark.parametrize("problem", ["corrupt", "other cube"])
def test_scripted_solve_without_its_model_is_one_sentence_and_status_2(checkpoints, capsys, problem):
    """``--solve --quit-when-done`` (a script's use) with a model that cannot solve: exit status 2
    and the reason, not a result line with ``solved=False``."""
    model, puzzle = (checkpoints["corrupt"], "2x2") if problem == "corrupt" else (checkpoints["random"], "3x3")
    argv = ["--checkpoint", str(model), "--puzzle", puzzle, "--device", "cpu", "--scramble", "R", "--solve",
            "--no-optimal", "--quit-when-done"]  # fmt: skip
    threads = torch.get_num_threads()
    try:
        assert PyGame.main(argv) == 2
    finally:
        torch.set_num_threads(threads)  # main() sets one thread for the window
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("error: ")
    assert ("corrupt" if problem == "corrupt" else "not the 3x3") in err


# --------------------------------------------------------------------------- --solver
def test_greedy_solver_solves_in_the_worker_and_is_named(make_app):
    app = make_app("neutral", anim_ms=0, solver="greedy")
    app.scramble(parse_moves("R"))
    click(app, "Solve")
    run_until(app, lambda: app.idle())
    assert is_solved(app.cube) and len(app.solution) == 1
    assert "Solved in" in app.message[0]
    assert app.solver == "greedy"
    assert PyGame.parse_args(["--solver", "greedy"]).solver == "greedy"
    assert PyGame.parse_args([]).solver == "mcts"


def test_bestfirst_solves_without_a_model(make_app, tmp_path):
    app = make_app(tmp_path / "none.pt", anim_ms=0, solver="bestfirst")
    assert app.model is None
    app.scramble(parse_moves("R U"))
    click(app, "Solve")
    run_until(app, lambda: app.idle())
    assert is_solved(app.cube)


@pytest.mark.slow
def test_scripted_solve_with_the_greedy_solver(checkpoints, tmp_path):
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    cmd = [
        sys.executable, "PyGame.py", "--checkpoint", str(checkpoints["neutral"]), "--device", "cpu",
        "--scramble", "F'", "--solve", "--solver", "greedy", "--anim-ms", "10", "--no-optimal", "--quit-when-done",
    ]  # fmt: skip
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("solved=True moves=1"), out.stdout


# --------------------------------------------------------------------------- the 3x3 (--puzzle 3x3)
@pytest.fixture(scope="module")
def net3(tmp_path_factory) -> Path:
    """A small throwaway 3x3 network (324 inputs)."""
    import torch

    from Policy_Value_Net import PolicyValueNet
    from run.Checkpoints import save_checkpoint

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("net3") / "net3.pt"
    save_checkpoint(PolicyValueNet(obs_dim=324, hidden_sizes=(32, 16)), str(path))
    return path


def assert_3x3_screen_shows(screen: pygame.Surface, cube: np.ndarray) -> None:
    """Every sticker of the 3x3's net, and of its 3-D view, has the colour the cube says. The net
    is read off a sticker's centre (where a centre sticker carries its face's name)."""
    stickers = np.asarray(cube).reshape(-1)
    for face in range(6):
        for row in range(3):
            for col in range(3):
                want = HOME[int(stickers[face * 9 + row * 3 + col])]
                x, y = VIEW.sticker_rect(face, row, col, 3).topleft
                assert tuple(screen.get_at((x + 5, y + 5)))[:3] == want, f"net sticker {face},{row},{col}"
                if face in Cube_View.ISO_SHADE:
                    got = tuple(screen.get_at(VIEW.iso_sticker_center(face, row, col, 3)))[:3]
                    assert got == Gui_Theme.shade(want, Cube_View.ISO_SHADE[face]), f"3-D sticker {face},{row},{col}"


def test_3x3_window_draws_every_move_of_the_model_cube(make_app, net3):
    from cube import Rubik3x3Env as E3

    app = make_app(net3, puzzle="3x3", solver="beam")
    assert app.model is not None and app.model.obs_dim == 324
    cube = E3.solved_cube()
    assert_3x3_screen_shows(app.screen, cube)
    for name in MOVE_NAMES:
        click(app, name)
        cube = E3.apply_move_idx(cube, MOVE_NAMES.index(name))
        assert np.array_equal(app.cube, cube)
        assert_3x3_screen_shows(app.screen, cube)
    # By hand, independently of the model: after a U from solved, F's top row is R's colour and
    # its middle row still F's; R's top row is B's.
    click(app, "Reset")
    click(app, "U")
    for col in range(3):
        assert tuple(app.screen.get_at(VIEW.iso_sticker_center(F, 0, col, 3)))[:3] == Gui_Theme.shade(HOME[R], 0.86)
        assert tuple(app.screen.get_at(VIEW.iso_sticker_center(F, 1, col, 3)))[:3] == Gui_Theme.shade(HOME[F], 0.86)
        assert tuple(app.screen.get_at(VIEW.iso_sticker_center(R, 0, col, 3)))[:3] == Gui_Theme.shade(HOME[B], 0.70)


def test_3x3_scramble_and_solve_in_the_window_with_kociemba_beside(make_app, net3):
    app = make_app(net3, puzzle="3x3", solver="beam", anim_ms=0, use_optimal=True)
    app.scramble(parse_moves("R U"))
    click(app, "Solve")
    run_until(app, lambda: app.idle())
    assert app.puzzle.model.is_solved(app.cube) and len(app.solution) == 2
    assert app.optimal_text() == "kociemba 2" and "Solved in 2 moves" in app.message[0]
    app.scramble(7)
    assert len(app.setup_moves) == 7 and not app.puzzle.model.is_solved(app.cube)


@pytest.mark.slow
def test_3x3_scripted_solve_saves_a_screenshot_of_the_solved_cube(tmp_path):
    shot = tmp_path / "gui3.png"
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    cmd = [
        sys.executable, "PyGame.py", "--puzzle", "3x3", "--solver", "bestfirst",
        "--checkpoint", str(tmp_path / "no.pt"), "--scramble", "R U F'", "--solve", "--anim-ms", "10",
        "--screenshot", str(shot), "--quit-when-done",
    ]  # fmt: skip
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("solved=True moves=3 kociemba=3"), out.stdout
    assert _png_size(shot) == (PyGame.WIDTH, PyGame.HEIGHT)
    from cube import Rubik3x3Env as E3

    assert_3x3_screen_shows(pygame.image.load(str(shot)), E3.solved_cube())


def test_3x3_takes_every_solver_and_refuses_a_2x2_model(make_app, checkpoints):
    for name in ("mcts", "gumbel", "beam"):
        args = PyGame.parse_args(["--puzzle", "3x3", "--solver", name, "--sims", "30"])
        assert (args.solver, args.sims, args.max_steps) == (name, 30, 100)
    # No --solver (the README's `PyGame.py --puzzle 3x3`): the 3x3's default, the mixed beam of 4,000 from 8 views
    default = PyGame.parse_args(["--puzzle", "3x3"])
    options = PyGame.options_from_args(default)
    assert default.solver == "beam" and (options.beam_width, options.views, options.ends) == (4000, 8, 6)
    app = make_app("random", puzzle="3x3", solver="beam")
    assert app.model is None and "network for the 2x2, not the 3x3" in app.model_error
    click(app, "R")  # manual moves still work
    assert app.cube.shape == (6, 3, 3) and not app.puzzle.model.is_solved(app.cube)


# --------------------------------------------------------------------------- MCTS on the 3x3
#: The shipped 3x3 network: it solves short scrambles with a few simulations a move.
SHIPPED_3X3 = REPO / "pretrained" / "rubik3x3_policy_value.pt"


def test_3x3_mcts_solves_in_the_window_then_plays_the_moves(make_app):
    from cube import Rubik3x3Env as E3

    app = make_app(SHIPPED_3X3, puzzle="3x3", solver="mcts", sims=30, anim_ms=60)
    assert app.model is not None and app.uses_sims
    app.scramble(parse_moves("R U F'"))
    click(app, "Solve")
    run_until(app, lambda: not app.thinking)
    assert app.animating and np.array_equal(app.cube, app.solution_start)  # found, not played yet
    assert "(mcts, 90 simulations)" in app.message[0]  # 3 moves of 30 simulations
    run_until(app, lambda: app.idle())
    assert E3.is_solved(app.cube) and app.solution == parse_moves("F U' R'")
    assert "Solved in 3 moves" in app.message[0]
    assert_3x3_screen_shows(app.screen, app.cube)


def test_3x3_mcts_cancel_stops_the_search_and_keeps_the_cube(make_app, net3):
    app = make_app(net3, puzzle="3x3", solver="mcts", sims=3200, max_steps=100)
    app.scramble(12)
    before = app.cube.copy()
    click(app, "Solve")
    worker = app.worker
    assert app.thinking
    press(app, pygame.K_ESCAPE)
    assert not app.thinking and "cancelled" in app.message[0]
    worker.join(timeout=3.0)
    assert not worker.is_alive(), "the worker should stop within a network call"
    assert np.array_equal(app.cube, before) and app.solution == [] and not app.animating


def test_3x3_solve_with_mcts_reports_each_move_as_it_is_found(net3):
    """The move-by-move search on the 3x3: ``on_move`` hears every move as soon as the search commits to it,
    and a cancel between moves keeps the moves found so far (a random network wanders: many moves)."""
    import threading

    from cube import Rubik3x3Env as E3
    from cube.Cube_Checkpoints import load_model

    model = load_model(str(net3), puzzle="3x3")
    env = E3.Rubik3x3Env()
    env.reset(options={"scramble": "R U F' L D"})
    start = env.cube.copy()
    heard, cancel = [], threading.Event()

    def on_move(action):
        heard.append(action)
        if len(heard) == 2:
            cancel.set()

    actions, formula = Gui_Solve.solve_with_mcts(
        env, model, "cpu", num_simulations=8, max_steps=20, cancel=cancel, on_move=on_move, puzzle="3x3"
    )
    assert actions == heard and len(actions) == 2 and formula == " ".join(MOVE_NAMES[a] for a in actions)
    assert np.array_equal(env.cube, start)  # the caller's env is left alone


def test_3x3_gui_and_test_py_play_the_same_moves(net3):
    """One MCTS solve path on the 3x3 too: the GUI and test.py give the same moves."""
    import importlib.util

    from cube import Rubik3x3Env as E3
    from cube.Cube_Checkpoints import load_model

    spec = importlib.util.spec_from_file_location("rubik_test_runner_gui3", Path(PyGame.__file__).with_name("test.py"))
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    model = load_model(str(net3), puzzle="3x3")
    record = runner.run_one_episode(
        model, "cpu", num_simulations=10, max_steps=8, scramble="R U F'", out=None, puzzle="3x3"
    )
    env = E3.Rubik3x3Env()
    env.reset(options={"scramble": "R U F'"})
    actions, _ = Gui_Solve.solve_with_mcts(env, model, "cpu", num_simulations=10, max_steps=8, puzzle="3x3")
    assert actions == record["actions"] and len(actions) >= 1
