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
solved with ``--solver`` greedy, beam, astar or bestfirst (MCTS and Gumbel search the 2x2 only
so far; without ``--solver``, the beam of 1,000 of docs/puzzles.md) and the model
``rubik3x3_policy_value.pt`` (or ``--checkpoint``). Beside a solution it shows kociemba's two-phase
length in quarter turns instead of the 2x2's optimal length.

Layout of the code: ``solve_with_mcts`` (the original's function), ``SolveWorker`` (the search
off the UI thread), ``OptimalOracle`` (optional exact distances, also off the UI thread),
``App`` (state and logic: ``handle_event``, ``update``, ``draw``, ``step_frame``), the
``draw_*`` functions (rendering only, they never change state) and ``main`` (flags and the
loop). Importing this module opens no window and loads nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import math
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Callable

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep stdout clean for --quit-when-done

import numpy as np
import pygame
import torch

import Cli
from Cli import (
    C_PUCT,
    MAX_MOVES,
    DeviceError,
    add_checkpoint_flag,
    add_device_flag,
    fail,
    resolve_device,
)
from MCTS_Core import NetworkEvaluator
from Policy_Value_Net import CheckpointError, find_and_load_model
from Puzzles import Puzzle, add_puzzle_flag, get_puzzle
from Rubik2x2Env import (
    ACTION_FACE,
    FACE_NAMES,
    MOVE_NAMES,
    Rubik2x2Env,
    format_moves,
    parse_moves,
)
from Run_IO import OutputError, atomic_write, check_writable
from Self_Play import greedy_solve
from Solvers import (
    NETWORK_SOLVERS,
    SolverOptions,
    add_solver_arguments,
    network_fns,
    options_from_args,
    resolve_solver,
    solve_cubes,
    solver_puzzle_problem,
)

# --------------------------------------------------------------------------- constants
WIDTH, HEIGHT = 960, 680
FPS = 30
MAX_SCRAMBLE = 50  # longer scrambles add nothing: every state is within 14 quarter turns (the 3x3: 26)
SIM_LADDER = (10, 25, 50, 100, 200, 400, 800, 1600, 3200)  # what "-" and "+" step through
DEFAULT_SIMS = 200  # the original's solve_with_mcts default
DEFAULT_MAX_STEPS = MAX_MOVES
DEFAULT_ANIM_MS = 400
OPTIMAL_WAIT_S = 300.0  # scripted mode waits this long at most for the optimal solver's table

# Sticker colours by colour index = home face (U R F D L B), the usual Western scheme.
STICKER_COLORS = (
    (245, 245, 245),  # U white
    (205, 30, 35),  # R red
    (25, 160, 70),  # F green
    (250, 215, 10),  # D yellow
    (255, 130, 0),  # L orange
    (30, 90, 215),  # B blue
)
BG = (28, 31, 38)
PANEL = (40, 44, 54)
TEXT = (230, 232, 236)
DIM = (140, 146, 158)
ACCENT = (255, 210, 60)  # highlight: the move being played, focused box
OK = (110, 210, 120)
WARN = (255, 170, 70)
ERROR = (255, 95, 95)
STICKER_EDGE = (12, 12, 14)

# Net: face -> (column, row) in a 4x3 grid of faces. U above F, D below F, L F R B in a row.
NET_CELLS = {0: (1, 0), 4: (0, 1), 2: (1, 1), 1: (2, 1), 5: (3, 1), 3: (1, 2)}
NET_ORIGIN = (40, 92)
STICKER = 40  # the 2x2's sticker and gap; a 3x3's nine stickers fill the same face (``sticker_size``)
STICKER_GAP = 3
FACE_GAP = 8
FACE_SIZE = 2 * STICKER + STICKER_GAP

ISO_CENTER = (700, 222)
ISO_SCALE = 64
# The three faces seen from above-front-right, darker the more they turn away from the light.
ISO_SHADE = {0: 1.0, 2: 0.86, 1: 0.70}

MOVE_BTN = (40, 392, 54, 40, 60, 48)  # x, y, w, h, column pitch, row pitch
CTRL_X, CTRL_Y = 444, 392


# --------------------------------------------------------------------------- the original's solver
class _Cancelled(Exception):
    """Raised inside a search when its cancel flag is set, to leave it at once."""


def solve_with_mcts(
    env,
    model,
    device,
    num_simulations: int = DEFAULT_SIMS,
    max_steps: int = DEFAULT_MAX_STEPS,
    *,
    cancel: threading.Event | None = None,
    on_move: Callable[[int], None] | None = None,
    c_puct: float = C_PUCT,
):
    """Greedy MCTS from ``env``'s cube, one search per move, as in the original.

    Copies the cube and its move history into a temporary masked env (``env`` is not
    changed) and plays ``Self_Play.greedy_solve`` (the solve ``test.py`` runs) until solved
    or ``max_steps`` moves. Returns
    ``(actions, formula)``. Beyond the original: ``cancel`` (a ``threading.Event``, checked
    between moves and before each network call; a cancelled solve returns the moves found
    so far) and ``on_move(action)`` (progress for the GUI).
    """
    base = getattr(env, "unwrapped", env)
    work = Rubik2x2Env(scramble_len=0, max_steps=max_steps, use_action_mask=True)
    work.set_state(np.asarray(base.cube), getattr(base, "last_action", None), getattr(base, "face_count", 0))
    # One evaluator for the whole solve: its cache of network outputs carries over between
    # moves (the tree itself is rebuilt every move, as in the original).
    network = NetworkEvaluator(model, device)

    def evaluate(cubes):
        # Checking the flag before every network call too makes Cancel take effect within
        # milliseconds, even in a search of thousands of simulations.
        if cancel is not None and cancel.is_set():
            raise _Cancelled
        return network(cubes)

    actions: list[int] = []
    try:
        for action in greedy_solve(
            model, work, num_simulations, max_steps, device=device, c_puct=c_puct, evaluator=evaluate
        ):
            actions.append(action)
            if on_move is not None:
                on_move(action)
            if cancel is not None and cancel.is_set():
                break
    except _Cancelled:
        pass
    return actions, format_moves(actions)


class SolveWorker(threading.Thread):
    """Runs ``solve_with_mcts`` off the UI thread so the window keeps drawing and reacting.

    The UI polls ``done``; ``moves`` grows as the search commits to moves (appends under a
    lock, read as copies). ``cancel()`` sets an event that the search checks between moves
    and before every network call (a forward pass itself cannot be interrupted, but it
    takes about a millisecond), so the thread ends almost at once. ``App.close`` still
    joins it: a thread killed inside torch at interpreter exit aborts the process.
    """

    def __init__(
        self,
        cube: np.ndarray,
        model,
        device,
        num_simulations: int,
        max_steps: int,
        solver: str = "mcts",
        options: SolverOptions | None = None,
        puzzle: Puzzle | str | None = None,
    ):
        super().__init__(name=f"{solver}-solver", daemon=True)
        self.puzzle = get_puzzle(puzzle)
        self.start_cube = np.array(cube, dtype=np.int8).reshape(6, self.puzzle.size, self.puzzle.size)
        self.model, self.device = model, device
        self.num_simulations, self.max_steps = num_simulations, max_steps
        self.solver, self.options = solver, options
        self.nodes = 0  # states the solver generated (MCTS: simulations)
        self.cancel_event = threading.Event()
        self.started_at = time.monotonic()
        self.done = False
        self.solved = False
        self.error: str | None = None
        self._moves: list[int] = []
        self._lock = threading.Lock()

    @property
    def moves(self) -> list[int]:
        with self._lock:
            return list(self._moves)

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def cancel(self) -> None:
        self.cancel_event.set()

    def _on_move(self, action: int) -> None:
        with self._lock:
            self._moves.append(action)

    def _solve_other(self) -> list[int]:
        """Any solver but mcts, through ``Solvers.solve_cubes`` (its moves come all at once).
        The network calls check the cancel flag, as the MCTS search does."""
        value_fn = policy_fn = None
        if self.model is not None:
            net_value, net_policy = network_fns(self.model, self.device, puzzle=self.puzzle)

            def value_fn(cubes):
                if self.cancel_event.is_set():
                    raise _Cancelled
                return net_value(cubes)

            def policy_fn(cubes):
                if self.cancel_event.is_set():
                    raise _Cancelled
                return net_policy(cubes)

            # The same reading as the network's functions (Solvers: one evaluation per position).
            value_fn.reads_positions = policy_fn.reads_positions = net_value.reads_positions

        opts = dataclasses.replace(self.options or SolverOptions(), sims=self.num_simulations, max_moves=self.max_steps)
        try:
            [result] = solve_cubes(
                self.solver,
                self.start_cube.reshape(-1),
                model=self.model,
                value_fn=value_fn,
                policy_fn=policy_fn,
                options=opts,
                device=self.device,
                puzzle=self.puzzle,
            )
        except _Cancelled:
            return []
        self.nodes = result.nodes
        for action in result.moves:
            self._on_move(action)
        return list(result.moves)

    def run(self) -> None:
        try:
            if self.solver == "mcts":  # the 2x2's (solver_puzzle_problem)
                env = Rubik2x2Env(scramble_len=0)
                env.set_state(self.start_cube)
                actions, _ = solve_with_mcts(
                    env, self.model, self.device, self.num_simulations, self.max_steps,
                    cancel=self.cancel_event, on_move=self._on_move,
                )  # fmt: skip
                self.nodes = len(actions) * self.num_simulations
            else:
                actions = self._solve_other()
            self.solved = self.puzzle.model.is_solved(self.puzzle.model.apply_moves(self.start_cube, actions))
        except Exception as exc:  # shown in the window; the GUI must survive a failed search
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.done = True


class OptimalOracle:
    """Optimal (QTM) distances from ``Optimal_Solver``, if that module is present; for the 3x3
    (``reference="kociemba"``) the quarter-turn length of kociemba's two-phase solution instead
    (an upper bound, about 40 ms a cube). ``label`` names what it shows.

    Building its table takes a minute or two the first time, so the solver is loaded lazily
    (at the first request, i.e. the first Solve) in a daemon thread that then answers
    requests from a queue; the UI only ever reads finished results.
    States: "off" (disabled), "idle", "loading", "ready", "unavailable".
    """

    def __init__(self, enabled: bool = True, reference: str = "optimal"):
        self.label = reference  # "optimal" (the 2x2) or "kociemba" (the 3x3)
        self.state = "idle" if enabled else "off"
        self.detail = ""
        self._requests: queue.Queue = queue.Queue()
        self._results: dict[bytes, int | None] = {}
        self._thread: threading.Thread | None = None

    @staticmethod
    def _key(cube: np.ndarray) -> bytes:
        return np.asarray(cube, dtype=np.int8).tobytes()

    def request(self, cube: np.ndarray) -> None:
        if self.state in ("off", "unavailable"):
            return
        key = self._key(cube)
        if key in self._results:
            return
        self._requests.put((key, np.array(cube, dtype=np.int8)))
        if self._thread is None:
            self.state = "loading"
            self._thread = threading.Thread(target=self._serve, name="optimal-solver", daemon=True)
            self._thread.start()

    def lookup(self, cube: np.ndarray) -> int | None:
        return self._results.get(self._key(cube))

    def pending(self, cube: np.ndarray) -> bool:
        """True while a requested distance may still arrive."""
        return self.state in ("loading", "ready") and self._key(cube) not in self._results

    def _distance_fn(self):
        """``cube -> length``: the optimal solver's distance, or kociemba's solution length."""
        if self.label == "kociemba":
            from Kociemba_Solver import solve

            return lambda cube: len(solve(cube))
        from Optimal_Solver import get_solver  # optional module; may be absent

        return get_solver().distance

    def _serve(self) -> None:
        try:
            distance = self._distance_fn()
        except Exception as exc:
            self.detail = f"{type(exc).__name__}: {exc}"
            self.state = "unavailable"
            return
        self.state = "ready"
        while True:
            key, cube = self._requests.get()
            try:
                dist = int(distance(cube))
            except Exception:
                dist = None  # shown as "n/a"; a wrong answer is worse than none
            self._results[key] = dist


# --------------------------------------------------------------------------- widgets
@dataclass
class Button:
    name: str  # identifier used by the logic and the tests ("U", "U'", "Solve", "sims+", ...)
    label: str
    rect: pygame.Rect
    color: tuple[int, int, int] | None = None  # face colour strip of a move button


def sticker_size(n: int = 2) -> tuple[int, int]:
    """``(side, gap)`` in pixels of the stickers of an ``n`` cube's net: ``n`` of them fill a face."""
    gap = STICKER_GAP if n == 2 else 2
    return (FACE_SIZE - (n - 1) * gap) // n, gap


def sticker_rect(face: int, row: int, col: int, n: int = 2) -> pygame.Rect:
    """Screen rectangle of one sticker of the net (of an ``n`` cube)."""
    side, gap = sticker_size(n)
    gx, gy = NET_CELLS[face]
    x = NET_ORIGIN[0] + gx * (FACE_SIZE + FACE_GAP) + col * (side + gap)
    y = NET_ORIGIN[1] + gy * (FACE_SIZE + FACE_GAP) + row * (side + gap)
    return pygame.Rect(x, y, side, side)


def face_rect(face: int, n: int = 2) -> pygame.Rect:
    return sticker_rect(face, 0, 0, n).union(sticker_rect(face, n - 1, n - 1, n))


def iso_project(x: float, y: float, z: float) -> tuple[float, float]:
    """Isometric projection; x right, y up, z out of F (the cube spans [-1, 1]^3)."""
    c30 = math.cos(math.radians(30))
    return (ISO_CENTER[0] + (x - z) * ISO_SCALE * c30, ISO_CENTER[1] - y * ISO_SCALE + (x + z) * ISO_SCALE * 0.5)


def iso_sticker_corners(face: int, row: int, col: int, n: int = 2) -> list[tuple[float, float, float]]:
    """3-D corners of a sticker of U, F or R of an ``n`` cube, following the env's net conventions:
    U's last row touches F, R's column 0 touches F, row 0 is the top row of F and R."""
    s = 2 / n  # a sticker's side: the cube spans [-1, 1]^3
    a0, a1 = -1 + col * s, -1 + (col + 1) * s  # along the row, left to right (U, F)
    b0, b1 = 1 - row * s, 1 - (row + 1) * s  # down the face, top to bottom (F, R)
    if face == 0:  # U: y = 1, x grows with col, z grows with row
        z0, z1 = -1 + row * s, -1 + (row + 1) * s
        return [(a0, 1, z0), (a1, 1, z0), (a1, 1, z1), (a0, 1, z1)]
    if face == 2:  # F: z = 1
        return [(a0, b0, 1), (a1, b0, 1), (a1, b1, 1), (a0, b1, 1)]
    if face == 1:  # R: x = 1, z shrinks with col
        c0, c1 = 1 - col * s, 1 - (col + 1) * s
        return [(1, b0, c0), (1, b0, c1), (1, b1, c1), (1, b1, c0)]
    raise ValueError("the 3-D view shows faces U (0), R (1) and F (2) only")


def iso_polygon(face: int, row: int, col: int, inset: float = 0.0, n: int = 2) -> list[tuple[float, float]]:
    """The sticker's parallelogram on screen, shrunk towards its centre by ``inset``."""
    corners = np.array(iso_sticker_corners(face, row, col, n), dtype=float)
    centre = corners.mean(axis=0)
    corners = centre + (corners - centre) * (1.0 - inset)
    return [iso_project(*p) for p in corners]


def iso_sticker_center(face: int, row: int, col: int, n: int = 2) -> tuple[int, int]:
    pts = iso_polygon(face, row, col, n=n)
    return (round(sum(p[0] for p in pts) / 4), round(sum(p[1] for p in pts) / 4))


def shade(color: tuple[int, int, int], k: float) -> tuple[int, int, int]:
    return tuple(min(255, int(c * k)) for c in color)


# --------------------------------------------------------------------------- the application
class App:
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
            "Rubik 2x2 - AlphaZero MCTS" if self.puzzle.name == "2x2" else f"Rubik {self.puzzle.name} - {solver} solver"
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
        self._pressed: str | None = None  # button under the last mouse-down

        self.model = None
        self.device = None
        self.model_path: str | None = None
        self.model_error: str | None = None
        self._load_model(checkpoint, device)
        self.oracle = OptimalOracle(enabled=use_optimal, reference=self.puzzle.reference)

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
        if name in MOVE_NAMES or name in ("Scram", "Reset", "Solve", "sims-", "sims+"):
            return not self.thinking  # the search works on a snapshot: keep the cube still
        return True

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
    def button_at(self, pos) -> str | None:
        for name, button in self.buttons.items():
            if button.rect.collidepoint(pos):
                return name
        return None

    def handle_event(self, event: pygame.event.Event) -> None:
        if event.type == pygame.QUIT:
            self.running = False
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.box_focused = self.box_rect.collidepoint(event.pos)
            self._pressed = self.button_at(event.pos)
        elif event.type == pygame.MOUSEBUTTONUP and event.button == 1:
            # A click is a press and release on the same button, as in any toolkit.
            name = self.button_at(event.pos)
            if name is not None and name == self._pressed:
                self.activate(name)
            self._pressed = None
        elif event.type == pygame.KEYDOWN:
            self._handle_key(event)

    def _handle_key(self, event: pygame.event.Event) -> None:
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
    def step_frame(self, dt: float | None = None) -> None:
        """One frame: events, update, draw, flip. ``dt`` None = real time at FPS."""
        if dt is None:
            dt = self.clock.tick(FPS) / 1000.0
        for event in pygame.event.get():
            self.handle_event(event)
        self.update(dt)
        self.draw(self.screen)
        pygame.display.flip()

    def draw(self, surface: pygame.Surface) -> None:
        surface.fill(BG)
        draw_header(surface, self)
        highlight = None
        if self.animating and self.anim_index < len(self.solution):
            highlight = ACTION_FACE[self.solution[self.anim_index] // 2]
        draw_net(surface, self.cube, highlight, self.fonts["small"])
        draw_iso(surface, self.cube, highlight, self.fonts["normal"])
        draw_controls(surface, self)
        draw_status(surface, self)
        draw_formulas(surface, self)

    def save_screenshot(self, path: str) -> None:
        """A PNG of the window at ``path``; raises OutputError (one sentence) if it cannot be written."""
        image = io.BytesIO()  # pygame writes a broken BMP into a real file object; a buffer is right
        try:  # the format follows the name's suffix, as when pygame writes the path itself
            pygame.image.save(self.screen, image, os.path.basename(path))
            atomic_write(path, lambda f: f.write(image.getvalue()))
        except pygame.error as exc:  # a suffix pygame cannot write, ...
            raise OutputError(f"cannot write the screenshot '{path}' ({exc}).") from None

    def close(self) -> None:
        for worker in self._all_workers:
            worker.cancel()
        for worker in self._all_workers:
            worker.join(timeout=10.0)
        self.worker, self._all_workers = None, []
        pygame.quit()


# --------------------------------------------------------------------------- rendering (reads state only)
def _text(surface, font, text, pos, color=TEXT, anchor="topleft") -> pygame.Rect:
    img = font.render(text, True, color)
    rect = img.get_rect(**{anchor: pos})
    surface.blit(img, rect)
    return rect


def draw_header(surface: pygame.Surface, app: App) -> None:
    title = "AlphaZero MCTS solver" if app.solver == "mcts" else f"{app.solver} solver"
    _text(surface, app.fonts["title"], f"Rubik {app.puzzle.name} - {title}", (40, 18))
    if app.model is not None:
        line, color = f"Model: {app.model_path} ({app.device})  |  solver: {app.solver}", DIM
    elif app.solver not in NETWORK_SOLVERS:
        line, color = f"Solver: {app.solver} (no model needed)", DIM
    else:
        line, color = f"No model: {app.model_error} Manual moves still work.", ERROR
    _text(surface, app.fonts["small"], _fit(app.fonts["small"], line, WIDTH - 80), (40, 52), color)


def _fit(font, text: str, width: int) -> str:
    """Shorten ``text`` with an ellipsis so that it renders within ``width`` pixels."""
    if font.size(text)[0] <= width:
        return text
    while text and font.size(text + "...")[0] > width:
        text = text[:-1]
    return text + "..."


def cube_size(cube: np.ndarray) -> int:
    """``n`` of an ``n x n x n`` cube's sticker array (6 n^2 stickers)."""
    return math.isqrt(np.asarray(cube).size // 6)


def draw_net(surface: pygame.Surface, cube: np.ndarray, highlight: int | None, font) -> None:
    stickers = np.asarray(cube).reshape(-1)
    n = cube_size(cube)
    for face in range(6):
        back = face_rect(face, n).inflate(8, 8)
        pygame.draw.rect(surface, ACCENT if face == highlight else STICKER_EDGE, back, border_radius=6)
        for row in range(n):
            for col in range(n):
                color = STICKER_COLORS[int(stickers[face * n * n + row * n + col])]
                pygame.draw.rect(surface, color, sticker_rect(face, row, col, n), border_radius=4 if n == 2 else 3)
        centre = face_rect(face, n).center
        if n % 2 == 0:  # the face's name on a small cap where its middle stickers meet (off the sticker centres)
            pygame.draw.circle(surface, STICKER_EDGE, centre, 10)
            _text(surface, font, FACE_NAMES[face], centre, DIM, anchor="center")
        else:  # on the centre sticker, which never moves: its colour is the face's anyway
            _text(surface, font, FACE_NAMES[face], centre, STICKER_EDGE, anchor="center")


def draw_iso(surface: pygame.Surface, cube: np.ndarray, highlight: int | None, font) -> None:
    stickers = np.asarray(cube).reshape(-1)
    # Face names just outside the faces: U above, F to the left, R to the right.
    reach = 2 * ISO_SCALE * math.cos(math.radians(30)) + 18
    _text(surface, font, "U", (ISO_CENTER[0], ISO_CENTER[1] - 2 * ISO_SCALE - 14), DIM, anchor="center")
    _text(surface, font, "F", (ISO_CENTER[0] - reach, ISO_CENTER[1] + ISO_SCALE * 0.5), DIM, anchor="center")
    _text(surface, font, "R", (ISO_CENTER[0] + reach, ISO_CENTER[1] + ISO_SCALE * 0.5), DIM, anchor="center")
    n = cube_size(cube)
    for face in (0, 2, 1):  # U, F, R never overlap, so any order works
        outline = [iso_project(*p) for p in _iso_face_corners(face, n)]
        pygame.draw.polygon(surface, STICKER_EDGE, outline)
        for row in range(n):
            for col in range(n):
                color = shade(STICKER_COLORS[int(stickers[face * n * n + row * n + col])], ISO_SHADE[face])
                pygame.draw.polygon(surface, color, iso_polygon(face, row, col, inset=0.1, n=n))
        if face == highlight:
            pygame.draw.polygon(surface, ACCENT, outline, width=3)


def _iso_face_corners(face: int, n: int = 2) -> list[tuple[float, float, float]]:
    """3-D corners of a whole visible face: the outer corners of its corner stickers."""
    last = n - 1

    def corners(row, col):
        return iso_sticker_corners(face, row, col, n)

    return [corners(0, 0)[0], corners(0, last)[1], corners(last, last)[2], corners(last, 0)[3]]


def _draw_button(surface, app: App, button: Button, font, pressed: bool = False) -> None:
    enabled = app.button_enabled(button.name)
    hover = enabled and button.rect.collidepoint(pygame.mouse.get_pos())
    fill = (62, 68, 82) if enabled else (44, 47, 56)
    if hover:
        fill = (80, 88, 106)
    if pressed:
        fill = (110, 96, 40)
    pygame.draw.rect(surface, fill, button.rect, border_radius=6)
    if button.color is not None:  # move buttons: a strip in the colour of the turned face
        strip = pygame.Rect(button.rect.x, button.rect.bottom - 6, button.rect.w, 6)
        pygame.draw.rect(surface, button.color, strip, border_bottom_left_radius=6, border_bottom_right_radius=6)
    _text(surface, font, button.label, button.rect.center, TEXT if enabled else (100, 104, 114), anchor="center")


def draw_controls(surface: pygame.Surface, app: App) -> None:
    small = app.fonts["small"]
    _text(surface, small, "Moves (keys U R F L B D, Shift = inverse)", (MOVE_BTN[0], MOVE_BTN[1] - 20), DIM)
    _text(surface, small, f"Scramble length (0-{MAX_SCRAMBLE})", (CTRL_X, CTRL_Y - 20), DIM)
    playing = app.solution[app.anim_index] if app.animating and app.anim_index < len(app.solution) else None
    for button in app.buttons.values():
        is_playing = playing is not None and button.name == MOVE_NAMES[playing]
        _draw_button(surface, app, button, app.fonts["big"], pressed=is_playing)
    # Scramble box: the cursor shows when it has the keyboard.
    pygame.draw.rect(surface, (18, 20, 26), app.box_rect, border_radius=6)
    pygame.draw.rect(surface, ACCENT if app.box_focused else (90, 96, 110), app.box_rect, width=2, border_radius=6)
    cursor = "|" if app.box_focused and int(app.elapsed * 2) % 2 == 0 else ""
    _text(
        surface, app.fonts["big"], app.box_text + cursor, (app.box_rect.x + 10, app.box_rect.centery), anchor="midleft"
    )
    # Simulations per move, between its "-" and "+" buttons.
    minus, plus = app.buttons["sims-"].rect, app.buttons["sims+"].rect
    _text(surface, app.fonts["normal"], "Simulations/move", (CTRL_X, minus.centery), DIM, anchor="midleft")
    _text(surface, app.fonts["big"], str(app.sims), ((minus.right + plus.left) // 2, minus.centery), anchor="center")
    _text(
        surface,
        app.fonts["normal"],
        f"max {app.max_steps} moves",
        (plus.right + 16, plus.centery),
        DIM,
        anchor="midleft",
    )


def draw_spinner(surface: pygame.Surface, centre: tuple[int, int], t: float) -> None:
    # Eight dots, the bright one going round: visible proof that the UI thread is alive.
    lead = int(t * 10) % 8
    for i in range(8):
        angle = i * math.pi / 4
        pos = (centre[0] + 10 * math.cos(angle), centre[1] + 10 * math.sin(angle))
        age = (lead - i) % 8
        level = max(60, 255 - age * 30)
        pygame.draw.circle(surface, (level, level, int(level * 0.6)), pos, 3)


def draw_status(surface: pygame.Surface, app: App) -> None:
    y = 508
    if app.worker is not None:
        worker = app.worker
        found = worker.moves
        draw_spinner(surface, (52, y + 9), app.elapsed)
        seconds = time.monotonic() - worker.started_at
        budget = f"{app.sims} sims/move" if app.solver in ("mcts", "gumbel") else "no simulations"
        line = f"Thinking... {len(found)} moves found in {seconds:.1f} s ({app.solver}, {budget}). Cancel or Esc stops."
        _text(surface, app.fonts["normal"], _fit(app.fonts["normal"], line, WIDTH - 110), (72, y), ACCENT)
        if found:
            _text(
                surface,
                app.fonts["small"],
                _fit(app.fonts["small"], format_moves(found), WIDTH - 110),
                (72, y + 22),
                DIM,
            )
    else:
        text, color = app.message
        _text(surface, app.fonts["normal"], _fit(app.fonts["normal"], text, WIDTH - 80), (40, y), color)


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
    _text(surface, small, _fit(small, line, panel.w - 32), (x, y), DIM)
    y += 26
    keys = "Keys: U R F L B D turn (Shift: inverse) | Enter: scramble | Space: solve | Esc: cancel | +/-: simulations"
    _text(surface, app.fonts["small"], keys, (panel.right - 12, panel.bottom - 8), DIM, anchor="bottomright")
    if not app.solution and app.worker is None:
        _text(surface, font, "Solution: press Solve (or Space)", (x, y), DIM)
        return
    if app.worker is not None:
        _text(surface, font, "Solution: searching...", (x, y), DIM)
        return
    parts = [f"{len(app.solution)} moves"]
    optimal = app.optimal_text()
    if optimal:
        parts.append(optimal)
    head = "Solution" + (f" ({', '.join(parts)})" if parts else "") + ":"
    x_words = _text(surface, font, head, (x, y)).right + 10
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
            cx = _text(surface, font, word, (cx, y), color).right + font.size(" ")[0]
        y += 28


# --------------------------------------------------------------------------- command line
def parse_args(argv=None) -> argparse.Namespace:
    p = Cli.ArgumentParser(
        description="PyGame GUI for the 2x2 (or 3x3) cube: manual moves, scrambles, and an animated solve.",
        epilog="Scripted example (no window needed): SDL_VIDEODRIVER=dummy python PyGame.py "
        "--scramble 6 --solve --screenshot docs/gui.png --quit-when-done",
    )
    add_puzzle_flag(p)
    add_checkpoint_flag(p)
    add_device_flag(p)
    p.add_argument(
        "--sims",
        type=Cli.simulations,
        default=DEFAULT_SIMS,
        help="MCTS simulations per move (adjustable in the window with -/+)",
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
    args = p.parse_args(argv)
    if args.max_steps is None:
        args.max_steps = DEFAULT_MAX_STEPS if args.puzzle == "2x2" else get_puzzle(args.puzzle).default_max_moves
    resolve_solver(args)  # no --solver: the puzzle's default solver and budgets
    problem = solver_puzzle_problem(args.solver, args.puzzle)
    if problem:
        p.error(problem)
    if args.sims < 1 or args.max_steps < 1:
        p.error("--sims and --max-steps must be at least 1")
    if args.scramble is not None:
        text = args.scramble.strip()
        if Cli.is_ascii_digits(text):  # not str.isdigit: it takes '²', which int() refuses
            if int(text) > MAX_SCRAMBLE:
                p.error(f"--scramble length is capped at {MAX_SCRAMBLE}")
            args.scramble = int(text)
        else:
            try:
                args.scramble = parse_moves(text)
            except ValueError as exc:
                p.error(f"--scramble: {exc}")
    return args


def main(argv=None) -> int:
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
