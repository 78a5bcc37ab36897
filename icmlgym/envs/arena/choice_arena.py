"""ChoiceArena-v0: edit a product photo so that a vision-language chooser picks it more often.

## Description

From "Visual persuasion: what influences decisions of vision-language models?"
(ICML 2026, arXiv 2602.15278): agents built on VLMs choose what to click,
recommend or buy from images, so the model's decision function acts as a latent
visual utility that can be probed by revealed preference and optimised by
editing the images. Here the agent is the optimiser: it edits a target product
photo (lighting, contrast, saturation, background, zoom, shadow, placement) to
raise its chance of being chosen head-to-head against competitor photos of the
same kind of product, while staying close to the original.

The chooser is pluggable (:mod:`icmlgym.envs.arena.choosers`): the embedded
default is a synthetic random-utility chooser with known feature weights and a
first-slot position bias; an OpenAI-compatible VLM endpoint or a replayed log
can stand in.

## Action Space

``Dict({"edit": Discrete(7), "magnitude": Box(-1, 1, (1,), float32)})``: set the
magnitude of one edit type (``icmlgym.envs.arena.editors.EDITS``, in that order)
to ``magnitude``. The photo is always re-rendered from the original with the
current edit vector, so setting a magnitude back undoes an edit; ``magnitude = 0``
on an unedited type is a no-op.

## Observation Space

``Dict`` with

- ``target``: ``Box(0, 255, (S, S, 3), uint8)``, the current edited target photo;
- ``competitors``: ``Box(0, 255, (K, S, S, 3), uint8)``, the competitor photos;
- ``theta``: ``Box(-1, 1, (7,), float32)``, the current edit magnitudes;
- ``history``: ``Box(-1, 1, (edit_budget, 10), float32)``, one row per step taken:
  one-hot edit type (7), magnitude, estimated win rate after the step, 1 (row used);
- ``win_rate``: ``Box(0, 1, (1,), float32)``, the latest estimated win rate;
- ``ssim``: ``Box(-1, 1, (1,), float32)``, SSIM of the current photo to the original;
- ``budget_left``: ``Box(0, 1, (1,), float32)``, fraction of the edit budget left.

## Rewards

The change in the estimated win probability since the previous step, minus
``drift_penalty`` times the change in drift (1 - SSIM to the original). The win
probability is estimated from ``queries_per_step`` counterbalanced pairwise
queries: target against each competitor in turn, in both orders (target first,
then target second). Failed queries (chooser errors) are counted and left out.

## Starting State

``reset(seed=...)`` draws a category, a target product and ``n_competitors``
other products of that category from the catalogue, and estimates the
original target's win rate with one batch of queries (counted in the budget).

## Episode End

Terminated after ``edit_budget`` edits, or earlier when the query budget
cannot pay for another estimate. The remaining budget is observed.

## Arguments

- ``image_size`` (int, 64), ``n_competitors`` (int, 3), ``edit_budget`` (int, 12)
- ``queries_per_step`` (even int, 24), ``query_budget`` (int, default ``(edit_budget + 1) * queries_per_step``)
- ``drift_penalty`` (float, 0.5), ``eval_queries`` (int, 400: end-of-episode evaluation
  queries, used only for choosers without exact probabilities)
- ``chooser``: ``"synthetic"`` (default), ``"http"``, a ``{"type": ..., **kwargs}`` dict,
  or a :class:`~icmlgym.envs.arena.choosers.Chooser`; ``chooser_kwargs`` for the synthetic one
- ``catalog_size`` (int, 400), ``catalog_seed`` (int, 0), ``category`` (str, optional)
- ``images``: a folder of the user's photos (loaded with ``load_image_folder``) to use
  instead of the catalogue; the target and competitors are drawn from it.
- ``keep_query_log`` (bool, True): keep the chooser's query log across episodes (for
  ``analyze()``); False clears it at every reset (long training runs).
- ``heldout_judges`` (int, 8), ``judge_spread`` (float, 0.5): held-out judges drawn per episode
  from a distribution of tastes around the chooser's (``icmlgym.envs.arena.judges``); 0 turns
  them off.

## Metrics

At episode end ``info["metrics"]``: ``objective`` (primary, higher is better) =
``win_rate_gain - drift_penalty * (1 - ssim)``; ``win_rate_gain`` =
``final_win_rate - initial_win_rate``, both evaluated against the competitors in
both orders (exactly from the chooser's probabilities when it exposes them, as the
synthetic chooser does, else from ``eval_queries`` fresh queries); ``ssim``;
``estimated_win_rate`` (the agent's last estimate); ``heldout_win_rate_gain``,
``heldout_final_win_rate`` and ``heldout_initial_win_rate``: the same win rates, exact,
averaged over the held-out judges (the transfer of the edits to other tastes); ``order_flip_rate`` of the
episode's counterbalanced queries; ``eval_exact`` (1 when evaluated exactly).
``info["cost"]`` counts ``queries``, ``chooser_errors``, ``edits`` and ``env_steps``, and at
the end ``eval_queries`` (queries spent on the evaluation; 0 when it is exact).
``env.unwrapped.analyze()`` fits the revealed-preference report to the env's query log.

## Version History

- v0: initial release.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import require_extra

require_extra("arena", what="icmlgym/ChoiceArena-v0")

from skimage.metrics import structural_similarity  # noqa: E402

from icmlgym.envs.arena.choosers import DEFAULT_PROMPT, Chooser, ChooserError, SyntheticChooser, make_chooser  # noqa: E402
from icmlgym.envs.arena.features import FEATURES  # noqa: E402
from icmlgym.envs.arena.editors import EDITS, apply_edits  # noqa: E402
from icmlgym.envs.arena.judges import draw_judges  # noqa: E402
from icmlgym.envs.arena.images import CATEGORIES, ProductCatalog, ProductImage, load_image_folder  # noqa: E402
from icmlgym.envs.arena.revealed import FeatureBank, order_flip_rate, rank_edit_themes, summary  # noqa: E402

N_EDITS = len(EDITS)


def edit_action_space() -> spaces.Dict:
    """The action space shared by the arena envs: an edit type and its magnitude."""
    return spaces.Dict(
        {"edit": spaces.Discrete(N_EDITS), "magnitude": spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)}
    )


def parse_action(action: Any, space: spaces.Dict) -> tuple[int, float]:
    """(edit index, magnitude) from an action; ``ValueError`` naming the space and value otherwise."""
    try:
        a = {"edit": np.int64(action["edit"]), "magnitude": np.asarray(action["magnitude"], dtype=np.float32).reshape(1)}
    except (TypeError, KeyError, IndexError, ValueError):
        raise ValueError(f"action {action!r} is not in the action space {space}") from None
    if not space.contains(a):
        raise ValueError(f"action {action!r} is not in the action space {space}")
    return int(a["edit"]), float(a["magnitude"][0])


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """SSIM of two uint8 RGB images (skimage, data range 255)."""
    if a is b or np.array_equal(a, b):
        return 1.0
    return float(structural_similarity(a, b, channel_axis=2, data_range=255))


class EditedProduct:
    """An original photo, its current edit vector and the rendered result."""

    def __init__(self, original: ProductImage) -> None:
        self.original = original
        self.original_rgb = original.composite()
        self.theta = np.zeros(N_EDITS, dtype=np.float32)
        self.rgb = self.original_rgb
        self.ssim = 1.0

    def set(self, edit: int, magnitude: float) -> None:
        self.theta[edit] = np.float32(magnitude)
        self.rgb = apply_edits(self.original, self.theta)
        self.ssim = ssim(self.original_rgb, self.rgb)


def pick_products(rng: np.random.Generator, n: int, catalog: ProductCatalog | None, images: list[ProductImage] | None, category: str | None, size: int) -> list[ProductImage]:
    """``n`` distinct products of one category (catalogue) or ``n`` distinct user photos."""
    if images is not None:
        pool = [im for im in images if category is None or im.category == category]
        if len(pool) < n:
            raise ValueError(f"need {n} images{' of category ' + repr(category) if category else ''}, the folder has {len(pool)}")
        return [pool[int(i)] for i in rng.choice(len(pool), size=n, replace=False)]
    assert catalog is not None
    cat = category if category is not None else CATEGORIES[int(rng.integers(len(CATEGORIES)))]
    ids = catalog.ids_in(cat)
    if len(ids) < n:
        raise ValueError(f"category {cat!r} has {len(ids)} products in a catalogue of {len(catalog)}; need {n}")
    return [catalog.render(int(i), size) for i in rng.choice(ids, size=n, replace=False)]


class ChoiceArenaEnv(gym.Env):
    """ChoiceArena-v0: edit a product photo so that a vision-language chooser picks it more often.

    The action and observation spaces, rewards, episode end, arguments, metrics and version
    history are in the module docstring (``help(icmlgym.envs.arena.choice_arena)``).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(
        self,
        image_size: int = 64,
        n_competitors: int = 3,
        edit_budget: int = 12,
        queries_per_step: int = 24,
        query_budget: int | None = None,
        drift_penalty: float = 0.5,
        eval_queries: int = 400,
        chooser: Any = "synthetic",
        chooser_kwargs: dict[str, Any] | None = None,
        catalog_size: int = 400,
        catalog_seed: int = 0,
        category: str | None = None,
        images: str | None = None,
        prompt: str = DEFAULT_PROMPT,
        keep_query_log: bool = True,
        render_mode: str | None = None,
        heldout_judges: int = 8,
        judge_spread: float = 0.5,
    ) -> None:
        if int(image_size) < 16:
            raise ValueError(f"image_size must be at least 16, got {image_size}")
        if int(n_competitors) < 1:
            raise ValueError(f"n_competitors must be at least 1, got {n_competitors}")
        if int(edit_budget) < 1:
            raise ValueError(f"edit_budget must be at least 1, got {edit_budget}")
        if int(queries_per_step) < 2 or int(queries_per_step) % 2:
            raise ValueError(f"queries_per_step must be an even number >= 2 (counterbalanced pairs), got {queries_per_step}")
        if drift_penalty < 0:
            raise ValueError(f"drift_penalty must be non-negative, got {drift_penalty}")
        if category is not None and images is None and category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; categories: {CATEGORIES}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.image_size = int(image_size)
        self.n_competitors = int(n_competitors)
        self.edit_budget = int(edit_budget)
        self.queries_per_step = int(queries_per_step)
        self.query_budget = int(query_budget) if query_budget is not None else (self.edit_budget + 1) * self.queries_per_step
        if self.query_budget < 2 * self.queries_per_step:
            raise ValueError(
                f"query_budget {self.query_budget} cannot pay for the initial estimate and one edit "
                f"({2 * self.queries_per_step} queries at queries_per_step={self.queries_per_step})"
            )
        self.drift_penalty = float(drift_penalty)
        self.eval_queries = int(eval_queries)
        self.category = category
        self.prompt = prompt
        self.keep_query_log = bool(keep_query_log)
        self.render_mode = render_mode
        if int(heldout_judges) < 0 or judge_spread < 0:
            raise ValueError(f"heldout_judges and judge_spread must be >= 0, got {heldout_judges}, {judge_spread}")
        self.heldout_judges = int(heldout_judges)
        self.judge_spread = float(judge_spread)
        self.catalog = ProductCatalog(catalog_size, catalog_seed) if images is None else None
        self.user_images = load_image_folder(images, self.image_size) if images is not None else None
        self.chooser: Chooser = make_chooser(chooser, seed=0, **(chooser_kwargs or {}))

        S, K = self.image_size, self.n_competitors
        img = spaces.Box(0, 255, shape=(S, S, 3), dtype=np.uint8)
        self.action_space = edit_action_space()
        self.observation_space = spaces.Dict(
            {
                "target": img,
                "competitors": spaces.Box(0, 255, shape=(K, S, S, 3), dtype=np.uint8),
                "theta": spaces.Box(-1.0, 1.0, shape=(N_EDITS,), dtype=np.float32),
                "history": spaces.Box(-1.0, 1.0, shape=(self.edit_budget, N_EDITS + 3), dtype=np.float32),
                "win_rate": spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32),
                "ssim": spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32),
                "budget_left": spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32),
            }
        )
        self._target: EditedProduct | None = None
        self._competitors: list[np.ndarray] = []
        # features of every image shown to the chooser, for the revealed-preference analysis
        self.bank = FeatureBank()

    # ------------------------------------------------------------------ queries

    def _estimate(self) -> float | None:
        """Win rate of the current target from one counterbalanced batch; None if every query failed."""
        assert self._target is not None
        wins, n = 0.0, 0
        zero = np.zeros(N_EDITS).tolist()
        self.bank.add(self._target.rgb)
        for q in range(self.queries_per_step):
            comp = self._competitors[(q // 2) % self.n_competitors]
            first = q % 2 == 0
            shown = [self._target.rgb, comp] if first else [comp, self._target.rgb]
            theta = [self._target.theta.tolist(), zero] if first else [zero, self._target.theta.tolist()]
            self._queries += 1
            try:
                p = self.chooser.choose(shown, self.prompt, (1, 2), meta={"theta": theta, "episode": self._episode})
            except ChooserError:
                self._errors += 1
                continue
            wins += float(p[0] if first else p[1])
            n += 1
        self._log_end = len(self.chooser.log)
        return wins / n if n else None

    def _heldout(self) -> dict[str, float]:
        """Win rates under held-out judges (icmlgym.envs.arena.judges), drawn from the episode's seed."""
        if self.heldout_judges == 0:
            return {}
        base = dict(zip(FEATURES, self.chooser.weights)) if isinstance(self.chooser, SyntheticChooser) else None
        judges = draw_judges(self.heldout_judges, self._episode, self.judge_spread, base)
        initial = np.mean([self._evaluate(self._target.original_rgb, j) for j in judges])
        final = np.mean([self._evaluate(self._target.rgb, j) for j in judges])
        return {"heldout_win_rate_gain": float(final - initial), "heldout_final_win_rate": float(final), "heldout_initial_win_rate": float(initial)}

    def _evaluate(self, rgb: np.ndarray, judge: Chooser | None = None) -> float:
        """Win rate of ``rgb`` against the competitors, in both orders (exact when the chooser allows)."""
        if judge is not None:
            return float(np.mean([r for comp in self._competitors for r in (judge.exact_probabilities([rgb, comp], (1, 2))[0], judge.exact_probabilities([comp, rgb], (1, 2))[1])]))
        exact = getattr(self.chooser, "exact_probabilities", None)
        if callable(exact):
            rates = []
            for comp in self._competitors:
                rates.append(exact([rgb, comp], (1, 2))[0])
                rates.append(exact([comp, rgb], (1, 2))[1])
            return float(np.mean(rates))
        wins, n = 0.0, 0
        self.bank.add(rgb)
        for q in range(self.eval_queries):
            comp = self._competitors[(q // 2) % self.n_competitors]
            first = q % 2 == 0
            self._eval_queries += 1
            try:
                p = self.chooser.choose([rgb, comp] if first else [comp, rgb], self.prompt, (1, 2), meta={"eval": True})
            except ChooserError:
                self._eval_errors += 1
                continue
            wins += float(p[0] if first else p[1])
            n += 1
        return wins / n if n else float("nan")

    # ------------------------------------------------------------------ gym API

    def _obs(self) -> dict[str, np.ndarray]:
        assert self._target is not None
        return {
            "target": self._target.rgb.copy(),
            "competitors": np.stack(self._competitors).copy(),
            "theta": self._target.theta.copy(),
            "history": self._history.copy(),
            "win_rate": np.array([self._win], dtype=np.float32),
            "ssim": np.array([self._target.ssim], dtype=np.float32),
            "budget_left": np.array([self._budget_left()], dtype=np.float32),
        }

    def _budget_left(self) -> float:
        """The smaller of the edit budget and the query budget left, as fractions."""
        edits = 1.0 - self._t / self.edit_budget
        queries = max(0.0, (self.query_budget - self._queries) / self.query_budget)
        return float(min(edits, queries))

    def _cost(self) -> dict[str, float]:
        return {"queries": self._queries, "chooser_errors": self._errors, "edits": self._t, "env_steps": self._t}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if not self.keep_query_log:
            self.chooser.log.clear()
            self.bank.table.clear()
        self._episode = int(self.np_random.integers(2**31 - 1))
        if hasattr(self.chooser, "seed"):
            self.chooser.seed(int(self.np_random.integers(2**31 - 1)))
        products = pick_products(self.np_random, self.n_competitors + 1, self.catalog, self.user_images, self.category, self.image_size)
        self._target = EditedProduct(products[0])
        self._competitors = [p.composite() for p in products[1:]]
        for c in self._competitors:
            self.bank.add(c)
        self._t = 0
        self._queries = 0
        self._errors = 0
        self._eval_errors = 0
        self._eval_queries = 0
        self._log_start = self._log_end = len(self.chooser.log)
        self._history = np.zeros((self.edit_budget, N_EDITS + 3), dtype=np.float32)
        est = self._estimate()
        self._win = 0.5 if est is None else est
        self._drift = 0.0
        return self._obs(), {"cost": self._cost(), "win_rate": self._win}

    def step(self, action):
        if self._target is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset()")
        edit, magnitude = parse_action(action, self.action_space)
        self._target.set(edit, magnitude)
        est = self._estimate()
        new_win = self._win if est is None else est
        drift = 1.0 - self._target.ssim
        reward = (new_win - self._win) - self.drift_penalty * (drift - self._drift)
        self._win, self._drift = new_win, drift
        row = np.zeros(N_EDITS + 3, dtype=np.float32)
        row[edit] = 1.0
        row[N_EDITS] = magnitude
        row[N_EDITS + 1] = new_win
        row[N_EDITS + 2] = 1.0
        self._history[self._t] = row
        self._t += 1
        terminated = self._done
        info: dict[str, Any] = {"cost": self._cost(), "win_rate": self._win}
        if terminated:
            info["metrics"] = self._metrics()
            info["cost"]["eval_queries"] = self._eval_queries
        return self._obs(), float(reward), bool(terminated), False, info

    @property
    def _done(self) -> bool:
        return self._t >= self.edit_budget or self._queries + self.queries_per_step > self.query_budget

    def _metrics(self) -> dict[str, float]:
        assert self._target is not None
        exact = callable(getattr(self.chooser, "exact_probabilities", None))
        initial = self._evaluate(self._target.original_rgb)
        final = self._evaluate(self._target.rgb)
        flip, _ = order_flip_rate(self.chooser.log[self._log_start : self._log_end])
        gain = final - initial
        return {
            "objective": float(gain - self.drift_penalty * (1.0 - self._target.ssim)),
            "win_rate_gain": float(gain),
            "final_win_rate": float(final),
            "initial_win_rate": float(initial),
            "ssim": float(self._target.ssim),
            "estimated_win_rate": float(self._win),
            "order_flip_rate": float(flip) if np.isfinite(flip) else 0.0,
            "eval_exact": float(exact),
            "eval_errors": float(self._eval_errors),
            **self._heldout(),
        }

    def analyze(self, alpha: float = 0.01) -> dict[str, Any]:
        """Revealed-preference report of every query this env has made so far (all episodes).

        Returns :func:`icmlgym.envs.arena.revealed.summary` (feature-utility fit with 95%
        intervals, named themes, position-bias test with the order-flip rate) plus
        ``edit_themes``: the edit directions ranked by how much they moved choices.
        """
        records = [r for r in self.chooser.log if not r.meta.get("eval")]
        if not records:
            raise ValueError("no queries recorded yet: run some episodes first")
        report = summary(records, self.bank, alpha=alpha)
        report["edit_themes"] = rank_edit_themes(records, EDITS)
        return report

    def render(self):
        if self.render_mode != "rgb_array" or self._target is None:
            return None
        return np.concatenate([self._target.rgb, *self._competitors], axis=1)
