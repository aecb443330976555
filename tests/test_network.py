"""PolicyValueNet: the original's architecture and initialisation, predict, and checkpoint I/O
(atomic save, safe and device-independent load, clear errors, where scripts look)."""

from __future__ import annotations

import os
import pickle
import re
import zipfile

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.serialization

from cube.Cube_Checkpoints import distance_classes_of, load_model, model_from_state
from Policy_Value_Net import PolicyValueNet, distance_value
from Rubik2x2Env import batch_onehot, batch_scramble, encode_onehot, solved_cube
from run import Run_IO
from run.Checkpoints import load_state_dict, save_checkpoint
from run.Run_IO import CheckpointError, find_checkpoint

pytestmark = pytest.mark.usefixtures("torch_one_thread")

SIZES = [144, 512, 1024, 512, 128]


@pytest.fixture(scope="module")
def net() -> PolicyValueNet:
    torch.manual_seed(0)
    return PolicyValueNet().eval()


@pytest.fixture(scope="module")
def states() -> np.ndarray:
    cubes, _ = batch_scramble(np.random.default_rng(0), 16, 9)
    return batch_onehot(cubes)


def same_weights(a: nn.Module, b: nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k].cpu(), sb[k].cpu()) for k in sa)


def one_sentence(message: str) -> bool:
    """One line, ending with a full stop, no other sentence end inside (paths may hold dots)."""
    return "\n" not in message and message.endswith(".") and len(re.findall(r"[.!?](?:\s|$)", message)) == 1


# --------------------------------------------------------------------------- architecture and init
def linears(model: nn.Module) -> list[nn.Linear]:
    return [m for m in model.modules() if isinstance(m, nn.Linear)]


def test_architecture(net):
    # The trunk, in registration order: Linear, LayerNorm, ReLU for each hidden size.
    trunk = [m for m in net.modules() if isinstance(m, (nn.Linear, nn.LayerNorm, nn.ReLU))]
    heads = {id(net.policy_head), id(net.value_head)}
    trunk = [m for m in trunk if id(m) not in heads]
    assert len(trunk) == 12
    for i, (fan_in, fan_out) in enumerate(zip(SIZES, SIZES[1:])):
        lin, norm, act = trunk[3 * i : 3 * i + 3]
        assert isinstance(lin, nn.Linear) and (lin.in_features, lin.out_features) == (fan_in, fan_out)
        assert isinstance(norm, nn.LayerNorm) and norm.normalized_shape == (fan_out,) and norm.elementwise_affine
        assert isinstance(act, nn.ReLU)
    assert isinstance(net.policy_head, nn.Linear) and (net.policy_head.in_features, net.policy_head.out_features) == (
        128,
        12,
    )
    assert isinstance(net.value_head, nn.Linear) and (net.value_head.in_features, net.value_head.out_features) == (
        128,
        1,
    )


def test_parameter_count(net):
    linear = sum(i * o + o for i, o in zip(SIZES, SIZES[1:])) + (128 * 12 + 12) + (128 + 1)
    norms = 2 * sum(SIZES[1:])
    assert sum(p.numel() for p in net.parameters()) == linear + norms == 1_196_045
    assert all(p.requires_grad for p in net.parameters())


def test_forward_shapes_and_value_range(net, states):
    logits, value = net(torch.from_numpy(states))
    assert logits.shape == (16, 12) and value.shape == (16, 1)
    assert value.abs().max() <= 1.0
    # The value is tanh of the value head (it saturates, never leaves [-1, 1]).
    with torch.no_grad():
        big = net(torch.from_numpy(states) * 1e4)[1]
        h = net.body(torch.from_numpy(states)) if hasattr(net, "body") else None
    assert big.abs().max() <= 1.0
    if h is not None:
        torch.testing.assert_close(value, torch.tanh(net.value_head(h)))
        torch.testing.assert_close(logits, net.policy_head(h))


@pytest.mark.parametrize("seed", [0, 1])
def test_kaiming_normal_init_and_zero_biases(seed):
    torch.manual_seed(seed)
    model = PolicyValueNet()
    layers = linears(model)
    assert len(layers) == 6
    for layer in layers:
        assert torch.count_nonzero(layer.bias) == 0
        w = layer.weight.detach().double().flatten()
        expected_std = (2.0 / layer.in_features) ** 0.5  # Kaiming normal, ReLU gain, fan_in
        n = w.numel()
        rel_tol = 5.0 / (2 * n) ** 0.5 + 0.01  # ~5 standard errors of a sample std
        assert abs(w.std().item() / expected_std - 1) < rel_tol, (layer, w.std().item(), expected_std)
        assert abs(w.mean().item()) < 5 * expected_std / n**0.5
        if n > 10_000:  # normal, not uniform: a uniform never goes past sqrt(3) std
            assert w.abs().max().item() > 3.0 * expected_std
    for norm in (m for m in model.modules() if isinstance(m, nn.LayerNorm)):
        assert torch.all(norm.weight == 1) and torch.all(norm.bias == 0)


def test_different_seeds_give_different_weights():
    torch.manual_seed(0)
    a = PolicyValueNet()
    torch.manual_seed(1)
    b = PolicyValueNet()
    assert not same_weights(a, b)


# --------------------------------------------------------------------------- predict
def test_predict_one_state(net):
    obs = encode_onehot(solved_cube())
    for x in (obs, torch.from_numpy(obs)):
        policy, value = net.predict(x)
        assert policy.shape == (12,) and value.shape == (1,)
        assert torch.all(policy >= 0)
        assert abs(policy.sum().item() - 1) < 1e-5
        assert -1 <= value.item() <= 1


def test_predict_batch(net, states):
    policy, value = net.predict(states)
    assert policy.shape == (16, 12) and value.shape == (16, 1)
    torch.testing.assert_close(policy.sum(dim=1), torch.ones(16))
    logits, v = net(torch.from_numpy(states))
    torch.testing.assert_close(policy, torch.softmax(logits, dim=-1))
    torch.testing.assert_close(value, v)
    # One state alone gives the same numbers as its row in a batch.
    p0, v0 = net.predict(states[3])
    torch.testing.assert_close(p0, policy[3], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(v0, value[3], rtol=1e-5, atol=1e-6)
    assert not policy.requires_grad  # no autograd graph from predict


# --------------------------------------------------------------------------- save
def test_save_writes_a_bare_state_dict_and_round_trips(net, states, tmp_path):
    path = tmp_path / "rubik_policy_value.pt"
    save_checkpoint(net, str(path))
    assert os.listdir(tmp_path) == [path.name]  # no temp file left behind
    raw = torch.load(path, weights_only=True)
    assert isinstance(raw, dict) and list(raw) == list(net.state_dict())
    assert all(isinstance(v, torch.Tensor) and v.device.type == "cpu" for v in raw.values())
    loaded = load_model(str(path))
    assert isinstance(loaded, PolicyValueNet) and not loaded.training
    assert same_weights(net, loaded)
    x = torch.from_numpy(states)
    with torch.no_grad():
        for a, b in zip(net(x), loaded(x)):
            assert torch.equal(a, b)
    # A plain PolicyValueNet accepts it directly (no marker entries in a plain network's file).
    PolicyValueNet().load_state_dict(raw)


class OriginalNames(nn.Module):
    """SPEC section 3's network under the original project's layer names (``fc1``..``fc4``, ``norm1``..``norm4``,
    ``policy_head``, ``value_head``): what its checkpoints hold."""

    def __init__(self):
        super().__init__()
        sizes = (144, 512, 1024, 512, 128)
        for k in range(1, 5):
            setattr(self, f"fc{k}", nn.Linear(sizes[k - 1], sizes[k]))
            setattr(self, f"norm{k}", nn.LayerNorm(sizes[k]))
        self.policy_head, self.value_head = nn.Linear(128, 12), nn.Linear(128, 1)

    def forward(self, x):
        for k in range(1, 5):
            x = torch.relu(getattr(self, f"norm{k}")(getattr(self, f"fc{k}")(x)))
        return self.policy_head(x), torch.tanh(self.value_head(x))


def test_a_checkpoint_of_the_original_project_loads_and_reads_the_same(states, tmp_path):
    torch.manual_seed(3)
    original = OriginalNames().eval()
    for layer in original.modules():  # LayerNorms away from their initial 1 and 0, so that each must land right
        if isinstance(layer, nn.LayerNorm):
            nn.init.uniform_(layer.weight, 0.5, 1.5), nn.init.uniform_(layer.bias, -0.5, 0.5)
    path = tmp_path / "rubik_policy_value.pt"
    torch.save(original.state_dict(), path)
    loaded = load_model(str(path))
    x = torch.from_numpy(states)
    with torch.no_grad():
        for a, b in zip(original(x), loaded(x)):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-6)
    assert any(k.startswith("fc1") for k in load_state_dict(str(path)))  # the file kept its names


def test_save_overwrites_and_creates_folders(net, tmp_path):
    path = tmp_path / "sub" / "dir" / "model.pt"
    save_checkpoint(net, str(path))
    torch.manual_seed(9)
    other = PolicyValueNet()
    save_checkpoint(other, str(path))
    assert same_weights(load_model(str(path)), other)
    assert os.listdir(path.parent) == ["model.pt"]


def test_save_is_atomic_when_the_write_fails(net, tmp_path, monkeypatch):
    path = tmp_path / "rubik_policy_value.pt"
    save_checkpoint(net, str(path))
    before = path.read_bytes()
    real_save = torch.save

    def failing_save(obj, f, *args, **kwargs):
        real_save(obj, f, *args, **kwargs)  # a full write...
        f.write(b"garbage")
        raise OSError("disk full")  # ...then a failure before it is complete

    monkeypatch.setattr(torch, "save", failing_save)
    torch.manual_seed(5)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(PolicyValueNet(), str(path))
    monkeypatch.undo()
    assert path.read_bytes() == before  # the old checkpoint is intact
    assert os.listdir(tmp_path) == [path.name]  # and the temp file is gone
    assert same_weights(load_model(str(path)), net)


def test_save_is_atomic_when_interrupted(net, tmp_path, monkeypatch):
    """A KeyboardInterrupt (Ctrl-C) during the write also leaves the old file alone."""
    path = tmp_path / "m.pt"
    save_checkpoint(net, str(path))
    before = path.read_bytes()

    def interrupted(obj, f, *args, **kwargs):
        f.write(before[: len(before) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(net, str(path))
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.pt"]


# --------------------------------------------------------------------------- load
class Payload:
    """Unpickling this runs ``os.mkdir(marker)``: proof that code from the file was executed."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


@pytest.mark.parametrize("writer", ["torch.save", "pickle.dump"])
def test_load_never_runs_code_from_the_file(tmp_path, writer):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    obj = {"body.0.weight": Payload(str(marker))}
    if writer == "torch.save":
        torch.save(obj, path)
    else:
        path.write_bytes(pickle.dumps(obj, protocol=2))
    with pytest.raises(CheckpointError):
        load_model(str(path))
    assert not marker.exists()


def test_load_uses_weights_only_and_map_location(net, tmp_path, monkeypatch):
    path = tmp_path / "m.pt"
    save_checkpoint(net, str(path))
    calls = []
    real_load = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    model = load_model(str(path))
    assert len(calls) == 1
    assert calls[0].get("weights_only") is True
    assert calls[0].get("map_location") in ("cpu", torch.device("cpu"))
    assert next(model.parameters()).device.type == "cpu"


def test_checkpoint_saved_on_cuda_loads_on_cpu(net, tmp_path, monkeypatch):
    """Simulate a CUDA checkpoint: the storages are tagged 'cuda:0' in the file."""
    path = tmp_path / "cuda.pt"
    state = {k: v.clone() for k, v in net.state_dict().items()}
    with monkeypatch.context() as m:
        m.setattr(torch.serialization, "location_tag", lambda storage: "cuda:0")
        torch.save(state, path)
    with zipfile.ZipFile(path) as z:
        pickled = b"".join(z.read(n) for n in z.namelist() if n.endswith("data.pkl"))
    if b"cuda:0" not in pickled:  # this torch no longer tags storages through location_tag
        pytest.skip("cannot fake a CUDA checkpoint with this torch version")
    if not torch.cuda.is_available():
        # Sanity check of the simulation: without map_location this file cannot be read here.
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(path, weights_only=True)
    model = load_model(str(path), device="cpu")
    assert same_weights(model, net)
    assert all(p.device.type == "cpu" for p in model.parameters())


def test_missing_checkpoint(tmp_path):
    path = tmp_path / "nope.pt"
    with pytest.raises(CheckpointError) as info:
        load_model(str(path))
    message = str(info.value)
    assert one_sentence(message), message
    assert str(path) in message and "not exist" in message


@pytest.mark.parametrize("kind", ["random", "truncated", "empty", "text"])
def test_corrupt_checkpoint(net, tmp_path, kind):
    path = tmp_path / "bad.pt"
    if kind == "random":
        path.write_bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8).tobytes())
    elif kind == "truncated":
        save_checkpoint(net, str(path))
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        path.write_text("this is not a checkpoint\n")
    with pytest.raises(CheckpointError) as info:
        load_model(str(path))
    assert one_sentence(str(info.value)), str(info.value)
    assert str(path) in str(info.value)


def test_wrong_shapes_or_keys(net, tmp_path):
    state = {k: v.clone() for k, v in net.state_dict().items()}
    wrong_shape = dict(state)
    wrong_shape["policy_head.weight"] = torch.zeros(6, 128)
    wrong_shape["policy_head.bias"] = torch.zeros(6)
    missing = {k: v for k, v in state.items() if not k.startswith("value_head")}
    extra = dict(state, **{"extra.weight": torch.zeros(3)})
    other_net = PolicyValueNet(obs_dim=100).state_dict()
    for i, bad in enumerate((wrong_shape, missing, extra, other_net)):
        path = tmp_path / f"bad{i}.pt"
        torch.save(bad, path)
        with pytest.raises(CheckpointError) as info:
            load_model(str(path))
        assert one_sentence(str(info.value)), str(info.value)


def test_not_a_state_dict(tmp_path):
    for i, obj in enumerate((torch.zeros(3), [torch.zeros(3)], 42)):
        path = tmp_path / f"obj{i}.pt"
        torch.save(obj, path)
        with pytest.raises(CheckpointError):
            load_model(str(path))
        with pytest.raises(CheckpointError):
            load_state_dict(str(path))


# --------------------------------------------------------------------------- where scripts look
@pytest.fixture
def places(tmp_path, monkeypatch, net):
    """A working folder and a fake shipped ``pretrained/`` file, none of them existing yet."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    pretrained = tmp_path / "repo" / "pretrained" / "rubik_policy_value.pt"
    monkeypatch.setattr(Run_IO, "PRETRAINED_CHECKPOINT", str(pretrained))

    def make(path):
        save_checkpoint(net, str(path))
        return path

    return work, pretrained, make


def test_find_checkpoint_nothing_found(places):
    with pytest.raises(CheckpointError) as info:
        find_checkpoint()
    assert "\n" not in str(info.value)


def test_find_checkpoint_falls_back_to_pretrained(places):
    work, pretrained, make = places
    make(pretrained)
    assert os.path.samefile(find_checkpoint(), pretrained)
    assert os.path.samefile(find_checkpoint(None), pretrained)


def test_find_checkpoint_names_the_shipped_model_relative_to_the_working_folder(places, monkeypatch):
    work, pretrained, make = places
    make(pretrained)
    assert os.path.isabs(find_checkpoint())  # outside the working folder: kept absolute
    monkeypatch.chdir(pretrained.parent.parent)  # the repository root
    assert find_checkpoint() == os.path.join("pretrained", "rubik_policy_value.pt")


def test_find_checkpoint_prefers_the_working_folder(places):
    work, pretrained, make = places
    make(pretrained)
    make(work / "rubik_policy_value.pt")
    assert os.path.samefile(find_checkpoint(), work / "rubik_policy_value.pt")


def test_find_checkpoint_explicit_first(places, tmp_path):
    work, pretrained, make = places
    make(pretrained)
    make(work / "rubik_policy_value.pt")
    explicit = make(tmp_path / "mine.pt")
    assert os.path.samefile(find_checkpoint(str(explicit)), explicit)
    # An explicit path that does not exist is an error, not a silent fallback.
    with pytest.raises(CheckpointError) as info:
        find_checkpoint(str(tmp_path / "missing.pt"))
    assert one_sentence(str(info.value))


# --------------------------------------------------------------------------- canonical orientation
def test_canonical_network_gives_every_orientation_the_same_value_and_renamed_policy():
    from Rubik2x2Env import ROTATION_MOVE_MAP, batch_rotate

    torch.manual_seed(0)
    canon = PolicyValueNet(canonical_orientation=True).eval()
    cubes, _ = batch_scramble(np.random.default_rng(4), 64, 15)
    rot = np.random.default_rng(5).integers(1, 24, len(cubes))
    with torch.no_grad():
        logits, value = canon(torch.from_numpy(batch_onehot(cubes)))
        logits_t, value_t = canon(torch.from_numpy(batch_onehot(batch_rotate(cubes, rot))))
    torch.testing.assert_close(value_t, value, rtol=0, atol=0)
    # Move a on the cube is move map[r, a] on the cube turned by r: same logit.
    torch.testing.assert_close(logits_t.gather(1, torch.from_numpy(ROTATION_MOVE_MAP[rot])), logits, rtol=0, atol=0)
    # A plain network with the same weights does tell the orientations apart.
    plain = PolicyValueNet().eval()
    plain.load_state_dict({k: v for k, v in canon.state_dict().items() if k != "canonical_orientation"})
    with torch.no_grad():
        assert not torch.allclose(plain(torch.from_numpy(batch_onehot(batch_rotate(cubes, rot))))[1], value)
        # ... and agrees with the canonical one on cubes already in canonical orientation.
        torch.testing.assert_close(
            plain(torch.from_numpy(batch_onehot(solved_cube()[None])))[1],
            canon(torch.from_numpy(batch_onehot(solved_cube()[None])))[1],
        )


def test_canonical_network_accepts_inputs_that_are_not_cubes(states):
    canon = PolicyValueNet(canonical_orientation=True).eval()
    with torch.no_grad():
        logits, value = canon(torch.zeros(3, 144))
    assert logits.shape == (3, 12) and value.shape == (3, 1) and torch.isfinite(logits).all()


def test_canonical_checkpoint_is_marked_and_loads_as_canonical(states, tmp_path):
    torch.manual_seed(1)
    canon = PolicyValueNet(canonical_orientation=True).eval()
    save_checkpoint(canon, str(tmp_path / "c.pt"))
    state = load_state_dict(str(tmp_path / "c.pt"))
    assert "canonical_orientation" in state and len(state) == len(PolicyValueNet().state_dict()) + 1
    loaded = load_model(str(tmp_path / "c.pt"))
    assert loaded.canonical and same_weights(loaded, canon)
    torch.testing.assert_close(loaded(torch.from_numpy(states))[1], canon(torch.from_numpy(states))[1])


def test_plain_weights_start_a_canonical_network(net, tmp_path):
    save_checkpoint(net, str(tmp_path / "p.pt"))
    plain = model_from_state(load_state_dict(str(tmp_path / "p.pt")), "p.pt")
    assert not plain.canonical and load_model(str(tmp_path / "p.pt")).canonical is False
    canon = model_from_state(load_state_dict(str(tmp_path / "p.pt")), "p.pt", canonical_orientation=True)
    assert canon.canonical
    assert all(
        torch.equal(v, net.state_dict()[k]) for k, v in canon.state_dict().items() if k != "canonical_orientation"
    )


# --------------------------------------------------------------------------- 48 symmetries
def test_symmetric_network_gives_every_symmetric_image_the_same_value_and_renamed_policy():
    from Rubik2x2Env import ROTATION_MOVE_MAP, SYMMETRY_MOVE_MAP, batch_rotate, batch_symmetry

    torch.manual_seed(0)
    sym = PolicyValueNet(canonical_symmetry=True).eval()
    assert sym.canonical and sym.symmetric
    cubes, _ = batch_scramble(np.random.default_rng(4), 400, 15)
    rng = np.random.default_rng(5)
    with torch.no_grad():
        logits, value = sym(torch.from_numpy(batch_onehot(cubes)))
        mismatched = np.zeros(len(cubes), bool)
        for k in (1, 7, 24, 31, 47):
            rot = rng.integers(0, 24, len(cubes))
            image = batch_rotate(batch_symmetry(cubes, np.full(len(cubes), k)), rot)
            logits_k, value_k = sym(torch.from_numpy(batch_onehot(image)))
            torch.testing.assert_close(value_k, value, rtol=0, atol=0)
            # Move a on the cube is SYMMETRY_MOVE_MAP[k, a] on its image, then renamed by the turn.
            back = logits_k.gather(1, torch.tensor(ROTATION_MOVE_MAP[rot]))[:, torch.tensor(SYMMETRY_MOVE_MAP[k])]
            mismatched |= ~(back == logits).all(dim=1).numpy()
    # Only cubes that are their own image under some symmetry may tie-break differently.
    assert mismatched.mean() < 0.05
    plain_canon = PolicyValueNet(canonical_orientation=True).eval()
    plain_canon.load_state_dict({k: v for k, v in sym.state_dict().items() if k != "canonical_symmetry"})
    with torch.no_grad():
        image = batch_symmetry(cubes, np.full(len(cubes), 5))
        assert not torch.allclose(plain_canon(torch.from_numpy(batch_onehot(image)))[1], value)


def test_symmetric_checkpoint_is_marked_and_canonical_weights_start_one(states, tmp_path):
    torch.manual_seed(1)
    sym = PolicyValueNet(canonical_symmetry=True).eval()
    save_checkpoint(sym, str(tmp_path / "s.pt"))
    state = load_state_dict(str(tmp_path / "s.pt"))
    assert {"canonical_orientation", "canonical_symmetry"} <= set(state) and len(state) == len(
        PolicyValueNet().state_dict()
    ) + 2
    loaded = load_model(str(tmp_path / "s.pt"))
    assert loaded.symmetric and same_weights(loaded, sym)
    torch.testing.assert_close(loaded(torch.from_numpy(states))[1], sym(torch.from_numpy(states))[1])
    save_checkpoint(PolicyValueNet(canonical_orientation=True), str(tmp_path / "c.pt"))
    started = model_from_state(load_state_dict(str(tmp_path / "c.pt")), "c.pt", canonical_symmetry=True)
    assert started.symmetric and not load_model(str(tmp_path / "c.pt")).symmetric
    with torch.no_grad():
        logits, value = sym(torch.zeros(2, 144))  # not cubes: still finite outputs
    assert torch.isfinite(logits).all() and torch.isfinite(value).all()


# --------------------------------------------------------------------------- distance head
def test_distance_network_reads_its_value_from_the_expected_class(states, tmp_path):
    torch.manual_seed(3)
    net = PolicyValueNet(distance_classes=16).eval()
    x = torch.as_tensor(states)
    logits, value = net(x)
    policy_logits, distance_logits = net.forward_logits(x)
    assert distance_logits.shape == (len(states), 16) and value.shape == (len(states), 1)
    expected = (distance_logits.softmax(dim=1) * torch.arange(16.0)).sum(dim=1, keepdim=True)
    assert torch.allclose(value, 1 - 0.03 * expected) and torch.equal(logits, policy_logits)
    # A confident head reads as its class, in the original's value scale.
    peaked = torch.full((1, 16), -1e4)
    peaked[0, 7] = 0.0
    assert distance_value(peaked).item() == pytest.approx(1 - 0.03 * 7)
    # The checkpoint stays a bare state_dict; loading finds the head's size in it.
    path = tmp_path / "distance.pt"
    save_checkpoint(net, str(path))
    loaded = load_model(str(path))
    assert loaded.distance_classes == 16 and torch.equal(loaded(x)[1], value)
    assert PolicyValueNet().distance_classes == 0 and distance_classes_of(PolicyValueNet().state_dict()) == 0


def test_residual_blocks_start_as_the_identity_and_their_checkpoint_rebuilds_them(states, tmp_path):
    """``residual_blocks`` R: R blocks at the last width after the hidden layers; each starts as the identity
    (its last LayerNorm's scale zero), so with a plain stack's weights it reads as that stack; once trained
    (here: weights perturbed) a checkpoint rebuilds the blocks from its layer names and reads the same."""
    torch.manual_seed(0)
    plain = PolicyValueNet(hidden_sizes=(64, 32)).eval()
    torch.manual_seed(0)
    deep = PolicyValueNet(hidden_sizes=(64, 32), residual_blocks=2).eval()
    assert deep.residual_blocks == 2 and len(linears(deep)) == len(linears(plain)) + 4
    x = torch.from_numpy(states)
    with torch.no_grad():
        deep.load_state_dict({**deep.state_dict(), **plain.state_dict()})  # the blocks keep their new weights
        assert all(torch.equal(a, b) for a, b in zip(plain(x), deep(x)))
        for p in deep.parameters():
            p.add_(0.05 * torch.randn_like(p))
    path = tmp_path / "deep.pt"
    save_checkpoint(deep, str(path))
    loaded = load_model(str(path))
    assert loaded.residual_blocks == 2 and loaded.hidden_sizes == (64, 32) and same_weights(deep, loaded)
    with torch.no_grad():
        assert all(torch.equal(a, b) for a, b in zip(deep(x), loaded(x)))
        assert not torch.equal(deep(x)[1], plain(x)[1])  # the blocks now change what it reads
    with pytest.raises(ValueError, match="residual"):
        PolicyValueNet(residual_blocks=-1)
