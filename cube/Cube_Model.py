"""The n x n x n cube as stickers and permutations: the one model behind the 2x2 and the 3x3.

Both cubes follow the same conventions, so they share every fact that does not depend on the
size, and derive the rest from one description of the sticker geometry:

* Faces ``U R F D L B`` are indices 0..5. A cube of size n is ``6 n^2`` stickers, sticker index
  ``face*n*n + row*n + col``. Solved: face f has colour f everywhere.
* Net layout: U above F (U's last row touches F), D below F (D's row 0 touches F),
  L F R B left to right, row 0 on top.
* Actions 0..11 = ``U U' R R' F F' L L' B B' D D'``: face ``a // 2``, inverse ``a ^ 1``.
  A move is a quarter turn of an outer layer, clockwise looking at the face from outside,
  applied as a sticker permutation ``new = old[perm]``.
* The mask rule, the scramble rule and move strings only see the 12 actions, so they are the
  same for every size and are defined here once.

``CubeModel(n)`` holds the permutations of size n and its batched helpers; ``CubeEnv`` is the
Gymnasium env of any size (``Rubik2x2Env`` and ``Rubik3x3Env`` are its two sizes). The size
modules add what only they have (the 2x2's whole-cube symmetries, say).
"""

from __future__ import annotations

import functools
import itertools
from typing import Iterable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from run.Input_Echo import shown

FACE_NAMES = "URFDLB"
NUM_FACES = 6
NUM_ACTIONS = 12
MOVE_NAMES = ("U", "U'", "R", "R'", "F", "F'", "L", "L'", "B", "B'", "D", "D'")
# Actions come in face pairs in the order U R F L B D, unlike the sticker faces (U R F D L B):
# ``ACTION_FACE[a // 2]`` is the sticker face that action ``a`` turns.
ACTION_FACE = (0, 1, 2, 4, 5, 3)
NO_ACTION = -1  # "no previous move" (fresh cube), used by the mask functions
KEY_STICKERS = 24  # stickers per int64 of a state key: 6**24 < 2**63


# --------------------------------------------------------------------------- geometry
def sticker_geometry(n: int, face: int, row: int, col: int) -> tuple[np.ndarray, np.ndarray]:
    """Position (cubie centre) and outward normal of one sticker of an ``n`` cube.

    x points right, y up, z towards the viewer (out of F); cubie coordinates run over
    ``-(n-1), -(n-1)+2, ..., n-1``, so integers for every n. The net layout fixes how rows and
    columns of each face map onto the cube.
    """
    m = n - 1
    a, b = 2 * col - m, m - 2 * row  # column left->right, row top->bottom
    table = {
        0: ((a, m, 2 * row - m), (0, 1, 0)),  # U: the last row touches F (z = m)
        1: ((m, b, -a), (1, 0, 0)),  # R: col 0 touches F
        2: ((a, b, m), (0, 0, 1)),  # F
        3: ((a, -m, m - 2 * row), (0, -1, 0)),  # D: row 0 touches F
        4: ((-m, b, a), (-1, 0, 0)),  # L: the last col touches F
        5: ((-a, b, -m), (0, 0, -1)),  # B: col 0 touches R
    }
    p, normal = table[face]
    return np.array(p), np.array(normal)


@functools.cache
def geometry(n: int) -> tuple[tuple[tuple[np.ndarray, np.ndarray], ...], dict]:
    """Position and normal of every sticker index of an ``n`` cube, and the index of a
    ``(position, normal)`` pair (tuples): a sticker is one face of one cubie."""
    per_face = n * n
    stickers = tuple(
        sticker_geometry(n, s // per_face, (s % per_face) // n, s % n) for s in range(NUM_FACES * per_face)
    )
    return stickers, {(tuple(p), tuple(normal)): s for s, (p, normal) in enumerate(stickers)}


def cubie_stickers(n: int) -> list[list[int]]:
    """The sticker indices of every cubie of an ``n`` cube that shows any (one list per cubie, in sticker
    order), cubies in the order of their positions: 3 stickers a corner, 2 an edge, 1 a centre."""
    stickers, _ = geometry(n)
    by_cubie: dict[tuple, list[int]] = {}
    for s, (position, _) in enumerate(stickers):
        by_cubie.setdefault(tuple(int(c) for c in position), []).append(s)
    return [group for _, group in sorted(by_cubie.items())]


def quarter_turn_perm(n: int, face: int, clockwise: bool) -> np.ndarray:
    """Permutation ``new = old[perm]`` of one quarter turn of the outer layer of ``face``."""
    stickers, index = geometry(n)
    axis = sticker_geometry(n, face, 0, 0)[1]
    # Clockwise seen from outside = -90 degrees about the outward axis (right-hand rule).
    angle = -np.pi / 2 if clockwise else np.pi / 2
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rot = np.rint(np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k).astype(int)
    perm = np.arange(len(stickers))
    for s, (p, normal) in enumerate(stickers):
        if p @ axis == n - 1:  # the sticker sits on the turning layer
            perm[index[(tuple(rot @ p), tuple(rot @ normal))]] = s
    return perm


def move_perms(n: int) -> np.ndarray:
    """``(12, 6 n^2)`` read-only: ``new = old[perms[a]]`` for action ``a``."""
    perms = np.stack(
        [quarter_turn_perm(n, ACTION_FACE[a // 2], clockwise=(a % 2 == 0)) for a in range(NUM_ACTIONS)]
    ).astype(np.intp)
    perms.setflags(write=False)
    return perms


def face_adjacent_pairs(n: int) -> np.ndarray:
    """``(6 * 2n(n-1), 2)``: sticker pairs on one face that share a side (rows, then columns):
    what seed 003's heuristic counts."""
    pairs = []
    for f in range(NUM_FACES):
        base = f * n * n
        pairs += [(base + r * n + c, base + r * n + c + 1) for r in range(n) for c in range(n - 1)]
        pairs += [(base + r * n + c, base + (r + 1) * n + c) for c in range(n) for r in range(n - 1)]
    return np.array(pairs, dtype=np.intp)


#: How many symmetries a cube has: the rotations and reflections of space that map it onto itself.
SYMMETRY_COUNT = 48


def renamed_moves(perms: np.ndarray, symmetry: np.ndarray) -> np.ndarray:
    """``(12,)``: for a whole-cube symmetry ``new = old[symmetry]`` of a cube with move permutations
    ``perms``, the action that does on the transformed cube what action ``a`` does on the original:
    ``sym(apply(s, a)) == apply(sym(s), renamed[a])`` (a colour renaming commutes with every move).

    ``sym(apply(s, a)) = s[move_a[symmetry]]`` and ``apply(sym(s), b) = s[symmetry[move_b]]``,
    so ``move_b = inverse[move_a[symmetry]]``: the face turn seen in the transformed frame.
    """
    inverse = np.argsort(symmetry)
    index = {m.tobytes(): a for a, m in enumerate(perms)}
    return np.array([index[inverse[m[symmetry]].tobytes()] for m in perms], dtype=np.intp)


@functools.cache
def symmetries(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 48 symmetries of an ``n`` cube that keep every distance: ``T_k(s) = colours[k][s[perms[k]]]``
    and ``T_k(apply(s, a)) == apply(T_k(s), move_map[k, a])`` (read-only ``(48, 6 n^2)``, ``(48, 6)`` int8,
    ``(48, 12)``).

    Symmetry ``k`` is one of the 48 rotations and reflections ``M`` of space that map the cube onto itself:
    the cube is turned (or mirrored) as a whole by ``M`` and its colours renamed so that each face's centre
    colour is that face's again. The result is the position conjugated by ``M``: a solution of ``s`` with
    every move renamed by ``move_map[k]`` solves ``T_k(s)``, so both are equally far from solved (a mirror
    turns each quarter turn into one the other way round). Symmetry 0 is the identity and 1 the left-right
    mirror; a network averaged over the first few of them (``Solver_Base.network_fns``) reads a state
    under several disguises.
    """
    stickers, index = geometry(n)
    normal_face = {tuple(sticker_geometry(n, f, 0, 0)[1]): f for f in range(NUM_FACES)}
    mirror = np.diag([-1, 1, 1])
    matrices = [np.eye(3, dtype=int), mirror]
    for order in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = np.zeros((3, 3), dtype=int)
            m[range(3), order] = signs
            if not any((m == seen).all() for seen in matrices):
                matrices.append(m)
    perms, colours, move_map = [], [], []
    for m in matrices:
        back = m.T  # the inverse of an orthogonal matrix
        perm = np.array([index[(tuple(back @ p), tuple(back @ normal))] for p, normal in stickers], dtype=np.intp)
        renaming = np.empty(NUM_FACES, dtype=np.int8)
        for normal, face in normal_face.items():
            renaming[normal_face[tuple(back @ np.array(normal))]] = face
        perms.append(perm)
        colours.append(renaming)
        move_map.append(renamed_moves(move_perms(n), perm))
    tables = np.stack(perms), np.stack(colours), np.array(move_map, dtype=np.intp)
    for table in tables:
        table.setflags(write=False)
    return tables


# --------------------------------------------------------------------------- action mask
def _build_mask_table() -> np.ndarray:
    """``table[last_action + 1, min(face_count, 2)]`` -> legal mask, the original's two rules."""
    table = np.ones((NUM_ACTIONS + 1, 3, NUM_ACTIONS), dtype=bool)
    for last in range(NUM_ACTIONS):
        for count in range(3):
            table[last + 1, count, last ^ 1] = False  # rule 1: no immediate inverse
            if count >= 2:  # rule 2: the face was turned twice or more in a row
                face = last // 2
                table[last + 1, count, 2 * face : 2 * face + 2] = False
    table.setflags(write=False)
    return table


_MASK_TABLE = _build_mask_table()


def legal_action_mask(last_action, face_count) -> np.ndarray:
    """Legal actions after ``last_action`` (``NO_ACTION``/None: none yet).

    ``face_count`` is how many times in a row the face of ``last_action`` has just been
    turned. Rules (as in the original): (1) the inverse of the last action is illegal;
    (2) after two or more consecutive turns of one face, both actions of that face are
    illegal. Works on scalars (-> ``(12,)``) and on arrays of any shape (-> ``(..., 12)``).
    This is the single definition of the rule, for every cube size; the envs, MCTS and the
    solvers all call it.
    """
    last = np.asarray(NO_ACTION if last_action is None else last_action, dtype=np.intp)
    count = np.minimum(np.asarray(face_count, dtype=np.intp), 2)
    return _MASK_TABLE[last + 1, count]


def next_face_count(last_action, face_count, action):
    """Consecutive-turn count of ``action``'s face after playing it (vectorised)."""
    same_face = (np.asarray(last_action) >= 0) & (np.asarray(last_action) // 2 == np.asarray(action) // 2)
    return np.where(same_face, np.asarray(face_count) + 1, 1)


def scramble_moves(rng: np.random.Generator, batch: int, k: int) -> np.ndarray:
    """``(batch, k)`` random actions; no action is followed by its inverse (seed rule)."""
    moves = np.empty((batch, k), dtype=np.intp)
    if k == 0:
        return moves
    moves[:, 0] = rng.integers(0, NUM_ACTIONS, size=batch)
    for i in range(1, k):
        # Draw among the 11 actions other than the inverse of the previous one.
        r = rng.integers(0, NUM_ACTIONS - 1, size=batch)
        inverse = moves[:, i - 1] ^ 1
        moves[:, i] = r + (r >= inverse)
    return moves


# --------------------------------------------------------------------------- move strings
def parse_moves(text: str | Sequence[str]) -> list[int]:
    """``"R U R' U'"`` -> action indices; ``R2`` is two turns. Unknown tokens raise ValueError
    (naming the token, shortened: ``Input_Echo.shown``)."""
    tokens = text.split() if isinstance(text, str) else list(text)
    actions: list[int] = []
    for tok in tokens:
        if tok in MOVE_NAMES:
            actions.append(MOVE_NAMES.index(tok))
        elif len(tok) == 2 and tok[1] == "2" and tok[0] in MOVE_NAMES:
            actions += [MOVE_NAMES.index(tok[0])] * 2
        else:
            raise ValueError(
                f"unknown move {shown(tok)}; valid moves are {' '.join(MOVE_NAMES)} "
                "(and U2 R2 F2 L2 B2 D2 for half turns)"
            )
    return actions


def format_moves(actions: Iterable[int]) -> str:
    """Action indices -> ``"R U R' U'"``."""
    return " ".join(MOVE_NAMES[int(a)] for a in actions)


# --------------------------------------------------------------------------- one size
class CubeModel:
    """The cube of size ``n``: its permutations and every helper on its sticker arrays.

    Single cubes keep the original's names and shapes (``(6, n, n)``); the ``batch_*``
    helpers work on ``(B, 6 n^2)`` arrays in one numpy call (no Python loop over B).
    """

    def __init__(self, n: int):
        if n < 2:
            raise ValueError(f"a cube has at least 2 stickers a side, got {n}")
        self.n = n
        self.face_size = n * n
        self.num_stickers = NUM_FACES * n * n
        self.obs_dim = self.num_stickers * NUM_FACES
        self.move_perms = move_perms(n)
        self.solved = np.repeat(np.arange(NUM_FACES, dtype=np.int8), self.face_size)
        self.solved.setflags(write=False)
        # State keys: a base-6 number per 24 stickers, over the stickers some move moves (a
        # 3x3's centres never move: its 48 others need two int64s, a 2x2's 24 one).
        self.moving = np.flatnonzero((self.move_perms != np.arange(self.num_stickers)).any(axis=0))
        self._key_parts = [self.moving[i : i + KEY_STICKERS] for i in range(0, len(self.moving), KEY_STICKERS)]
        self._key_all = len(self._key_parts) == 1 and len(self.moving) == self.num_stickers
        self._pow6 = 6 ** np.arange(KEY_STICKERS, dtype=np.int64)
        #: dtype of ``batch_state_keys``: int64, or one int64 field per 24 stickers (exact,
        #: compared field by field: np.unique, sorting and searchsorted work on it).
        self.key_dtype = (
            np.dtype(np.int64)
            if len(self._key_parts) == 1
            else np.dtype([(f"k{i}", np.int64) for i in range(len(self._key_parts))])
        )
        self._eye = np.eye(NUM_FACES, dtype=np.float32)

    # -- single cube API (the seed's names) ---------------------------------------------
    def solved_cube(self) -> np.ndarray:
        """The solved cube as a ``(6, n, n)`` int8 array."""
        return self.solved.reshape(NUM_FACES, self.n, self.n).copy()

    def apply_move_idx(self, cube: np.ndarray, idx: int) -> np.ndarray:
        """A new cube (same shape and dtype) after action ``idx``; any sticker labels work."""
        cube = np.asarray(cube)
        if not 0 <= int(idx) < NUM_ACTIONS:
            raise ValueError(f"action must be an integer in 0..11, got {idx!r}")
        return cube.reshape(-1)[self.move_perms[int(idx)]].reshape(cube.shape)

    def apply_moves(self, cube: np.ndarray, actions: Iterable[int]) -> np.ndarray:
        """A new cube after a sequence of actions."""
        for a in actions:
            cube = self.apply_move_idx(cube, a)
        return cube

    def is_solved(self, cube: np.ndarray) -> bool:
        """True when every face is one colour."""
        return bool(self.batch_is_solved(np.asarray(cube).reshape(1, self.num_stickers))[0])

    def encode_onehot(self, cube: np.ndarray) -> np.ndarray:
        """The ``(6 n^2 * 6,)`` float32 observation: every sticker one-hot over 6 colours."""
        return self.batch_onehot(np.asarray(cube).reshape(1, self.num_stickers))[0]

    def scramble(self, cube: np.ndarray, k: int = 8, rng: np.random.Generator | None = None) -> np.ndarray:
        """``k`` random moves from ``cube`` (the seed's default 8); never the other direction of the face just
        turned."""
        rng = np.random.default_rng() if rng is None else rng
        return self.apply_moves(np.asarray(cube), scramble_moves(rng, 1, k)[0])

    def move_funcs(self) -> dict:
        """Seed-compatible table: ``MOVE_FUNCS[idx] == (name, function(cube) -> cube)``."""

        def make(a: int):
            def move(cube: np.ndarray) -> np.ndarray:
                return self.apply_move_idx(cube, a)

            move.__name__ = f"move_{MOVE_NAMES[a].replace(chr(39), '_prime')}"
            return move

        return {a: (MOVE_NAMES[a], make(a)) for a in range(NUM_ACTIONS)}

    # -- batched API, (B, 6 n^2) arrays ---------------------------------------------------
    def batch_apply_moves(self, cubes: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Apply ``actions[i]`` to ``cubes[i]`` for every row."""
        return np.take_along_axis(cubes, self.move_perms[actions], axis=1)

    def batch_is_solved(self, cubes: np.ndarray) -> np.ndarray:
        """``(B,)`` bool: every face uniform."""
        faces = cubes.reshape(-1, NUM_FACES, self.face_size)
        return (faces == faces[:, :, :1]).all(axis=(1, 2))

    def uniform_faces(self, cubes: np.ndarray) -> np.ndarray:
        """``(B,)``: how many faces of each cube show one colour."""
        faces = cubes.reshape(-1, NUM_FACES, self.face_size)
        return (faces == faces[:, :, :1]).all(axis=2).sum(axis=1)

    def batch_onehot(self, cubes: np.ndarray) -> np.ndarray:
        """``(B, 6 n^2 * 6)`` float32 observations."""
        return self._eye[cubes.reshape(-1, self.num_stickers)].reshape(-1, self.obs_dim)

    def batch_state_keys(self, cubes: np.ndarray) -> np.ndarray:
        """``(B,)`` exact keys of ``key_dtype`` (a cache and duplicate key): the moving stickers
        as base-6 numbers, 24 stickers per int64 (exact: 6**24 < 2**63)."""
        cubes = cubes.reshape(-1, self.num_stickers)
        if self._key_all:
            return cubes.astype(np.int64) @ self._pow6
        parts = [cubes[:, part].astype(np.int64) @ self._pow6[: len(part)] for part in self._key_parts]
        if len(parts) == 1:
            return parts[0]
        keys = np.empty(len(cubes), dtype=self.key_dtype)
        for i, part in enumerate(parts):
            keys[f"k{i}"] = part
        return keys

    def batch_scramble(self, rng: np.random.Generator, batch: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``batch`` scrambled cubes ``(B, 6 n^2)`` int8 of ``k`` moves each, and the moves ``(B, k)``."""
        moves = scramble_moves(rng, batch, k)
        cubes = np.tile(self.solved, (batch, 1))
        for i in range(k):
            cubes = self.batch_apply_moves(cubes, moves[:, i])
        return cubes, moves

    def as_ascii(self, cube: np.ndarray) -> str:
        """The cube net in text, each sticker shown as the face letter of its colour."""
        n = self.n
        s = [FACE_NAMES[int(c)] if 0 <= int(c) < NUM_FACES else "?" for c in np.asarray(cube).reshape(-1)]

        def row(face: int, r: int) -> str:
            return " ".join(s[face * self.face_size + r * n + c] for c in range(n))

        pad = " " * (2 * n + 1)  # the width of one face row and the gap: U and D sit above and below F
        lines = [pad + row(0, r) for r in range(n)]
        lines += ["  ".join(row(f, r) for f in (4, 2, 1, 5)) for r in range(n)]
        lines += [pad + row(3, r) for r in range(n)]
        return "\n".join(lines)


# --------------------------------------------------------------------------- the env
class CubeEnv(gym.Env):
    """The Gymnasium env of a cube of any size: the logic of ``Rubik2x2Env`` and ``Rubik3x3Env``
    (their docstrings are the manuals). A subclass sets ``model`` (a ``CubeModel``)."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}
    model: CubeModel

    def __init__(
        self, scramble_len: int = 4, max_steps: int = 100, use_action_mask: bool = True, render_mode: str | None = None
    ):
        super().__init__()
        if scramble_len < 0 or max_steps < 1:
            raise ValueError("scramble_len must be >= 0 and max_steps >= 1")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.scramble_len = scramble_len
        self.max_steps = max_steps
        self.use_action_mask = use_action_mask
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.model.obs_dim,), dtype=np.float32)
        self.cube = self.model.solved_cube()
        self.steps = 0
        self._last_action: int | None = None
        self._last_face_count = 0

    # -- state helpers -------------------------------------------------------
    @property
    def stickers(self) -> np.ndarray:
        """The current cube as a flat sticker array (a view)."""
        return self.cube.reshape(self.model.num_stickers)

    @property
    def last_action(self) -> int:
        """The last action played (``NO_ACTION`` = -1 after a reset)."""
        return NO_ACTION if self._last_action is None else self._last_action

    @property
    def face_count(self) -> int:
        """How many times in a row the last action's face has just been turned."""
        return self._last_face_count

    def _legal_action_mask(self) -> np.ndarray:
        if not self.use_action_mask:
            return np.ones(NUM_ACTIONS, dtype=bool)
        return legal_action_mask(self._last_action, self._last_face_count).copy()

    def _info(self) -> dict:
        return {
            "action_mask": self._legal_action_mask(),
            "solved": self.model.is_solved(self.cube),
            "steps": self.steps,
        }

    def set_state(self, cube: np.ndarray, last_action: int | None = None, face_count: int = 0) -> None:
        """Put the env in a given cube and move history (used by the GUI and tools)."""
        cube = np.asarray(cube)
        n = self.model.n
        if cube.size != self.model.num_stickers:
            raise ValueError(f"a cube has {self.model.num_stickers} stickers, got an array of shape {cube.shape}")
        self.cube = cube.reshape(NUM_FACES, n, n).astype(np.int8).copy()
        self._last_action = None if last_action is None or last_action < 0 else int(last_action)
        self._last_face_count = face_count if self._last_action is not None else 0
        self.steps = 0

    # -- gymnasium API -------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"cube", "scramble", "scramble_len"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; use 'cube', 'scramble' or 'scramble_len'")
        scramble_text = ""
        if "cube" in options:
            self.set_state(options["cube"])
        else:
            if "scramble" in options:
                moves = options["scramble"]
                moves = parse_moves(moves) if isinstance(moves, str) else [int(m) for m in moves]
            else:
                k = int(options.get("scramble_len", self.scramble_len))
                moves = scramble_moves(self.np_random, 1, k)[0].tolist()
            self.set_state(self.model.apply_moves(self.model.solved_cube(), moves))
            scramble_text = format_moves(moves)
        info = self._info()
        info["scramble"] = scramble_text
        return self.model.encode_onehot(self.cube), info

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"invalid action {action!r}: actions are integers 0..11 ({' '.join(MOVE_NAMES)})")
        a = int(action)
        if not self._legal_action_mask()[a]:
            raise ValueError(
                f"action {a} ({MOVE_NAMES[a]}) is masked after {MOVE_NAMES[self._last_action]} "
                f"(turned {self._last_face_count}x in a row); check info['action_mask']"
            )
        self.cube = self.model.apply_move_idx(self.cube, a)
        self._last_face_count = int(
            next_face_count(NO_ACTION if self._last_action is None else self._last_action, self._last_face_count, a)
        )
        self._last_action = a
        self.steps += 1
        info = self._info()
        terminated = info["solved"]
        truncated = self.steps >= self.max_steps
        if self.render_mode == "human":
            print(self.as_ascii(), end="\n\n")
        return self.model.encode_onehot(self.cube), 0.0, terminated, truncated, info

    def as_ascii(self) -> str:
        return self.model.as_ascii(self.cube)

    def render(self):
        if self.render_mode == "ansi":
            return self.as_ascii()
        if self.render_mode == "human":
            print(self.as_ascii())
        return None

    def get_action_meanings(self) -> list[str]:
        return list(MOVE_NAMES)
