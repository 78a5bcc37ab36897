"""UIRefine-v0: conformance in every mode, determinism, penalties instead of exceptions, costs and metrics."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import icmlgym
from icmlgym.envs.ui.edits import OPS
from icmlgym.envs.ui.ui_refine import UIRefineEnv


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"task": "drafting", "group_size": 3, "evaluator": "noisy"},
        {"task": "editing", "rounds": 3},
        {"action_mode": "html", "rounds": 3},
    ],
)
def test_check_env_and_sampled_actions_are_accepted(kwargs):
    env = UIRefineEnv(**kwargs)
    check_env(env, skip_render_check=True)
    env.action_space.seed(0)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, r, done, trunc, info = env.step(env.action_space.sample())
        assert np.isfinite(r) and obs in env.observation_space
    m = info["metrics"]
    assert set(m) >= {"score", "block", "text", "position", "colour", "ssim", "renders", "evaluator_calls"}
    assert all(isinstance(v, float) for v in m.values())
    assert info["cost"]["evaluator_calls"] == 1 + env.rounds * env.group_size


def test_registered_and_deterministic():
    env = icmlgym.make("icmlgym/UIRefine-v0")
    a, _ = env.reset(seed=7)
    b, _ = env.reset(seed=7)
    c, _ = env.reset(seed=8)
    assert np.array_equal(a["target"], b["target"]) and np.array_equal(a["current"], b["current"])
    assert not np.array_equal(a["target"], c["target"])
    with pytest.raises(ValueError, match="task must be one of"):
        UIRefineEnv(task="painting")
    with pytest.raises(ValueError, match="group_size must be 1"):
        UIRefineEnv(action_mode="html", group_size=2)


def test_edit_to_missing_block_is_penalised_not_raised():
    env = UIRefineEnv(rounds=3, group_size=2, invalid_penalty=0.02)
    obs, info = env.reset(seed=1)
    n = int(info["valid_blocks"].sum())
    assert obs["layout"][:n, 0].all() and not obs["layout"][n:, 0].any()
    action = np.array([[n, OPS.index("colour"), 3], [0, OPS.index("noop"), 0]])
    obs2, r, *_, info = env.step(action)
    assert r == pytest.approx(-0.01)  # one invalid candidate of two, nothing else changed
    assert info["feedback"]["invalid"].tolist() == [True, False]
    assert f"no block {n}" in info["feedback"]["errors"][0]
    assert np.array_equal(obs2["current"], obs["current"]) and info["cost"]["invalid_actions"] == 1
    with pytest.raises(ValueError, match="not in the action space"):
        env.step(np.array([[0, 99, 0], [0, 0, 0]]))


def test_polishing_fix_raises_the_score_and_reward_is_its_change():
    env = UIRefineEnv(task="editing", rounds=2)
    obs, info = env.reset(seed=3)
    assert obs["instruction"]
    start = info["feedback"]["scores"][0]
    # the exact evaluator: the reward of a round is the change of the true score
    _, r, *_, info = env.step(np.array([[1, OPS.index("colour"), 5]]))
    assert r == pytest.approx(info["feedback"]["scores"][0] - start)


def test_noisy_evaluator_offset_is_shared_within_a_round():
    env = UIRefineEnv(group_size=4, evaluator="noisy", noise_round=0.5, noise_candidate=0.0)
    env.reset(seed=0)
    noop = [0, OPS.index("noop"), 0]
    _, _, *_, info = env.step(np.array([noop] * 4))
    s = info["feedback"]["scores"]
    assert np.allclose(s, s[0]) and abs(s[0] - env._parts["score"]) > 1e-6  # offset, shared by all four
    assert info["feedback"]["ranks"].tolist() == [0, 1, 2, 3]


def test_html_mode_errors_and_warnings():
    env = UIRefineEnv(action_mode="html", rounds=4, invalid_penalty=0.05)
    obs, info = env.reset(seed=2)
    html = info["html"]
    _, r, *_, info = env.step(html)
    assert r == pytest.approx(0.0) and info["html_error"] is None
    _, r, *_, info = env.step("<div data-type='page'>")
    assert r == pytest.approx(-0.05) and "does not parse" in info["html_error"]
    _, r, *_, info = env.step(html.replace("</body>", "<script>alert(1)</script></body>"))
    assert info["html_error"] is None and "scripts are disabled" in info["html_warnings"][0]
    _, r, *_, info = env.step(html.replace("background-color", "border-color", 1))
    assert "outside the layout language" in info["html_error"] and "renderer='chromium'" in info["html_error"]
    assert info["metrics"]["invalid_actions"] == 2


def test_chromium_renderer_problems_are_clear_before_any_episode(monkeypatch):
    chromium = pytest.importorskip("icmlgym.envs.ui.chromium", reason="playwright is not installed")
    monkeypatch.setattr(chromium, "CHROMIUM", chromium.Path("/nonexistent/chromium"))
    with pytest.raises(chromium.ChromiumUnavailableError, match="apt-get install chromium"):
        UIRefineEnv(renderer="chromium")


def test_html_page_with_too_many_blocks_is_refused():
    from icmlgym.envs.ui.layout import PALETTE, Block, to_html

    env = UIRefineEnv(action_mode="html", rounds=1, max_blocks=8)
    env.reset(seed=0)
    page = Block("page", 192, 144, PALETTE[0], children=[Block("image", 4, 4, PALETTE[4]) for _ in range(9)])
    _, r, *_, info = env.step(to_html(page))
    assert "10 blocks, more than max_blocks=8" in info["html_error"] and r < 0
