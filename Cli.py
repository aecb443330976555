"""Command-line plumbing shared by the scripts: the original project's defaults as named
constants, the ``--device`` flag, the help formatter, flag types with bounds, and the one
way a script reports a usage or input error (one sentence on stderr, exit status 2).

torch is imported only when a device is resolved, so a script's ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import re
import sys

# The original project's defaults (faithfulness: the constants of its scripts).
C_PUCT = 1.3  # PUCT exploration constant
MAX_MOVES = 40  # moves per episode before it counts as unsolved
EVAL_SIMULATIONS = 1000  # MCTS simulations per move in the evaluation
EXIT_USAGE = 2  # exit status of every error a user can fix: a bad flag, file, device or model

DEVICE_CHOICES = "auto (CUDA when available), cpu, cuda or cuda:N"
_DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d+)?")


class DeviceError(Exception):
    """A ``--device`` that does not name a device, or names one this machine lacks. One sentence."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The module docstring as written, and each flag's default value in --help."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return text + " (default: %(default)s)"


def device_name(text: str) -> str:
    """argparse type of ``--device``: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``."""
    if not _DEVICE_PATTERN.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be {DEVICE_CHOICES}, got {text!r}")
    return text


def add_device_flag(group) -> None:
    """The ``--device`` flag every script that runs the network has."""
    group.add_argument("--device", type=device_name, default="auto", help=f"where the network runs: {DEVICE_CHOICES}")


def resolve_device(name: str = "auto"):
    """``auto`` -> CUDA when available, else CPU; ``cpu``/``cuda``/``cuda:N`` as asked.
    Raises DeviceError for a name that is no device or a CUDA device this machine lacks."""
    import torch

    try:
        device_name(name)
    except argparse.ArgumentTypeError as exc:
        raise DeviceError(f"--device {exc}.") from None
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise DeviceError(
                f"--device {name} was asked for but CUDA is not available on this machine; use --device cpu."
            )
        index = torch.device(name).index
        if index is not None and index >= torch.cuda.device_count():
            raise DeviceError(
                f"--device {name} was asked for but this machine has {torch.cuda.device_count()} CUDA device(s)."
            )
    return torch.device(name)


def int_in(lo: int, hi: int | None = None, why: str = "") -> callable:
    """argparse type: an integer in ``lo..hi`` (``hi`` None: no upper bound)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            bound = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
            raise argparse.ArgumentTypeError(f"must be {bound}{' (' + why + ')' if why else ''}, got {value}")
        return value

    return parse


def positive_float(text: str) -> float:
    """argparse type: a float above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def fail(message) -> int:
    """Print ``error: <message>`` (one sentence) on stderr and return the exit status 2."""
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE


def show_progress(flag: bool | None) -> bool:
    """``--progress/--no-progress``; unset: progress bars when stderr is a terminal."""
    return sys.stderr.isatty() if flag is None else flag


def load_script_model(checkpoint: str | None, device: str):
    """``(model, path, device)`` as every script loads it: the device resolved, the model
    file looked up (``Run_IO.find_checkpoint``) and loaded in eval mode. Raises DeviceError
    or CheckpointError (one sentence each)."""
    from Policy_Value_Net import load_model
    from Run_IO import find_checkpoint

    resolved = resolve_device(device)
    path = find_checkpoint(checkpoint)
    return load_model(path, resolved), path, resolved
