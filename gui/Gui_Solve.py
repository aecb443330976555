"""The GUI's searches, off the UI thread: ``solve_with_mcts`` (the original's function: greedy
MCTS one move at a time), ``SolveWorker`` (any solver of ``Solvers`` in a worker thread, with
progress and cancelling) and ``OptimalOracle`` (optional exact, or kociemba, lengths in a
daemon thread). Nothing here draws; importing it loads nothing.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from typing import Callable

import numpy as np

from cube.Puzzles import C_PUCT, Puzzle, get_puzzle
from cube.Solvers import SolverOptions, network_fns, solve_cubes
from MCTS_Core import NetworkEvaluator
from Rubik2x2Env import format_moves
from run.Cli import MAX_MOVES
from Self_Play import greedy_solve

DEFAULT_SIMS = 200  # the original's solve_with_mcts default
DEFAULT_MAX_STEPS = MAX_MOVES


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
    puzzle: Puzzle | str | None = None,
):
    """Greedy MCTS from ``env``'s cube (of ``puzzle``, default the 2x2), one search per move, as in
    the original.

    Copies the cube and its move history into a temporary masked env of the puzzle (``env`` is not
    changed) and plays ``Self_Play.greedy_solve`` (the solve ``test.py`` runs) until solved
    or ``max_steps`` moves. Returns
    ``(actions, formula)``. Beyond the original: ``cancel`` (a ``threading.Event``, checked
    between moves and before each network call; a cancelled solve returns the moves found
    so far) and ``on_move(action)`` (progress for the GUI).
    """
    puzzle = get_puzzle(puzzle)
    base = getattr(env, "unwrapped", env)
    work = puzzle.make_env(scramble_len=0, max_steps=max_steps, use_action_mask=True)
    work.set_state(np.asarray(base.cube), getattr(base, "last_action", None), getattr(base, "face_count", 0))
    # One evaluator for the whole solve: its cache of network outputs carries over between
    # moves (the tree itself is rebuilt every move, as in the original).
    network = NetworkEvaluator(model, device, game=puzzle)

    def evaluate(cubes):
        # Checking the flag before every network call too makes Cancel take effect within
        # milliseconds, even in a search of thousands of simulations.
        if cancel is not None and cancel.is_set():
            raise _Cancelled
        return network(cubes)

    actions: list[int] = []
    try:
        for action in greedy_solve(
            model, work, num_simulations, max_steps, device=device, c_puct=c_puct, evaluator=evaluate, game=puzzle
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
        self.solver, self.options = solver, options or SolverOptions()
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
            opts = self.options
            net_value, net_policy = network_fns(
                self.model, self.device, puzzle=self.puzzle, symmetries=opts.symmetries, precision=opts.precision
            )

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

        opts = dataclasses.replace(self.options, sims=self.num_simulations, max_moves=self.max_steps)
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
            if self.solver == "mcts":  # move by move, each move shown as soon as it is found
                env = self.puzzle.make_env(scramble_len=0)
                env.set_state(self.start_cube)
                actions, _ = solve_with_mcts(
                    env, self.model, self.device, self.num_simulations, self.max_steps,
                    cancel=self.cancel_event, on_move=self._on_move, puzzle=self.puzzle,
                    c_puct=self.options.c_puct,
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
            from cube.Kociemba_Solver import solve

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
