"""UI2Code^N's methods on UIRefine-v0: RVPO, the iterative refinement loop, and a VLM over HTTP.

- :class:`RVPOAgent` (reference): a log-linear policy over the applicable edits
  (:mod:`icmlgym.envs.ui.edit_features`) that proposes ``G`` candidates per round (the env's
  ``group_size``) and is trained with group-relative advantages computed from the
  evaluator's *ranking* of the ``G`` rendered candidates (``info["feedback"]["ranks"]``),
  never from its absolute scores: the advantage of a candidate is its centred, scaled rank
  in its group, and the update is ``theta += lr * mean_i A_i (phi_i - E_pi[phi])``.
- :class:`IterativeRefineAgent`: UI2Code^N's loop in HTML mode: the one-shot draft in the
  first round, then each round the most promising edit (feature score) of the best page so
  far, kept only when the evaluator judges the new render better.
- :class:`VLMAgent`: a vision-language model behind an OpenAI-compatible endpoint writes
  the whole page as HTML each round (the shared HTTP client, :mod:`icmlgym.zoo.http`).
"""

from __future__ import annotations

import os
import re
from typing import Any

import gymnasium as gym
import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.envs.ui.edit_features import FEATURES, candidates
from icmlgym.envs.ui.edits import EditError, apply_edit
from icmlgym.envs.ui.layout import to_html
from icmlgym.envs.ui.segment import predict_layout

# hand-set feature weights of the heuristic proposer (used by IterativeRefineAgent and as the
# learners' common prior scale); biases start at 0
HEURISTIC = {"colour_match": 8.0, "edge_match": 8.0, "delete_match": 4.0}


def _sample_without_replacement(rng: np.random.Generator, logits: np.ndarray, k: int) -> np.ndarray:
    """``k`` distinct indices drawn from softmax(logits) (Gumbel top-k)."""
    k = min(k, len(logits))
    return np.argsort(-(logits + rng.gumbel(size=len(logits))))[:k]


class EditPolicyAgent(BaseAgent):
    """A log-linear policy over the applicable edits, trained by :meth:`train` with a
    subclass's :meth:`advantages`. Acts by sampling ``group_size`` distinct candidates.

    Args:
        lr: step size of the policy-gradient update.
        temperature: softmax temperature of the policy.
    """

    name = "ui-edit-policy"

    def __init__(self, lr: float = 0.5, temperature: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if lr <= 0 or temperature <= 0:
            raise ValueError(f"lr and temperature must be > 0, got {lr}, {temperature}")
        self.lr, self.temperature = float(lr), float(temperature)
        self.theta = np.zeros(len(FEATURES))
        self.trained_renders = 0
        self._cache: dict = {}

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        shape = getattr(spec.action_space, "shape", None)
        if shape is None or len(shape) != 2 or shape[1] != 3:
            raise ValueError(f"{type(self).__name__} needs UIRefine-v0's edit mode (action_mode='edit'), got action space {spec.action_space}")
        self.group_size = int(shape[0])
        self._prev_judged: float | None = None

    def _policy(self, obs: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        edits, phi = candidates(obs, cache=self._cache)
        logits = phi @ self.theta / self.temperature
        return edits, phi, logits

    def act(self, obs: dict, info: dict[str, Any]) -> np.ndarray:
        edits, _, logits = self._policy(obs)
        return edits[_sample_without_replacement(self.np_random, logits, self.group_size)].reshape(-1, 3)

    def advantages(self, feedback: dict[str, Any], prev_judged: float) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def train(self, env: Any, budget: int) -> None:
        """Policy-gradient training on ``env`` until ``budget`` renders have been spent."""
        spent = 0
        while spent < budget:
            obs, info = env.reset(seed=int(self.np_random.integers(2**31 - 1)))
            judged = float(info["feedback"]["scores"][0])
            before = info["cost"]["renders"]
            done = False
            while not done and spent + (info["cost"]["renders"] - before) < budget:
                edits, phi, logits = self._policy(obs)
                idx = _sample_without_replacement(self.np_random, logits, self.group_size)
                action = edits[idx].reshape(-1, 3)
                if len(idx) < self.group_size:  # fewer applicable edits than candidates: repeat
                    action = np.resize(action, (self.group_size, 3))
                    idx = np.resize(idx, self.group_size)
                obs, _, term, trunc, info = env.step(action)
                fb = info["feedback"]
                adv = self.advantages(fb, judged)
                judged = float(fb["scores"][fb["committed"]])
                p = np.exp(logits - logits.max())
                p /= p.sum()
                grad = (adv[:, None] * (phi[idx] - p @ phi)).mean(0) / self.temperature
                self.theta += self.lr * grad
                done = term or trunc
            spent += int(info["cost"]["renders"] - before)
        self.trained_renders = spent


class RVPOAgent(EditPolicyAgent):
    """RVPO: group-relative advantages from the evaluator's ranking of the G candidates.

    A candidate ranked ``r`` (0 = best) of ``G`` gets ``u = 1 - 2 r / (G - 1)``, centred and
    divided by its group's standard deviation; absolute scores are never read, so an offset
    the evaluator adds to a whole round cancels by construction.
    """

    name = "ui-rvpo"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        if self.group_size < 2:
            raise ValueError("RVPO ranks a group of candidates: run UIRefine-v0 with group_size >= 2")

    def advantages(self, feedback: dict[str, Any], prev_judged: float) -> np.ndarray:
        ranks = np.asarray(feedback["ranks"], dtype=np.float64)
        u = 1.0 - 2.0 * ranks / max(1, len(ranks) - 1)
        u = u - u.mean()
        sd = u.std()
        return u / sd if sd > 0 else u


class IterativeRefineAgent(BaseAgent):
    """UI2Code^N's closed loop in HTML mode (``action_mode="html"``): draft, render, inspect, refine.

    Round 1 submits the one-shot draft of the target (:func:`~icmlgym.envs.ui.segment.predict_layout`).
    Every later round applies to the best page so far the untried edit with the highest
    heuristic feature score (computed from the target and the best page's render) and submits
    it; the evaluator's judgement (``info["feedback"]["scores"]``) decides whether it becomes
    the new best page. The last round hands in the best page.
    """

    name = "ui-iterative"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.theta = np.array([HEURISTIC.get(f, 0.0) for f in FEATURES])
        self._best = None
        self._best_obs: dict | None = None
        self._best_judged = -np.inf
        self._pending = None
        self._tried: set[tuple[int, int, int]] = set()
        self._cache: dict = {}

    def act(self, obs: dict, info: dict[str, Any]) -> str:
        if not isinstance(getattr(self.spec, "action_space", None), gym.spaces.Text):
            raise ValueError("IterativeRefineAgent writes HTML: run UIRefine-v0 with action_mode='html'")
        if self._best is None:
            self._pending = predict_layout(obs["target"])
            return to_html(self._pending)
        rounds = int((self.spec.env_kwargs or {}).get("rounds", 8))  # type: ignore[union-attr]
        if int(info.get("round", 0)) >= rounds - 1:  # the last round: hand in the best page found
            self._pending = self._best
            return to_html(self._best)
        base = dict(self._best_obs)  # type: ignore[arg-type]
        edits, phi = candidates(base, cache=self._cache)
        order = np.argsort(-(phi @ self.theta), kind="stable")
        for i in order:
            e = tuple(int(v) for v in edits[i])
            if e in self._tried or e[1] == 0:
                continue
            self._tried.add(e)
            try:
                self._pending = apply_edit(self._best, e)
            except EditError:
                continue
            return to_html(self._pending)
        self._pending = self._best
        return to_html(self._best)

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        if info.get("html_error"):
            return
        judged = float(info["feedback"]["scores"][0])
        if judged > self._best_judged:
            self._best, self._best_judged = self._pending, judged
            self._best_obs = {"target": next_obs["target"], "current": next_obs["current"], "layout": next_obs["layout"]}
            self._tried = set()


class VLMAgent(BaseAgent):
    """A vision-language model writes the page as HTML each round (``action_mode="html"``).

    Each round sends the target and the current render (PNG data URLs), the current HTML, the
    instruction and the last error to ``{endpoint}/chat/completions`` through the shared HTTP
    client, and submits the first ```html block (or the whole answer) of the reply.

    Args:
        endpoint: base URL; default ``$ICMLGYM_UI_ENDPOINT``.
        model: model name; default ``$ICMLGYM_UI_MODEL``.
        api_key: default ``$ICMLGYM_UI_API_KEY`` (may be unset).
        timeout, max_retries, max_tokens, temperature: request settings.

    Raises:
        ValueError: no endpoint or model configured.
    """

    name = "ui-vlm"
    PROMPT = (
        "You write HTML for a web page so that its screenshot matches the TARGET image. "
        "Use only nested <div data-type=\"TYPE\" style=\"width:Wpx;height:Hpx;background-color:#rrggbb;"
        "flex-direction:row|column;gap:Gpx;padding:Ppx\"> blocks (TYPE: page, header, sidebar, main, row, card, "
        "button, text, image); text goes inside button and text blocks. Reply with one ```html block."
    )

    def __init__(self, endpoint: str | None = None, model: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, max_tokens: int = 4096, temperature: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from icmlgym.zoo.http import HTTPClient, chat_url

        endpoint = endpoint or os.environ.get("ICMLGYM_UI_ENDPOINT", "")
        self.model = model or os.environ.get("ICMLGYM_UI_MODEL", "")
        if not endpoint or not self.model:
            raise ValueError("VLMAgent needs an endpoint and a model: pass endpoint=/model= or set ICMLGYM_UI_ENDPOINT and ICMLGYM_UI_MODEL")
        self.client = HTTPClient(chat_url(endpoint), api_key=api_key or os.environ.get("ICMLGYM_UI_API_KEY"),
                                 timeout=timeout, max_retries=max_retries)
        self.max_tokens, self.temperature = int(max_tokens), float(temperature)

    def request_body(self, obs: dict, info: dict[str, Any]) -> dict[str, Any]:
        from icmlgym.envs.arena.choosers import encode_png_data_url

        text = f"{self.PROMPT}\nCurrent HTML:\n{info.get('html', '')}"
        if obs.get("instruction"):
            text += f"\nInstruction: {obs['instruction']}"
        if info.get("html_error"):
            text += f"\nYour last page was refused: {info['html_error']}"
        content = [
            {"type": "text", "text": text},
            {"type": "text", "text": "TARGET:"},
            {"type": "image_url", "image_url": {"url": encode_png_data_url(obs["target"])}},
            {"type": "text", "text": "CURRENT render:"},
            {"type": "image_url", "image_url": {"url": encode_png_data_url(obs["current"])}},
        ]
        return {"model": self.model, "messages": [{"role": "user", "content": content}],
                "max_tokens": self.max_tokens, "temperature": self.temperature}

    def act(self, obs: dict, info: dict[str, Any]) -> str:
        from icmlgym.zoo.http import message_text

        answer = message_text(self.client.post_json(self.request_body(obs, info)))
        m = re.search(r"```(?:html)?\s*\n(.*?)```", answer, re.S)
        return m.group(1) if m else answer


__all__ = ["EditPolicyAgent", "IterativeRefineAgent", "RVPOAgent", "VLMAgent"]
