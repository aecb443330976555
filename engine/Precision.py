"""The precision of the network's matrix products: ``--precision fp32|bf16|auto``.

bfloat16 keeps float32's exponent with an 8-bit mantissa. Where the hardware multiplies it natively
(CUDA GPUs that support it, CPUs with AVX-512 BF16 or AMX), ``torch.autocast`` runs the linear layers in
it about twice as fast: on this project's 2-core CPU the 3x3's network reads 2.2x as many cubes a second
and trains on 2.1x as many (docs/puzzles.md, "bfloat16"). The weights, the softmaxes and the losses stay
float32 (autocast's own rules), so only the products round: the 3x3 network's expected distance moves by
0.003 moves on average. Elsewhere bfloat16 is emulated and slower, so ``auto`` picks it only where it is
native, and ``fp32`` (every default but the 3x3's) is the arithmetic the bit-exact tests pin.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

# torch is imported inside the functions that use it: scripts read PRECISIONS and help_text for their
# flags, and their --help should not wait for torch.

PRECISIONS = ("fp32", "bf16", "auto")


def help_text(work: str, speed: str) -> str:
    """The ``--precision`` flag's help, one wording for every script: ``work`` is what the network does
    under it, ``speed`` the measured gain where bfloat16 is native."""
    return (
        f"the network's matrix products in {work}: float32, or bfloat16 (autocast; {speed} where the hardware "
        "multiplies it natively, emulated and slower elsewhere); auto: bf16 there, else fp32"
    )


def bf16_native(device) -> bool:
    """Whether ``device`` multiplies bfloat16 natively (a CUDA GPU that supports it, or a CPU with
    AVX-512 BF16 or AMX tiles)."""
    import torch

    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        # torch exposes the CPU's features only privately; a torch without these probes says no.
        probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
        return any(getattr(torch.cpu, name, lambda: False)() for name in probes)
    return False


def resolve(precision: str, device) -> str:
    """``fp32`` or ``bf16``: ``auto`` becomes bf16 where ``device`` runs it natively, else fp32.
    Raises ValueError for a name not in ``PRECISIONS``."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if precision == "auto":
        return "bf16" if bf16_native(device) else "fp32"
    return precision


def autocast(precision: str, device) -> contextlib.AbstractContextManager:
    """A context in which ``device``'s matrix products run at ``precision`` (a no-op for fp32)."""
    import torch

    device = torch.device(device)
    if resolve(precision, device) == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)


@contextlib.contextmanager
def eval_mode(model: torch.nn.Module):
    """Run the block with ``model`` in eval mode, then put back the mode it had."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)
