"""What a Go network with score and ownership heads (``Go_Net.GoNet(score_heads=True)``) expects of a
position, for the window's side panel and its ownership overlay; no pygame, so it is tested without a display.

``position_estimate(model, game, state)``: one forward of ``model.heads`` on the one-state batch ``state``
of ``game`` (the game the window plays: its komi is what a ``komi_input`` network sees), turned from the
player to move's side, as the heads answer, to Black's: an ``Estimate`` with Black's expected final area
margin in points (after komi) and each point's expected owner (+1 Black, -1 White). None for a network
without those heads (the shipped ``go5``/``go7`` ones) and without a network.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from go.Go_Net import expected_margin


@dataclass
class Estimate:
    """The network's view of a position, from Black's side (see the module docstring)."""

    black_margin: float  # Black's expected area lead after komi, in points
    ownership: np.ndarray  # (N*N,) float in [-1, 1]: +1 Black's area, -1 White's

    def margin_for(self, colour: int) -> float:
        """The expected margin from ``colour``'s side (BLACK = +1, WHITE = -1)."""
        return self.black_margin * colour


def position_estimate(model, game, state: dict) -> Estimate | None:
    """The ``Estimate`` of ``state`` (a one-state batch of ``game``), or None without score heads."""
    if model is None or not getattr(model, "has_score", False):
        return None
    device = next(model.parameters()).device
    planes = torch.from_numpy(game.encode(game.eval_input(state))).to(device)
    with torch.inference_mode():
        heads = model.heads(planes)
    mover = int(state["to_play"][0])  # the heads' side; BLACK = +1 turns them to Black's
    margin = float(expected_margin(heads, game.size)[0])  # the belief's, else the score head's, in points
    ownership = heads["ownership"].float().reshape(-1).cpu().numpy().astype(np.float64)
    return Estimate(margin * mover, ownership * mover)
