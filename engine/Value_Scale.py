"""The value scale that every target, search and solver shares, and how two values are compared.

A cube ``d`` moves from solved is worth ``1 - VALUE_PER_MOVE * d`` on the network's scale (1 = solved), the
original's episode reward ``max(VALUE_FLOOR, 1 - 0.03 n)`` for an episode solved in ``n`` moves. The engine
(self-play, the Gumbel search, the training step) reads the scale here, never from a cube module.
"""

from __future__ import annotations

import numpy as np

VALUE_PER_MOVE = 0.03
#: The original's floor of a solved episode's value: a long solve is still worth more than an unsolved one (-1).
VALUE_FLOOR = 0.4

#: Two children whose values differ by at most this much are a tie, broken by the lower action index
#: (``greedy_choice``). A network's value of one position may differ in its last float32 bits from one
#: batch to another and from one CPU's SIMD kernels to another's (about 1e-7); 1e-5 is 1/3,000 of a move
#: (``VALUE_PER_MOVE``), far above that noise and far below any real difference, so that the greedy solver
#: plays the same moves on every machine (docs/reproducibility.md).
TIE_TOLERANCE = 1e-5


def solved_value(moves):
    """The target value of a state ``moves`` moves from solved along a solved episode (the seed's formula;
    a float for an int, an array for an array)."""
    value = np.maximum(VALUE_FLOOR, 1.0 - VALUE_PER_MOVE * np.asarray(moves, dtype=np.float64))
    return float(value) if value.ndim == 0 else value


def greedy_choice(scores: np.ndarray) -> np.ndarray:
    """``(n,)`` the action of each row of ``scores (n, A)`` with the highest score, scores within
    ``TIE_TOLERANCE`` of it counting as equal and the lowest such action chosen (``+inf``: a solved
    child, always played; ``-inf``: an illegal one, never)."""
    scores = np.asarray(scores, dtype=np.float64)
    best = scores.max(axis=1, keepdims=True)
    return (scores >= best - TIE_TOLERANCE).argmax(axis=1)
