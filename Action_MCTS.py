"""Choosing a move from MCTS visit counts (the original's ``pick_action_from_mcts``)."""

from __future__ import annotations

import numpy as np


def _legal(counts: np.ndarray, mask) -> np.ndarray:
    """The legal-move mask broadcast to ``counts`` (all legal when ``mask`` is None)."""
    if mask is None:
        return np.ones(counts.shape, dtype=bool)
    legal = np.broadcast_to(np.asarray(mask, dtype=bool), counts.shape)
    if not legal.any(axis=-1).all():
        raise ValueError("every row of the legal-move mask needs at least one legal move")
    return legal


def visit_probabilities(visit_counts: np.ndarray, temperature: float = 1.0, mask=None) -> np.ndarray:
    """``p ∝ N^(1/T)`` over the last axis; uniform over the legal moves (``mask``, default
    all) where all counts are zero. Moves outside ``mask`` get probability 0."""
    legal = _legal(np.asarray(visit_counts), mask)
    counts = np.where(legal, np.asarray(visit_counts, dtype=np.float64), 0.0)
    if temperature <= 0:
        raise ValueError("temperature must be > 0 (use mode='greedy' for argmax)")
    # Scale by the maximum first so that N^(1/T) cannot overflow at small temperatures.
    top = counts.max(axis=-1, keepdims=True)
    scaled = np.power(np.divide(counts, top, out=np.zeros_like(counts), where=top > 0), 1.0 / temperature)
    total = scaled.sum(axis=-1, keepdims=True)
    uniform = legal / legal.sum(axis=-1, keepdims=True)
    return np.where(total > 0, scaled / np.where(total > 0, total, 1.0), uniform)


def pick_action_from_mcts(
    visit_counts,
    mode: str = "greedy",
    temperature: float = 1.0,
    rng: np.random.Generator | None = None,
    mask=None,
) -> int:
    """``"greedy"``: argmax of the visits (lowest index on ties); ``"sample"``: draw from
    ``N^(1/T)`` with ``rng`` (default: numpy's global generator, as the original). All-zero
    visits (e.g. a single simulation) give a uniform choice in both modes, among the legal
    moves of ``mask`` (default: all 12): a masked move is never picked."""
    legal = _legal(np.asarray(visit_counts), mask)
    counts = np.where(legal, np.asarray(visit_counts, dtype=np.float64), 0.0)
    if mode == "greedy":
        if counts.sum() <= 0:
            moves = np.flatnonzero(legal)
            return int(moves[rng.integers(len(moves)) if rng is not None else np.random.randint(len(moves))])
        return int(np.argmax(counts))
    if mode == "sample":
        probs = visit_probabilities(counts, temperature, legal)
        return int(rng.choice(len(probs), p=probs) if rng is not None else np.random.choice(len(probs), p=probs))
    raise ValueError(f"mode must be 'greedy' or 'sample', got {mode!r}")


def pick_actions_batch(
    visit_counts: np.ndarray, mode: str, temperature: float, rng: np.random.Generator, mask=None
) -> np.ndarray:
    """Vectorised ``pick_action_from_mcts`` for ``(B, 12)`` counts (one uniform draw per
    row); ``mask`` ``(B, 12)`` (default: all legal) is respected in every case."""
    if mode not in ("greedy", "sample"):
        raise ValueError(f"mode must be 'greedy' or 'sample', got {mode!r}")
    legal = _legal(np.asarray(visit_counts), mask)
    counts = np.where(legal, np.asarray(visit_counts, dtype=np.float64), 0.0)
    probs = visit_probabilities(counts, temperature if mode == "sample" else 1.0, legal)
    draws = rng.random(len(counts))
    sampled = (probs.cumsum(axis=1) <= draws[:, None]).sum(axis=1)  # the first move past the draw: legal
    # Rounding can leave the cumulative sum just under a draw near 1: take the last legal move.
    last_legal = counts.shape[1] - 1 - legal[:, ::-1].argmax(axis=1)
    sampled = np.minimum(sampled, last_legal)
    if mode == "sample":
        return sampled
    empty = counts.sum(axis=1) <= 0
    return np.where(empty, sampled, counts.argmax(axis=1))
