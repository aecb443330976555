"""PyGame GUI: the 2x2 (or 3x3) cube in colour, manual moves, scrambles and an animated solve.

    python PyGame.py                      # window; model from --checkpoint, ./ or pretrained/
    python PyGame.py --scramble "R U F'" --solve
    SDL_VIDEODRIVER=dummy python PyGame.py --scramble 6 --solve --screenshot docs/gui.png --quit-when-done

Controls: the 12 move buttons or the keys U R F L B D (Shift = inverse); a scramble length
(digits only, at most 50) then "Scram" or Enter; "Solve" (or Space) searches with greedy MCTS
one move at a time in a worker thread, then plays the moves one by one; "Cancel" or Esc
stops the search; "Reset" returns to the solved cube; "-"/"+" change the simulations per move.

``--solver`` (default ``mcts``, the search above) solves with another solver of ``Solvers.py``
instead: ``greedy``, ``beam`` and ``astar`` answer almost at once, ``bestfirst`` needs no
model, ``gumbel`` searches ``--sims`` simulations per move. The window names the solver.

``--puzzle 3x3`` shows the 3x3 (``Puzzles.py``): the same window with nine stickers a face,
solved with any ``--solver`` (MCTS move by move as on the 2x2; without ``--solver``, the
multi-view mixed beam of docs/puzzles.md) and the model
``rubik3x3_policy_value.pt`` (or ``--checkpoint``). Beside a solution it shows kociemba's two-phase
length in quarter turns instead of the 2x2's optimal length.

Layout of the code: the board is a *view* (``BoardView``: ``draw`` a state, ``hit`` a click),
here ``Cube_View.CubeView`` (the net and the 3-D view and their geometry), so that another game's
board can join; the searches off the UI thread are ``Gui_Solve``'s (``solve_with_mcts``, the
original's function; ``SolveWorker``; ``OptimalOracle``); the palette, text and widget helpers
are ``Gui_Theme``'s, the frame function and the clicks ``Gui_Window``'s. This module holds ``App``
(state and logic: ``handle_key``, ``update``, ``draw``; ``step_frame`` from ``Gui_Window.Window``),
the ``draw_*`` functions of the controls, status and solution (rendering only, they never change
state) and ``main`` (flags and the loop). Importing this module opens no window and loads nothing.

``--game go5`` (``go7``, ``go9`` ... ``go19``) opens the Go window instead, where a person plays the
Go agent: ``Go_Gui`` (its flags: ``python PyGame.py --game go5 --help``), with the board
``Go_View`` and the game ``Go_Play``.
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a signal during the slow imports below ends the script as at any moment
    from run import Process_Signals

    Process_Signals.start_script()

import argparse
import os
import time
from typing import Protocol

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep stdout clean for --quit-when-done

import numpy as np
import pygame
import torch

from cube.Cube_Checkpoints import find_and_load_model
from cube.Puzzles import C_PUCT, Puzzle, add_puzzle_flag, get_puzzle, puzzle_name
from cube.Solvers import (
    NETWORK_SOLVERS,
    SolverOptions,
    add_solver_arguments,
    options_from_args,
    resolve_solver,
)
from gui.Cube_View import CubeView
from gui.Gui_Solve import DEFAULT_MAX_STEPS, DEFAULT_SIMS, OptimalOracle, SolveWorker
from gui.Gui_Theme import (
    ACCENT,
    BG,
    DIM,
    ERROR,
    OK,
    PANEL,
    STICKER_COLORS,
    TEXT,
    WARN,
    Button,
    draw_button,
    draw_spinner,
    draw_text,
    fit_text,
    save_png,
)
from gui.Gui_Window import Window
from Rubik2x2Env import ACTION_FACE, MOVE_NAMES, format_moves, parse_moves
from run import Cli
from run.Cli import DeviceError, add_checkpoint_flag, add_device_flag, fail, resolve_device
from run.Run_IO import CheckpointError, OutputError, check_writable

# --------------------------------------------------------------------------- constants
WIDTH, HEIGHT = 960, 680
MAX_SCRAMBLE = 50  # longer scrambles add nothing: every state is within 14 quarter turns (the 3x3: 26)
SIM_LADDER = (10, 25, 50, 100, 200, 400, 800, 1600, 3200)  # what "-" and "+" step through
DEFAULT_ANIM_MS = 400
OPTIMAL_WAIT_S = 300.0  # scripted mode waits this long at most for the optimal solver's table

BOARD_RECT = pygame.Rect(0, 68, WIDTH, 302)  # the board view's area: between the header and the controls
MOVE_BTN = (40, 392, 54, 40, 60, 48)  # x, y, w, h, column pitch, row pitch
CTRL_X, CTRL_Y = 444, 392


class BoardView(Protocol):
    """What the app asks of the view that draws its game (``Cube_View.CubeView``; a Go board
    plugs in the same way): placed in a rectangle of the window when made."""

    def draw(self, surface: pygame.Surface, state: np.ndarray, highlight: int | None = None) -> None:
        """Draw ``state``; ``highlight``: the action about to be played (None: none)."""

    def hit(self, pos) -> int | None:
        """The action a click at ``pos`` plays, or None."""


# --------------------------------------------------------------------------- the application
class App(Window):
    """All GUI state and logic. Rendering lives in the ``draw_*`` functions below.

    ``step_frame()`` = events -> ``handle_event``, ``update(dt)``, ``draw(surface)``, flip;
    the real loop and the tests both call it. ``buttons`` (name -> Button) and
    ``box_rect`` are public so that tests can click at their centres.
    """

    def __init__(
        self,
        checkpoint: str | None = None,
        device: str = "auto",
        sims: int = DEFAULT_SIMS,
        max_steps: int = DEFAULT_MAX_STEPS,
        seed: int | None = None,
        anim_ms: int = DEFAULT_ANIM_MS,
        use_optimal: bool = True,
        surface: pygame.Surface | None = None,
        solver: str = "mcts",
        solver_options: SolverOptions | None = None,
        puzzle: Puzzle | str | None = None,
    ):
        # Only the modules we use: pygame.init() would also open the audio device (noise
        # on machines without one, and nothing here makes a sound).
        pygame.display.init()
        pygame.font.init()
        self.screen = surface if surface is not None else pygame.display.set_mode((WIDTH, HEIGHT))
        self.puzzle = get_puzzle(puzzle)
        self.cube_model = self.puzzle.model  # the single-cube helpers: apply_move_idx, is_solved, ...
        pygame.display.set_caption(
            f"Rubik {self.puzzle.name} - " + ("AlphaZero MCTS" if solver == "mcts" else f"{solver} solver")
        )
        self.clock = pygame.time.Clock()
        self.fonts = {
            "title": pygame.font.Font(None, 34),
            "big": pygame.font.Font(None, 28),
            "normal": pygame.font.Font(None, 24),
            "small": pygame.font.Font(None, 20),
        }
        self.rng = np.random.default_rng(seed)
        self.sims = int(sims)
        self.max_steps = int(max_steps)
        self.solver = solver  # Solvers.SOLVER_NAMES; shown in the window
        self.solver_options = solver_options
        self.anim_s = max(0, anim_ms) / 1000.0
        self.running = True

        # Cube state. ``setup_moves``: the scramble plus manual moves since the last reset.
        self.cube = self.cube_model.solved_cube()
        self.setup_moves: list[int] = []
        self.solution: list[int] = []  # the last search result (shown at the bottom)
        self.solution_start: np.ndarray | None = None  # the cube it was searched from
        self.anim_index = 0  # next solution move to play; == len(solution) when finished
        self.anim_timer = 0.0
        self.animating = False
        self.worker: SolveWorker | None = None
        self._all_workers: list[SolveWorker] = []  # cancelled ones too, joined by close()
        self.box_text = "6"
        self.box_focused = False
        self.message = ("", TEXT)
        self.elapsed = 0.0  # drives the spinner

        self.model = None
        self.device = None
        self.model_path: str | None = None
        self.model_error: str | None = None
        self._load_model(checkpoint, device)
        self.oracle = OptimalOracle(enabled=use_optimal, reference=self.puzzle.reference)

        self.view: BoardView = CubeView(BOARD_RECT, self.fonts)
        self.buttons = self._make_buttons()
        self.box_rect = pygame.Rect(CTRL_X, CTRL_Y, 64, 40)

    # -- setup ---------------------------------------------------------------------------
    def _load_model(self, checkpoint: str | None, device: str) -> None:
        # A missing or bad model is not fatal: manual play still works and Solve explains.
        try:
            resolved = resolve_device(device)
            self.model, self.model_path = find_and_load_model(checkpoint, resolved, self.puzzle)
            self.device = resolved
        except (CheckpointError, DeviceError) as exc:
            self.model, self.model_error = None, str(exc)

    def _make_buttons(self) -> dict[str, Button]:
        x0, y0, w, h, pitch_x, pitch_y = MOVE_BTN
        buttons: dict[str, Button] = {}
        for a, name in enumerate(MOVE_NAMES):
            col, row = a // 2, a % 2  # one column per face: clockwise on top, inverse below
            rect = pygame.Rect(x0 + col * pitch_x, y0 + row * pitch_y, w, h)
            buttons[name] = Button(name, name, rect, STICKER_COLORS[ACTION_FACE[a // 2]])
        x = CTRL_X + 64 + 10
        for name in ("Scram", "Solve", "Reset", "Cancel"):
            buttons[name] = Button(name, name, pygame.Rect(x, CTRL_Y, 96, 40))
            x += 96 + 8
        y2 = CTRL_Y + MOVE_BTN[5]
        buttons["sims-"] = Button("sims-", "-", pygame.Rect(CTRL_X + 190, y2, 40, 40))
        buttons["sims+"] = Button("sims+", "+", pygame.Rect(CTRL_X + 310, y2, 40, 40))
        return buttons

    # -- derived state -------------------------------------------------------------------
    @property
    def thinking(self) -> bool:
        return self.worker is not None

    @property
    def busy(self) -> bool:
        return self.thinking or self.animating

    def button_enabled(self, name: str) -> bool:
        if name == "Cancel":
            return self.busy
        if name in ("sims-", "sims+") and not self.uses_sims:
            return False
        if name in MOVE_NAMES or name in ("Scram", "Reset", "Solve", "sims-", "sims+"):
            return not self.thinking  # the search works on a snapshot: keep the cube still
        return True

    @property
    def uses_sims(self) -> bool:
        """Whether the solver reads the simulations per move (the tree searches' budgets are their own)."""
        return self.solver in ("mcts", "gumbel")

    def idle(self) -> bool:
        """Nothing left to do: no search, no animation, no optimal distance on its way."""
        if self.busy:
            return False
        return self.solution_start is None or not self.oracle.pending(self.solution_start)

    def optimal_text(self) -> str:
        if self.solution_start is None or self.oracle.state in ("off", "unavailable"):
            return ""
        dist, label = self.oracle.lookup(self.solution_start), self.oracle.label
        if dist is not None:
            return f"{label} {dist}"
        return f"{label}: computing..." if self.oracle.pending(self.solution_start) else f"{label} n/a"

    def playing(self) -> int | None:
        """The solution move about to be played (highlighted), or None."""
        return self.solution[self.anim_index] if self.animating and self.anim_index < len(self.solution) else None

    def say(self, text: str, color=TEXT) -> None:
        self.message = (text, color)

    # -- actions -------------------------------------------------------------------------
    def _stop_animation(self) -> None:
        self.animating = False

    def apply_move(self, action: int) -> None:
        if self.thinking:
            self.say("Searching: press Cancel (Esc) before turning the cube.", WARN)
            return
        self._stop_animation()
        self.cube = self.cube_model.apply_move_idx(self.cube, action)
        self.setup_moves.append(action)
        solved = self.cube_model.is_solved(self.cube)
        self.say(f"Move {MOVE_NAMES[action]}" + ("  - solved!" if solved else ""), OK if solved else TEXT)

    def reset(self) -> None:
        if self.thinking:
            self.cancel()
        self._stop_animation()
        self.cube = self.cube_model.solved_cube()
        self.setup_moves = []
        self.solution, self.solution_start, self.anim_index = [], None, 0
        self.say("Reset to the solved cube.")

    def scramble(self, moves: int | list[int] | None = None) -> None:
        """Scramble from solved: ``moves`` is a length, a move list, or None (the box)."""
        if self.thinking:
            self.say("Searching: press Cancel (Esc) before scrambling.", WARN)
            return
        if moves is None:
            if not self.box_text:
                self.say(f"Type a scramble length (0-{MAX_SCRAMBLE}) first.", WARN)
                return
            moves = int(self.box_text)
        if isinstance(moves, int):
            length = min(max(moves, 0), MAX_SCRAMBLE)
            self.box_text = str(length)  # the box shows the length in use (e.g. from --scramble)
            moves = self.puzzle.scramble(self.rng, 1, length)[1][0].tolist()
        self._stop_animation()
        self.cube = self.cube_model.apply_moves(self.cube_model.solved_cube(), moves)
        self.setup_moves = list(moves)
        self.solution, self.solution_start, self.anim_index = [], None, 0
        self.say(f"Scrambled with {len(moves)} moves.")

    def start_solve(self) -> None:
        if self.thinking:
            return
        if self.model is None and self.solver in NETWORK_SOLVERS:
            self.say(f"Solve needs a model: {self.model_error}", ERROR)
            return
        self._stop_animation()
        if self.cube_model.is_solved(self.cube):
            self.say("The cube is already solved.", OK)
            return
        self.solution, self.solution_start, self.anim_index = [], self.cube.copy(), 0
        self.oracle.request(self.cube)
        self.worker = SolveWorker(
            self.cube, self.model, self.device, self.sims, self.max_steps, self.solver, self.solver_options, self.puzzle
        )
        self._all_workers = [w for w in self._all_workers if w.is_alive()] + [self.worker]
        self.worker.start()
        self.say("Thinking...")

    def cancel(self) -> None:
        if self.worker is not None:
            # Ask the worker to stop and let go of it at once: the UI is free immediately,
            # and the thread ends by itself within a network call.
            self.worker.cancel()
            found = len(self.worker.moves)
            self.worker = None
            self.solution_start = None
            self.say(f"Search cancelled ({found} moves found so far were discarded).", WARN)
        elif self.animating:
            self._stop_animation()
            self.say(f"Playback stopped after {self.anim_index} of {len(self.solution)} moves.", WARN)

    def change_sims(self, direction: int) -> None:
        if direction > 0:
            bigger = [s for s in SIM_LADDER if s > self.sims]
            self.sims = bigger[0] if bigger else self.sims
        else:
            smaller = [s for s in SIM_LADDER if s < self.sims]
            self.sims = smaller[-1] if smaller else self.sims
        self.say(f"{self.sims} simulations per move.")

    def type_into_box(self, char: str) -> None:
        if len(char) != 1 or char not in "0123456789":
            self.say(f"The scramble length takes digits only (0-{MAX_SCRAMBLE}).", WARN)
            return
        value = int((self.box_text + char)[-3:])
        if value > MAX_SCRAMBLE:
            self.box_text = str(MAX_SCRAMBLE)
            self.say(f"Scramble length is capped at {MAX_SCRAMBLE}.", WARN)
        else:
            self.box_text = str(value)

    def activate(self, name: str) -> None:
        if not self.button_enabled(name):
            if name in MOVE_NAMES or name in ("Scram", "Solve", "sims-", "sims+"):
                self.say("Searching: press Cancel (Esc) first.", WARN)
            return
        if name in MOVE_NAMES:
            self.apply_move(MOVE_NAMES.index(name))
        elif name == "Scram":
            self.scramble()
        elif name == "Solve":
            self.start_solve()
        elif name == "Reset":
            self.reset()
        elif name == "Cancel":
            self.cancel()
        elif name == "sims-":
            self.change_sims(-1)
        elif name == "sims+":
            self.change_sims(+1)

    # -- events --------------------------------------------------------------------------
    def mouse_down(self, pos) -> None:
        self.box_focused = self.box_rect.collidepoint(pos)

    def handle_key(self, event: pygame.event.Event) -> None:
        key, char = event.key, getattr(event, "unicode", "")
        if key == pygame.K_ESCAPE:
            if self.busy:
                self.cancel()
            else:
                self.box_focused = False
            return
        if self.box_focused:
            if key in (pygame.K_RETURN, pygame.K_KP_ENTER):
                self.scramble()
            elif key == pygame.K_BACKSPACE:
                self.box_text = self.box_text[:-1]
            elif char and char.isprintable():
                self.type_into_box(char)
            return
        if key in (pygame.K_RETURN, pygame.K_KP_ENTER):
            self.activate("Scram")
        elif key == pygame.K_SPACE:
            self.activate("Solve")
        elif char in ("+", "=") or key == pygame.K_KP_PLUS:
            self.activate("sims+")
        elif char == "-" or key == pygame.K_KP_MINUS:
            self.activate("sims-")
        else:
            letter = pygame.key.name(key).upper()
            if len(letter) == 1 and letter in "URFLBD":
                face_pair = "URFLBD".index(letter)  # action order, not sticker-face order
                inverse = bool(event.mod & pygame.KMOD_SHIFT)
                self.activate(MOVE_NAMES[2 * face_pair + int(inverse)])

    # -- time ----------------------------------------------------------------------------
    def update(self, dt: float) -> None:
        self.elapsed += dt
        worker = self.worker
        if worker is not None and worker.done:
            self.worker = None
            self._finish_search(worker)
        if self.animating:
            self.anim_timer += dt
            # Each move is highlighted for one interval, then played.
            while self.animating and self.anim_timer >= self.anim_s:
                self.anim_timer -= self.anim_s
                self.cube = self.cube_model.apply_move_idx(self.cube, self.solution[self.anim_index])
                self.anim_index += 1
                if self.anim_index >= len(self.solution):
                    self.animating = False
                    if self.cube_model.is_solved(self.cube):
                        self.say(f"Solved in {len(self.solution)} moves.", OK)
                    else:
                        self.say(
                            f"Not solved within {self.max_steps} moves: try more simulations or a shorter scramble.",
                            WARN,
                        )

    def _finish_search(self, worker: SolveWorker) -> None:
        if worker.error is not None:
            self.solution_start = None
            self.say(f"The search failed: {worker.error}", ERROR)
            return
        self.solution = worker.moves
        self.anim_index, self.anim_timer = 0, 0.0
        self.animating = bool(self.solution)
        seconds = time.monotonic() - worker.started_at
        if worker.solved:
            self.say(
                f"Found {len(self.solution)} moves in {seconds:.1f} s ({self.solver}, {worker.nodes:,} "
                f"{'simulations' if self.solver in ('mcts', 'gumbel') else 'states'}); playing them...",
                OK,
            )
        else:
            self.say(
                f"No solution within {self.max_steps} moves ({seconds:.1f} s); playing what the search did...", WARN
            )

    # -- frame ---------------------------------------------------------------------------
    def draw(self, surface: pygame.Surface) -> None:
        surface.fill(BG)
        draw_header(surface, self)
        self.view.draw(surface, self.cube, self.playing())
        draw_controls(surface, self)
        draw_status(surface, self)
        draw_formulas(surface, self)

    def save_screenshot(self, path: str) -> None:
        """A PNG of the window at ``path``; raises OutputError (one sentence) if it cannot be written."""
        save_png(self.screen, path)

    def close(self) -> None:
        for worker in self._all_workers:
            worker.cancel()
        for worker in self._all_workers:
            worker.join(timeout=10.0)
        self.worker, self._all_workers = None, []
        pygame.quit()


# --------------------------------------------------------------------------- rendering (reads state only)
def draw_header(surface: pygame.Surface, app: App) -> None:
    title = "AlphaZero MCTS solver" if app.solver == "mcts" else f"{app.solver} solver"
    draw_text(surface, app.fonts["title"], f"Rubik {app.puzzle.name} - {title}", (40, 18))
    if app.model is not None:
        line, color = f"Model: {app.model_path} ({app.device})  |  solver: {app.solver}", DIM
    elif app.solver not in NETWORK_SOLVERS:
        line, color = f"Solver: {app.solver} (no model needed)", DIM
    else:
        line, color = f"No model: {app.model_error} Manual moves still work.", ERROR
    draw_text(surface, app.fonts["small"], fit_text(app.fonts["small"], line, WIDTH - 80), (40, 52), color)


def draw_controls(surface: pygame.Surface, app: App) -> None:
    small = app.fonts["small"]
    draw_text(surface, small, "Moves (keys U R F L B D, Shift = inverse)", (MOVE_BTN[0], MOVE_BTN[1] - 20), DIM)
    draw_text(surface, small, f"Scramble length (0-{MAX_SCRAMBLE})", (CTRL_X, CTRL_Y - 20), DIM)
    playing = app.playing()
    for button in app.buttons.values():
        is_playing = playing is not None and button.name == MOVE_NAMES[playing]
        draw_button(surface, button, app.fonts["big"], app.button_enabled(button.name), pressed=is_playing)
    # Scramble box: the cursor shows when it has the keyboard.
    pygame.draw.rect(surface, (18, 20, 26), app.box_rect, border_radius=6)
    pygame.draw.rect(surface, ACCENT if app.box_focused else (90, 96, 110), app.box_rect, width=2, border_radius=6)
    cursor = "|" if app.box_focused and int(app.elapsed * 2) % 2 == 0 else ""
    draw_text(
        surface, app.fonts["big"], app.box_text + cursor, (app.box_rect.x + 10, app.box_rect.centery), anchor="midleft"
    )
    # Simulations per move, between its "-" and "+" buttons.
    minus, plus = app.buttons["sims-"].rect, app.buttons["sims+"].rect
    draw_text(surface, app.fonts["normal"], "Simulations/move", (CTRL_X, minus.centery), DIM, anchor="midleft")
    sims = str(app.sims) if app.uses_sims else "-"  # beam, astar, greedy, bestfirst: no simulations
    draw_text(surface, app.fonts["big"], sims, ((minus.right + plus.left) // 2, minus.centery), anchor="center")
    draw_text(
        surface,
        app.fonts["normal"],
        f"max {app.max_steps} moves",
        (plus.right + 16, plus.centery),
        DIM,
        anchor="midleft",
    )


def draw_status(surface: pygame.Surface, app: App) -> None:
    y = 508
    if app.worker is not None:
        worker = app.worker
        found = worker.moves
        draw_spinner(surface, (52, y + 9), app.elapsed)
        seconds = time.monotonic() - worker.started_at
        budget = f"{app.sims} sims/move" if app.solver in ("mcts", "gumbel") else "no simulations"
        line = f"Thinking... {len(found)} moves found in {seconds:.1f} s ({app.solver}, {budget}). Cancel or Esc stops."
        draw_text(surface, app.fonts["normal"], fit_text(app.fonts["normal"], line, WIDTH - 110), (72, y), ACCENT)
        if found:
            draw_text(
                surface,
                app.fonts["small"],
                fit_text(app.fonts["small"], format_moves(found), WIDTH - 110),
                (72, y + 22),
                DIM,
            )
    else:
        text, color = app.message
        draw_text(surface, app.fonts["normal"], fit_text(app.fonts["normal"], text, WIDTH - 80), (40, y), color)


def _wrap(font, words: list[tuple[str, tuple]], width: int) -> list[list[tuple[str, tuple]]]:
    lines, line, used = [], [], 0
    space = font.size(" ")[0]
    for word, color in words:
        w = font.size(word)[0]
        if line and used + space + w > width:
            lines.append(line)
            line, used = [], 0
        used += (space if line else 0) + w
        line.append((word, color))
    if line:
        lines.append(line)
    return lines


def draw_formulas(surface: pygame.Surface, app: App) -> None:
    panel = pygame.Rect(20, 552, WIDTH - 40, HEIGHT - 566)
    pygame.draw.rect(surface, PANEL, panel, border_radius=8)
    font, small = app.fonts["big"], app.fonts["normal"]
    x, y = panel.x + 16, panel.y + 10
    setup = format_moves(app.setup_moves) if app.setup_moves else "-"
    line = f"Scramble / moves since reset ({len(app.setup_moves)}): {setup}"
    draw_text(surface, small, fit_text(small, line, panel.w - 32), (x, y), DIM)
    y += 26
    keys = "Keys: U R F L B D turn (Shift: inverse) | Enter: scramble | Space: solve | Esc: cancel | +/-: simulations"
    draw_text(surface, app.fonts["small"], keys, (panel.right - 12, panel.bottom - 8), DIM, anchor="bottomright")
    if not app.solution and app.worker is None:
        draw_text(surface, font, "Solution: press Solve (or Space)", (x, y), DIM)
        return
    if app.worker is not None:
        draw_text(surface, font, "Solution: searching...", (x, y), DIM)
        return
    parts = [f"{len(app.solution)} moves"]
    optimal = app.optimal_text()
    if optimal:
        parts.append(optimal)
    head = "Solution" + (f" ({', '.join(parts)})" if parts else "") + ":"
    x_words = draw_text(surface, font, head, (x, y)).right + 10
    # The move being played is highlighted, those played are bright, the rest dim.
    words = []
    for i, a in enumerate(app.solution):
        if app.animating and i == app.anim_index:
            color = ACCENT
        elif app.animating and i > app.anim_index:
            color = DIM
        else:
            color = TEXT
        words.append((MOVE_NAMES[a], color))
    lines = _wrap(font, words, panel.right - 16 - x_words)
    for line in lines[:3]:
        cx = x_words
        for word, color in line:
            cx = draw_text(surface, font, word, (cx, y), color).right + font.size(" ")[0]
        y += 28


# --------------------------------------------------------------------------- command line
def parse_args(argv=None) -> argparse.Namespace:
    p = Cli.ArgumentParser(
        description="PyGame GUI for the 2x2 (or 3x3) cube: manual moves, scrambles, and an animated solve.",
        epilog="Scripted example (no window needed): SDL_VIDEODRIVER=dummy python PyGame.py "
        "--scramble 6 --solve --screenshot docs/gui.png --quit-when-done",
    )
    add_puzzle_flag(p)
    p.add_argument(
        "--game",
        type=puzzle_name,
        default=None,
        metavar="2x2|3x3|goN",
        help="the cube (as --puzzle), or a Go board go5 ... go19: a person plays the Go agent "
        "(python PyGame.py --game go5 --help)",
    )
    add_checkpoint_flag(p)
    add_device_flag(p)
    p.add_argument(
        "--sims",
        type=Cli.simulations,
        default=DEFAULT_SIMS,
        help="MCTS simulations per move (adjustable in the window with -/+)",
    )
    p.add_argument(
        "--c-puct",
        type=Cli.positive_float,
        default=C_PUCT,
        help="PUCT exploration constant of the mcts solver (as test.py's)",
    )
    p.add_argument(
        "--max-steps",
        type=Cli.move_limit,
        default=None,
        help=f"give up a solve after this many moves (default: {DEFAULT_MAX_STEPS}; "
        f"{get_puzzle('3x3').default_max_moves} for the 3x3)",
    )
    p.add_argument("--seed", type=Cli.seed, default=None, help="seed of the scramble generator (and of numpy/torch)")
    p.add_argument(
        "--anim-ms",
        type=Cli.milliseconds,
        default=DEFAULT_ANIM_MS,
        help="milliseconds per move when playing a solution",
    )
    p.add_argument(
        "--no-optimal",
        action="store_true",
        help="do not load Optimal_Solver to show the optimal solution length (the 3x3: kociemba's length)",
    )
    add_solver_arguments(p)
    add_scripted_flags(p)
    return checked_args(p, p.parse_args(argv))


def add_scripted_flags(p: argparse.ArgumentParser) -> None:
    """The flags of scripted mode (documentation images, tests)."""
    g = p.add_argument_group("scripted mode (docs, tests; renders off screen with SDL_VIDEODRIVER=dummy)")
    g.add_argument(
        "--scramble", default=None, metavar="N|MOVES",
        help=f"start from N random moves (0-{MAX_SCRAMBLE}) or a move string such as \"R U F'\"",
    )  # fmt: skip
    g.add_argument("--solve", action="store_true", help="start a solve at once")
    g.add_argument(
        "--screenshot",
        type=Cli.nonempty_path,
        default=None,
        metavar="PATH",
        help="save a PNG of the window once the solve has been played",
    )
    g.add_argument(
        "--quit-when-done", action="store_true", help="exit after that and print one line: solved=True/False, ..."
    )


def checked_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with the puzzle's defaults filled in and the flags checked together (``p.error``: exit 2)."""
    if args.game is not None:
        args.puzzle = args.game
    if args.max_steps is None:
        args.max_steps = get_puzzle(args.puzzle).default_max_moves  # the 2x2's: DEFAULT_MAX_STEPS
    resolve_solver(args)  # no --solver: the puzzle's default solver and budgets
    if args.sims < 1 or args.max_steps < 1:
        p.error("--sims and --max-steps must be at least 1")
    if args.scramble is not None:
        text = args.scramble.strip()
        if Cli.is_ascii_digits(text):  # not str.isdigit: it takes '²', which int() refuses
            digits = text.lstrip("0") or "0"  # int() of over 4,300 digits fails on Python's own limit
            if len(digits) > len(str(MAX_SCRAMBLE)) or int(digits) > MAX_SCRAMBLE:
                p.error(f"--scramble length is capped at {MAX_SCRAMBLE}")
            args.scramble = int(digits)
        else:
            try:
                args.scramble = parse_moves(text)
            except ValueError as exc:
                p.error(f"--scramble: {exc}")
    return args


def go_requested(argv) -> bool:
    """``--game goN`` is among the arguments: the Go window (``Go_Gui``) takes them all."""
    peek = argparse.ArgumentParser(add_help=False)
    peek.add_argument("--game", default="")
    known, _ = peek.parse_known_args(argv)
    return known.game.lower().startswith("go")


def main(argv=None) -> int:
    if go_requested(argv):
        from gui.Go_Gui import main as go_main  # only for Go: the cube window never loads it

        return go_main(argv)
    args = parse_args(argv)
    try:
        resolve_device(args.device)  # a device this machine lacks is a usage error, as in every script
    except DeviceError as exc:
        return fail(exc)
    if args.screenshot is not None:
        try:
            check_writable(args.screenshot)  # before the solve, not after it
        except OutputError as exc:
            return fail(exc)
    if args.seed is not None:
        np.random.seed(args.seed)
        torch.manual_seed(args.seed)
    # A batch-1 search gains nothing from several torch threads; one thread leaves a core
    # for the UI thread, so the window stays smooth while the worker searches.
    torch.set_num_threads(1)
    headless = os.environ.get("SDL_VIDEODRIVER") == "dummy"
    scripted = args.scramble is not None or args.solve or args.screenshot is not None
    # Off screen nobody can close the window, so a scripted headless run ends by itself.
    quit_when_done = args.quit_when_done or (headless and scripted)

    app = App(
        args.checkpoint,
        args.device,
        args.sims,
        args.max_steps,
        args.seed,
        args.anim_ms,
        use_optimal=not args.no_optimal,
        solver=args.solver,
        solver_options=options_from_args(args),
        puzzle=args.puzzle,
    )
    if args.solve and quit_when_done and app.model is None and app.solver in NETWORK_SOLVERS:
        app.close()  # a scripted solve without its model is an error, not a result line with solved=False
        return fail(app.model_error)
    if args.scramble is not None:
        app.scramble(args.scramble)
    if args.solve:
        app.start_solve()
    started = time.monotonic()
    try:
        while app.running:
            app.step_frame()
            waiting_optimal = app.solution_start is not None and app.oracle.pending(app.solution_start)
            done = not app.busy and (not waiting_optimal or time.monotonic() - started > OPTIMAL_WAIT_S)
            if done and (args.screenshot or quit_when_done):
                app.draw(app.screen)  # the final state, message included
                if args.screenshot:
                    app.save_screenshot(args.screenshot)
                    args.screenshot = None  # once
                if quit_when_done:
                    break
        if args.quit_when_done:
            optimal = app.oracle.lookup(app.solution_start) if app.solution_start is not None else None
            print(
                f"solved={app.cube_model.is_solved(app.cube)} moves={len(app.solution)} "
                f"{app.oracle.label}={optimal if optimal is not None else 'n/a'} "
                f'scramble="{format_moves(app.setup_moves)}" solution="{format_moves(app.solution)}"'
                + ("" if app.model is not None else f' model_error="{app.model_error}"')
            )
    finally:
        app.close()
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
