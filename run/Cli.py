"""Command-line plumbing shared by the scripts: the original project's defaults as named
constants, the ``--device`` flag, the help formatter, flag types with bounds, and the one
way a script reports a usage or input error (one sentence on stderr, exit status 2).

torch is imported only when a device is resolved, so a script's ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import re
import sys

from Rubik2x2Env import MAX_MOVES  # noqa: F401 - re-exported: the 2x2's episode cap is the scripts' default

# The original project's defaults (faithfulness: the constants of its scripts).
from run import Process_Signals
from run.Input_Echo import shown
from run.Process_Signals import EXIT_INTERRUPTED, interrupted  # noqa: F401 - re-exported: how every script ends on a signal
from run.Run_IO import OutputError

EVAL_SIMULATIONS = 1000  # MCTS simulations per move in the evaluation
EXIT_USAGE = 2  # exit status of every error a user can fix: a bad flag, file, device or model

# Bounds of the flags (one place for every script): beyond them a run cannot fit in memory
# or time, or the value means nothing.
SEED_MAX = 2**32 - 1  # numpy's legacy seeding takes 32 bits
MAX_SIMULATIONS = 100_000  # per move: a search tree preallocates this many nodes per root
MAX_SCRAMBLE_LEN = 10_000  # every 2x2 position is within 14 quarter turns: longer adds nothing
MAX_EPISODES = 1_000_000  # episodes / runs / positions per setting: all are held in memory at once
MAX_MOVE_LIMIT = 10_000  # moves per episode: an episode's states are kept
MAX_ROUNDS = 1_000  # benchmark rounds

MAX_NUMBER_CHARS = 40  # a number flag or GTP argument longer than this is no number anyone means
MAX_KOMI = 1000.0  # komi beyond the largest board's 361 points decides every game before it starts
MAX_C_PUCT = 1e6  # PUCT's exploration constant: far beyond it every product overflows to inf
MAX_DIRICHLET_ALPHA = 1e6  # a concentration so large is the uniform noise already; numpy's sampler fails past it
#: A number as people write one, in ASCII: sign, digits, one point, an exponent. Python's float() also takes
#: other scripts' digits (``٢٤``) and underscores (``1_000``); GTP and the flags refuse those.
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_INTEGER = re.compile(r"[+-]?\d{1,20}", re.ASCII)

DEVICE_CHOICES = "auto (CUDA when available), cpu, cuda or cuda:N"
_DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d+)?")


class DeviceError(Exception):
    """A ``--device`` that does not name a device, or names one this machine lacks. One sentence."""


#: A string as ``repr`` writes it.
_REPR = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
#: Where argparse's messages and the flag types' ("..., got 'x'") quote the input they refuse.
_ECHO = re.compile(rf"(invalid choice: |invalid [^:]* value: |explicit argument |got )({_REPR})")
_UNRECOGNIZED = "unrecognized arguments: "
MAX_UNRECOGNIZED_SHOWN = 5  # unknown words an error names: a pasted file can hold thousands


def _bounded(message: str) -> str:
    """``message`` with the input it quotes cut (``Input_Echo.shown``): argparse echoes a bad choice, a bad
    value and every unknown word whole, and the types of other modules (``--game``, ``--puzzle``) do too."""

    def cut(match: re.Match) -> str:
        try:
            return match[1] + shown(ast.literal_eval(match[2]))
        except (ValueError, SyntaxError):  # not a repr after all: as it was
            return match[0]

    message = _ECHO.sub(cut, message)
    if message.startswith(_UNRECOGNIZED):
        words = message[len(_UNRECOGNIZED) :].split(" ")
        more = len(words) - MAX_UNRECOGNIZED_SHOWN
        named = " ".join(shown(word, quote=False) for word in words[:MAX_UNRECOGNIZED_SHOWN])
        message = _UNRECOGNIZED + named + (f" and {more} more" if more > 0 else "")
    return message


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line on stderr (no usage block) and
    exit status 2, like every other error of the scripts, quoting at most a few words of the
    input they refuse. A negative number with an exponent (``--komi -1e300``) is a value, as
    ``-5`` is (argparse's own pattern reads it as a flag)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$", re.ASCII)

    def error(self, message: str):
        message = _bounded(message)
        if message.endswith(".") and not message.endswith("..."):  # the ellipsis of a quote cut short stays
            message = message[:-1]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help).\n")


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
        raise argparse.ArgumentTypeError(f"must be {DEVICE_CHOICES}, got {shown(text)}")
    return text


class Flag:
    """One row of a script's flag table: the flag's name, default and help text, and argparse's other
    keywords (``type``, which also sets the bounds, e.g. ``int_in(0, 1000, "moves")``; ``choices``,
    ``nargs``, ``metavar``, ``action``). main.py's cube flags (Train_Args.py) and Go flags (Go_Args.py) are
    both tables of these, read by ``parser_from_groups``."""

    def __init__(self, name: str, default, help: str, **options):
        self.name, self.default, self.help, self.options = name, default, help, options

    def add_to(self, group) -> None:
        # A list default is copied: a parsed value must never be the table's own list.
        default = list(self.default) if isinstance(self.default, list) else self.default
        group.add_argument(self.name, default=default, help=self.help, **self.options)


def parser_from_groups(groups: dict, description: str | None = None, prog: str | None = None) -> ArgumentParser:
    """The parser of a flag table: ``{--help group title (None: the parser's own): [Flag, or a function
    that adds flags other scripts share, e.g. add_device_flag]}``, in --help's order."""
    parser = ArgumentParser(prog=prog, description=description, formatter_class=HelpFormatter)
    for title, flags in groups.items():
        group = parser if title is None else parser.add_argument_group(title)
        for entry in flags:
            if isinstance(entry, Flag):
                entry.add_to(group)
            else:
                entry(group)
    return parser


def add_device_flag(group) -> None:
    """The ``--device`` flag every script that runs the network has."""
    group.add_argument("--device", type=device_name, default="auto", help=f"where the network runs: {DEVICE_CHOICES}")


def add_checkpoint_flag(group) -> None:
    """The ``--checkpoint`` flag of every script that loads a trained model (``Run_IO.find_checkpoint``
    resolves the default)."""
    group.add_argument(
        "--checkpoint",
        type=nonempty_path,
        help="model file (default: ./rubik_policy_value.pt, else pretrained/rubik_policy_value.pt)",
    )


def resolve_device(name: str = "auto"):
    """``auto`` -> CUDA when available, else CPU; ``cpu``/``cuda``/``cuda:N`` as asked.
    Raises DeviceError for a name that is no device or a CUDA device this machine lacks."""
    import torch  # here, not at the top: torch takes seconds to import and --help needs none of it

    try:
        device_name(name)
    except argparse.ArgumentTypeError as exc:
        raise DeviceError(f"--device {exc}.") from None
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
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
    device = torch.device(name)
    if device.type == "cuda":
        full_float32_on_cuda()
    return device


def full_float32_on_cuda() -> None:
    """Float32 convolutions and matrix products on CUDA, as on the CPU. PyTorch lets cuDNN convolve in
    TF32 (a 10-bit mantissa) by default: on an H200 that moved the go5 network's logits by 4.5e-3 from
    the CPU's, enough to flip a near-tied visit count (docs/gpu_smoke.txt). The networks are small; the
    speed TF32 buys them is not worth results that differ by device."""
    import torch

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


def integer(text: str) -> int:
    """argparse type: an integer in ASCII digits, at most 20 of them (``int`` also takes other scripts' digits
    and underscores, and fails past 4,300 digits with a message about Python's settings)."""
    if not _INTEGER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"must be an integer, got {shown(text)}")
    return int(text)


def int_in(lo: int, hi: int | None = None, why: str = "") -> callable:
    """argparse type: an integer (``integer``) in ``lo..hi`` (``hi`` None: no upper bound)."""

    def parse(text: str) -> int:
        value = integer(text)
        if value < lo or (hi is not None and value > hi):
            bound = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
            raise argparse.ArgumentTypeError(f"must be {bound}{' (' + why + ')' if why else ''}, got {value}")
        return value

    return parse


def strict_float(text: str) -> float:
    """The number ``text`` writes in ASCII (``_NUMBER``; ``inf`` and ``nan`` too, for the finite checks
    to name), at most ``MAX_NUMBER_CHARS`` long; ValueError (a sentence) otherwise. The one number parser
    of the flags and of GTP's arguments."""
    word = text.strip()
    if len(word) > MAX_NUMBER_CHARS or not (
        _NUMBER.fullmatch(word) or word.lower().lstrip("+-") in ("inf", "infinity", "nan")
    ):
        raise ValueError(f"{shown(text)} is not a number")
    return float(word)


def _finite_float(text: str) -> float:
    """``strict_float``, finite: the types below may quote ``text.strip()`` whole (at most ``MAX_NUMBER_CHARS``)."""
    try:
        value = strict_float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {shown(text)}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {shown(text)}")
    return value


def komi(text: str) -> float:
    """argparse type of a Go ``--komi``: a finite number within +-``MAX_KOMI``."""
    value = _finite_float(text)
    if abs(value) > MAX_KOMI:
        raise argparse.ArgumentTypeError(f"must be between {-MAX_KOMI:g} and {MAX_KOMI:g}, got {text.strip()}")
    return value


def c_puct(text: str) -> float:
    """argparse type of ``--c-puct`` in Go play: positive, at most ``MAX_C_PUCT``."""
    value = positive_float(text)
    if value > MAX_C_PUCT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_C_PUCT:g}, got {text.strip()}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite float above 0."""
    value = _finite_float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text.strip()}")
    return value


def nonnegative_float(text: str) -> float:
    """argparse type: a finite float, 0 or more."""
    value = _finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text.strip()}")
    return value


def fraction(text: str) -> float:
    """argparse type: a number in 0..1 (a rate)."""
    value = _finite_float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text.strip()}")
    return value


def nonempty_path(text: str) -> str:
    """argparse type of a file or folder flag: an empty value (an unset shell variable) is an error."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty, got ''")
    return text


seed = int_in(0, SEED_MAX, "seeds are 32-bit")
simulations = int_in(1, MAX_SIMULATIONS, "simulations per move; a search tree holds them all")
scramble_len = int_in(0, MAX_SCRAMBLE_LEN, "every position is within 14 quarter turns")
episodes = int_in(1, MAX_EPISODES, "all episodes are held in memory")
move_limit = int_in(1, MAX_MOVE_LIMIT, "moves per episode")
rounds = int_in(1, MAX_ROUNDS, "measurement rounds")
milliseconds = int_in(0, 60_000, "at most a minute")
# Training (main.py): sizes held in memory or iterated over.
iterations = int_in(1, 1_000_000, "iterations")
epochs = int_in(1, 10_000, "passes over the training sample")
batch_size = int_in(1, 1_000_000, "states per mini-batch")
buffer_size = int_in(1, 10_000_000, "replay buffer states, held in memory")
batches = int_in(1, 1_000_000, "mini-batches")
buffer_batches = int_in(0, 1_000_000, "mini-batches; 0 trains from the first iteration")
states = int_in(1, 10_000_000, "states held in memory at once")


def is_ascii_digits(text: str) -> bool:
    """``text`` is one or more of 0-9 (``str.isdigit`` also accepts ``²`` or ``①``, which ``int`` refuses)."""
    return text.isascii() and text.isdigit()


def fail(message) -> int:
    """Print ``error: <message>`` (one sentence) on stderr and return the exit status 2."""
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE


class _QuietStdout:
    """``sys.stdout`` that stops printing, quietly, once writing fails (the reader of a pipe
    left, as with ``| head -1``; a full disk): the run goes on and finishes its result
    files. ``error`` keeps the first failure; the stream's descriptor then points at
    ``/dev/null``, so that buffered text never fails again (at exit, say)."""

    def __init__(self, stream):
        self._stream = stream
        self.error: OSError | None = None

    def write(self, text):
        if self.error is None:
            try:
                return self._stream.write(text)
            except OSError as exc:
                self._lost(exc)
        return len(text)

    def flush(self) -> None:
        if self.error is None:
            try:
                self._stream.flush()
            except OSError as exc:
                self._lost(exc)

    def _lost(self, exc: OSError) -> None:
        self.error = exc
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def run_script(main, argv=None):
    """``sys.exit(main(argv))`` as a Unix tool behaves: printing stops quietly when stdout's
    reader leaves (the work and its files are finished; the exit status is main's), a stdout
    that cannot be written (``> /dev/full``) gives one sentence and exit status 2, and Ctrl-C
    gives ``interrupted`` and exit status 130, never a traceback (SIGTERM too: ``Process_Signals``)."""
    Process_Signals.running()
    guard = _QuietStdout(sys.stdout)
    sys.stdout = guard
    try:
        status = main(argv)
        guard.flush()
    except KeyboardInterrupt:
        status = interrupted()
    except OSError as exc:  # a result file that cannot be written after all (disk full): one sentence
        if not isinstance(exc, OutputError):
            raise
        status = fail(exc)
    Process_Signals.finishing()
    error = guard.error
    if error is not None and not isinstance(error, BrokenPipeError) and not status:
        status = fail(f"cannot write to standard output ({error.strerror or type(error).__name__}).")
    sys.exit(status)


def show_progress(flag: bool | None) -> bool:
    """``--progress/--no-progress``; unset: progress bars when stderr is a terminal."""
    return sys.stderr.isatty() if flag is None else flag
