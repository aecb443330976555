"""The network's first layer read from cubie colour pairs (``main.py --input pairs``).

A cube network's first layer is a Linear on the stickers' one-hot colours (``--input stickers``, the
original): one weight row per (sticker, colour), summed over the stickers. ``CubiePairs`` sums one row
per **cubie slot** instead, picked by the colours of two of the slot's stickers (6 x 6 = 36 rows a
slot): 20 slots on the 3x3 (8 corners, 12 edges), 8 on the 2x2. Two stickers name the cubie in the slot
and how it is turned (a corner's third colour follows from the other two), so the rows read what the
value depends on, a cubie where it sits, with no hidden unit spent on joining a cubie's stickers. It
is at least as expressive as the sticker layer (a pair's row can be the sum of its two stickers' rows;
a corner's third sticker is a function of the pair) and costs 20 row reads where the Linear multiplies
324 inputs. Measured on the 3x3 (docs/puzzles.md, "The one-hour model"): a lower loss at every minute of the
recipe's hour, and solutions about a move shorter.

The layer takes the same one-hot input as the Linear, so every solver and search reads it unchanged:
``x @ index`` turns each slot's two one-hot colours into its row number (exact in float32: at most 35),
and ``embedding_bag`` sums the rows, the bias being the table's last row, read by every cube. It also
takes the stickers' colours themselves (an integer ``(B, stickers)`` tensor), the same rows without the
one-hot: ``Solver_Base.network_fns`` hands a searching network those, which saves making the one-hot
(about a tenth of a float32 search's time, docs/puzzles.md).
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from cube import Cube_Model

COLOURS = Cube_Model.NUM_FACES  # one-hot width of a sticker
ROWS_PER_SLOT = COLOURS * COLOURS  # the colour pairs of a slot's two stickers


def pair_slots(size: int) -> np.ndarray:
    """``(slots, 2)`` sticker indices: two stickers of every corner and edge cubie of a ``size`` cube
    (centres, one sticker, have no pair), slots in the order of the cubies' positions."""
    return np.array([group[:2] for group in Cube_Model.cubie_stickers(size) if len(group) >= 2], dtype=np.intp)


def size_of_obs(obs_dim: int) -> int | None:
    """The cube size whose one-hot stickers are ``obs_dim`` wide (2 or 3), None for another input."""
    for size in (2, 3):
        if obs_dim == Cube_Model.NUM_FACES * size * size * COLOURS:
            return size
    return None


def obs_dim_of_table(rows: int) -> int | None:
    """The one-hot input width of a ``CubiePairs`` whose table has ``rows`` rows, None if no cube's."""
    for size in (2, 3):
        if rows == len(pair_slots(size)) * ROWS_PER_SLOT + 1:
            return Cube_Model.NUM_FACES * size * size * COLOURS
    return None


class CubiePairs(nn.Module):
    """``(B, obs_dim)`` one-hot stickers -> ``(B, hidden)``: the sum of one ``table`` row per cubie slot
    (the row of its two stickers' colours) and the bias row (module docstring)."""

    def __init__(self, obs_dim: int, hidden: int):
        super().__init__()
        size = size_of_obs(obs_dim)
        if size is None:
            raise ValueError(f"cubie pairs read a 2x2's or a 3x3's one-hot stickers, not {obs_dim} inputs")
        slots = pair_slots(size)
        index = np.zeros((obs_dim, len(slots)), dtype=np.float32)
        for s, (first, second) in enumerate(slots):
            index[first * COLOURS : (first + 1) * COLOURS, s] = COLOURS * np.arange(COLOURS)
            index[second * COLOURS : (second + 1) * COLOURS, s] = np.arange(COLOURS)
        offsets = np.append(np.arange(len(slots)) * ROWS_PER_SLOT, len(slots) * ROWS_PER_SLOT)
        self.register_buffer("_slots", torch.from_numpy(slots), persistent=False)
        self.register_buffer("_index", torch.from_numpy(index), persistent=False)
        self.register_buffer("_offsets", torch.from_numpy(offsets), persistent=False)
        # As a Linear's Kaiming-normal rows for the slots' sum, and a zero bias (the last row).
        table = torch.randn(len(slots) * ROWS_PER_SLOT + 1, hidden) * math.sqrt(2.0 / len(slots))
        table[-1] = 0.0
        self.table = nn.Parameter(table)

    def rows(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, slots + 1)`` the table rows each cube reads: its slots' and the bias row. ``x``: one-hot
        stickers, or (an integer tensor) the stickers' colours."""
        if x.is_floating_point():
            pairs = (x.float() @ self._index).round().long()
        else:
            colours = x.long()
            pairs = colours[:, self._slots[:, 0]] * COLOURS + colours[:, self._slots[:, 1]]
        return torch.cat([pairs, pairs.new_zeros(len(x), 1)], dim=1) + self._offsets

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Summed in float32 whatever the autocast (the row numbers must be exact; 21 rows are cheap),
        # and handed on in the autocast's type, as a Linear's output is: the layers after it run in
        # bfloat16 then (on this CPU 1.9x as fast as on a float32 input).
        device = x.device.type
        with torch.autocast(device, enabled=False):
            out = F.embedding_bag(self.rows(x), self.table, mode="sum")
        return out.to(torch.get_autocast_dtype(device)) if torch.is_autocast_enabled(device) else out
