"""Policy-value network (the original's architecture) and safe checkpoint I/O.

``PolicyValueNet``: 144 -> 512 -> 1024 -> 512 -> 128 (``HIDDEN_SIZES``), each Linear followed by
LayerNorm and ReLU; a policy head (12 logits) and a value head (tanh). Checkpoints are bare
``state_dict`` files (a checkpoint of the original project loads too), written atomically
and read with ``weights_only=True``.

``PolicyValueNet(canonical_orientation=True)`` (``main.py --canonical-orientation``, beyond
the original) turns every input cube as a whole into its canonical orientation before the
layers, and renames the policy's moves back. The 24 orientations of a position then share
one input, so the value is exactly the same for all of them and the network has 24 times
fewer inputs to learn. Its checkpoint holds one extra entry, ``canonical_orientation``,
which is how ``load_model`` knows to build it that way.

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

Other puzzles: ``obs_dim`` and ``act_dim`` are the puzzle's (``Puzzles.Puzzle.obs_dim``: 144 for
the 2x2, 324 for the 3x3; 12 actions for both). A checkpoint records them in its layer shapes,
so ``model_from_state`` reads them from there, and ``load_model(..., puzzle=...)`` refuses a
network made for another cube. The canonicalising options use the 2x2's whole-cube rotations
and stay the 2x2's (a 3x3's orientation is fixed by its centres anyway).
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from cube.Pair_Input import CubiePairs, obs_dim_of_table
from cube.Puzzles import PUZZLES, get_puzzle
from engine.Games import GAMES
from engine.Value_Scale import VALUE_PER_MOVE
from Rubik2x2Env import (
    NUM_ACTIONS,
    NUM_FACES,
    NUM_STICKERS,
    ROTATION_CANONICAL_TABLES,
    ROTATION_PERMS,
    SYMMETRY_CANONICAL_TABLES,
)
from run.Run_IO import DEFAULT_CHECKPOINT, CheckpointError, atomic_write, find_checkpoint, not_a_file

HIDDEN_SIZES = (512, 1024, 512, 128)
OBS_DIM_2X2 = NUM_STICKERS * NUM_FACES  # 144: the inputs the canonicalising tables are built for
FIRST_LAYER = "body.0.weight"  # (512, obs_dim) in every checkpoint but a cubie-pair one (PAIR_TABLE)
POLICY_LAYER = "policy_head.weight"  # (act_dim, 128)
CANONICAL_KEY = "canonical_orientation"  # the state_dict entry that marks a canonicalising network
SYMMETRY_KEY = "canonical_symmetry"  # ... and one that also reduces the 48 symmetries
PAIR_KEY = "cubie_pair_input"  # ... and one whose first layer reads cubie colour pairs (Pair_Input)
PAIR_TABLE = "body.0.table"  # that layer's (slots * 36 + 1, hidden) rows
GO_SIZE_KEY = "go_board_size"  # the entry that marks a Go network (Go_Net) and holds its board size
MARKERS = (CANONICAL_KEY, SYMMETRY_KEY, PAIR_KEY)  # state_dict entries that mark how a network reads, not weights


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
    ):
        super().__init__()
        if (canonical_orientation or canonical_symmetry) and obs_dim != OBS_DIM_2X2:
            raise ValueError(f"canonical orientation and symmetry are the 2x2's ({OBS_DIM_2X2} inputs), not {obs_dim}")
        if not hidden_sizes or min(hidden_sizes) < 1:
            raise ValueError(f"hidden layer sizes must be at least one positive number, got {list(hidden_sizes)}")
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


def save_checkpoint(model: nn.Module, path: str = DEFAULT_CHECKPOINT) -> None:
    """Save the bare ``state_dict`` atomically (tensors moved to CPU, so any machine loads it)."""
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    atomic_write(path, lambda f: torch.save(state, f))


def load_state_dict(path: str) -> dict:
    """Read a checkpoint safely (``weights_only=True``, CPU ``map_location``) or raise CheckpointError."""
    problem = not_a_file(path)  # a FIFO is never opened: it would wait for a writer
    if problem:
        raise CheckpointError(f"checkpoint '{path}' {problem}.")
    try:
        with warnings.catch_warnings():  # torch warns on some damaged files before failing: one message is enough
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # pickle errors, truncated zip, ... all mean "not a checkpoint"
        raise CheckpointError(
            f"checkpoint '{path}' is corrupt or not a PyTorch state_dict ({type(exc).__name__})."
        ) from None
    problem = unusable_tensor(state)
    if problem is not None:
        raise CheckpointError(f"checkpoint '{path}' is damaged: {problem}.")
    if isinstance(state, dict) and "model" in state and isinstance(state["model"], dict):
        state = state["model"]
    if not isinstance(state, dict):
        raise CheckpointError(f"checkpoint '{path}' does not hold a state_dict.")
    check_weights(state, path)
    return state


def unusable_tensor(obj, name: str = "") -> str | None:
    """What is wrong with the first tensor in ``obj`` (a tensor, or dicts, lists and tuples of
    them, as ``torch.load`` returns) that holds no plain numbers: a sparse, quantized or meta
    (shape only, no data) tensor, named by its path of keys; None if there is none. Such
    tensors load with ``weights_only=True`` and fail later, with a traceback, in whatever reads
    them: every loader of checkpoints and training states asks this first."""
    if torch.is_tensor(obj):
        if obj.is_meta:
            kind = "a meta tensor (a shape without data)"
        elif obj.layout != torch.strided:
            kind = f"a {str(obj.layout).removeprefix('torch.')} tensor"
        elif obj.is_quantized:
            kind = "a quantized tensor"
        else:
            return None
        return f"'{name}' is {kind}, not a plain dense one"
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    else:
        return None
    for key, value in items:
        problem = unusable_tensor(value, f"{name}.{key}" if name else str(key))
        if problem is not None:
            return problem
    return None


def check_weights(state: dict, path: str) -> None:
    """Raise CheckpointError (one sentence naming ``path`` and the first bad entry) unless
    every key is a string and every tensor holds finite floating-point numbers: NaN, Inf or
    integer weights would load and solve nothing."""
    for key, value in state.items():
        if not isinstance(key, str):
            raise CheckpointError(f"checkpoint '{path}' is damaged: it has a non-string key {key!r}.")
        if key in MARKERS:  # markers, not weights
            continue
        if not isinstance(value, torch.Tensor):
            raise CheckpointError(f"checkpoint '{path}' is damaged: '{key}' is a {type(value).__name__}, not a tensor.")
        if not value.is_floating_point():
            raise CheckpointError(
                f"checkpoint '{path}' is damaged: tensor '{key}' is {value.dtype}, not floating point."
            )
        if not bool(torch.isfinite(value).all()):
            raise CheckpointError(f"checkpoint '{path}' is damaged: tensor '{key}' holds NaN or infinite values.")


def distance_classes_of(state: dict) -> int:
    """The ``distance_classes`` of a state_dict: the rows of its value head when more than one."""
    head = state.get("value_head.weight")
    rows = head.shape[0] if isinstance(head, torch.Tensor) and head.ndim == 2 else 1
    return rows if rows > 1 else 0


def hidden_sizes_of(state: dict) -> tuple[int, ...]:
    """The hidden layer sizes of a state_dict: the rows of each body Linear (``body.0``,
    ``body.3``, ... : Linear, LayerNorm, ReLU per layer; a cubie-pair first layer's table columns);
    ``HIDDEN_SIZES`` when it has none."""
    table = state.get(PAIR_TABLE)
    sizes = [int(table.shape[1])] if isinstance(table, torch.Tensor) and table.dim() == 2 else []
    while isinstance(weight := state.get(f"body.{3 * len(sizes)}.weight"), torch.Tensor) and weight.dim() == 2:
        sizes.append(int(weight.shape[0]))
    return tuple(sizes) or HIDDEN_SIZES


def go_size_of(state: dict) -> int | None:
    """The board size of a Go network's state_dict (``Go_Net.GoNet``), None for a cube's."""
    marker = state.get(GO_SIZE_KEY)
    return int(marker.item()) if isinstance(marker, torch.Tensor) and marker.numel() == 1 else None


def is_canonical(state: dict) -> bool:
    """Whether a state_dict belongs to a ``PolicyValueNet(canonical_orientation=True)``."""
    return CANONICAL_KEY in state


def model_from_state(
    state: dict,
    path: str,
    canonical_orientation: bool = False,
    canonical_symmetry: bool = False,
    distance_classes: int = 0,
) -> PolicyValueNet:
    """A ``PolicyValueNet`` holding the weights of ``state`` (read from ``path``). It
    canonicalises orientations (and symmetries) if ``state`` did or the flags ask for it:
    a plain network's weights then start a canonicalising one. Its value head (scalar, or
    ``distance_classes`` rows) and its hidden layer sizes are the ones ``state`` holds."""
    obs_dim, act_dim = state_dims(state)
    try:
        model = PolicyValueNet(
            obs_dim,
            act_dim,
            canonical_orientation=canonical_orientation or is_canonical(state),
            canonical_symmetry=canonical_symmetry or SYMMETRY_KEY in state,
            distance_classes=distance_classes_of(state) if "value_head.weight" in state else distance_classes,
            hidden_sizes=hidden_sizes_of(state),
            pair_input=PAIR_KEY in state,
        )
    except ValueError as exc:
        raise CheckpointError(f"checkpoint '{path}' cannot be built: {exc}.") from None
    weights = {k: v for k, v in state.items() if k not in MARKERS}
    try:
        missing, unexpected = model.load_state_dict(weights, strict=False)
    except (RuntimeError, KeyError):
        missing = unexpected = ["shapes"]
    if [k for k in missing if k not in MARKERS] or unexpected:
        raise CheckpointError(f"checkpoint '{path}' does not fit PolicyValueNet (wrong keys or shapes).")
    return model


def state_dims(state: dict) -> tuple[int, int]:
    """``(obs_dim, act_dim)`` of the network a state_dict holds, read from its layer shapes when
    they are a registered game's (``Games.GAMES``: the puzzles, and games such as the tests'
    tic-tac-toe); else the 2x2's 144 and 12, so that ``model_from_state`` reports the shapes that
    do not fit (a network of another size is a damaged file, not a new game)."""
    first, policy, table = state.get(FIRST_LAYER), state.get(POLICY_LAYER), state.get(PAIR_TABLE)
    obs_dim = first.shape[1] if isinstance(first, torch.Tensor) and first.dim() == 2 else OBS_DIM_2X2
    if isinstance(table, torch.Tensor) and table.dim() == 2:
        obs_dim = obs_dim_of_table(table.shape[0]) or OBS_DIM_2X2
    act_dim = policy.shape[0] if isinstance(policy, torch.Tensor) and policy.dim() == 2 else NUM_ACTIONS
    if (obs_dim, act_dim) not in {(int(np.prod(g.obs_shape)), g.num_actions) for g in GAMES.values()}:
        return OBS_DIM_2X2, NUM_ACTIONS
    return int(obs_dim), int(act_dim)


def load_model(path: str, device: torch.device | str = "cpu", puzzle=None) -> PolicyValueNet:
    """A ``PolicyValueNet`` with the weights of ``path``, in eval mode, on ``device``. With a
    ``puzzle`` (a ``Puzzles.Puzzle`` or its name), a network made for another cube raises
    CheckpointError (one sentence); so does a Go network (``Go_Net``), with or without one."""
    state = load_state_dict(path)
    if (size := go_size_of(state)) is not None:
        raise CheckpointError(f"checkpoint '{path}' is a Go network for {size}x{size}, not a cube's.")
    if puzzle is not None:
        puzzle = get_puzzle(puzzle)
        obs_dim, act_dim = state_dims(state)
        if (obs_dim, act_dim) != (puzzle.obs_dim, puzzle.num_actions):
            made_for = [p.name for p in PUZZLES.values() if p.obs_dim == obs_dim]
            what = f"the {made_for[0]}" if made_for else f"{obs_dim} inputs"
            raise CheckpointError(f"checkpoint '{path}' is a network for {what}, not the {puzzle.name}.")
    return model_from_state(state, path).to(device).eval()


def find_and_load_model(checkpoint: str | None, device: torch.device | str, puzzle=None) -> tuple[PolicyValueNet, str]:
    """``(model, path)`` as every script loads it: the model file looked up (``Run_IO.find_checkpoint``:
    ``checkpoint``, else the puzzle's model file name in ./, else in pretrained/) and loaded in eval mode
    on ``device`` (resolved already: ``Cli.resolve_device``). ``puzzle`` (a ``Puzzles.Puzzle`` or its name;
    None: the 2x2 without a check): a model made for another cube is refused. Raises CheckpointError
    (one sentence)."""
    path = find_checkpoint(checkpoint, get_puzzle(puzzle).checkpoint)
    return load_model(path, device, puzzle), path
