"""The Gymnasium environment: API conformance, seeding, reset options, masking, episode end,
text rendering."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from Rubik2x2Env import (
    ENV_ID,
    FACE_NAMES,
    MOVE_NAMES,
    Rubik2x2Env,
    apply_moves,
    encode_onehot,
    is_solved,
    legal_action_mask,
    parse_moves,
    solved_cube,
)

U, U_, R, R_, F, F_, L, L_, B, B_, D, D_ = range(12)


@pytest.mark.parametrize("render_mode", [None, "ansi"])
def test_passes_gymnasium_env_checker(render_mode):
    # Made through gymnasium.make so that the env has a spec: the checker then also tries
    # the other render modes (without a spec it only warns that it cannot).
    env = gym.make("Rubik2x2-v0", render_mode=render_mode)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a checker warning fails the test
            check_env(env.unwrapped)
    finally:
        env.close()


def test_registered_and_made_with_gymnasium_make():
    assert ENV_ID == "Rubik2x2-v0"
    env = gym.make("Rubik2x2-v0", scramble_len=3, max_steps=7)
    try:
        assert isinstance(env.unwrapped, Rubik2x2Env)
        assert env.unwrapped.scramble_len == 3 and env.unwrapped.max_steps == 7
        obs, info = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(obs) and reward == 0.0
    finally:
        env.close()


def test_spaces_and_defaults():
    env = Rubik2x2Env()
    assert (env.scramble_len, env.max_steps, env.use_action_mask, env.render_mode) == (4, 100, True, None)
    assert env.action_space == gym.spaces.Discrete(12)
    assert env.observation_space.shape == (144,) and env.observation_space.dtype == np.float32
    obs, info = env.reset(seed=1)
    assert obs.dtype == np.float32 and obs.shape == (144,)
    np.testing.assert_array_equal(obs, encode_onehot(env.cube))
    assert set(info) >= {"action_mask", "solved"}
    assert info["action_mask"].dtype == bool and info["action_mask"].shape == (12,)


def test_invalid_constructor_arguments():
    for kwargs in ({"scramble_len": -1}, {"max_steps": 0}, {"render_mode": "rgb_array"}):
        with pytest.raises(ValueError):
            Rubik2x2Env(**kwargs)


# --------------------------------------------------------------------------- seeding and reset options
def test_reset_seed_is_reproducible():
    env = Rubik2x2Env(scramble_len=8)
    env.reset(seed=42)
    first = env.cube.copy()
    env.reset(seed=42)
    np.testing.assert_array_equal(env.cube, first)
    other = Rubik2x2Env(scramble_len=8)
    other.reset(seed=42)
    np.testing.assert_array_equal(other.cube, first)
    # Unseeded resets after a seeded one continue the same random stream.
    env.reset()
    other.reset()
    np.testing.assert_array_equal(env.cube, other.cube)


def test_different_seeds_usually_differ():
    env = Rubik2x2Env(scramble_len=8)
    cubes = set()
    for seed in range(30):
        env.reset(seed=seed)
        cubes.add(env.cube.tobytes())
    assert len(cubes) >= 25


def test_reset_scramble_uses_np_random_and_scramble_len():
    env = Rubik2x2Env(scramble_len=5)
    _, info = env.reset(seed=3)
    moves = parse_moves(info["scramble"])
    assert len(moves) == 5
    np.testing.assert_array_equal(env.cube, apply_moves(solved_cube(), moves))
    assert all(b != a ^ 1 for a, b in zip(moves, moves[1:]))
    _, info = env.reset(seed=3, options={"scramble_len": 2})
    assert len(parse_moves(info["scramble"])) == 2
    _, info = env.reset(options={"scramble_len": 0})
    assert info["solved"] and is_solved(env.cube)


def test_reset_with_given_cube():
    env = Rubik2x2Env()
    cube = apply_moves(solved_cube(), parse_moves("R U F' D"))
    for given in (cube, cube.reshape(-1), cube.reshape(-1).tolist()):
        obs, info = env.reset(options={"cube": given})
        np.testing.assert_array_equal(env.cube, cube)
        assert env.cube.shape == (6, 2, 2) and env.cube.dtype == np.int8
        np.testing.assert_array_equal(obs, encode_onehot(cube))
        assert not info["solved"] and info["action_mask"].all()
    # The env keeps its own copy.
    cube[0, 0, 0] = 5
    assert env.cube[0, 0, 0] != 5


def test_reset_with_scramble_string_or_list():
    env = Rubik2x2Env()
    expected = apply_moves(solved_cube(), [R, U])
    obs, info = env.reset(options={"scramble": "R U"})
    np.testing.assert_array_equal(env.cube, expected)
    np.testing.assert_array_equal(obs, encode_onehot(expected))
    assert info["scramble"] == "R U"
    env.reset(options={"scramble": [R, U]})
    np.testing.assert_array_equal(env.cube, expected)
    env.reset(options={"scramble": "R2 F'"})
    np.testing.assert_array_equal(env.cube, apply_moves(solved_cube(), [R, R, F_]))
    with pytest.raises(ValueError):
        env.reset(options={"scramble": "R Q"})
    with pytest.raises(ValueError):
        env.reset(options={"bogus": 1})


# --------------------------------------------------------------------------- action mask
def test_mask_after_one_turn_blocks_the_inverse():
    env = Rubik2x2Env()
    _, info = env.reset(options={"scramble": ""})
    assert info["action_mask"].all()
    _, _, _, _, info = env.step(U)
    assert set(np.flatnonzero(~info["action_mask"])) == {U_}
    with pytest.raises(ValueError):
        env.step(U_)
    _, _, _, _, info = env.step(R)  # another face: only R' is now illegal
    assert set(np.flatnonzero(~info["action_mask"])) == {R_}


def test_mask_after_two_turns_of_one_face_blocks_the_face():
    env = Rubik2x2Env()
    env.reset(options={"scramble": "F"})
    env.step(U)
    _, _, _, _, info = env.step(U)
    assert set(np.flatnonzero(~info["action_mask"])) == {U, U_}
    for a in (U, U_):
        with pytest.raises(ValueError):
            env.step(a)
    _, _, _, _, info = env.step(D)  # D is another face: the count restarts
    assert set(np.flatnonzero(~info["action_mask"])) == {D_}


def test_masked_action_does_not_change_the_state():
    env = Rubik2x2Env()
    env.reset(seed=0)
    env.step(L)
    cube, steps = env.cube.copy(), env.steps
    with pytest.raises(ValueError, match="mask"):
        env.step(L_)
    np.testing.assert_array_equal(env.cube, cube)
    assert env.steps == steps


def test_without_masking_every_action_is_legal():
    env = Rubik2x2Env(use_action_mask=False)
    env.reset(options={"scramble": "R"})
    for _ in range(3):  # U U U: allowed without masking
        _, _, _, _, info = env.step(U)
        assert info["action_mask"].all()
    env.step(U_)
    np.testing.assert_array_equal(env.cube, apply_moves(solved_cube(), [R, U, U, U, U_]))
    # The pure rule function still says what the mask would be after three U turns.
    assert set(np.flatnonzero(~legal_action_mask(U, 3))) == {U, U_}
    assert set(np.flatnonzero(~legal_action_mask(U, 1))) == {U_}


@pytest.mark.parametrize("bad", [-1, 12, 99, 1.5, "U", None])
def test_out_of_range_action_raises(bad):
    env = Rubik2x2Env()
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(bad)


def test_numpy_integer_actions_are_accepted():
    env = Rubik2x2Env()
    env.reset(options={"scramble": "R"})
    env.step(np.int64(R_))
    assert is_solved(env.cube)


# --------------------------------------------------------------------------- episode end
def test_terminated_when_solved():
    env = Rubik2x2Env()
    env.reset(options={"scramble": "R U"})
    obs, reward, terminated, truncated, info = env.step(U_)
    assert (terminated, truncated, info["solved"]) == (False, False, False)
    obs, reward, terminated, truncated, info = env.step(R_)
    assert terminated is True and info["solved"] is True and truncated is False
    assert reward == 0.0 and isinstance(reward, float)
    np.testing.assert_array_equal(obs, encode_onehot(solved_cube()))


def test_terminated_for_a_rotated_solved_cube():
    env = Rubik2x2Env()
    env.reset(options={"scramble": "R"})
    _, _, terminated, _, info = env.step(L_)  # R L' turns the whole cube: solved
    assert terminated and info["solved"]


def test_truncated_at_max_steps():
    env = Rubik2x2Env(max_steps=3)
    env.reset(options={"scramble": "R U F"})
    flags = [env.step(a)[2:4] for a in (D, B, L)]
    assert flags == [(False, False), (False, False), (False, True)]
    assert env.steps == 3
    _, info = env.reset(seed=0)
    assert env.steps == 0 and info.get("steps", 0) == 0


def test_truncated_and_terminated_together():
    env = Rubik2x2Env(max_steps=1)
    env.reset(options={"scramble": "F"})
    _, _, terminated, truncated, _ = env.step(F_)
    assert terminated and truncated


# --------------------------------------------------------------------------- text output
def sticker_positions(text: str) -> dict[tuple[int, int], str]:
    return {(r, c): ch for r, line in enumerate(text.split("\n")) for c, ch in enumerate(line) if ch != " "}


def test_as_ascii_layout_of_the_solved_cube():
    env = Rubik2x2Env()
    env.reset(options={"scramble": ""})
    text = env.as_ascii()
    lines = text.split("\n")
    assert len(lines) == 6
    assert [line.split() for line in lines] == [
        ["U", "U"],
        ["U", "U"],
        ["L", "L", "F", "F", "R", "R", "B", "B"],
        ["L", "L", "F", "F", "R", "R", "B", "B"],
        ["D", "D"],
        ["D", "D"],
    ]
    # U is drawn directly above F, and D directly below it: same columns.
    cols = {
        r: [c for (rr, c), ch in sticker_positions(text).items() if rr == r and ch == name]
        for r, name in ((0, "U"), (1, "U"), (2, "F"), (4, "D"), (5, "D"))
    }
    assert cols[0] == cols[1] == cols[2] == cols[4] == cols[5], text


def test_as_ascii_places_every_sticker():
    """Each sticker alone in another colour shows up on its face's rows, left to right by column."""
    line_of_face = {0: 0, 4: 2, 2: 2, 1: 2, 5: 2, 3: 4}  # U, then L F R B, then D
    seen = {}
    for s in range(24):
        face, row = s // 4, (s % 4) // 2
        cube = np.zeros(24, np.int8)  # all U-coloured ...
        cube[s] = 1  # ... but one R sticker
        marks = [pos for pos, ch in sticker_positions(_ascii(cube)).items() if ch == "R"]
        assert len(marks) == 1, s
        (line, column) = marks[0]
        assert line == line_of_face[face] + row, s
        seen[s] = column
    for face in range(6):
        assert seen[face * 4] < seen[face * 4 + 1] and seen[face * 4] == seen[face * 4 + 2]
    for left, right in ((4, 2), (2, 1), (1, 5)):  # L F R B from left to right
        assert seen[left * 4 + 1] < seen[right * 4]


def _ascii(cube: np.ndarray) -> str:
    env = Rubik2x2Env()
    env.reset(options={"cube": cube})
    return env.as_ascii()


def test_as_ascii_uses_face_letters():
    env = Rubik2x2Env()
    env.reset(seed=5)
    text = env.as_ascii()
    letters = [ch for ch in text if not ch.isspace()]
    assert len(letters) == 24 and set(letters) <= set(FACE_NAMES)
    assert sorted(letters) == sorted(FACE_NAMES[c] for c in env.cube.reshape(-1))


def test_render_modes(capsys):
    env = Rubik2x2Env(render_mode="ansi")
    env.reset(seed=2)
    out = env.render()
    assert isinstance(out, str) and out == env.as_ascii()
    quiet = Rubik2x2Env()
    quiet.reset(seed=2)
    assert quiet.render() is None
    human = Rubik2x2Env(render_mode="human")
    human.reset(seed=2)
    capsys.readouterr()
    assert human.render() is None
    assert human.as_ascii() in capsys.readouterr().out


def test_get_action_meanings():
    meanings = Rubik2x2Env().get_action_meanings()
    assert meanings == ["U", "U'", "R", "R'", "F", "F'", "L", "L'", "B", "B'", "D", "D'"]
    assert meanings == list(MOVE_NAMES)
