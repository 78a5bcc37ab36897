"""The family's agents: RVPO reads ranks only, the comparators' contracts, the one-shot predictor, the VLM over HTTP."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

import icmlgym
from icmlgym.agents.protocol import AgentSpec
from icmlgym.agents.ui import IterativeRefineAgent, RVPOAgent, VLMAgent
from icmlgym.baselines.ui import AbsoluteRewardAgent, GreedyHillClimbAgent, RandomEditAgent, SinglePassAgent
from icmlgym.envs.ui.edit_features import FEATURES, candidates
from icmlgym.envs.ui.edits import OPS, apply_edit
from icmlgym.envs.ui.layout import generate_page
from icmlgym.envs.ui.render import fast_render
from icmlgym.envs.ui.score import score_parts
from icmlgym.envs.ui.segment import predict_layout
from icmlgym.envs.ui.ui_refine import UIRefineEnv

ENV = "icmlgym/UIRefine-v0"


def _spec(env: UIRefineEnv, **kwargs) -> AgentSpec:
    return AgentSpec(ENV, env.observation_space, env.action_space, icmlgym.card(ENV), kwargs)


def test_rvpo_advantages_come_from_ranks_alone():
    agent = RVPOAgent()
    ranks = np.array([2, 0, 3, 1])
    a = agent.advantages({"ranks": ranks, "scores": np.full(4, np.nan)}, prev_judged=np.nan)
    assert np.all(np.isfinite(a)) and a.mean() == pytest.approx(0.0) and a.std() == pytest.approx(1.0)
    assert np.argmax(a) == 1 and np.argmin(a) == 2
    absolute = AbsoluteRewardAgent()
    env = UIRefineEnv(group_size=4)
    absolute.reset(0, _spec(env))
    s = np.array([0.50, 0.52, 0.49, 0.51])
    b1 = absolute.advantages({"scores": s, "ranks": ranks}, prev_judged=0.5)
    b2 = absolute.advantages({"scores": s + 0.1, "ranks": ranks}, prev_judged=0.5)  # a round offset moves absolute advantages
    assert np.all(b2 > b1)


def test_rvpo_needs_a_group_and_the_edit_mode():
    with pytest.raises(ValueError, match="group_size >= 2"):
        RVPOAgent().reset(0, _spec(UIRefineEnv(group_size=1)))
    with pytest.raises(ValueError, match="action_mode='edit'"):
        RVPOAgent().reset(0, _spec(UIRefineEnv(action_mode="html")))
    with pytest.raises(ValueError, match="action_mode='html'"):
        SinglePassAgent().reset(0, _spec(UIRefineEnv()))


def test_rvpo_training_spends_its_render_budget_and_moves_the_policy():
    env = UIRefineEnv(group_size=4, evaluator="noisy", rounds=4)
    agent = RVPOAgent()
    agent.reset(0, _spec(env))
    agent.train(env, 48)
    assert 48 <= agent.trained_renders <= 48 + 4 and np.abs(agent.theta).sum() > 0
    obs, info = env.reset(seed=5)
    act = agent.act(obs, info)
    assert env.action_space.contains(act) and len({tuple(e) for e in act}) == 4  # distinct candidates


def test_features_list_only_applicable_edits():
    env = UIRefineEnv(task="polishing")
    obs, _ = env.reset(seed=2)
    edits, phi = candidates(obs)
    assert phi.shape == (len(edits), len(FEATURES)) and np.isfinite(phi).all()
    for e in edits[:: max(1, len(edits) // 150)]:
        apply_edit(env._page, e)  # raises EditError if an edit did not apply
    colour = FEATURES.index("colour_match")
    assert phi[:, colour].max() <= 1.0 and phi[:, colour].min() >= -1.0


def test_baseline_actions():
    env = UIRefineEnv(group_size=3)
    obs, info = env.reset(seed=0)
    g = GreedyHillClimbAgent()
    g.reset(1, _spec(env))
    a = g.act(obs, info)
    assert env.action_space.contains(a) and tuple(a[0]) == (0, OPS.index("noop"), 0)
    r = RandomEditAgent()
    r.reset(1, _spec(env))
    a = r.act(obs, info)
    assert env.action_space.contains(a) and OPS.index("noop") not in a[:, 1]


def test_one_shot_predictor_and_iterative_loop():
    scores = []
    for seed in range(5):
        target = fast_render(generate_page(np.random.default_rng(seed), 192, 144))
        scores.append(score_parts(target, fast_render(predict_layout(target.image)))["score"])
    assert min(scores) > 0.4 and np.mean(scores) > 0.6
    kw = {"task": "drafting", "action_mode": "html", "rounds": 6}
    env = UIRefineEnv(**kw)
    it = IterativeRefineAgent()
    it.reset(0, _spec(env, **kw))
    obs, info = env.reset(seed=3)
    best = []
    done = False
    while not done:
        action = it.act(obs, info)
        nxt, r, done, _, info = env.step(action)
        it.update(obs, action, r, nxt, done, False, info)
        obs = nxt
        best.append(info["feedback"]["scores"][0])
    assert best[-1] == pytest.approx(max(best))  # the last round hands in the best page


class _FakeVLM(BaseHTTPRequestHandler):
    page = ""
    bodies: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _FakeVLM.bodies.append(body)
        answer = {"choices": [{"message": {"content": f"Here it is:\n```html\n{_FakeVLM.page}```"}}]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_vlm_agent_over_an_openai_compatible_endpoint(monkeypatch):
    monkeypatch.delenv("ICMLGYM_UI_ENDPOINT", raising=False)
    with pytest.raises(ValueError, match="needs an endpoint and a model"):
        VLMAgent()
    env = UIRefineEnv(action_mode="html", rounds=2)
    obs, info = env.reset(seed=1)
    from icmlgym.envs.ui.layout import to_html

    _FakeVLM.page = to_html(env._target_page)
    server = HTTPServer(("127.0.0.1", 0), _FakeVLM)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        agent = VLMAgent(endpoint=f"http://127.0.0.1:{server.server_port}/v1", model="fake", max_retries=0)
        agent.reset(0, _spec(env, action_mode="html"))
        html = agent.act(obs, info)
        obs, r, *_, info = env.step(html)
    finally:
        server.shutdown()
    assert info["html_error"] is None and env._parts["score"] == pytest.approx(1.0)
    content = _FakeVLM.bodies[0]["messages"][0]["content"]
    assert sum(1 for c in content if c["type"] == "image_url") == 2 and content[2]["image_url"]["url"].startswith("data:image/png;base64,")
