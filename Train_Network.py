"""The AlphaZero loss and the training pass over a sample of targets (the original recipe):
``train_on_targets`` trains on every target source (self-play, lookahead, sweep, the seed
systems'), under the original's name ``train_on_selfplay_data`` too."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from engine import Precision
from engine.Value_Scale import VALUE_PER_MOVE

VALUE_WEIGHT = 1.0
POLICY_WEIGHT = 1.2
VALUE_LOSSES = ("mse", "logit", "bce", "distance")  # main.py --value-loss
LOGIT_LOSSES = ("logit", "bce", "distance")  # value losses that read the network's raw head outputs
_ATANH_CLIP = 0.999  # targets of +-1 (a solved cube) have an infinite logit
_WHOLE_MOVE_TOLERANCE = 1e-3  # float32's 1 - 0.03 d read back as d moves is off by about 1e-5


def alphazero_loss(
    policy_logits,
    value_pred,
    target_pi,
    target_v,
    value_weight: float = VALUE_WEIGHT,
    sample_weights=None,
    value_loss: str = "mse",
):
    """``1.0 * MSE(v, z) + 1.2 * CE(pi, softmax(logits))``; returns (loss, policy_loss, value_loss).

    ``value_weight`` replaces the 1.0 (``main.py --value-weight``): values one move apart
    differ by only 0.03, so an error of a whole move costs 0.0009 in the MSE.

    ``sample_weights`` (beyond the original; None = exactly the original's loss): a tensor
    ``(B,)`` weighting both terms of each sample, or ``(B, 2)`` with one column for the
    policy term and one for the value term (ADI's ``1/D``; a scramble-trained network's
    value column 0). Each term is then ``sum(w * per-sample loss) / B``.

    ``value_loss="logit"`` (``main.py --value-loss logit``): ``value_pred`` is the value
    before its tanh (``PolicyValueNet.forward_logits``) and each sample's value error is
    ``((1 - z^2) (u - atanh z))^2``, the squared error in value units to first order around
    the target. Unlike the MSE after the tanh it keeps its gradient when the tanh saturates
    (what that cost, measured: docs/design_notes.md, "value losses").

    ``value_loss="bce"`` (``main.py --value-loss bce``): the value read as the probability
    ``(1 + v) / 2`` (``tanh u = 2 sigmoid(2u) - 1``), and the binary cross-entropy to ``(1 + z) / 2``
    minus that target's entropy (0 at the target): its gradient in ``u`` is exactly ``v - z``,
    so it neither vanishes where the tanh saturates (as the MSE's) nor where the target is near
    +-1 (as ``logit``'s, which weighs an error by ``(1 - z^2)^2``: docs/design_notes.md, "value losses"). To second
    order it is ``(v - z)^2 / (2 (1 - z^2))``: near-solved targets weigh most.

    ``value_loss="distance"``: ``value_pred`` is a distance network's ``(B, K)`` logits
    (``PolicyValueNet(distance_classes=K)``) and the value error is the cross-entropy with the
    target's distance ``(1 - z) / 0.03`` as classes (``distance_target``): one class for a whole
    number of moves, the two around it for a search's fractional value. A class is right or
    wrong: it needs no 0.015 precision on a tanh to tell 11 moves from 12.
    """
    log_prob = F.log_softmax(policy_logits, dim=-1)
    if value_loss == "distance":
        value_error = F.cross_entropy(value_pred, distance_target(target_v, value_pred.shape[1]), reduction="none")
    elif value_loss == "logit":
        target = target_v.clamp(-_ATANH_CLIP, _ATANH_CLIP)
        value_error = ((1 - target**2) * (value_pred.squeeze(-1) - torch.atanh(target))) ** 2
    elif value_loss == "bce":
        q = (1 + target_v) / 2
        entropy = -(torch.xlogy(q, q) + torch.xlogy(1 - q, 1 - q))
        value_error = F.binary_cross_entropy_with_logits(2 * value_pred.squeeze(-1), q, reduction="none") - entropy
    else:
        value_pred = value_pred.squeeze(-1)
        value_error = (value_pred - target_v) ** 2
    if sample_weights is not None:
        w = sample_weights if sample_weights.ndim == 2 else sample_weights[:, None].expand(-1, 2)
        policy_loss = -(w[:, 0] * (target_pi * log_prob).sum(dim=-1)).mean()
        value_loss = (w[:, 1] * value_error).mean()
        return value_weight * value_loss + POLICY_WEIGHT * policy_loss, policy_loss, value_loss
    value_loss = F.mse_loss(value_pred, target_v) if value_loss == "mse" else value_error.mean()
    policy_loss = -(target_pi * log_prob).sum(dim=-1).mean()
    loss = value_weight * value_loss + POLICY_WEIGHT * policy_loss
    return loss, policy_loss, value_loss


def distance_target(target_v: torch.Tensor, classes: int) -> torch.Tensor:
    """Value targets ``1 - 0.03 d`` -> ``(B, classes)`` probabilities over the distance classes.

    A whole number of moves ``d`` (within float32 rounding) is the one class ``d``; a fraction
    is split between the two classes around it so that their mean is ``d`` (MuZero's two-hot
    value target): self-play's search values are fractional, and rounding them would move each
    target by up to half a move. Clipped to ``0..classes-1``.
    """
    moves = ((1.0 - target_v) / VALUE_PER_MOVE).clamp(0, classes - 1)
    nearest = moves.round()
    moves = torch.where((moves - nearest).abs() < _WHOLE_MOVE_TOLERANCE, nearest, moves)
    low = moves.floor()
    high_share = moves - low
    low = low.long()
    target = torch.zeros(*moves.shape, classes, dtype=target_v.dtype, device=target_v.device)
    target.scatter_(-1, low[..., None], (1 - high_share)[..., None])
    return target.scatter_add_(-1, (low + 1).clamp(max=classes - 1)[..., None], high_share[..., None])


def dataset_to_tensors(dataset) -> tuple[torch.Tensor, ...]:
    """A list of ``(state (144,), pi (12,), z)``, or a tuple of three arrays
    ``(states (n, 144), pis (n, 12), zs (n,))``, -> three float32 tensors. A tuple of four
    arrays ``(states, pis, zs, weights)`` (per-sample loss weights, see ``alphazero_loss``)
    -> four."""
    if isinstance(dataset, tuple) and len(dataset) in (3, 4) and np.ndim(dataset[0]) == 2:
        return tuple(torch.as_tensor(np.asarray(a, dtype=np.float32)) for a in dataset)
    states = torch.from_numpy(np.stack([np.asarray(s, dtype=np.float32) for s, _, _ in dataset]))
    pis = torch.from_numpy(np.stack([np.asarray(p, dtype=np.float32) for _, p, _ in dataset]))
    zs = torch.tensor([float(z) for _, _, z in dataset], dtype=torch.float32)
    return states, pis, zs


def train_on_targets(
    model,
    dataset,
    batch_size: int = 256,
    epochs: int = 10,
    lr: float = 2e-4,
    device=None,
    seed: int | None = None,
    progress: bool = False,
    verbose: bool = False,
    value_weight: float = VALUE_WEIGHT,
    optimizer: torch.optim.Optimizer | None = None,
    sample_weights=None,
    value_loss: str = "mse",
    precision: str = "fp32",
):
    """Train ``model`` on ``dataset`` for ``epochs`` shuffled passes of ``batch_size``.

    As the original, a new Adam optimizer is made on every call, unless ``optimizer`` (an Adam
    over ``model``'s parameters kept between calls, ``main.py --keep-optimizer``) is given;
    its learning rate is set to ``lr``. Returns ``(model, loss, policy_loss, value_loss)``:
    the means over the last epoch. ``seed`` fixes the shuffling.

    ``sample_weights`` ``(n,)`` or ``(n, 2)`` (or a fourth array in a tuple ``dataset``):
    per-sample loss weights (``alphazero_loss``); None trains exactly as the original.
    ``value_loss`` as in ``alphazero_loss``. ``precision`` (``Precision.PRECISIONS``): bf16 runs the
    forward and backward products in bfloat16 (autocast; the weights and the losses stay float32).
    """
    if len(dataset) == 0:
        raise ValueError("cannot train on an empty dataset")
    device = torch.device(device) if device is not None else next(model.parameters()).device
    states, pis, zs, *rest = (t.to(device) for t in dataset_to_tensors(dataset))
    if sample_weights is not None:
        rest = [torch.as_tensor(np.asarray(sample_weights, dtype=np.float32)).to(device)]
    weights = rest[0] if rest else None
    if optimizer is None:
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for group in optimizer.param_groups:
        group["lr"] = lr
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    forward = model.forward_logits if value_loss in LOGIT_LOSSES else model
    model.train()
    n = len(states)
    bar = tqdm(
        total=epochs * ((n + batch_size - 1) // batch_size),
        desc="train",
        unit="batch",
        leave=False,
        disable=not progress,
    )
    for epoch in range(epochs):
        order = torch.randperm(n, generator=generator).to(device)
        sums = torch.zeros(3, device=device)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            with Precision.autocast(precision, device):
                logits, value = forward(states[idx])
            loss, policy_loss, v_loss = alphazero_loss(
                logits.float(),
                value.float(),
                pis[idx],
                zs[idx],
                value_weight,
                None if weights is None else weights[idx],
                value_loss,
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            sums += torch.stack([loss.detach(), policy_loss.detach(), v_loss.detach()]) * len(idx)
            bar.update(1)
        means = (sums / n).tolist()
        if verbose:
            print(f"  epoch {epoch + 1}/{epochs}: loss {means[0]:.4f} (policy {means[1]:.4f}, value {means[2]:.4f})")
    bar.close()
    model.eval()
    return model, means[0], means[1], means[2]


#: The original's name (design card), kept for scripts written for it.
train_on_selfplay_data = train_on_targets
