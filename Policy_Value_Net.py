"""Policy-value network (the original's architecture).

``PolicyValueNet``: 144 -> 512 -> 1024 -> 512 -> 128 (``HIDDEN_SIZES``), each Linear followed by
LayerNorm and ReLU; a policy head (12 logits) and a value head (tanh). Checkpoints are bare
``state_dict`` files (a checkpoint of the original project loads too), written atomically
and read with ``weights_only=True`` (``run.Checkpoints``); ``cube.Cube_Checkpoints`` rebuilds the
network from one (``load_model``, ``model_from_state``).

``PolicyValueNet(canonical_orientation=True)`` (``main.py --canonical-orientation``, beyond
the original) turns every input cube as a whole into its canonical orientation before the
layers, and renames the policy's moves back. The 24 orientations of a position then share
one input, so the value is exactly the same for all of them and the network has 24 times
fewer inputs to learn. Its checkpoint holds one extra entry, ``canonical_orientation``,
which is how ``Cube_Checkpoints.load_model`` knows to build it that way.

``PolicyValueNet(canonical_symmetry=True)`` (``main.py --canonical-symmetry``) goes
further: of the 48 images of a cube under the symmetries that keep distances
(``SYMMETRY_PERMS``: colours renamed as a whole-cube rotation renames them, and the mirror
image), each in its canonical orientation, it feeds the one with the smallest stickers, and
renames the moves back through both: about 48 times fewer inputs again. The value is the
same for all images; so is the policy, renamed, except on the few cubes that are their own
image under some symmetry, where the tie between equal images is broken by symmetry order.
Its checkpoint also holds ``canonical_symmetry``.

``hidden_sizes`` (``main.py --hidden-sizes``; default ``HIDDEN_SIZES``, the original's) sets the
body's widths; a checkpoint records them in its layer shapes and ``model_from_state`` reads them
from there, as it reads the inputs and the value head.

``PolicyValueNet(pair_input=True)`` (``main.py --input pairs``) reads its first layer from cubie colour
pairs (``Pair_Input.CubiePairs``: one table row per cubie slot) instead of a Linear on the stickers; the
input is the same one-hot, so every solver reads it unchanged. Its checkpoint holds ``cubie_pair_input``.

``residual_blocks`` R (``main.py --residual-blocks``; default 0, the original's plain stack) adds R residual
blocks at the last hidden width after the hidden layers (``ResidualBlock``: two Linear + LayerNorm layers
around a skip, CayleyPy's residual MLP): depth without the plain stack's fading gradients. A checkpoint
records them in its layer names (``Cube_Checkpoints.residual_blocks_of``).

Other puzzles: ``obs_dim`` and ``act_dim`` are the puzzle's (``Puzzles.Puzzle.obs_dim``: 144 for
the 2x2, 324 for the 3x3; 12 actions for both). A checkpoint records them in its layer shapes,
so ``model_from_state`` reads them from there, and ``load_model(..., puzzle=...)`` refuses a
network made for another cube. The canonicalising options use the 2x2's whole-cube rotations
and stay the 2x2's (a 3x3's orientation is fixed by its centres anyway).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from cube.Pair_Input import CubiePairs
from engine.Value_Scale import VALUE_PER_MOVE
from Rubik2x2Env import (
    NUM_FACES,
    NUM_STICKERS,
    ROTATION_CANONICAL_TABLES,
    ROTATION_PERMS,
    SYMMETRY_CANONICAL_TABLES,
)
from run.Checkpoints import CANONICAL_KEY, PAIR_KEY, SYMMETRY_KEY

HIDDEN_SIZES = (512, 1024, 512, 128)


class ResidualBlock(nn.Module):
    """``relu(x + LayerNorm(W2 relu(LayerNorm(W1 x))))`` at one width. The last LayerNorm's scale starts at
    zero, so a new block is the identity on the (non-negative) hidden layer it follows and training grows it."""

    def __init__(self, width: int):
        super().__init__()
        self.inner = nn.Sequential(
            nn.Linear(width, width), nn.LayerNorm(width), nn.ReLU(), nn.Linear(width, width), nn.LayerNorm(width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.inner(x))


OBS_DIM_2X2 = NUM_STICKERS * NUM_FACES  # 144: the inputs the canonicalising tables are built for


class PolicyValueNet(nn.Module):
    def __init__(
        self,
        obs_dim: int = 144,
        act_dim: int = 12,
        canonical_orientation: bool = False,
        canonical_symmetry: bool = False,
        distance_classes: int = 0,
        hidden_sizes: tuple[int, ...] = HIDDEN_SIZES,
        pair_input: bool = False,
        residual_blocks: int = 0,
    ):
        super().__init__()
        if (canonical_orientation or canonical_symmetry) and obs_dim != OBS_DIM_2X2:
            raise ValueError(f"canonical orientation and symmetry are the 2x2's ({OBS_DIM_2X2} inputs), not {obs_dim}")
        if not hidden_sizes or min(hidden_sizes) < 1:
            raise ValueError(f"hidden layer sizes must be at least one positive number, got {list(hidden_sizes)}")
        if residual_blocks < 0:
            raise ValueError(f"the residual blocks must be 0 or more, got {residual_blocks}")
        if distance_classes == 1 or distance_classes < 0:
            # One class always wins its softmax: the value would always be 1, and a one-row head
            # is what a scalar head saves, so a checkpoint could not tell the two apart.
            raise ValueError(f"a distance head needs at least 2 classes (0: a scalar value), got {distance_classes}")
        self.obs_dim, self.act_dim = obs_dim, act_dim
        self.hidden_sizes = tuple(int(h) for h in hidden_sizes)
        layers: list[nn.Module] = []
        width = obs_dim
        for hidden in self.hidden_sizes:
            first = CubiePairs(width, hidden) if pair_input and not layers else nn.Linear(width, hidden)
            layers += [first, nn.LayerNorm(hidden), nn.ReLU()]
            width = hidden
        layers += [ResidualBlock(width) for _ in range(residual_blocks)]
        self.residual_blocks = residual_blocks
        self.body = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, act_dim)
        # ``distance_classes`` K > 0 (beyond the original, ``main.py --distance-classes``): the
        # value head classifies the moves to solved into 0..K-1 and the value is read from the
        # expected class (``forward``), so every search and solver reads it unchanged.
        self.distance_classes = distance_classes
        self.value_head = nn.Linear(width, distance_classes or 1)
        self._init_weights()
        self.symmetric = canonical_symmetry
        self.canonical = canonical_orientation or canonical_symmetry
        tables = {}
        if self.canonical:
            self.register_buffer(CANONICAL_KEY, torch.ones(()))  # saved: marks the checkpoint
            tables.update(ROTATION_CANONICAL_TABLES)
        if self.symmetric:
            self.register_buffer(SYMMETRY_KEY, torch.ones(()))
            tables.update(SYMMETRY_CANONICAL_TABLES)
        if pair_input:
            self.register_buffer(PAIR_KEY, torch.ones(()))
        for name, table in tables.items():
            self.register_buffer("_" + name, torch.tensor(np.asarray(table), dtype=torch.int64), persistent=False)

    @property
    def reads_colours(self) -> bool:
        """Whether the network also takes the stickers' colours, an integer ``(B, stickers)`` tensor, for
        the one-hot (a cubie-pair first layer, ``Pair_Input``; the canonical forms read one-hot only)."""
        return isinstance(self.body[0], CubiePairs) and not self.canonical

    def _init_weights(self) -> None:
        # As the original: Kaiming-normal (ReLU) weights and zero biases for every Linear.
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
        for block in self.modules():
            if isinstance(block, ResidualBlock):
                nn.init.zeros_(block.inner[-1].weight)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, 144)`` -> policy logits ``(B, 12)`` and value ``(B, 1)`` in [-1, 1].

        A distance network's value is ``1 - 0.03 E[d]``, ``E[d]`` the expected class of its
        distance head: the original's value scale, so MCTS and every solver read it as they
        read a scalar value."""
        logits, value_out = self.forward_logits(x)
        if self.distance_classes:
            return logits, distance_value(value_out)
        return logits, torch.tanh(value_out)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        """``forward``'s value ``(B, 1)`` alone, the same numbers without the policy head: what a
        value search (greedy, beam, A*) reads."""
        if self.canonical:
            x, _ = self._canonicalise(x)
        value_out = self.value_head(self.body(x))
        return distance_value(value_out) if self.distance_classes else torch.tanh(value_out)

    def forward_logits(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """As ``forward``, but the value before its tanh, ``(B, 1)``: a loss on it keeps a
        gradient where the tanh is saturated (``main.py --value-loss logit``). A distance
        network gives its distance logits ``(B, K)`` instead (``--value-loss distance``)."""
        if self.canonical:
            x, move_map = self._canonicalise(x)
        h = self.body(x)
        logits = self.policy_head(h)
        if self.canonical:
            logits = logits.gather(1, move_map)
        return logits, self.value_head(h)

    def _canonicalise(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Each one-hot cube of ``x`` in its canonical orientation, and per cube the
        ``(12,)`` index that renames the canonical cube's moves back to the input's."""
        onehot = x.reshape(-1, NUM_STICKERS, NUM_FACES)
        stickers = onehot.argmax(dim=2)
        if self.symmetric:
            canonical, move_map = self._canonicalise_symmetries(stickers)
            return F.one_hot(canonical, NUM_FACES).to(x.dtype).reshape(x.shape), move_map
        fits = (stickers[:, self._slot_reads] == self._slot_colours).all(
            dim=2
        )  # (B, 24): exactly one True per real cube
        rotation = fits.to(torch.uint8).argmax(dim=1)
        perm = self._rotations[rotation].unsqueeze(2).expand(-1, -1, NUM_FACES)
        return onehot.gather(1, perm).reshape(x.shape), self._move_map[rotation]

    def _canonicalise_symmetries(self, stickers: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Of the 48 symmetric images of each cube (``SYMMETRY_PERMS``), each in its canonical
        orientation, the one with the smallest stickers read as a base-6 number (sticker 23
        most significant; the first of equal images): the same representative for every cube
        that is the same up to a symmetry. Returns its ``(B, 24)`` stickers and the
        ``(B, 12)`` move renaming back to the input's moves.

        Building all 48 images is what costs, so: the canonical rotation of every image comes
        from where its D-L-B cubie sits in the input (one lookup per image); the images are
        compared on their leading stickers first and built in full only where those tie.
        """
        batch = len(stickers)
        # Each corner read from each sticker, as a plain and as a mirrored image reads it: a code 0..215.
        codes = (stickers[:, self._corner_reads] * self._code_weights).sum(dim=3) + self._code_offsets  # (B, 2, 24)
        sticker_of_code = torch.zeros(batch, 2 * 216, dtype=torch.int64, device=stickers.device)
        sticker_of_code.scatter_(1, codes.view(batch, -1), self._sticker_ids.expand(batch, -1))
        rotation = self._rotation_of_first[sticker_of_code[:, self._home_code]]  # (B, 48)
        lead = self._image_stickers(stickers, rotation, self._key_lead)  # (B, 48, n) most significant first
        key = (lead * self._lead_weights).sum(dim=2)
        candidate = key == key.min(dim=1, keepdim=True).values
        tied = torch.nonzero(candidate.sum(dim=1) > 1).squeeze(1)
        if len(tied):
            rest = (self._image_stickers(stickers[tied], rotation[tied], self._key_rest) * self._rest_weights).sum(
                dim=2
            )
            candidate[tied] &= (
                rest == rest.masked_fill(~candidate[tied], torch.iinfo(torch.int64).max).min(dim=1, keepdim=True).values
            )
        pick = candidate.to(torch.uint8).argmax(dim=1)  # (B,): the first smallest image
        rows = torch.arange(batch, device=stickers.device)
        rotation = rotation[rows, pick]
        canonical = self._image_stickers(
            stickers, rotation.unsqueeze(1), self._all_stickers, pick.unsqueeze(1)
        ).squeeze(1)
        # Move a on the input is SYMMETRY_MOVE_MAP[k, a] on the image, then renamed by its rotation.
        move_map = self._move_map[rotation].gather(1, self._sym_move_map[pick])
        return canonical, move_map

    def _image_stickers(self, stickers, rotation, positions, symmetry=None) -> torch.Tensor:
        """``(B, S, n)``: stickers ``positions`` of image ``symmetry`` (default: all 48 in
        order) of each cube, turned by ``rotation (B, S)``."""
        batch = len(stickers)
        symmetry = self._symmetry_ids if symmetry is None else symmetry
        reads = self._image_reads[:, positions][symmetry * len(ROTATION_PERMS) + rotation]  # (B, S, n) input stickers
        colours = stickers.gather(1, reads.view(batch, -1)).view(reads.shape)
        return self._sym_colours_flat[colours + NUM_FACES * symmetry.unsqueeze(-1).expand_as(colours)]

    @torch.no_grad()
    def predict(self, x) -> tuple[torch.Tensor, torch.Tensor]:
        """Softmax policy and value for one state ``(144,)`` or a batch ``(B, 144)``.

        One state gives ``(12,)`` and ``(1,)``; a batch gives ``(B, 12)`` and ``(B, 1)``
        (the original's ``squeeze(0)`` behaviour). Accepts tensors or numpy arrays.
        """
        device = next(self.parameters()).device
        x = torch.as_tensor(np.asarray(x, dtype=np.float32) if not torch.is_tensor(x) else x, device=device).float()
        single = x.dim() == 1
        if single:
            x = x.unsqueeze(0)
        logits, value = self.forward(x)
        policy = F.softmax(logits, dim=-1)
        if single:
            return policy.squeeze(0), value.squeeze(0)
        return policy, value


def distance_value(distance_logits: torch.Tensor) -> torch.Tensor:
    """``(B, K)`` distance logits -> ``(B, 1)`` values ``1 - 0.03 E[d]`` (at most 1, at least -1)."""
    classes = torch.arange(distance_logits.shape[1], device=distance_logits.device, dtype=distance_logits.dtype)
    expected = (distance_logits.softmax(dim=1) * classes).sum(dim=1, keepdim=True)
    return (1.0 - VALUE_PER_MOVE * expected).clamp(-1.0, 1.0)
