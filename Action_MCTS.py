"""Choosing a move from MCTS visit counts (the original's ``pick_action_from_mcts``)."""

from __future__ import annotations

import numpy as np


def visit_probabilities(visit_counts: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """``p ∝ N^(1/T)`` over the last axis; uniform where all counts are zero."""
    counts = np.asarray(visit_counts, dtype=np.float64)
    if temperature <= 0:
        raise ValueError("temperature must be > 0 (use mode='greedy' for argmax)")
    # Scale by the maximum first so that N^(1/T) cannot overflow at small temperatures.
    top = counts.max(axis=-1, keepdims=True)
    scaled = np.power(np.divide(counts, top, out=np.zeros_like(counts), where=top > 0), 1.0 / temperature)
    total = scaled.sum(axis=-1, keepdims=True)
    uniform = np.full_like(scaled, 1.0 / counts.shape[-1])
    return np.where(total > 0, scaled / np.where(total > 0, total, 1.0), uniform)


def pick_action_from_mcts(
    visit_counts, mode: str = "greedy", temperature: float = 1.0, rng: np.random.Generator | None = None
) -> int:
    """``"greedy"``: argmax of the visits (lowest index on ties); ``"sample"``: draw from
    ``N^(1/T)`` with ``rng`` (default: numpy's global generator, as the original). All-zero
    visits give a uniform choice in both modes."""
    counts = np.asarray(visit_counts, dtype=np.float64)
    if mode == "greedy":
        if counts.sum() <= 0:
            return int(rng.integers(len(counts)) if rng is not None else np.random.randint(len(counts)))
        return int(np.argmax(counts))
    if mode == "sample":
        probs = visit_probabilities(counts, temperature)
        return int(rng.choice(len(probs), p=probs) if rng is not None else np.random.choice(len(probs), p=probs))
    raise ValueError(f"mode must be 'greedy' or 'sample', got {mode!r}")


def pick_actions_batch(visit_counts: np.ndarray, mode: str, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """Vectorised ``pick_action_from_mcts`` for ``(B, 12)`` counts (one uniform draw per row)."""
    counts = np.asarray(visit_counts, dtype=np.float64)
    if mode not in ("greedy", "sample"):
        raise ValueError(f"mode must be 'greedy' or 'sample', got {mode!r}")
    probs = visit_probabilities(counts, temperature if mode == "sample" else 1.0)
    draws = rng.random(len(counts))
    sampled = np.minimum((probs.cumsum(axis=1) < draws[:, None]).sum(axis=1), counts.shape[1] - 1)
    if mode == "sample":
        return sampled
    empty = counts.sum(axis=1) <= 0
    return np.where(empty, sampled, counts.argmax(axis=1))
