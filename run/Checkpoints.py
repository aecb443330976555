"""Checkpoint files of every game's network: written atomically, read safely and checked, knowing no network.

A checkpoint is a bare ``state_dict`` (a checkpoint of the original project loads too), saved with its
tensors on the CPU through ``Run_IO.atomic_write`` and read with ``weights_only=True``. Besides weights it
may hold *marker* entries that say how to rebuild the network: the cube network's reading options
(``CANONICAL_KEY``, ``SYMMETRY_KEY``, ``PAIR_KEY``: ``Policy_Value_Net`` registers them) and Go's board size
(``GO_SIZE_KEY``: ``Go_Net``). They are named here, once, because both the networks that write them and the
loaders that read them need the names; building a network from a checkpoint is the game's
(``cube.Cube_Checkpoints``, ``go.Go_Net``).
"""

from __future__ import annotations

import warnings

import torch
import torch.nn as nn

from run.Run_IO import DEFAULT_CHECKPOINT, CheckpointError, atomic_write, not_a_file

CANONICAL_KEY = "canonical_orientation"  # the state_dict entry that marks a canonicalising network
SYMMETRY_KEY = "canonical_symmetry"  # ... and one that also reduces the 48 symmetries
PAIR_KEY = "cubie_pair_input"  # ... and one whose first layer reads cubie colour pairs (Pair_Input)
GO_SIZE_KEY = "go_board_size"  # the entry that marks a Go network (Go_Net) and holds its board size
MARKERS = (CANONICAL_KEY, SYMMETRY_KEY, PAIR_KEY)  # state_dict entries that mark how a network reads, not weights


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


def go_size_of(state: dict) -> int | None:
    """The board size of a Go network's state_dict (``Go_Net.GoNet``), None for a cube's."""
    marker = state.get(GO_SIZE_KEY)
    return int(marker.item()) if isinstance(marker, torch.Tensor) and marker.numel() == 1 else None
