"""The cube network (``Policy_Value_Net.PolicyValueNet``) from its checkpoint: what a state_dict says about
the network that wrote it, the network rebuilt from it, and the scripts' way of finding and loading one.

A checkpoint records the network's shape in its layer shapes (inputs, actions, hidden sizes, value head)
and its reading options in marker entries (``run.Checkpoints``), so ``model_from_state`` needs no flags;
``load_model(..., puzzle=...)`` refuses a network made for another cube, and any loader refuses a Go
network. The file itself is read by ``run.Checkpoints.load_state_dict``.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from cube.Pair_Input import obs_dim_of_table
from cube.Puzzles import PUZZLES, get_puzzle
from engine.Games import GAMES
from Policy_Value_Net import HIDDEN_SIZES, OBS_DIM_2X2, PolicyValueNet
from Rubik2x2Env import NUM_ACTIONS
from run.Checkpoints import CANONICAL_KEY, MARKERS, PAIR_KEY, SYMMETRY_KEY, go_size_of, load_state_dict
from run.Run_IO import CheckpointError, find_checkpoint

FIRST_LAYER = "body.0.weight"  # (512, obs_dim) in every checkpoint but a cubie-pair one (PAIR_TABLE)
POLICY_LAYER = "policy_head.weight"  # (act_dim, 128)
PAIR_TABLE = "body.0.table"  # a cubie-pair first layer's (slots * 36 + 1, hidden) rows


#: The original project's layer names (its Policy_Value_Net: ``fc1``..``fc4`` Linear, ``norm1``..``norm4``
#: LayerNorm; the heads as here).
ORIGINAL_LAYER = re.compile(r"^(fc|norm)([1-9][0-9]*)\.(weight|bias)$")


def with_current_names(state: dict) -> dict:
    """``state`` with the original project's layer names renamed to this network's (``fcK`` to ``body.3(K-1)``,
    ``normK`` to the LayerNorm after it, ``body.3(K-1)+1``: each hidden layer is a Linear, a LayerNorm and a
    ReLU), so that a checkpoint of the original loads (SPEC section 3); any other state as it is."""
    renamed = {}
    for key, value in state.items():
        found = ORIGINAL_LAYER.match(key)
        if found:
            kind, number, what = found.groups()
            key = f"body.{3 * (int(number) - 1) + (kind == 'norm')}.{what}"
        renamed[key] = value
    return renamed


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


def residual_blocks_of(state: dict) -> int:
    """How many ``ResidualBlock`` s follow the hidden layers of a state_dict (``body.<i>.inner.0.weight``)."""
    return len({key.split(".")[1] for key in state if key.startswith("body.") and key.endswith(".inner.0.weight")})


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
    ``distance_classes`` rows) and its hidden layer sizes are the ones ``state`` holds (a checkpoint of the
    original project under its own layer names too: ``with_current_names``)."""
    state = with_current_names(state)
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
            residual_blocks=residual_blocks_of(state),
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
    state = with_current_names(load_state_dict(path))
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
