"""The seed's small residual policy-value network for Go, and its checkpoints.

``GoNet(size, in_planes=17, filters=64, blocks=4)``: a 3x3 convolution stem, ``blocks`` residual blocks
(two 3x3 convolutions of ``filters`` channels, each followed by GroupNorm, a skip connection, ReLU), a
policy head (1x1 convolution to 2 planes, GroupNorm, ReLU, a linear layer to N*N+1 logits, pass last)
and a value head (1x1 convolution to 1 plane, GroupNorm, ReLU, a 128-unit hidden layer, tanh). The input
is ``Go_Game.GoGame.encode``'s planes, ``2*history + 1`` of them (17: the seed's 8 positions), one more
(an even count) when the network sees the komi (``komi_input``).
``forward`` gives ``(logits (B, N*N+1), value (B, 1))`` as ``PolicyValueNet`` does, so the engine's
``NetworkEvaluator`` reads it unchanged.

With ``score_heads`` (KataGo's auxiliary targets, arXiv 1902.10565) the network also predicts the final
area margin of the player to move (``score``, in units of the board's side N: a linear layer on the value
head's hidden units) and each point's final owner from that player's side (``ownership``, in [-1, 1]: a
1x1 convolution of the trunk, tanh); ``heads`` gives all four outputs. The buffer ``score_utility`` u
(saved with the weights) makes ``forward``'s value the search's utility, ``(1 - u) * value + u *
Go_Game.score_term(score)``, the mix the game gives finished games (``GoGame.score_utility``); the game
of a network is ``go_game(..., **net.game_options)``.

With ``score_belief`` (KataGo's score belief, for a network that sees the komi) a third head gives a
distribution over the final *board* margin before komi (``belief``: logits over -N*N..N*N, from the player
to move's side), and ``forward``'s win value is read from it and the input's komi by arithmetic
(``belief_value``): P(board margin + komi > 0) - P(< 0), its score term from the expected margin after
komi. The komi then decides the value exactly, rather than through a step the trunk must learn from the
komi plane, a constant plane that the heads' GroupNorm all but removes: the first go5-score runs valued
White's position after C3 the same at komi 24.5 (lost) and 25.5 (won by passing); docs/go.md. The
policy's logits also get a linear term in that value and expected margin (``policy_logits``), so that the
komi reaches the policy too.

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

from go.Go_Board import KOMI_PLANE_SCALE
from go.Go_Game import score_term
from run.Checkpoints import GO_SIZE_KEY, go_size_of, load_state_dict
from run.Run_IO import CheckpointError

FILTERS, BLOCKS, VALUE_HIDDEN = 64, 4, 128  # the seed's
GROUPS = 8  # GroupNorm groups of the trunk's channels (the heads' 2 and 1 channels: one group)
STEM_LAYER = "stem.0.weight"  # (filters, in_planes, 3, 3)
SCORE_LAYER = "score_out.weight"  # present in a network with score and ownership heads
UTILITY_KEY = "score_utility"  # the buffer of the score term's share in forward's value
BELIEF_LAYER = "belief_out.weight"  # present in a network with a score belief head
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

    def __init__(
        self,
        size: int,
        in_planes: int = 17,
        filters: int = FILTERS,
        blocks: int = BLOCKS,
        score_heads: bool = False,
        score_utility: float = 0.0,
        score_belief: bool = False,
    ):
        super().__init__()
        if size < 1 or in_planes < 1 or filters < 1 or blocks < 0:
            raise ValueError(
                f"a Go network needs a positive size, planes and filters, got {size}, {in_planes}, {filters}"
            )
        if score_utility and not score_heads or not 0 <= score_utility < 1:
            raise ValueError(f"score_utility must be in [0, 1) and needs score heads, got {score_utility}")
        if score_belief and not (score_heads and in_planes % 2 == 0):
            raise ValueError("a score belief head needs score heads and a komi plane (an even in_planes)")
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
        # a score belief network reads its win value from the belief (``belief_value``): no tanh output
        self.value_out = None if score_belief else nn.Linear(VALUE_HIDDEN, 1)
        self.has_score = score_heads
        if score_heads:
            self.score_out = nn.Linear(VALUE_HIDDEN, 1)
            self.ownership_out = nn.Conv2d(filters, 1, 1)
            self.register_buffer(UTILITY_KEY, torch.tensor(float(score_utility)))
        self.has_belief = score_belief
        if score_belief:
            self.belief_out = nn.Linear(VALUE_HIDDEN, 2 * points + 1)
            # The policy's komi: logits move with the belief's value and expected margin at the input's komi
            # (``policy_logits``). Zero at first: the plain policy.
            self.policy_global = nn.Linear(2, points + 1)
            nn.init.zeros_(self.policy_global.weight)
            nn.init.zeros_(self.policy_global.bias)

    @property
    def history(self) -> int:
        """The positions the input planes hold (``GoBoard(history=...)``)."""
        return (self.in_planes - 1) // 2

    @property
    def komi_input(self) -> bool:
        """The input holds a komi plane (``Go_Board.GoBoard.komi_input``): an even number of planes."""
        return self.in_planes % 2 == 0

    @property
    def game_options(self) -> dict:
        """What the game of this network must match: ``go_game(size, komi, ..., **game_options)``."""
        utility = round(float(getattr(self, UTILITY_KEY)), 6) if self.has_score else 0.0  # float32 to the flag's
        return {"history": self.history, "komi_input": self.komi_input, "score_utility": utility}

    def heads(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Every output of ``x (B, in_planes, N, N)``: ``logits (B, N*N+1)``, ``value (B, 1)`` (the win
        value in [-1, 1]) and, with score heads, ``score (B, 1)`` (the margin over N) and ``ownership
        (B, N*N)`` in [-1, 1]; with a score belief also ``belief (B, 2*N*N+1)`` (logits of the board margin
        -N*N..N*N before komi), ``value`` then read from it and ``lead (B, 1)`` its expected margin after
        komi in points (``belief_value``); all from the player to move's side."""
        h = self.blocks(self.stem(x))
        hidden = self.value_head(h)
        out = self.value_outputs(hidden, x)
        out["logits"] = self.policy_logits(h, out)
        if self.has_score:
            out["score"] = self.score_out(hidden)
            out["ownership"] = torch.tanh(self.ownership_out(h).flatten(1))
        return out

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, in_planes, N, N)`` -> policy logits ``(B, N*N+1)`` and the search's value ``(B, 1)`` in
        [-1, 1] (with a score utility, its mix of value and score: module docstring)."""
        h = self.blocks(self.stem(x))
        hidden = self.value_head(h)
        out = self.value_outputs(hidden, x)
        value = out["value"]
        if self.has_score:
            utility = getattr(self, UTILITY_KEY)
            score = out["lead"] / self.size if self.has_belief else self.score_out(hidden)
            value = (1 - utility) * value + utility * score_term(score)
        return self.policy_logits(h, out), value

    def value_outputs(self, hidden: torch.Tensor, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """The win ``value`` from the value head's ``hidden`` units: the tanh output's, or with a score belief
        the ``belief`` logits with the ``value`` and ``lead`` read from them at input ``x``'s komi."""
        if not self.has_belief:
            return {"value": torch.tanh(self.value_out(hidden))}
        belief = self.belief_out(hidden)
        value, lead = belief_value(belief, input_komi(x))
        return {"belief": belief, "value": value, "lead": lead}

    def policy_logits(self, h: torch.Tensor, out: dict) -> torch.Tensor:
        """The policy's logits from the trunk's output ``h``; with a score belief plus a linear function of
        its win value and expected margin (over N) at the input's komi, ``out["value"]`` and
        ``out["lead"]`` (detached: the belief learns from its own targets). Why: the komi plane reaches the
        policy as weakly as the value (module docstring), and a policy blind to the komi learned from games
        at 25.5, where White wins by passing, to pass at 24.5 too, where passing loses (docs/go.md)."""
        logits = self.policy_out(self.policy_head(h))
        if not self.has_belief:
            return logits
        summary = torch.cat([out["value"], out["lead"] / self.size], dim=1).detach()
        return logits + self.policy_global(summary)


def expected_margin(heads: dict, size: int) -> torch.Tensor:
    """(B,) float32: the expected final margin after komi in points, for the player to move, of ``GoNet.heads``
    outputs: the score belief's where the network has one (it applies the komi exactly), else the score
    head's (predicted over the board's side ``size``)."""
    lead = heads["lead"] if "lead" in heads else heads["score"] * size
    return lead.float().reshape(-1)


def input_komi(x: torch.Tensor) -> torch.Tensor:
    """(B,) the komi the player to move receives, read back from the komi plane (the last) of network
    inputs ``x``, in half points exactly (the plane holds it over ``KOMI_PLANE_SCALE`` in float32)."""
    return torch.round(x[:, -1, 0, 0] * (2 * KOMI_PLANE_SCALE)) / 2


def belief_value(logits: torch.Tensor, komi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """From a score belief's logits over the board margin ``(B, 2*M+1)`` (-M..M, the player to move's) and
    the komi that player receives ``(B,)``: the win value P(margin + komi > 0) - P(margin + komi < 0) and
    the expected margin after komi, each ``(B, 1)``."""
    probs = torch.softmax(logits.float(), dim=-1)  # float32 under bf16 autocast too: sign(margin + komi) is exact
    reach = logits.shape[-1] // 2
    margins = torch.arange(-reach, reach + 1, dtype=probs.dtype, device=probs.device)
    final = margins[None, :] + komi[:, None].to(probs.dtype)
    return (probs * torch.sign(final)).sum(-1, keepdim=True), (probs * final).sum(-1, keepdim=True)


def belief_targets(x: torch.Tensor, margins: torch.Tensor, size: int) -> torch.Tensor:
    """(B,) long: the class of each final margin after komi ``margins`` (the player to move's) in a score
    belief over the board margin: ``margin - komi + N*N``, the komi read from inputs ``x`` (clipped to
    the classes, as a komi past ``Go_Board.MAX_INPUT_KOMI`` would otherwise leave them)."""
    board = torch.round(margins - input_komi(x)).long()
    return (board + size * size).clamp(0, 2 * size * size)


def go_model_from_state(state: dict, path: str) -> GoNet:
    """A ``GoNet`` holding the weights of a Go state_dict (read from ``path``); its size, planes, filters
    and blocks are the ones the state holds. CheckpointError when the weights do not fit."""
    stem = state.get(STEM_LAYER)
    if not isinstance(stem, torch.Tensor) or stem.dim() != 4:
        raise CheckpointError(f"checkpoint '{path}' does not fit GoNet (it has no convolution stem).")
    blocks = len({int(m.group(1)) for key in state if (m := _BLOCK_KEY.match(key))})
    utility = state.get(UTILITY_KEY)
    utility = float(utility) if isinstance(utility, torch.Tensor) and utility.numel() == 1 else 0.0
    if not 0 <= utility < 1:
        raise CheckpointError(f"checkpoint '{path}' is damaged: its score utility {utility:g} is not in [0, 1).")
    try:
        model = GoNet(
            go_size_of(state),
            stem.shape[1],
            stem.shape[0],
            blocks,
            score_heads=SCORE_LAYER in state,
            score_utility=utility,
            score_belief=BELIEF_LAYER in state,
        )
        model.load_state_dict(state)
    except (RuntimeError, KeyError, ValueError):
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
