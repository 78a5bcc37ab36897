"""LatentActionTransfer-v0: latent actions learned from unlabelled video, transferred to an unseen context.

Olaf-World (ICML 2026): latent action models trained on unlabelled video entangle scene cues
and have no shared coordinate system across contexts, so a latent learned in one scene does not
mean the same action in another. The env is a sprite world of our own
(:mod:`icmlgym.corpora.sprites`) with visual contexts that differ in background texture, sprite
skin and scale, and a distractor whose motion is correlated with the context. An agent
pre-trains on unlabelled clips of the training contexts (``train(env, budget)``, budget in
frames, through :meth:`LatentActionTransferEnv.clips`), then each episode evaluates it in an
unseen context with ``n_labels`` labelled transitions to map its latents to real actions.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.corpora import sprites

QUERY, CONTROL = 0, 1
MAX_SOURCE_LABELS = 1024


def _check_int(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < lo or (hi is not None and int(value) > hi):
        bound = f"an integer >= {lo}" if hi is None else f"an integer in {lo}..{hi}"
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return int(value)


class LatentActionTransferEnv(gym.Env):
    """Map pre-trained latent actions to real actions in an unseen context, then follow a demonstration there.

    ## Description
    Olaf-World (ICML 2026) asks whether latent actions learned from unlabelled video transfer
    across contexts. The sprite world (:mod:`icmlgym.corpora.sprites`) has 12 visual contexts:
    0-5 serve unlabelled clips for pre-training, 6-11 are never seen in training. Before the
    episodes an agent may call :meth:`clips` (unlabelled clips of ``train_contexts`` under a
    random policy; the runner's ``train(env, budget)`` hands it a budget in frames). An
    episode then evaluates it in the unseen ``eval_context``:

    1. **Queries** (``n_queries`` steps, phase 0): each step shows a transition of the eval
       context (``before`` -> ``after``) and the agent names the real action that caused it.
       With ``n_labels = 0`` this is the cross-context probe (latents mapped to actions with
       labels of the training contexts only, applied in an unseen context); with 8 or 64
       labels of the eval context it is the adaptation curve.
    2. **Demonstration transfer** (``demo_len`` steps, phase 1): a demonstration that walks
       the sprite from a start cell to a goal cell ``demo_len`` cells away (moves along one
       vertical and one horizontal direction, in random order) is shown, one transition per step, in a
       *second* unseen context (``demo_context``); the agent's sprite starts at the same cell
       in the eval context (``frame``), and each action the agent takes moves it there. The
       agent reaches the goal when the latent it infers from each demonstration transition
       (one context) means the same real action where it is applied (another context):
       zero-shot transfer on a goal-reaching task.

    ## Action Space
    ``Discrete(5)``: stay, up, down, left, right (:data:`icmlgym.corpora.sprites.ACTIONS`).
    Every action is valid; a move into the border leaves the sprite in place.

    ## Observation Space
    ``Dict``: ``frame`` (36, 36, 3) uint8, the agent's sprite world in the eval context;
    ``before`` and ``after`` (36, 36, 3) uint8, the transition to answer (phase 0) or the
    demonstration's current step (phase 1); ``phase`` ``Discrete(2)``.

    ## Rewards
    Phase 0: ``1 / n_queries`` for each correctly named action. Phase 1: 1 at the end when the
    sprite is on the goal cell. The return lies in [0, 2].

    ## Starting State
    ``reset(seed)`` draws (from the env's generator) the ``source_labels`` labelled transitions
    of the training contexts and the ``n_labels`` of the eval context (both in the reset
    ``info``: ``source_labelled`` and ``labelled``, each ``{"before", "after", "action",
    "context"}``, actions balanced and every move visible), the queries, the start cell and the
    demonstration. The labelled transitions of the eval context are the first ``n_labels`` of
    a pool of ``label_pool`` drawn first, so for one seed a larger ``n_labels`` adds labels.

    ## Episode End
    Terminates after ``n_queries + demo_len`` steps.

    ## Arguments
    ``train_contexts`` (ids in 0-5, default all), ``eval_context`` (6-11, default 6),
    ``demo_context`` (6-11, not the eval context, default 7), ``n_labels`` (0..``label_pool``,
    default 8), ``label_pool`` (default 64), ``source_labels`` (default 64), ``n_queries``
    (default 32), ``demo_len`` (default 6), ``clip_len`` (frames per clip, default 8).

    ## Metrics
    ``action_accuracy`` (share of queries named right), ``transfer_accuracy`` (share of
    demonstration steps where the agent took the demonstrated action), ``transfer_success``
    (the goal reached), ``goal_distance`` (cells from the goal at the end), ``n_labels``,
    ``eval_context``, ``demo_context``.

    ## Version History
    v0: first version.
    """

    metadata = {"render_modes": []}  # noqa: RUF012 (gymnasium's convention)

    def __init__(
        self,
        train_contexts: tuple[int, ...] | list[int] = sprites.TRAIN_CONTEXTS,
        eval_context: int = 6,
        demo_context: int = 7,
        n_labels: int = 8,
        label_pool: int = 64,
        source_labels: int = 64,
        n_queries: int = 32,
        demo_len: int = 6,
        clip_len: int = 8,
    ) -> None:
        if isinstance(train_contexts, (str, bytes)) or not hasattr(train_contexts, "__iter__"):
            raise ValueError(f"train_contexts must be a list of context ids in {list(sprites.TRAIN_CONTEXTS)}, got {train_contexts!r}")
        tc = tuple(sprites.check_context(c, sprites.TRAIN_CONTEXTS, "training context") for c in train_contexts)
        if not tc or len(set(tc)) != len(tc):
            raise ValueError(f"train_contexts must be distinct and non-empty, got {list(train_contexts)}")
        self.train_contexts = tc
        self.eval_context = sprites.check_context(eval_context, sprites.UNSEEN_CONTEXTS, "eval_context")
        self.demo_context = sprites.check_context(demo_context, sprites.UNSEEN_CONTEXTS, "demo_context")
        if self.demo_context == self.eval_context:
            raise ValueError(f"demo_context must differ from eval_context (both {eval_context}): the demonstration is shown in another context")
        self.label_pool = _check_int("label_pool", label_pool, 0, 4096)
        self.n_labels = _check_int("n_labels", n_labels, 0)
        if self.n_labels > self.label_pool:
            raise ValueError(f"n_labels={self.n_labels} is larger than the eval context's data: its label pool holds "
                             f"{self.label_pool} labelled transitions (raise label_pool or lower n_labels)")
        self.source_labels = _check_int("source_labels", source_labels, 0, MAX_SOURCE_LABELS)
        self.n_queries = _check_int("n_queries", n_queries, 1, 4096)
        self.demo_len = _check_int("demo_len", demo_len, 1, 2 * (sprites.GRID - 1))
        self.clip_len = _check_int("clip_len", clip_len, 2, 256)
        frame = spaces.Box(0, 255, (sprites.SIZE, sprites.SIZE, 3), np.uint8)
        self.observation_space = spaces.Dict({"frame": frame, "before": frame, "after": frame, "phase": spaces.Discrete(2)})
        self.action_space = spaces.Discrete(len(sprites.ACTIONS))
        self.clip_frames_served = 0
        self._started = False
        self._done = True

    # ------------------------------------------------------------------ pre-training data
    def clips(self, n_frames: int, seed: int | None = None) -> np.ndarray:
        """Unlabelled clips of the training contexts: ``(n_frames // clip_len, clip_len, 36, 36, 3)`` uint8.

        A random policy acts; each clip's context is drawn uniformly from ``train_contexts``.
        No actions and no context ids are returned. ``seed`` fixes the clips (default: the
        env's generator, seeded by ``reset``). ``clip_frames_served`` counts what was served.
        """
        n_frames = _check_int("n_frames", n_frames, 0)
        if n_frames < self.clip_len:
            raise ValueError(f"n_frames={n_frames} is less than one clip ({self.clip_len} frames)")
        rng = np.random.default_rng(seed) if seed is not None else self.np_random
        frames, _, _ = sprites.clips(self.train_contexts, n_frames // self.clip_len, self.clip_len, rng)
        self.clip_frames_served += frames.shape[0] * frames.shape[1]
        return frames

    # ------------------------------------------------------------------ episode
    def _labelled(self, before: np.ndarray, after: np.ndarray, action: np.ndarray, ctx: np.ndarray) -> dict[str, np.ndarray]:
        return {"before": before, "after": after, "action": action.astype(np.int64), "context": ctx.astype(np.int64)}

    def _source(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        k = len(self.train_contexts)
        counts = [self.source_labels // k + (i < self.source_labels % k) for i in range(k)]
        parts = [sprites.transitions(c, n, rng) + (np.full(n, c),) for c, n in zip(self.train_contexts, counts) if n]
        if not parts:
            empty = np.zeros((0, sprites.SIZE, sprites.SIZE, 3), np.uint8)
            return self._labelled(empty, empty, np.zeros(0, np.int64), np.zeros(0, np.int64))
        return self._labelled(*(np.concatenate([p[i] for p in parts]) for i in range(4)))

    def _demo(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A start cell and ``demo_len`` moves along one vertical and one horizontal direction (the goal is ``demo_len`` cells away)."""
        g = sprites.GRID
        v = int(rng.integers(max(0, self.demo_len - (g - 1)), min(self.demo_len, g - 1) + 1))
        h = self.demo_len - v
        dv, dh = (1, 2)[int(rng.integers(2))], (3, 4)[int(rng.integers(2))]  # up/down, left/right
        row = int(rng.integers(v, g)) if dv == 1 else int(rng.integers(0, g - v))
        col = int(rng.integers(h, g)) if dh == 3 else int(rng.integers(0, g - h))
        moves = rng.permutation(np.array([dv] * v + [dh] * h, dtype=np.int64))
        return np.array([row, col], dtype=np.int64), moves

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        pool = sprites.transitions(self.eval_context, self.label_pool, rng)
        n = self.n_labels
        labelled = self._labelled(pool[0][:n], pool[1][:n], pool[2][:n], np.full(n, self.eval_context))
        source = self._source(rng)
        self._queries = sprites.transitions(self.eval_context, self.n_queries, rng)
        start, self._demo_actions = self._demo(rng)
        # the demonstration, rendered in the demo context with its own distractor
        dctx = sprites.context(self.demo_context)
        cells, d = [start], [rng.integers(0, sprites.GRID, 2)]
        for a in self._demo_actions:
            cells.append(sprites.step_agent(cells[-1], a))
            d.append(sprites.step_distractor(dctx, d[-1], rng)[0])
        self._demo_frames = sprites.render(dctx, np.array(cells), np.array(d))
        self._goal = cells[-1]
        self._cell = start.copy()
        self._distractor = rng.integers(0, sprites.GRID, 2)
        self._ectx = sprites.context(self.eval_context)
        self._t = 0
        self._correct = 0
        self._matched = 0
        self._done = False
        self._started = True
        info = {"cost": self._cost(), "labelled": labelled, "source_labelled": source,
                "actions": list(sprites.ACTIONS), "n_queries": self.n_queries, "demo_len": self.demo_len}
        return self._obs(), info

    def _frame(self) -> np.ndarray:
        return sprites.render(self._ectx, self._cell, self._distractor)[0]

    def _obs(self) -> dict[str, Any]:
        if self._t < self.n_queries:
            i = self._t
            return {"frame": self._frame(), "before": self._queries[0][i], "after": self._queries[1][i], "phase": QUERY}
        k = min(self._t - self.n_queries, self.demo_len - 1)
        return {"frame": self._frame(), "before": self._demo_frames[k], "after": self._demo_frames[k + 1], "phase": CONTROL}

    def _cost(self) -> dict[str, float]:
        return {"labelled_transitions": float(self.n_labels + self.source_labels)}

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended: call reset() before step()")
        if isinstance(action, (bool, np.bool_)) or not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space} (0..4: {', '.join(sprites.ACTIONS)})")
        a = int(action)
        reward = 0.0
        if self._t < self.n_queries:
            if a == int(self._queries[2][self._t]):
                self._correct += 1
                reward = 1.0 / self.n_queries
        else:
            k = self._t - self.n_queries
            self._matched += int(a == int(self._demo_actions[k]))
            self._cell = sprites.step_agent(self._cell, a)
            self._distractor = sprites.step_distractor(self._ectx, self._distractor, self.np_random)[0]
        self._t += 1
        terminated = self._t >= self.n_queries + self.demo_len
        info: dict[str, Any] = {"cost": self._cost()}
        if terminated:
            dist = int(np.abs(self._cell - self._goal).sum())
            reward += float(dist == 0)
            info["metrics"] = {
                "action_accuracy": self._correct / self.n_queries,
                "transfer_accuracy": self._matched / self.demo_len,
                "transfer_success": float(dist == 0),
                "goal_distance": float(dist),
                "n_labels": float(self.n_labels),
                "eval_context": float(self.eval_context),
                "demo_context": float(self.demo_context),
            }
            self._done = True
        obs = self._obs()
        return obs, float(reward), terminated, False, info


__all__ = ["CONTROL", "QUERY", "LatentActionTransferEnv"]
