"""Exact distances (quarter-turn metric) of all 3,674,160 positions of the 2x2x2 cube.

Beyond the original: an oracle for evaluation and tests. A breadth-first search from the solved
cube fills a table of the optimal number of quarter turns for every position; any cube is
then answered by one table lookup, and a shortest solution by greedy descent.

Representation
--------------
* A 2x2 cube has no centres, so a position only matters up to whole-cube orientation. We
  fix the D-L-B corner: among the 24 whole-cube rotations exactly one puts that corner in
  its home place and twist, and after it only the U, R and F turns are needed (L is R'
  followed by a rotation, and so on).
* Index = ``perm * 729 + ori``: ``perm`` (0..5039) is the lexicographic rank of the
  permutation of the other 7 corners, ``ori`` (0..728) the base-3 twists of the first 6 of
  them (the 7th follows: the twists of a real cube sum to 0 mod 3). The twist of a corner
  is which of its 3 stickers (in a fixed cyclic order, U/D sticker first) shows its U/D
  colour. The solved cube is index 0.
* Everything (corner stickers, their cyclic order, the 24 rotations, the move tables on
  the coordinates) is derived from ``Rubik2x2Env.MOVE_PERMS``; the cube physics exist
  only there.
* The table (uint8, 3.6 MB) is cached in ``<repo>/.cache/optimal_qtm_distances.npy``, or
  in ``$RUBIK2X2_CACHE_DIR``. It is loaded on first use and checked in full against one
  breadth-first step (``_breadth_first_problem``); a missing or wrong table is rebuilt, never
  used. Importing this module does no work and writes nothing.

Command line: ``python Optimal_Solver.py --build`` and
``python Optimal_Solver.py --scramble "R U F'"`` (see ``--help``).
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a signal during the slow imports below ends the script as at any moment
    from run import Process_Signals

    Process_Signals.start_script()

import functools
import itertools
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from Rubik2x2Env import (
    ACTION_FACE,
    CANONICAL_SLOT_COLOURS,
    CANONICAL_SLOT_READS,
    MOVE_PERMS,
    NUM_STICKERS,
    ROTATION_PERMS,
    SOLVED_STICKERS,
    format_moves,
    parse_moves,
)
from run import Cli
from run.Run_IO import OutputError, atomic_write, not_a_file

NUM_PERMS = 5040  # 7! arrangements of the 7 free corners
NUM_ORIS = 729  # 3**6 twists (the 7th corner's twist is implied)
NUM_STATES = NUM_PERMS * NUM_ORIS  # 3,674,160
MAX_DISTANCE = 14  # God's number of the 2x2 in the quarter-turn metric
#: Positions per distance (QTM, up to whole-cube orientation); the known result the build
#: and the cache are checked against.
EXPECTED_COUNTS = (1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280, 276)
CACHE_ENV = "RUBIK2X2_CACHE_DIR"
CACHE_NAME = "optimal_qtm_distances.npy"
UNSEEN = 255  # distance of a position the BFS has not reached yet
_CHUNK = 1 << 16  # cubes per vectorised lookup step
U_FACE, R_FACE, F_FACE, D_FACE, L_FACE, B_FACE = range(6)  # sticker faces


# --------------------------------------------------------------------------- derived cube model
@dataclass(frozen=True)
class _Model:
    rotations: np.ndarray  # [24, 24] whole-cube rotations as sticker permutations, [0] = identity
    home: np.ndarray  # [3] stickers of the fixed D-L-B corner (D, L, B)
    corners: np.ndarray  # [7, 3] stickers of the 7 free corners, U/D sticker first, same cyclic sense
    triples: np.ndarray  # [7, 3] colours of each free corner cubie, read in that order when solved
    cubie_of_code: np.ndarray  # [216] colour triple c0*36+c1*6+c2 -> cubie 0..6, or -1
    perm_move: np.ndarray  # [3, 5040] perm coordinate after U, R, F
    ori_move: np.ndarray  # [3, 729] ori coordinate after U, R, F
    perms: np.ndarray  # [5040, 7] the permutation of each rank (lexicographic)


def _compose(*perms: np.ndarray) -> np.ndarray:
    """One sticker permutation doing ``perms`` in order (``new = old[p]`` convention)."""
    out = np.arange(NUM_STICKERS)
    for p in perms:
        out = out[p]
    return out


def _action(face: int, clockwise: bool = True) -> int:
    return 2 * ACTION_FACE.index(face) + (0 if clockwise else 1)


@functools.cache
def _model() -> _Model:
    """Derive the corner model from the move permutations (once, on first use)."""
    # A quarter turn moves every sticker of its layer (no centres), so the 3 faces whose
    # turns move a sticker name its corner.
    moved_by = [frozenset(f for f in range(6) if MOVE_PERMS[_action(f)][s] != s) for s in range(NUM_STICKERS)]

    rotations = ROTATION_PERMS  # the 24 whole-cube rotations, derived once in Rubik2x2Env

    # The home corner's stickers in the order D, L, B (Rubik2x2Env's canonical slot); carrying
    # that order to every corner with rotations (which keep handedness) gives all corners one
    # cyclic sense. Under ``new = old[r]`` the sticker at position p moves to position argsort(r)[p].
    dlb = frozenset((D_FACE, L_FACE, B_FACE))
    home = CANONICAL_SLOT_READS[0]
    orders = {}
    for r in rotations:
        order = np.argsort(r)[home]
        if order[0] // 4 in (U_FACE, D_FACE):  # keep the U/D sticker first
            orders[moved_by[order[0]]] = order
    corners = np.array([orders[k] for k in sorted(orders, key=lambda k: orders[k][0]) if k != dlb])

    triples = SOLVED_STICKERS[corners].astype(np.intp)
    cubie_of_code = np.full(216, -1, dtype=np.intp)
    cubie_of_code[triples @ (36, 6, 1)] = np.arange(7)

    perms = np.array(list(itertools.permutations(range(7))), dtype=np.intp)
    partial = _Model(rotations, home, corners, triples, cubie_of_code, np.empty(0), np.empty(0), perms)

    # Move tables: turn cubes built from each coordinate value and read the coordinate back.
    # A twist moves with the sticker, so the new ori does not depend on the permutation.
    all_oris = _unrank_oris(np.arange(NUM_ORIS))
    solved_perm = np.zeros(NUM_ORIS, dtype=np.intp)
    perm_cubes = _stickers(partial, np.arange(NUM_PERMS), np.zeros((NUM_PERMS, 7), dtype=np.intp))
    ori_cubes = _stickers(partial, solved_perm, all_oris)
    perm_move = np.empty((3, NUM_PERMS), dtype=np.intp)
    ori_move = np.empty((3, NUM_ORIS), dtype=np.intp)
    for i, face in enumerate((U_FACE, R_FACE, F_FACE)):  # U, R, F never move the D-L-B corner
        perm_move[i] = _read(partial, perm_cubes[:, MOVE_PERMS[_action(face)]])[0]
        ori_move[i] = _ori_rank(_read(partial, ori_cubes[:, MOVE_PERMS[_action(face)]])[1])
    return _Model(rotations, home, corners, triples, cubie_of_code, perm_move, ori_move, perms)


@functools.cache
def quarter_turn_maps() -> tuple[np.ndarray, np.ndarray]:
    """The 6 quarter turns U U' R R' F F' (actions 0-5) of a cube with the D-L-B corner home,
    as maps of its coordinates: ``perm (6, 5040)`` and ``ori (6, 729)``, each coordinate after
    each turn (a turn moves the two independently)."""
    m = _model()
    perm_maps, ori_maps = [], []
    for face in range(3):  # U, R, F, clockwise in the tables
        for turns in (1, 3):  # the turn, then its inverse (three turns)
            p, o = np.arange(NUM_PERMS), np.arange(NUM_ORIS)
            for _ in range(turns):
                p, o = m.perm_move[face, p], m.ori_move[face, o]
            perm_maps.append(p)
            ori_maps.append(o)
    return np.stack(perm_maps), np.stack(ori_maps)


def _unrank_oris(ori: np.ndarray) -> np.ndarray:
    """``[B]`` ori coordinates -> ``[B, 7]`` twists (the 7th makes the sum 0 mod 3)."""
    twists = (ori[:, None] // 3 ** np.arange(5, -1, -1)) % 3
    return np.concatenate([twists, (-twists.sum(1, keepdims=True)) % 3], axis=1)


def _ori_rank(twists: np.ndarray) -> np.ndarray:
    return twists[:, :6] @ 3 ** np.arange(5, -1, -1)


def _perm_rank(perm: np.ndarray) -> np.ndarray:
    """Lexicographic rank of each row of a ``[B, 7]`` permutation (Lehmer code)."""
    rank = np.zeros(len(perm), dtype=np.intp)
    for i in range(7):
        smaller_after = (perm[:, i + 1 :] < perm[:, i : i + 1]).sum(1)
        rank = rank * (7 - i) + smaller_after
    return rank


def _stickers(m: _Model, perm_rank: np.ndarray, twists: np.ndarray) -> np.ndarray:
    """``[B]`` perm ranks and ``[B, 7]`` twists -> ``[B, 24]`` int8 cubes, D-L-B corner home."""
    cubes = np.empty((len(perm_rank), NUM_STICKERS), dtype=np.int8)
    cubes[:, m.home] = SOLVED_STICKERS[m.home]
    cubie = m.perms[perm_rank]  # [B, 7] which cubie sits at each free corner
    # Twist t: the cubie's U/D colour (its colour 0) shows at slot t of the corner, its
    # colour j at slot (t + j) % 3.
    slot = (np.arange(3)[None, None, :] + twists[:, :, None]) % 3  # [B, 7, 3]
    positions = m.corners[np.arange(7)[None, :, None], slot]
    rows = np.arange(len(cubes))[:, None, None]
    cubes[rows, positions] = m.triples[cubie]
    return cubes


def _cubes_at(index: np.ndarray) -> np.ndarray:
    """``[B]`` position indices -> ``[B, 24]`` int8 cubes, D-L-B corner home."""
    perm, ori = np.divmod(index, NUM_ORIS)
    return _stickers(_model(), perm, _unrank_oris(ori))


def _read(m: _Model, cubes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``[B, 24]`` cubes with the D-L-B corner home -> (perm rank, ``[B, 7]`` twists, ok).

    ``ok`` is False where a corner's colours are not a real corner read in the right
    cyclic sense, or where a corner appears twice.
    """
    colours = cubes[:, m.corners].astype(np.intp)  # [B, 7, 3]
    is_ud = (colours == U_FACE) | (colours == D_FACE)
    twists = np.argmax(is_ud, axis=2)
    # Read each corner from its U/D colour on, so a real corner gives its solved triple.
    start = np.take_along_axis(colours, (twists[:, :, None] + np.arange(3)) % 3, axis=2)
    cubie = m.cubie_of_code[start @ (36, 6, 1)]
    ok = (cubie >= 0).all(1) & (is_ud.sum(2) == 1).all(1)
    ok &= (np.sort(cubie, axis=1) == np.arange(7)).all(1)
    return _perm_rank(np.where(ok[:, None], cubie, np.arange(7))), twists, ok


# --------------------------------------------------------------------------- BFS and cache
def build_table() -> np.ndarray:
    """Breadth-first search over all positions: ``[3674160]`` uint8 distances (QTM)."""
    m = _model()
    dist = np.full(NUM_STATES, UNSEEN, dtype=np.uint8)
    dist[0] = 0
    frontier = np.array([0], dtype=np.intp)
    for d in range(MAX_DISTANCE + 1):
        perm, ori = np.divmod(frontier, NUM_ORIS)
        # Quarter turns and their inverses: U' = U U U, so the three U, R, F turns applied
        # once or three times give the 6 moves without separate tables.
        for face in range(3):
            p, o = perm, ori
            for turns in range(3):
                p, o = m.perm_move[face, p], m.ori_move[face, o]
                if turns == 1:
                    continue  # a half turn is two moves, not a neighbour
                nxt = p * NUM_ORIS + o
                nxt = nxt[dist[nxt] == UNSEEN]
                dist[nxt] = d + 1
        frontier = np.flatnonzero(dist == d + 1)
        if len(frontier) == 0:
            break
    return dist


def _problem(dist) -> str | None:
    """Why a loaded table is unusable, or None when it is the right table."""
    if not isinstance(dist, np.ndarray) or dist.dtype != np.uint8 or dist.shape != (NUM_STATES,):
        return "wrong dtype or shape"
    counts = np.bincount(dist, minlength=256)
    if tuple(counts[: len(EXPECTED_COUNTS)]) != EXPECTED_COUNTS or dist[0] != 0:
        return "wrong distance counts"
    return _breadth_first_problem(dist)


def _breadth_first_problem(dist: np.ndarray) -> str | None:
    """Why ``dist`` (the right counts, the solved cube alone at 0) is not the breadth-first
    distance table, or None: the whole table checked against one BFS step in about a tenth
    of a second. No move may change a distance by more than one, so no entry exceeds its true
    distance (a shortest path from solved raises it one at a time); every position but the
    solved one needs a neighbour one closer, so no entry is below it (descending from there
    reaches 0, the solved cube, in that many moves). Both hold only for the exact table."""
    grid = dist.reshape(NUM_PERMS, NUM_ORIS).astype(np.int16)
    has_closer = np.zeros(grid.shape, dtype=bool)
    has_closer[0, 0] = True  # the solved cube
    for perm_map, ori_map in zip(*quarter_turn_maps()):
        step = grid[np.ix_(perm_map, ori_map)] - grid  # (5040, 729): the distance change of this move
        if np.abs(step).max() > 1:
            return "distance that one move changes by more than one"
        has_closer |= step == -1
    if not has_closer.all():
        return "position with no neighbour one move closer"
    return None


def default_cache_path() -> Path:
    """``$RUBIK2X2_CACHE_DIR/optimal_qtm_distances.npy``, else ``<repo>/.cache/...``."""
    folder = os.environ.get(CACHE_ENV) or Path(__file__).resolve().parent / ".cache"
    return Path(folder) / CACHE_NAME


def load_or_build(path: Path | None = None, rebuild: bool = False, must_save: bool = False) -> tuple[np.ndarray, bool]:
    """The distance table from ``path`` (default cache), rebuilt and saved if missing or
    damaged. Returns ``(table, built)``. A table that cannot be saved is one line on stderr
    (the solver works, it rebuilds the table next time); with ``must_save`` an OutputError."""
    path = default_cache_path() if path is None else Path(path)
    if not rebuild and not_a_file(path) is None:  # never opens a FIFO (it would wait for a writer)
        try:
            dist = np.load(path, allow_pickle=False)
            if _problem(dist) is None:
                return dist, False
        except (OSError, ValueError, EOFError):
            pass  # missing or unreadable: rebuild below
    dist = build_table()
    problem = _problem(dist)
    if problem is not None:  # a bug in the model, not a bad file
        raise RuntimeError(f"the breadth-first search produced a {problem}")
    try:
        atomic_write(path, lambda f: np.save(f, dist, allow_pickle=False))
    except OutputError as exc:  # a read-only place still gets a working solver, just slower next time
        if must_save:
            raise
        print(f"note: the distance table is not cached: {exc}", file=sys.stderr)
    return dist, True


# --------------------------------------------------------------------------- the solver
def _as_batch(cubes) -> np.ndarray:
    cubes = np.asarray(cubes)
    if cubes.size % NUM_STICKERS or not np.issubdtype(cubes.dtype, np.integer):
        raise ValueError(
            f"cubes must be integer arrays of 24 stickers (or (6, 2, 2)), got shape {cubes.shape} and dtype {cubes.dtype}"  # noqa: E501
        )
    return cubes.reshape(-1, NUM_STICKERS)


class OptimalSolver:
    """Optimal distances and solutions of the 2x2 cube (QTM, any whole-cube orientation).

    The table is loaded (or built, about a second) on first use, from ``cache_path`` or the
    default cache. Cubes are 24 sticker colours 0..5 (or ``(6, 2, 2)``) in the project's
    convention; invalid cubes raise ``ValueError``.
    """

    def __init__(self, cache_path: str | os.PathLike | None = None):
        self.cache_path = default_cache_path() if cache_path is None else Path(cache_path)
        self._table: np.ndarray | None = None
        self._at: dict[int, np.ndarray] = {}  # distance -> indices of its positions

    @property
    def table(self) -> np.ndarray:
        """``[3674160]`` uint8 distances by position index (loaded on first use)."""
        if self._table is None:
            self._table, _ = load_or_build(self.cache_path)
        return self._table

    def index(self, cubes) -> np.ndarray:
        """``[B]`` position indices of ``[B, 24]`` cubes, whatever their orientation."""
        cubes = _as_batch(cubes)
        # Chunks bound the [chunk, 24, 6]-sized temporaries of huge batches.
        return np.concatenate([self._index(cubes[i : i + _CHUNK]) for i in range(0, max(len(cubes), 1), _CHUNK)])

    @staticmethod
    def _index(cubes: np.ndarray) -> np.ndarray:
        m = _model()

        def check(ok: np.ndarray, why: str) -> None:
            bad = np.flatnonzero(~ok)
            if len(bad):
                who = "the cube" if len(cubes) == 1 else f"cube {bad[0]} of the batch"
                raise ValueError(f"{who} is invalid: {why}")

        check(
            ((cubes[:, :, None] == np.arange(6)).sum(1) == 4).all(1),
            "each colour 0..5 must appear on exactly 4 stickers",
        )
        # The one rotation that brings the D-L-B cubie home, with D colour down.
        match = (cubes[:, CANONICAL_SLOT_READS] == CANONICAL_SLOT_COLOURS).all(2)  # [B, 24]
        check(match.any(1), "no corner shows the D, L, B colours in the order of a real cube")
        rot = m.rotations[np.argmax(match, axis=1)]
        perm, twists, ok = _read(m, np.take_along_axis(cubes, rot, axis=1))
        check(ok, "its corners are not the 8 corners of a real cube")
        check(twists.sum(1) % 3 == 0, "it has a twisted corner, so no sequence of turns solves it")
        return perm * NUM_ORIS + _ori_rank(twists)

    def batch_distance(self, cubes) -> np.ndarray:
        """``[B]`` int64 optimal number of quarter turns of each ``[B, 24]`` cube."""
        return self.table[self.index(cubes)].astype(np.int64)

    def distance(self, cube) -> int:
        """Optimal number of quarter turns to solve ``cube`` (0 for any solved orientation)."""
        cube = np.asarray(cube)
        if cube.size != NUM_STICKERS:
            raise ValueError(f"a cube has 24 stickers, got an array of shape {cube.shape}")
        return int(self.batch_distance(cube)[0])

    def solve(self, cube) -> list[int]:
        """A shortest solution: action indices 0..11 (``U U' R R' F F' L L' B B' D D'``)
        applied to ``cube`` as given. Greedy descent: at each step the lowest action whose
        result is one move closer."""
        cube = np.asarray(cube).reshape(-1)
        d = self.distance(cube)
        moves: list[int] = []
        for _ in range(d):
            children = cube[MOVE_PERMS]  # [12, 24]: every move applied to the cube
            a = int(np.flatnonzero(self.batch_distance(children) == d - 1)[0])
            moves.append(a)
            cube, d = children[a], d - 1
        return moves

    def distance_counts(self) -> list[int]:
        """Number of positions at each distance 0..14 (up to whole-cube orientation)."""
        return np.bincount(self.table, minlength=MAX_DISTANCE + 1)[: MAX_DISTANCE + 1].tolist()

    def count_at_distance(self, d: int) -> int:
        """Number of positions at distance ``d`` (0 outside 0..14)."""
        return self.distance_counts()[d] if 0 <= d <= MAX_DISTANCE else 0

    def random_cubes(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``(n, 24)`` int8 cubes drawn uniformly (with replacement) from all 3,674,160
        positions, in the orientation with the D-L-B corner home."""
        return _cubes_at(rng.integers(0, NUM_STATES, n))

    def random_cubes_at_distance(self, rng: np.random.Generator, d: int, n: int, replace: bool = False) -> np.ndarray:
        """``(n, 24)`` int8 cubes drawn uniformly among the positions at distance ``d``.

        Without ``replace`` the cubes are distinct positions, so ``n`` may not exceed
        ``count_at_distance(d)`` (only 276 positions are at distance 14); with
        ``replace=True`` each cube is an independent uniform draw. Cubes come in the
        orientation with the D-L-B corner home.
        """
        count = self.count_at_distance(d)
        if count == 0 or (n > count and not replace):
            raise ValueError(
                f"cannot draw {n} distinct positions at distance {d}: there are {count} (pass replace=True to draw with replacement)"  # noqa: E501
            )
        if d not in self._at:
            self._at[d] = np.flatnonzero(self.table == d)
        return _cubes_at(rng.choice(self._at[d], size=n, replace=replace))


@functools.cache
def get_solver() -> OptimalSolver:
    """The shared solver on the default cache (its table is loaded on first use)."""
    return OptimalSolver()


# --------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    parser = Cli.ArgumentParser(
        description="Optimal (quarter-turn) distances and solutions of the 2x2x2 cube. It draws nothing at random: "
        "no --seed."
    )
    parser.add_argument(
        "--build",
        action="store_true",
        help="rebuild the distance table by breadth-first search, check it and save it to the cache",
    )
    parser.add_argument(
        "--scramble",
        metavar="MOVES",
        help='print the optimal length and a shortest solution of this scramble, e.g. "R U F\'"',
    )
    parser.add_argument(
        "--cache",
        type=Cli.nonempty_path,
        metavar="PATH",
        help=f"table file (default: ${CACHE_ENV}/{CACHE_NAME}, else <repo>/.cache/{CACHE_NAME})",
    )
    args = parser.parse_args(argv)
    if not args.build and args.scramble is None:
        parser.error("give --build and/or --scramble MOVES")
    try:  # before the table is built or loaded: a bad scramble costs nothing
        moves = None if args.scramble is None else parse_moves(args.scramble)
    except ValueError as exc:
        parser.error(f"--scramble: {exc}")
    solver = OptimalSolver(args.cache)
    try:
        if args.build:
            start = time.perf_counter()
            solver._table, _ = load_or_build(solver.cache_path, rebuild=True, must_save=True)
            print(
                f"built the table of {NUM_STATES:,} positions in {time.perf_counter() - start:.1f} s: {solver.cache_path}"  # noqa: E501
            )
            for d, c in enumerate(solver.distance_counts()):
                print(f"  distance {d:2d}: {c:9,d} positions")
        if moves is not None:
            cube = SOLVED_STICKERS[_compose(*(MOVE_PERMS[a] for a in moves))]
            solution = solver.solve(cube)
            print(f"scramble: {format_moves(moves) or '(none)'}")
            print(f"optimal length: {len(solution)} quarter turns")
            print(f"solution: {format_moves(solution) or '(already solved)'}")
    except (ValueError, OutputError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
