"""The seed's small residual policy-value network for Go, and its checkpoints.

``GoNet(size, in_planes=17, filters=64, blocks=4)``: a 3x3 convolution stem, ``blocks`` residual blocks
(two 3x3 convolutions of ``filters`` channels, each followed by GroupNorm, a skip connection, ReLU), a
policy head (1x1 convolution to 2 planes, GroupNorm, ReLU, a linear layer to N*N+1 logits, pass last)
and a value head (1x1 convolution to 1 plane, GroupNorm, ReLU, a 128-unit hidden layer, tanh). The input
is ``Go_Game.GoGame.encode``'s planes, ``2*history + 1`` of them (17: the seed's 8 positions).
``forward`` gives ``(logits (B, N*N+1), value (B, 1))`` as ``PolicyValueNet`` does, so the engine's
``NetworkEvaluator`` and ``Train_Network.alphazero_loss`` read it unchanged.

Checkpoints go through ``run.Checkpoints.save_checkpoint`` / ``load_state_dict`` (a bare state_dict,
written atomically, read with ``weights_only=True``). The network's buffer ``go_board_size``
(``run.Checkpoints.GO_SIZE_KEY``, a float tensor holding N) marks a Go checkpoint and its size: the cube
loader (``Cube_Checkpoints.load_model``) refuses a file that has it, and ``load_go_model`` one that lacks it or has
another size, each with one sentence. Planes, filters and blocks are read back from the layer shapes.
"""

from __future__ import annotations

import re

import torch
import torch.nn as nn
import torch.nn.functional as F

from run.Checkpoints import GO_SIZE_KEY, go_size_of, load_state_dict
from run.Run_IO import CheckpointError

FILTERS, BLOCKS, VALUE_HIDDEN = 64, 4, 128  # the seed's
GROUPS = 8  # GroupNorm groups of the trunk's channels (the heads' 2 and 1 channels: one group)
STEM_LAYER = "stem.0.weight"  # (filters, in_planes, 3, 3)
_BLOCK_KEY = re.compile(r"blocks\.(\d+)\.")


def _conv_norm(channels_in: int, channels_out: int, kernel: int, groups: int) -> list[nn.Module]:
    return [
        nn.Conv2d(channels_in, channels_out, kernel, padding=kernel // 2, bias=False),
        nn.GroupNorm(groups, channels_out),
    ]


class ResidualBlock(nn.Module):
    """``x + norm(conv(relu(norm(conv(x)))))``, then ReLU; channels and board kept."""

    def __init__(self, filters: int):
        super().__init__()
        self.body = nn.Sequential(
            *_conv_norm(filters, filters, 3, min(GROUPS, filters)),
            nn.ReLU(),
            *_conv_norm(filters, filters, 3, min(GROUPS, filters)),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.body(x))


class GoNet(nn.Module):
    """The policy-value network of a ``size`` board (see the module docstring)."""

    def __init__(self, size: int, in_planes: int = 17, filters: int = FILTERS, blocks: int = BLOCKS):
        super().__init__()
        if size < 1 or in_planes < 1 or filters < 1 or blocks < 0:
            raise ValueError(
                f"a Go network needs a positive size, planes and filters, got {size}, {in_planes}, {filters}"
            )
        self.size, self.in_planes, self.filters, self.num_blocks = size, in_planes, filters, blocks
        points = size * size
        self.register_buffer(GO_SIZE_KEY, torch.tensor(float(size)))  # saved: marks a Go checkpoint and its size
        self.stem = nn.Sequential(*_conv_norm(in_planes, filters, 3, min(GROUPS, filters)), nn.ReLU())
        self.blocks = nn.Sequential(*(ResidualBlock(filters) for _ in range(blocks)))
        self.policy_head = nn.Sequential(*_conv_norm(filters, 2, 1, 1), nn.ReLU(), nn.Flatten())
        self.policy_out = nn.Linear(2 * points, points + 1)
        self.value_head = nn.Sequential(
            *_conv_norm(filters, 1, 1, 1), nn.ReLU(), nn.Flatten(), nn.Linear(points, VALUE_HIDDEN), nn.ReLU()
        )
        self.value_out = nn.Linear(VALUE_HIDDEN, 1)

    @property
    def history(self) -> int:
        """The positions the input planes hold (``GoBoard(history=...)``)."""
        return (self.in_planes - 1) // 2

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, in_planes, N, N)`` -> policy logits ``(B, N*N+1)`` and value ``(B, 1)`` in [-1, 1]."""
        h = self.blocks(self.stem(x))
        return self.policy_out(self.policy_head(h)), torch.tanh(self.value_out(self.value_head(h)))


def go_model_from_state(state: dict, path: str) -> GoNet:
    """A ``GoNet`` holding the weights of a Go state_dict (read from ``path``); its size, planes, filters
    and blocks are the ones the state holds. CheckpointError when the weights do not fit."""
    stem = state.get(STEM_LAYER)
    if not isinstance(stem, torch.Tensor) or stem.dim() != 4:
        raise CheckpointError(f"checkpoint '{path}' does not fit GoNet (it has no convolution stem).")
    blocks = len({int(m.group(1)) for key in state if (m := _BLOCK_KEY.match(key))})
    model = GoNet(go_size_of(state), in_planes=stem.shape[1], filters=stem.shape[0], blocks=blocks)
    try:
        model.load_state_dict(state)
    except (RuntimeError, KeyError):
        raise CheckpointError(f"checkpoint '{path}' does not fit GoNet (wrong keys or shapes).") from None
    return model


def load_go_model(path: str, size: int | None = None, device: torch.device | str = "cpu") -> GoNet:
    """The ``GoNet`` of checkpoint ``path`` in eval mode on ``device``; CheckpointError (one sentence) for a
    file that is not a Go network, or one of another board size than ``size`` (None: any)."""
    state = load_state_dict(path)
    found = go_size_of(state)
    if found is None:
        raise CheckpointError(f"checkpoint '{path}' is a cube network, not a Go one.")
    if size is not None and found != size:
        raise CheckpointError(f"checkpoint '{path}' is a Go network for {found}x{found}, not {size}x{size}.")
    model = go_model_from_state(state, path).to(device).eval()
    check_outputs(model, path)
    return model


def check_outputs(model: GoNet, path: str) -> None:
    """CheckpointError (one sentence) when the network's priors or value on two probe positions (the empty
    board, Black to move; a stone in the centre, White to move) are not finite: finite weights can still
    overflow (a stem weight times 1e30 gives NaN everywhere), and a search on NaN priors plays nonsense."""
    size, planes = model.size, model.in_planes
    probe = torch.zeros(2, planes, size, size)
    probe[0, -1] = 1.0  # the side-to-move plane: Black
    probe[1, min(1, planes - 1), size // 2, size // 2] = 1.0  # the opponent's (Black's) stone, White to move
    device = next(model.parameters()).device
    with torch.inference_mode():
        priors, value = model(probe.to(device))
    if not (bool(torch.isfinite(priors).all()) and bool(torch.isfinite(value).all())):
        raise CheckpointError(f"checkpoint '{path}' is damaged: its network gives NaN or infinite outputs.")
