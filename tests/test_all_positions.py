"""The exhaustive greedy evaluation (All_Positions.py): the frame walk against the sticker
model, optimal play with exact values, the same moves as Solvers.greedy; the symmetry-class
cache it reads checked before use."""

import numpy as np
import pytest
import torch

from cube import All_Positions as ap
from cube.Solvers import greedy_batch, network_fns
from Optimal_Solver import CACHE_ENV, EXPECTED_COUNTS, NUM_STATES, get_solver
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import batch_apply_moves, batch_rotate, batch_symmetry


def test_frame_walk_follows_the_sticker_model():
    rng = np.random.default_rng(1)
    index = rng.integers(0, NUM_STATES, 500)
    rotation = np.zeros(500, dtype=np.int64)
    cubes = ap.cubes_at(index)
    for _ in range(25):
        actions = rng.integers(0, 12, 500)
        cubes = batch_apply_moves(cubes, actions)
        index, rotation = ap.step(index, rotation, actions)
        assert (batch_rotate(ap.cubes_at(index), rotation) == cubes).all()


def test_children_are_the_positions_after_each_move():
    solver = get_solver()
    index = np.random.default_rng(2).integers(0, NUM_STATES, 200)
    kids = ap.children(index, np.zeros(200, dtype=np.int64))
    cubes = ap.cubes_at(index)
    for a in range(12):
        assert (solver.index(batch_apply_moves(cubes, np.full(200, a))) == kids[:, a]).all()


@pytest.mark.slow
def test_exact_values_solve_a_slice_optimally():
    solver = get_solver()
    distance = solver.table.astype(np.int64)
    start = np.random.default_rng(3).integers(0, NUM_STATES, 20_000)
    solved, length, _ = ap.greedy_all(1.0 - 0.03 * distance, start)
    assert solved.all()
    assert (length == distance[start]).all()
    rows = ap.report_by_distance(distance[start], solved, length, (1.0 - 0.03 * distance)[start])
    assert all(r["solve_rate"] == 1.0 for r in rows)
    assert all(r["mean_ratio_to_optimal"] in (None, 1.0) for r in rows)
    assert all(r.get("value_within_half_move", 1.0) == 1.0 for r in rows)


def test_a_wrong_table_is_reported_unsolved():
    start = np.arange(1, 500)
    solved, length, _ = ap.greedy_all(np.zeros(NUM_STATES), start, max_moves=3)
    dist = get_solver().table[start]
    assert not solved[dist > 3].any()
    assert (length[~solved] == 3).all()


def test_same_moves_as_the_greedy_solver():
    # A value per position (not per orientation), as an orientation-invariant network gives,
    # but without float noise between batches, so that ties between two moves that reach the
    # same position (U' and D', say) are exact in both paths and go to the lower action.
    solver = get_solver()
    table = np.random.default_rng(5).random(NUM_STATES)
    start = np.random.default_rng(4).integers(0, NUM_STATES, 2000)
    solved, length, moves = ap.greedy_all(table, start, max_moves=12, record_moves=True)
    ref_moves, ref_len, ref_solved, _ = greedy_batch(ap.cubes_at(start), lambda c: table[solver.index(c)], max_moves=12)
    assert (solved == ref_solved).all()
    assert (length == ref_len).all()
    assert (moves == ref_moves).all()


def test_network_table_matches_the_network():
    torch.manual_seed(0)
    model = PolicyValueNet(canonical_orientation=True)
    value_fn, _ = network_fns(model)
    index = np.random.default_rng(6).integers(0, NUM_STATES, 50)
    table = ap.network_value_table(model, index=index)
    assert np.allclose(table[index], value_fn(ap.cubes_at(index)), atol=1e-6)


@pytest.mark.slow
def test_symmetric_network_table_is_read_once_per_class():
    # A narrow body: the table is read through the same symmetry reduction, its values spread as
    # widely over the sample (std 0.44 against 0.30 for the default widths), at a fraction of the cost.
    torch.manual_seed(1)
    model = PolicyValueNet(canonical_symmetry=True, hidden_sizes=(64, 64))
    value_fn, _ = network_fns(model)
    table = ap.network_value_table(model)
    assert np.isfinite(table).all()
    class_of, _ = ap.symmetry_classes()
    index = np.random.default_rng(7).integers(0, NUM_STATES, 200)
    assert np.allclose(table[index], value_fn(ap.cubes_at(index)), atol=1e-5)
    assert len(np.unique(table[class_of == class_of[index[0]]])) == 1


@pytest.fixture(scope="module")
def generator_maps() -> tuple[list[int], np.ndarray]:
    """The symmetries the class build walks and their index maps (seconds to build: made once)."""
    generators = ap._symmetry_generators()
    return generators, ap._symmetry_index_maps(generators)


def test_symmetry_index_maps_follow_the_sticker_model(generator_maps):
    generators, maps = generator_maps
    assert any(k >= 24 for k in generators)  # a mirrored symmetry is among them
    index = np.random.default_rng(8).integers(0, NUM_STATES, 3000)
    solver = get_solver()
    for row, k in zip(maps, generators):
        image = batch_symmetry(ap.cubes_at(index), np.full(len(index), k))
        assert (row[index] == solver.index(image)).all()
        assert (np.sort(row) == np.arange(NUM_STATES)).all()  # a symmetry permutes the positions


def test_symmetry_generators_generate_all_48(generator_maps):
    # Close the generators' index maps under composition on a few positions: each position's orbit
    # under the group they generate must be its orbit under all 48 symmetries (else the build would
    # still be right, but canonicalise more positions than one per class).
    _, maps = generator_maps
    index = np.random.default_rng(9).integers(0, NUM_STATES, 40)
    solver = get_solver()
    for x in index:
        orbit, frontier = {int(x)}, [int(x)]
        while frontier:
            frontier = list({int(m[y]) for y in frontier for m in maps} - orbit)
            orbit.update(frontier)
        every = solver.index(batch_symmetry(ap.cubes_at(np.full(48, x)), np.arange(48)))
        assert orbit == set(every.tolist())


# SHA-256 (``_checksum``) of the tables as canonicalising every one of the 3,674,160 positions on its own
# builds them (``_compute_classes_per_position``, minutes on 2 cores; recorded from it at commit c0abce1):
# the orbit build must give the same bytes. Integer work only, so the same on every machine.
PER_POSITION_CLASSES_SHA256 = "6d8a9f11767b1d85ab3bcc1e86361f191e619d93fce84ed9464a1a5806a9c15a"


@pytest.mark.slow
def test_class_build_is_the_per_position_canonicalisation():
    class_of, reps = ap._compute_classes()
    assert class_of.dtype == np.int32 and reps.dtype == np.int64 and len(reps) == ap.NUM_CLASSES
    assert ap._checksum(class_of, reps) == PER_POSITION_CLASSES_SHA256
    sample = np.random.default_rng(10).integers(0, NUM_STATES, 20_000)
    assert (reps[class_of[sample]] == ap._compute_classes_per_position(sample)).all()


def test_distance_counts_are_complete():
    assert sum(EXPECTED_COUNTS) == NUM_STATES


def _damaged_classes(what: str) -> tuple[np.ndarray, np.ndarray]:
    class_of, reps = (a.copy() for a in ap.symmetry_classes())
    rng = np.random.default_rng(3)
    if what == "minus one":
        class_of[rng.integers(1, NUM_STATES, 10)] = -1
    elif what == "shuffled":
        class_of[1:] = rng.permutation(class_of[1:])
    elif what == "float":
        class_of = class_of.astype(np.float64)
    elif what == "other reduction":  # self-consistent, checksum and all, but not the network's classes
        moved = np.setdiff1d(np.arange(0, NUM_STATES, 7), reps)
        class_of[moved] = (class_of[moved] + 1) % len(reps)
    return class_of, reps


@pytest.mark.slow
@pytest.mark.parametrize(
    "what, problem",
    [
        ("minus one", "class numbers out of range"),
        ("shuffled", "representatives outside their classes"),
        ("float", "class numbers of the wrong type or shape"),
        ("other reduction", "classes that differ from the network's symmetry reduction"),
    ],
)
def test_symmetry_class_cache_is_checked(what, problem):
    class_of, reps = _damaged_classes(what)
    assert ap._classes_problem(class_of, reps, ap._checksum(class_of, reps)) == problem
    good_of, good_reps = ap.symmetry_classes()
    assert ap._classes_problem(good_of, good_reps, ap._checksum(good_of, good_reps)) is None
    assert ap._classes_problem(good_of, good_reps, ap._checksum(class_of, reps)) == "a checksum that does not match"


@pytest.mark.parametrize("what", ["minus one", "no checksum"])
def test_a_damaged_symmetry_class_cache_is_rebuilt_not_used(what, tmp_path, monkeypatch):
    good = ap.symmetry_classes()
    class_of, reps = _damaged_classes(what)
    more = {} if what == "no checksum" else {"sha256": ap._checksum(class_of, reps)}
    np.savez(tmp_path / ap.CLASSES_FILE, class_of=class_of, reps=reps, **more)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(ap, "_compute_classes", lambda: good)  # the build itself takes about ten seconds
    ap.symmetry_classes.cache_clear()
    try:
        assert all(map(np.array_equal, ap.symmetry_classes(), good))
    finally:
        ap.symmetry_classes.cache_clear()
    with np.load(tmp_path / ap.CLASSES_FILE) as saved:  # rewritten whole, with its checksum
        assert ap._classes_problem(saved["class_of"], saved["reps"], str(saved["sha256"])) is None
