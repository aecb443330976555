"""Every one of the 3,674,160 positions, played by the greedy solver at table speed
(``evaluate.py --all-positions``).

The greedy solver plays, from each cube, the legal move whose child the network values
most (a solved child is worth 1). Played on all positions one network call per child,
that is about 500 million evaluations; but a network that canonicalises orientations
(``PolicyValueNet(canonical_orientation=True)`` or ``canonical_symmetry=True``) gives every
orientation of a position the same value, so one evaluation per position is enough: the
values go into a table indexed like ``Optimal_Solver`` (D-L-B corner home) and the games are
played by table lookups.

The games themselves are played in the solver's frame, so that the move names and the
action mask (no inverse of the last move, no third turn of a face) are exactly the
solver's. A cube in that frame is kept as ``(index, rotation)``: the position's index and
the whole-cube rotation that turns its D-L-B-home cube into the cube on the table
(``batch_rotate(cube_at(index), rotation)``). A move ``a`` on such a cube is a U, R or F
turn ``c`` of the D-L-B-home cube followed by a new rotation (an L turn is an R turn of the
position, seen from a turned cube); ``_frame_tables`` finds ``c`` and the new rotation for
every (rotation, move) by trying them all, and the tests check the walk against the sticker
model.

``symmetry_classes`` numbers the positions up to the 48 symmetries of the cube (77,802 classes),
as a ``canonical_symmetry`` network reduces them: such a network is read once per class, here and
in ``Value_Sweep``'s sweeps. The tables are cached beside the optimal solver's.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from cube.Puzzles import value_as_moves
from engine.Value_Scale import greedy_choice
from Optimal_Solver import NUM_ORIS, NUM_STATES, OptimalSolver, _cubes_at, default_cache_path, quarter_turn_maps
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import (
    MAX_MOVES,
    MOVE_PERMS,
    NO_ACTION,
    NUM_ACTIONS,
    ROTATION_PERMS,
    SYMMETRY_MOVE_MAP,
    SYMMETRY_PERMS,
    batch_apply_moves,
    batch_onehot,
    batch_rotate,
    batch_symmetry,
    legal_action_mask,
    next_face_count,
)
from run.Run_IO import atomic_write

SOLVED_INDEX = 0
_CHUNK = 1 << 18  # positions per vectorised step (bounds the (chunk, 12) temporaries)
CLASSES_FILE = "symmetry_classes.npz"
NUM_CLASSES = 77_802  # positions up to the 48 symmetries (counted by symmetry_classes)
# Positions canonicalised at a time while the classes are built. Small on purpose: each chunk's
# 48 symmetric copies are large temporaries, and with 65,536 positions most of the build went to
# the kernel handing out fresh pages (57 s against 32 s with 4,096, measured on 2 cores).
_CLASS_CHUNK = 1 << 12


def cubes_at(index: np.ndarray) -> np.ndarray:
    """``(n,)`` position indices -> ``(n, 24)`` int8 cubes with the D-L-B corner home."""
    return _cubes_at(np.asarray(index, dtype=np.int64))


def _index_moves() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 6 U, R, F quarter turns as index maps: ``actions (6,)`` (U U' R R' F F'), the new
    perm coordinate ``(6, 5040)`` and the new twist coordinate ``(6, 729)`` after each."""
    return np.arange(6), *quarter_turn_maps()


@functools.cache
def _frame_tables() -> tuple[np.ndarray, np.ndarray]:
    """``turn (24, 12)`` and ``new_rotation (24, 12)``: move ``a`` on
    ``batch_rotate(X, r)`` gives ``batch_rotate(apply(X, U/R/F turn number turn[r, a]), new_rotation[r, a])``
    for every D-L-B-home cube ``X``."""
    actions, _, _ = _index_moves()
    probe = cubes_at(np.random.default_rng(0).integers(1, NUM_STATES, 8))
    turn = np.full((len(ROTATION_PERMS), NUM_ACTIONS), -1)
    new_rotation = np.full_like(turn, -1)
    rotated = [
        [
            batch_rotate(batch_apply_moves(probe, np.full(len(probe), c)), np.full(len(probe), q))
            for q in range(len(ROTATION_PERMS))
        ]
        for c in actions
    ]
    for r in range(len(ROTATION_PERMS)):
        on_table = batch_rotate(probe, np.full(len(probe), r))
        for a in range(NUM_ACTIONS):
            target = on_table[:, MOVE_PERMS[a]]
            for k in range(len(actions)):
                for q in range(len(ROTATION_PERMS)):
                    if np.array_equal(rotated[k][q], target):
                        turn[r, a], new_rotation[r, a] = k, q
    assert (turn >= 0).all(), "every move must be a U, R or F turn of the D-L-B-home cube in some frame"
    return turn, new_rotation


def step(index: np.ndarray, rotation: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Play ``actions`` on the cubes ``(index, rotation)``; returns the new pairs."""
    turn, new_rotation = _frame_tables()
    _, perm_moves, ori_moves = _index_moves()
    k = turn[rotation, actions]
    perm, ori = np.divmod(index, NUM_ORIS)
    return perm_moves[k, perm] * NUM_ORIS + ori_moves[k, ori], new_rotation[rotation, actions]


def children(index: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """``(n, 12)`` position index after each move of each cube."""
    n = len(index)
    kids, _ = step(np.repeat(index, NUM_ACTIONS), np.repeat(rotation, NUM_ACTIONS), np.tile(np.arange(NUM_ACTIONS), n))
    return kids.reshape(n, NUM_ACTIONS)


def greedy_all(
    values, start: np.ndarray | None = None, max_moves: int = MAX_MOVES, record_moves: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Play the greedy solver from the D-L-B-home cube of every position in ``start``
    (default: all), reading each child's value from ``values``: a ``(NUM_STATES,)`` table, or
    a function of an index array. A solved child is always played, as ``Solvers.greedy``
    does (the network's value of the solved cube is never trusted).

    Returns ``solved (n,) bool``, ``length (n,)`` (moves played; ``max_moves`` when unsolved)
    and, with ``record_moves``, ``moves (n, max_moves)`` (-1 after the end).
    """
    value_of = values if callable(values) else np.asarray(values, dtype=np.float64).__getitem__
    start = np.arange(NUM_STATES) if start is None else np.asarray(start, dtype=np.int64)
    n = len(start)
    solved = start == SOLVED_INDEX
    length = np.zeros(n, dtype=np.int64)
    moves = np.full((n, max_moves), -1, dtype=np.int8) if record_moves else None
    for lo in range(0, n, _CHUNK):
        rows = np.arange(lo, min(lo + _CHUNK, n))
        index = start[rows].copy()
        rotation = np.zeros(len(rows), dtype=np.int64)
        last = np.full(len(rows), NO_ACTION, dtype=np.intp)
        count = np.zeros(len(rows), dtype=np.intp)
        active = np.flatnonzero(~solved[rows])
        for t in range(max_moves):
            if len(active) == 0:
                break
            kids = children(index[active], rotation[active])
            child_values = np.where(kids == SOLVED_INDEX, np.inf, value_of(kids))
            child_values[~legal_action_mask(last[active], count[active])] = -np.inf
            action = greedy_choice(child_values)  # the tie rule of Solvers.greedy (Value_Scale.TIE_TOLERANCE)
            index[active], rotation[active] = step(index[active], rotation[active], action)
            count[active] = next_face_count(last[active], count[active], action)
            last[active] = action
            if moves is not None:
                moves[rows[active], t] = action
            length[rows[active]] += 1
            done = index[active] == SOLVED_INDEX
            solved[rows[active[done]]] = True
            active = active[~done]
    return solved, length, moves


def report_by_distance(
    distance: np.ndarray, solved: np.ndarray, length: np.ndarray, values: np.ndarray | None = None
) -> list[dict]:
    """Per true distance: positions, solved, solve rate, mean moves/optimal over the solved
    ones, and (with the values of the same positions) the value read as moves: mean, largest
    error and the share within half a move of the true distance."""
    rows = []
    for d in np.unique(distance):
        at = distance == d
        row = {
            "distance": int(d),
            "positions": int(at.sum()),
            "solved": int(solved[at].sum()),
            "solve_rate": float(solved[at].mean()),
        }
        ok = at & solved & (distance > 0)
        row["mean_ratio_to_optimal"] = round(float((length[ok] / distance[ok]).mean()), 4) if ok.any() else None
        if values is not None and d > 0:
            error = value_as_moves(values[at]) - d
            row.update(
                value_moves_mean=round(float(d + error.mean()), 4),
                value_max_error=round(float(np.abs(error).max()), 4),
                value_within_half_move=round(float((np.abs(error) <= 0.5).mean()), 6),
            )
        rows.append(row)
    return rows


def _classes_path() -> Path:
    return default_cache_path().parent / CLASSES_FILE


def _representatives(positions: np.ndarray, reduce: PolicyValueNet) -> np.ndarray:
    """``(n,)`` the position index of the image of each of ``positions`` that ``reduce`` (a
    ``canonical_symmetry`` network) feeds its layers: one index per class of positions."""
    with torch.no_grad():
        canonical, _ = reduce._canonicalise_symmetries(torch.from_numpy(cubes_at(positions).astype(np.int64)))
    return OptimalSolver().index(canonical.numpy().astype(np.int8))


def _symmetry_generators() -> list[int]:
    """A few of the 48 symmetries (``SYMMETRY_PERMS``) that generate all of them, picked in order: each
    one that the earlier ones do not generate. The subgroup is read off a few random cubes, which no
    symmetry but the identity leaves unchanged, so its images of them number its elements."""
    probe = cubes_at(np.random.default_rng(0).integers(1, NUM_STATES, 4))
    every = len(SYMMETRY_PERMS)

    def image(cubes: np.ndarray, k: int) -> np.ndarray:
        return batch_symmetry(cubes, np.full(len(cubes), k))

    generators: list[int] = []
    reached = {probe.tobytes()}
    for k in range(1, every):
        if len(reached) == every:
            break
        if image(probe, k).tobytes() in reached:
            continue
        generators.append(k)
        frontier = [probe]  # the subgroup's images of the probe, closed again under the generators
        reached = {probe.tobytes()}
        while frontier:
            grown = [image(c, g) for c in frontier for g in generators]
            frontier = [c for c in grown if c.tobytes() not in reached]
            reached.update(c.tobytes() for c in frontier)
    return generators


def _symmetry_index_maps(symmetries: list[int]) -> np.ndarray:
    """``(len(symmetries), NUM_STATES)`` int32: the index of every position's image under each
    symmetry, without building a cube. A symmetry commutes with the moves
    (``T(apply(s, a)) == apply(T(s), SYMMETRY_MOVE_MAP[k, a])``), so walking out from the solved cube
    by U, R, F turns (which leave the D-L-B corner home), a position's image is its parent's image
    turned by the renamed move, and ``step`` keeps the whole-cube rotation that leaves."""
    actions, perm_moves, ori_moves = _index_moves()
    solved = cubes_at(np.array([SOLVED_INDEX]))
    image = np.full((len(symmetries), NUM_STATES), -1, dtype=np.int32)
    rotation = np.zeros((len(symmetries), NUM_STATES), dtype=np.int8)
    for i, k in enumerate(symmetries):  # the solved cube's image is the solved cube, turned as a whole
        turned = batch_symmetry(solved, np.array([k]))
        fits = [r for r in range(len(ROTATION_PERMS)) if np.array_equal(batch_rotate(solved, np.array([r])), turned)]
        image[i, SOLVED_INDEX], rotation[i, SOLVED_INDEX] = SOLVED_INDEX, fits[0]
    seen = np.zeros(NUM_STATES, dtype=bool)
    seen[SOLVED_INDEX] = True
    via = np.empty(NUM_STATES, dtype=np.int64)  # the (move, parent) slot a new position is reached from
    frontier = np.array([SOLVED_INDEX], dtype=np.int64)
    while len(frontier):
        perm, ori = np.divmod(frontier, NUM_ORIS)
        kids = (perm_moves[:, perm] * NUM_ORIS + ori_moves[:, ori]).ravel()  # (6 * F,): move-major
        slot = np.flatnonzero(~seen[kids])
        # Of the slots reaching the same new position one write wins, whichever: any parent will do.
        via[kids[slot]] = slot
        first = slot[via[kids[slot]] == slot]
        new = kids[first]
        seen[new] = True
        move, parent = np.divmod(first, len(frontier))
        parent = frontier[parent]
        for i, k in enumerate(symmetries):
            index, turned = step(
                image[i, parent].astype(np.int64), rotation[i, parent].astype(np.int64), SYMMETRY_MOVE_MAP[k, move]
            )
            image[i, new], rotation[i, new] = index, turned
        frontier = new
    assert seen.all(), "the U, R, F turns reach every position"
    return image


def _orbit_minima(maps: np.ndarray) -> np.ndarray:
    """``(NUM_STATES,)`` the smallest position index in each position's orbit under the group the
    index ``maps`` generate: every label falls to the smallest label one map away until none
    changes. A map of a finite group cycles back, so the fixed point is constant on each orbit,
    and it is always one of the orbit's own indices, so it is the orbit's smallest."""
    label = np.arange(NUM_STATES, dtype=np.int32)
    while True:
        lower = label.copy()
        for m in maps:
            np.minimum(lower, lower[m], out=lower)
        lower = lower[lower]  # a label's own label is no larger: jump straight to it
        if np.array_equal(lower, label):
            return label
        label = lower


def _compute_classes() -> tuple[np.ndarray, np.ndarray]:
    """Canonicalise every position as the symmetric network does and number the results.

    The network's canonical image is the smallest of a cube's 48 images, the same for every
    position of an orbit of the symmetries; so the orbits are found first on index maps of a few
    generating symmetries (a few seconds) and one position of each is canonicalised, 47 times fewer
    than all of them (which took minutes on 2 cores). The numbering is that of canonicalising every
    position: ``tests/test_all_positions.py`` holds both to the same bytes."""
    orbit_min = _orbit_minima(_symmetry_index_maps(_symmetry_generators()))
    leaders = np.flatnonzero(orbit_min == np.arange(NUM_STATES))
    reduce = PolicyValueNet(canonical_symmetry=True)
    leader_rep = np.concatenate(
        [_representatives(leaders[lo : lo + _CLASS_CHUNK], reduce) for lo in range(0, len(leaders), _CLASS_CHUNK)]
    )
    rep_of = leader_rep[np.searchsorted(leaders, orbit_min)]
    reps, class_of = np.unique(rep_of, return_inverse=True)
    return class_of.astype(np.int32), reps


def _compute_classes_per_position(positions: np.ndarray | None = None) -> np.ndarray:
    """``rep_of``: the canonical representative of each of ``positions`` (default: all), each
    canonicalised on its own. The plain definition ``_compute_classes`` must agree with (the tests
    compare them); minutes for all positions on 2 cores."""
    positions = np.arange(NUM_STATES) if positions is None else np.asarray(positions, dtype=np.int64)
    reduce = PolicyValueNet(canonical_symmetry=True)
    return np.concatenate(
        [_representatives(positions[lo : lo + _CLASS_CHUNK], reduce) for lo in range(0, len(positions), _CLASS_CHUNK)]
    )


def _checksum(class_of: np.ndarray, reps: np.ndarray) -> str:
    """SHA-256 of both tables' bytes, saved beside them: any changed bit of the file shows."""
    digest = hashlib.sha256(class_of.tobytes())
    digest.update(reps.tobytes())
    return digest.hexdigest()


def _classes_problem(class_of: np.ndarray, reps: np.ndarray, checksum: str) -> str | None:
    """Why loaded tables are not what ``_compute_classes`` builds, or None, in about a tenth of
    a second: types and shapes, the checksum saved with them (the file as written), then what
    the classes must be (class numbers in range, representatives ascending from the solved cube,
    each in its own class), and a fresh canonicalisation of 4,092 positions (every 898th) spread over the
    table, which a cache of another symmetry reduction fails."""
    if class_of.dtype != np.int32 or class_of.shape != (NUM_STATES,):
        return "class numbers of the wrong type or shape"
    if reps.dtype != np.int64 or reps.shape != (NUM_CLASSES,):
        return "representatives of the wrong type or shape"
    if checksum != _checksum(class_of, reps):
        return "a checksum that does not match"
    if class_of.min() < 0 or class_of.max() >= NUM_CLASSES:
        return "class numbers out of range"
    if reps[0] != SOLVED_INDEX or (np.diff(reps) <= 0).any() or reps[-1] >= NUM_STATES:
        return "representatives out of order or range"
    if not np.array_equal(class_of[reps], np.arange(NUM_CLASSES)):
        return "representatives outside their classes"
    sample = np.arange(0, NUM_STATES, -(-NUM_STATES // _CLASS_CHUNK))
    if not np.array_equal(reps[class_of[sample]], _compute_classes_per_position(sample)):
        return "classes that differ from the network's symmetry reduction"
    return None


@functools.cache
def symmetry_classes() -> tuple[np.ndarray, np.ndarray]:
    """``class_of (NUM_STATES,) int32`` (the class of every position) and ``reps (C,) int64``
    (one position per class, the canonical one; class 0 is the solved cube). Cached beside
    the optimal solver's table with a checksum (built in about ten seconds on 2 cores); a
    cache that fails ``_classes_problem`` is rebuilt, never used."""
    path = _classes_path()
    try:
        with np.load(path, allow_pickle=False) as data:
            class_of, reps, checksum = data["class_of"], data["reps"], str(data["sha256"])
        if _classes_problem(class_of, reps, checksum) is None:
            return class_of, reps
    except (OSError, ValueError, KeyError, EOFError):
        pass  # missing or damaged: rebuild
    class_of, reps = _compute_classes()
    try:
        atomic_write(path, lambda f: np.savez(f, class_of=class_of, reps=reps, sha256=_checksum(class_of, reps)))
    except OSError:
        pass  # a read-only cache still works, it is just rebuilt next time
    return class_of, reps


def network_value_table(model, device=None, batch: int = 16384, progress: bool = False, index=None) -> np.ndarray:
    """``(NUM_STATES,)`` float64: the network's value of every position's D-L-B-home cube,
    read once each (only the positions ``index``, when given; the rest NaN). Only an
    orientation-invariant network (``model.canonical``) gives the value the solver sees in
    every frame; the caller checks that. A symmetry-reducing network is read once per class
    of symmetric positions."""
    device = device if device is not None else next(model.parameters()).device
    if index is None and getattr(model, "symmetric", False):
        # A network that reduces the 48 symmetries sees one input per class of positions
        # (symmetry_classes): read each class once, 47 times fewer evaluations.
        class_of, reps = symmetry_classes()
        return network_value_table(model, device, batch, progress, index=reps)[reps][class_of]
    values = np.full(NUM_STATES, np.nan)
    todo = np.arange(NUM_STATES) if index is None else np.unique(np.asarray(index, dtype=np.int64))
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for lo in tqdm(range(0, len(todo), batch), desc="values", unit="batch", disable=not progress, leave=False):
                part = todo[lo : lo + batch]
                x = torch.from_numpy(batch_onehot(cubes_at(part))).to(device)
                values[part] = model(x)[1].squeeze(-1).double().cpu().numpy()
    finally:
        model.train(was_training)
    return values
