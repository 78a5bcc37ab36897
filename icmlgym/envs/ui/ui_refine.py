"""UIRefine-v0: UI-to-code as iterative visual optimisation (UI2Code^N, RVPO).

## Description

"UI2Code^N" (ICML 2026) embeds UI-to-code generation in a closed loop of execution,
visual inspection and refinement, and trains it with RVPO (Relative Visual Policy
Optimization): a policy is optimised from *rankings* of rendered candidates, since
absolute visual judges are noisy. Here a page of the layout language
(:mod:`icmlgym.envs.ui.layout`) is the code; each round the agent proposes a change,
the env renders it (fast numpy renderer or headless Chromium), an evaluator judges it
against the target screenshot, and the page moves on.

Tasks: ``drafting`` (from an empty page), ``polishing`` (from the target perturbed by
``perturb_edits`` random edits of colour, size, text and spacing) and ``editing`` (the
start page is a generated page, the target is that page after one or two edits that
``obs["instruction"]`` states in English).

## Action Space

``action_mode="edit"`` (default): ``MultiDiscrete`` of shape ``(group_size, 3)``,
``group_size`` candidate edits ``(block, op, arg)`` (:mod:`icmlgym.envs.ui.edits`).
Every candidate is rendered and judged; the candidate the evaluator judges best is
committed (ties: the first). An edit that does not apply (a block that does not exist,
an op the block does not take) leaves that candidate's page unchanged and costs
``invalid_penalty / group_size``; ``info["valid_blocks"]`` masks the existing blocks.
``action_mode="html"``: ``Text`` (printable ASCII, up to ``max_html`` characters), a
whole page for a VLM agent; it replaces the current page. HTML that does not parse (or,
with the fast renderer, leaves the layout language) costs ``invalid_penalty``, leaves
the page unchanged and ``info["html_error"]`` says why. Scripts never run (JavaScript
is off) and no URL is fetched (every request is refused); ``info["html_warnings"]``
says what was neutralised.

## Observation Space

``Dict``: ``target`` and ``current`` screenshots ``Box(0, 255, (height, width, 3), uint8)``;
``layout`` ``Box((max_blocks, 15), float32)``, one row per block of the current page
in pre-order (:data:`LAYOUT_FIELDS`; rows past the last block are zero); ``instruction``
``Text`` (empty except in ``editing``). ``info["html"]`` holds the current page as HTML.

## Rewards

The change in the evaluator's judgement of the committed page:
``judged(page_t) - judged(page_{t-1})`` minus invalid penalties. The true judgement is
the Design2Code-style score (:mod:`icmlgym.envs.ui.score`). With
``evaluator="noisy"`` each round has an offset ``N(0, noise_round)`` shared by every
candidate of that round plus ``N(0, noise_candidate)`` per candidate, as real VLM judges
behave: rankings within a round are barely affected, absolute scores across rounds are.
``info["feedback"]`` holds this round's judged ``scores`` and their ``ranks`` (0 = best).

## Starting State

A target page from the seeded generator (:func:`~icmlgym.envs.ui.layout.generate_page`)
and the task's start page, both rendered.

## Episode End

Terminates after ``rounds`` rounds.

## Arguments

``task`` ("polishing"), ``rounds`` (8), ``width``/``height`` (192/144), ``max_blocks``
(40), ``action_mode`` ("edit"), ``group_size`` (1), ``renderer`` ("fast" or
"chromium"), ``evaluator`` ("exact" or "noisy"), ``noise_round`` (0.05),
``noise_candidate`` (0.005), ``perturb_edits`` (6), ``invalid_penalty`` (0.01),
``max_html`` (20000).

## Metrics

``score`` (true final score) and its parts ``block``, ``text``, ``position``,
``colour``, ``ssim``; ``initial_score``, ``improvement``, ``renders``,
``evaluator_calls``, ``invalid_actions``. ``info["cost"]``: ``renders``,
``evaluator_calls``, ``invalid_actions``, ``env_steps``.

## Version History

- v0: initial version.
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.envs.ui.edits import N_ARGS, OPS, EditError, apply_edit, describe_edit, random_valid_edit
from icmlgym.envs.ui.html_input import HTMLInputError, parse_layout
from icmlgym.envs.ui.layout import BLOCK_TYPES, VOCAB, Block, empty_page, generate_page, layout, to_html
from icmlgym.envs.ui.render import Render, fast_render
from icmlgym.envs.ui.score import PARTS, score_parts

TASKS: tuple[str, ...] = ("drafting", "polishing", "editing")
LAYOUT_FIELDS: tuple[str, ...] = (
    "exists", "type", "parent", "depth", "x", "y", "w", "h", "r", "g", "b", "text", "direction", "gap", "padding",
)
POLISH_OPS = ("colour", "width", "height", "text", "gap", "padding")
EDIT_TASK_OPS = ("colour", "width", "height", "text", "delete", "add")
CHARSET = string.printable


def layout_table(root: Block, max_blocks: int) -> np.ndarray:
    """The ``layout`` observation: one row of :data:`LAYOUT_FIELDS` per block (pre-order).
    ``text`` is the VOCAB index, -1 for no text, -2 for a text outside VOCAB."""
    table = np.zeros((max_blocks, len(LAYOUT_FIELDS)), dtype=np.float32)
    blocks = list(root.walk())
    for b, box in zip(blocks[:max_blocks], layout(root)):
        text = -1 if not b.text else (VOCAB.index(b.text) if b.text in VOCAB else -2)
        table[box.index] = (
            1, BLOCK_TYPES.index(b.type), box.parent, box.depth, box.x, box.y, b.w, b.h, *b.colour, text,
            1 if b.direction == "row" else 0, b.gap, b.padding,
        )
    return table


class UIRefineEnv(gym.Env):
    """Iterative UI-to-code refinement against a target screenshot (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(
        self,
        task: str = "polishing",
        rounds: int = 8,
        width: int = 192,
        height: int = 144,
        max_blocks: int = 40,
        action_mode: str = "edit",
        group_size: int = 1,
        renderer: str = "fast",
        evaluator: str = "exact",
        noise_round: float = 0.05,
        noise_candidate: float = 0.005,
        perturb_edits: int = 6,
        invalid_penalty: float = 0.01,
        max_html: int = 20000,
        render_mode: str | None = None,
    ) -> None:
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
        if action_mode not in ("edit", "html"):
            raise ValueError(f"action_mode must be 'edit' or 'html', got {action_mode!r}")
        if renderer not in ("fast", "chromium"):
            raise ValueError(f"renderer must be 'fast' or 'chromium', got {renderer!r}")
        if evaluator not in ("exact", "noisy"):
            raise ValueError(f"evaluator must be 'exact' or 'noisy', got {evaluator!r}")
        if rounds < 1 or group_size < 1 or max_blocks < 8 or perturb_edits < 0:
            raise ValueError(f"need rounds >= 1, group_size >= 1, max_blocks >= 8, perturb_edits >= 0; got {rounds}, {group_size}, {max_blocks}, {perturb_edits}")
        if action_mode == "html" and group_size != 1:
            raise ValueError("action_mode='html' submits one page per round: group_size must be 1")
        if noise_round < 0 or noise_candidate < 0 or invalid_penalty < 0:
            raise ValueError("noise_round, noise_candidate and invalid_penalty must be >= 0")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.task, self.rounds, self.width, self.height = task, int(rounds), int(width), int(height)
        self.max_blocks, self.action_mode, self.group_size = int(max_blocks), action_mode, int(group_size)
        self.renderer, self.evaluator = renderer, evaluator
        self.noise_round, self.noise_candidate = float(noise_round), float(noise_candidate)
        self.perturb_edits, self.invalid_penalty, self.max_html = int(perturb_edits), float(invalid_penalty), int(max_html)
        self.render_mode = render_mode
        generate_page(np.random.default_rng(0), self.width, self.height)  # size check before any episode
        img = spaces.Box(0, 255, (self.height, self.width, 3), np.uint8)
        self.observation_space = spaces.Dict(
            {
                "target": img,
                "current": img,
                "layout": spaces.Box(-2.0, 1e5, (self.max_blocks, len(LAYOUT_FIELDS)), np.float32),
                "instruction": spaces.Text(max_length=512, min_length=0, charset=CHARSET),
            }
        )
        if action_mode == "edit":
            self.action_space = spaces.MultiDiscrete(np.tile([self.max_blocks, len(OPS), N_ARGS], (self.group_size, 1)))
        else:
            self.action_space = spaces.Text(max_length=self.max_html, min_length=0, charset=CHARSET)
        self._chromium: Any = None
        if renderer == "chromium":  # the extra and the browser binary are checked now, the browser starts on first use
            from icmlgym.envs.ui.chromium import ChromiumRenderer

            self._chromium = ChromiumRenderer(self.width, self.height)
        self._page: Block | None = None
        self._page_html: str = ""

    # ------------------------------------------------------------------ rendering and judging

    def _render_page(self, page: Block | None, html: str | None = None) -> Render:
        r = self._draw(page, html)
        self._cost["renders"] += 1
        return r

    def _draw(self, page: Block | None, html: str | None) -> Render:
        if self.renderer == "fast":
            assert page is not None
            r = fast_render(page)
            if r.image.shape[:2] != (self.height, self.width):  # a submitted page of another size
                canvas = np.full((self.height, self.width, 3), 255, np.uint8)
                hh, ww = min(self.height, r.image.shape[0]), min(self.width, r.image.shape[1])
                canvas[:hh, :ww] = r.image[:hh, :ww]
                r = Render(canvas, r.elements, r.blocked, r.warnings)
            return r
        return self._chromium.render(html if html is not None else to_html(page))

    def _judge(self, parts: list[dict[str, float]]) -> np.ndarray:
        """The evaluator's scores of this round's candidates (one call each)."""
        self._cost["evaluator_calls"] += len(parts)
        true = np.array([p["score"] for p in parts])
        if self.evaluator == "exact":
            return true
        offset = self.np_random.normal(0.0, self.noise_round)
        return true + offset + self.np_random.normal(0.0, self.noise_candidate, size=len(true))

    # ------------------------------------------------------------------ gym API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        self._cost = {"renders": 0.0, "evaluator_calls": 0.0, "invalid_actions": 0.0, "env_steps": 0.0}
        target = generate_page(rng, self.width, self.height)
        self.instruction = ""
        if self.task == "drafting":
            start = empty_page(self.width, self.height)
        elif self.task == "polishing":
            start = target
            for _ in range(self.perturb_edits):
                start = apply_edit(start, random_valid_edit(rng, start, POLISH_OPS, self.max_blocks), self.max_blocks)
        else:
            start = target
            texts = []
            for _ in range(int(rng.integers(1, 3))):
                e = random_valid_edit(rng, target, EDIT_TASK_OPS, self.max_blocks)
                texts.append(describe_edit(target, e))
                target = apply_edit(target, e, self.max_blocks)
            self.instruction = "; ".join(texts)
        self._target_page = target
        self._target = self._render_page(target)
        self._set_page(start, self._render_page(start))
        self._parts = score_parts(self._target, self._current)
        self._initial = self._parts["score"]
        self._judged = float(self._judge([self._parts])[0])
        self._round = 0
        info = self._info()
        info["feedback"] = {"scores": np.array([self._judged]), "ranks": np.zeros(1, dtype=np.int64)}
        return self._obs(), info

    def _set_page(self, page: Block | None, render: Render, html: str | None = None) -> None:
        self._page, self._current = page, render
        self._page_html = html if html is not None else to_html(page)  # type: ignore[arg-type]

    def _obs(self) -> dict[str, Any]:
        table = layout_table(self._page, self.max_blocks) if self._page is not None else np.zeros(
            (self.max_blocks, len(LAYOUT_FIELDS)), np.float32)
        return {"target": self._target.image.copy(), "current": self._current.image.copy(), "layout": table,
                "instruction": self.instruction}

    def _info(self) -> dict[str, Any]:
        n = len(self._page) if self._page is not None else 0
        valid = np.zeros(self.max_blocks, dtype=bool)
        valid[: min(n, self.max_blocks)] = True
        return {"cost": dict(self._cost), "valid_blocks": valid, "html": self._page_html, "round": self._round}

    def step(self, action: Any):
        if not hasattr(self, "_target"):
            raise RuntimeError("call reset() before step()")
        if self._round >= self.rounds:
            raise RuntimeError(f"the episode ended after {self.rounds} rounds: call reset()")
        self._cost["env_steps"] += 1
        info_extra: dict[str, Any] = {}
        if self.action_mode == "edit":
            reward, info_extra = self._step_edits(action)
        else:
            reward, info_extra = self._step_html(action)
        self._round += 1
        terminated = self._round >= self.rounds
        info = {**self._info(), **info_extra}
        if terminated:
            info["metrics"] = self._metrics()
        return self._obs(), float(reward), terminated, False, info

    def _step_edits(self, action: Any) -> tuple[float, dict[str, Any]]:
        a = np.asarray(action)
        if a.shape != self.action_space.shape or not self.action_space.contains(a.astype(np.int64)):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space}")
        pages: list[Block] = []
        renders: list[Render] = []
        parts: list[dict[str, float]] = []
        invalid = np.zeros(self.group_size, dtype=bool)
        errors: list[str | None] = []
        for g, edit in enumerate(a):
            try:
                page = apply_edit(self._page, edit, self.max_blocks)  # type: ignore[arg-type]
                errors.append(None)
            except EditError as err:
                invalid[g] = True
                errors.append(str(err))
                page = self._page  # type: ignore[assignment]
            if invalid[g] or OPS[int(edit[1])] == "noop":
                r, p = self._current, self._parts
            else:
                r = self._render_page(page)
                p = score_parts(self._target, r)
            pages.append(page)  # type: ignore[arg-type]
            renders.append(r)
            parts.append(p)
        judged = self._judge(parts)
        best = int(np.argmax(judged))
        self._cost["invalid_actions"] += float(invalid.sum())
        reward = float(judged[best] - self._judged) - self.invalid_penalty * float(invalid.sum()) / self.group_size
        self._set_page(pages[best], renders[best])
        self._parts, self._judged = parts[best], float(judged[best])
        ranks = np.empty(self.group_size, dtype=np.int64)
        ranks[np.argsort(-judged, kind="stable")] = np.arange(self.group_size)
        return reward, {"feedback": {"scores": judged, "ranks": ranks, "committed": best, "invalid": invalid, "errors": errors}}

    def _step_html(self, action: Any) -> tuple[float, dict[str, Any]]:
        if not isinstance(action, str):
            raise ValueError(f"action must be a str (HTML) in the action space {self.action_space}, got {type(action).__name__}")
        extra: dict[str, Any] = {"html_error": None, "html_warnings": []}
        try:
            if len(action) > self.max_html:
                raise HTMLInputError(f"HTML is {len(action)} characters, more than max_html={self.max_html}")
            if self.renderer == "fast":
                page, warnings = parse_layout(action)
                if len(page) > self.max_blocks:
                    raise HTMLInputError(f"the page has {len(page)} blocks, more than max_blocks={self.max_blocks}")
                render = self._render_page(page)
            else:
                try:
                    page = parse_layout(action)[0]
                except HTMLInputError:
                    page = None  # any HTML renders in Chromium; only the layout table stays empty
                render = self._render_page(None, html=action)
                warnings = list(render.warnings)
                if render.blocked:
                    warnings.append(f"{len(render.blocked)} request(s) refused: {', '.join(render.blocked[:5])}")
        except HTMLInputError as err:
            self._cost["invalid_actions"] += 1
            extra["html_error"] = str(err)
            judged = float(self._judge([self._parts])[0])
            reward = judged - self._judged - self.invalid_penalty
            self._judged = judged
            extra["feedback"] = {"scores": np.array([judged]), "ranks": np.zeros(1, np.int64)}
            return reward, extra
        extra["html_warnings"] = warnings
        parts = score_parts(self._target, render)
        judged = float(self._judge([parts])[0])
        reward = judged - self._judged
        self._set_page(page, render, html=action)
        self._parts, self._judged = parts, judged
        extra["feedback"] = {"scores": np.array([judged]), "ranks": np.zeros(1, np.int64)}
        return reward, extra

    def _metrics(self) -> dict[str, float]:
        m = {k: float(self._parts[k]) for k in (*PARTS, "score")}
        m.update(
            initial_score=float(self._initial),
            improvement=float(self._parts["score"] - self._initial),
            renders=self._cost["renders"],
            evaluator_calls=self._cost["evaluator_calls"],
            invalid_actions=self._cost["invalid_actions"],
        )
        return m

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array" or not hasattr(self, "_current"):
            return None
        return np.concatenate([self._target.image, self._current.image], axis=1)

    def close(self) -> None:
        if self._chromium is not None:
            self._chromium.close()
