"""GoEnv: registration per size, Gymnasium's check_env, rewards at the end, the mask and the ANSI render."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from go.Go_Board import parse_vertex
from go.GoEnv import GoEnv, env_id


@pytest.mark.parametrize("size", [5, 7, 9])
def test_each_size_is_registered_and_passes_check_env(size):
    env = gym.make(env_id(size))
    assert env.unwrapped.rules.size == size and env.action_space.n == size * size + 1
    check_env(env.unwrapped)
    assert env_id(19) in gym.registry


def test_two_passes_terminate_and_pay_the_last_mover():
    env = GoEnv(5)
    observation, info = env.reset(seed=3)
    assert observation.shape == (3, 5, 5) and info["action_mask"].all() and info["to_play"] == 1
    _, reward, terminated, truncated, info = env.step(25)
    assert (reward, terminated, truncated, info["passes"]) == (0.0, False, False, 1)
    _, reward, terminated, truncated, info = env.step(25)
    assert terminated and not truncated and reward == 1.0  # White passed last; komi 24.5 wins the empty board
    assert not info["action_mask"].any() and info["score"] == -24.5
    with pytest.raises(ValueError, match="reset"):
        env.step(25)


def test_the_move_cap_truncates_with_the_area_result():
    env = GoEnv(5, max_moves=2)
    env.reset()
    env.step(parse_vertex("C3", 5))
    _, reward, terminated, truncated, info = env.step(25)
    assert truncated and not terminated and reward == -1.0 and info["score"] == 0.5  # Black owns all 25


def test_illegal_actions_are_refused():
    env = GoEnv(5)
    env.reset()
    env.step(parse_vertex("C3", 5))
    assert not env._info()["action_mask"][parse_vertex("C3", 5)]
    for bad in (parse_vertex("C3", 5), 26, -1, 1.5, np.array([1, 2])):
        with pytest.raises(ValueError):
            env.step(bad)
    with pytest.raises(ValueError):
        env.reset(options={"board": None})


def test_reset_seeds_the_generator_and_render_writes_coordinates():
    env = GoEnv(7, render_mode="ansi")
    env.reset(seed=11)
    first = env.np_random.random()
    env.reset(seed=11)
    assert env.np_random.random() == first
    env.step(parse_vertex("D4", 7))
    text = env.render()
    assert "A B C D E F G" in text and " 7 " in text and " 1 " in text and "last move: Black D4" in text
    assert text.splitlines()[4].split()[4] == "X"  # row 4, column D
