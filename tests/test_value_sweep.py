"""Value-iteration sweeps (Value_Sweep.py): the symmetry classes (All_Positions.py), exact targets from an exact
network, the scramble-depth bound."""

import numpy as np
import pytest
import torch

from cube import Value_Sweep as vs
from cube.All_Positions import NUM_CLASSES, cubes_at, symmetry_classes
from Optimal_Solver import EXPECTED_COUNTS, NUM_STATES, get_solver
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import batch_apply_moves, batch_symmetry


def test_classes_are_the_symmetry_classes():
    class_of, reps = symmetry_classes()
    assert len(reps) == NUM_CLASSES and class_of.shape == (NUM_STATES,)
    assert class_of[0] == 0 and reps[0] == 0  # the solved cube is its own class, class 0
    solver = get_solver()
    rng = np.random.default_rng(0)
    index = rng.integers(0, NUM_STATES, 300)
    cubes = cubes_at(index)
    for k in rng.integers(0, 48, 5):  # every symmetric image lies in the same class, at the same distance
        images = solver.index(batch_symmetry(cubes, np.full(len(cubes), k)))
        assert (class_of[images] == class_of[index]).all()
    dist = solver.table
    for d in range(1, 15):  # a class never mixes distances
        at = class_of[dist == d]
        assert not np.isin(at, class_of[dist != d]).any() or d == 0
    assert sum(EXPECTED_COUNTS) == NUM_STATES


class _ExactNet(torch.nn.Module):
    """Value 1 - 0.03 * distance, read from the optimal solver (a test oracle only)."""

    def __init__(self):
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros(1))
        self.solver = get_solver()

    def forward(self, x):
        cubes = x.reshape(-1, 24, 6).argmax(dim=2).numpy().astype(np.int8)
        v = torch.from_numpy(1.0 - 0.03 * self.solver.batch_distance(cubes)).float()
        return torch.zeros(len(x), 12), v.unsqueeze(1)


def test_exact_values_give_exact_targets():
    sweeper = vs.Sweeper()
    rng = np.random.default_rng(1)
    inputs, pi, z = sweeper.targets(_ExactNet(), rng, walk_states=2000, walk_len=14, policy_temperature=0.0)
    cubes = inputs.reshape(-1, 24, 6).argmax(axis=2).astype(np.int8)
    dist = get_solver().batch_distance(cubes)
    assert np.allclose(z, 1.0 - 0.03 * dist, atol=1e-6)
    best = batch_apply_moves(cubes, pi.argmax(axis=1))  # the policy target's move is one step closer
    assert (get_solver().batch_distance(best) == dist - 1).all()


@pytest.mark.slow
def test_depth_bound_and_state():
    sweeper = vs.Sweeper()
    torch.manual_seed(0)
    model = PolicyValueNet(canonical_symmetry=True)
    rng = np.random.default_rng(2)
    _, _, z = sweeper.targets(model, rng, walk_states=4000, walk_len=8, policy_temperature=0.5)
    reached = sweeper.best_depth < vs.NEVER
    assert reached.any() and (sweeper.best_depth[reached] <= 8).all()
    # a class reached by a k-move scramble is at most k moves out
    dist = get_solver().table[sweeper.reps]
    assert (dist[reached] <= sweeper.best_depth[reached]).all()
    assert np.isfinite(z).all() and (z <= 1.0).all()
