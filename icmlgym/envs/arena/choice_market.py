"""ChoiceMarket-v0: sellers edit their product photos on a shared grid; a VLM-like shopper picks one.

## Description

The multi-agent variant of ``icmlgym/ChoiceArena-v0`` (same paper: "Visual
persuasion", ICML 2026, arXiv 2602.15278; the grid setting of ACES, arXiv
2508.02630). ``n_sellers`` sellers each own one product of the same category.
Every round each seller sets one edit of its photo; the chooser then sees the
grid ``queries_per_round`` times, each time with the products in a fresh random
slot order (so position bias washes out on average but not per query), and a
seller earns the share of choices its product won.

## Action Space

Per agent, as in ChoiceArena-v0: ``Dict({"edit": Discrete(7), "magnitude": Box(-1, 1, (1,), float32)})``
sets the magnitude of one edit type of the seller's own photo.

## Observation Space

Per agent, a ``Dict``: ``own`` (``Box(0, 255, (S, S, 3), uint8)``, the seller's current
photo), ``others`` (``(n_sellers - 1, S, S, 3)``, the rivals' current photos in seat
order), ``theta`` (``Box(-1, 1, (7,))``, its edit vector), ``shares``
(``Box(0, 1, (rounds, n_sellers))``: every seller's share in each round so far, own
seat first), ``ssim`` and ``budget_left`` (``Box``, shape ``(1,)``).

## Rewards

Per seller and round: its share of the round's choices minus ``drift_penalty``
times the change of its photo's drift (1 - SSIM to its original).

## Starting State

``reset(seed=...)`` draws a category and ``n_sellers`` distinct products of it; all
photos start unedited.

## Episode End

All agents are truncated after ``rounds`` rounds (a fixed-length market).

## Arguments

``n_sellers`` (int, 4), ``rounds`` (int, 8), ``queries_per_round`` (int, 32),
``image_size`` (int, 64), ``grid`` (``(rows, cols)``, default the smallest near-square
grid that fits), ``drift_penalty`` (float, 0.5), ``eval_queries`` (int, 400),
``chooser`` / ``chooser_kwargs`` / ``catalog_size`` / ``catalog_seed`` / ``category``
as in ChoiceArena-v0.

## Metrics

In every agent's final info, ``info["metrics"]``: ``mean_objective`` (primary,
higher is better) = ``mean_appeal_gain - drift_penalty * (1 - mean_ssim)``, as in
ChoiceArena-v0; ``mean_appeal_gain``: for each seller, the share its final photo wins against the
rivals' *original* photos minus the share of its original photo in the original
market, averaged over sellers (exact over all slot orders with a chooser that
exposes probabilities, else from ``eval_queries`` random-order queries); ``mean_ssim``;
``final_share_std`` (spread of the last round's shares); ``share_seller_<k>``
(each seller's mean share over the episode). ``info["cost"]`` counts ``queries``,
``chooser_errors`` and ``env_steps`` (rounds).

## Version History

- v0: initial release.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from icmlgym.catalog import require_extra

require_extra("arena", what="icmlgym/ChoiceMarket-v0")

from icmlgym.envs.arena.choice_arena import N_EDITS, EditedProduct, edit_action_space, parse_action, pick_products  # noqa: E402
from icmlgym.envs.arena.choosers import DEFAULT_PROMPT, ChooserError, Layout, make_chooser  # noqa: E402
from icmlgym.envs.arena.images import CATEGORIES, ProductCatalog  # noqa: E402


class ChoiceMarketEnv(ParallelEnv):
    """ChoiceMarket-v0: sellers edit their product photos on a shared grid; a VLM-like shopper picks one.

    The action and observation spaces, rewards, episode end, arguments, metrics and version
    history are in the module docstring (``help(icmlgym.envs.arena.choice_market)``).
    """

    metadata = {"name": "ChoiceMarket-v0", "render_modes": [], "is_parallelizable": True}

    def __init__(
        self,
        n_sellers: int = 4,
        rounds: int = 8,
        queries_per_round: int = 32,
        image_size: int = 64,
        grid: tuple[int, int] | None = None,
        drift_penalty: float = 0.5,
        eval_queries: int = 400,
        chooser: Any = "synthetic",
        chooser_kwargs: dict[str, Any] | None = None,
        catalog_size: int = 400,
        catalog_seed: int = 0,
        category: str | None = None,
        prompt: str = DEFAULT_PROMPT,
        render_mode: str | None = None,
    ) -> None:
        if int(n_sellers) < 2:
            raise ValueError(f"n_sellers must be at least 2, got {n_sellers}")
        if int(rounds) < 1 or int(queries_per_round) < 1:
            raise ValueError(f"rounds and queries_per_round must be positive, got {rounds}, {queries_per_round}")
        if int(image_size) < 16:
            raise ValueError(f"image_size must be at least 16, got {image_size}")
        if drift_penalty < 0:
            raise ValueError(f"drift_penalty must be non-negative, got {drift_penalty}")
        if category is not None and category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; categories: {CATEGORIES}")
        if render_mode is not None:
            raise ValueError(f"ChoiceMarket-v0 has no render modes, got {render_mode!r}")
        self.n_sellers = int(n_sellers)
        self.rounds = int(rounds)
        self.queries_per_round = int(queries_per_round)
        self.image_size = int(image_size)
        if grid is None:
            cols = math.ceil(math.sqrt(self.n_sellers))
            grid = (math.ceil(self.n_sellers / cols), cols)
        self.layout = Layout.resolve(tuple(grid), self.n_sellers)
        self.drift_penalty = float(drift_penalty)
        self.eval_queries = int(eval_queries)
        self.category = category
        self.prompt = prompt
        self.render_mode = render_mode
        self.catalog = ProductCatalog(catalog_size, catalog_seed)
        self.chooser = make_chooser(chooser, seed=0, **(chooser_kwargs or {}))
        self.possible_agents = [f"seller_{k}" for k in range(self.n_sellers)]
        self.agents: list[str] = []
        self._products: list[EditedProduct] = []
        self.np_random = np.random.default_rng()

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent: str) -> spaces.Dict:
        S, N = self.image_size, self.n_sellers
        return spaces.Dict(
            {
                "own": spaces.Box(0, 255, shape=(S, S, 3), dtype=np.uint8),
                "others": spaces.Box(0, 255, shape=(N - 1, S, S, 3), dtype=np.uint8),
                "theta": spaces.Box(-1.0, 1.0, shape=(N_EDITS,), dtype=np.float32),
                "shares": spaces.Box(0.0, 1.0, shape=(self.rounds, N), dtype=np.float32),
                "ssim": spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32),
                "budget_left": spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32),
            }
        )

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent: str) -> spaces.Dict:
        return edit_action_space()

    # ------------------------------------------------------------------ helpers

    def _seat_order(self, k: int) -> list[int]:
        return [k] + [j for j in range(self.n_sellers) if j != k]

    def _obs(self, k: int) -> dict[str, np.ndarray]:
        order = self._seat_order(k)
        return {
            "own": self._products[k].rgb.copy(),
            "others": np.stack([self._products[j].rgb for j in order[1:]]),
            "theta": self._products[k].theta.copy(),
            "shares": self._shares[:, order].astype(np.float32),
            "ssim": np.array([self._products[k].ssim], dtype=np.float32),
            "budget_left": np.array([1.0 - self._round / self.rounds], dtype=np.float32),
        }

    def _play_round(self) -> np.ndarray:
        wins = np.zeros(self.n_sellers)
        n = 0
        for _ in range(self.queries_per_round):
            perm = self.np_random.permutation(self.n_sellers)  # perm[slot] = seller
            self._queries += 1
            try:
                p = self.chooser.choose(
                    [self._products[j].rgb for j in perm],
                    self.prompt,
                    self.layout,
                    meta={"theta": [self._products[j].theta.tolist() for j in perm], "sellers": perm.tolist()},
                )
            except ChooserError:
                self._errors += 1
                continue
            wins[perm] += p
            n += 1
        return wins / n if n else np.full(self.n_sellers, 1.0 / self.n_sellers)

    def _shares_of(self, images: list[np.ndarray]) -> np.ndarray:
        """Expected share of each image on the grid over slot orders (exact when possible)."""
        N = len(images)
        exact = getattr(self.chooser, "exact_probabilities", None)
        share = np.zeros(N)
        if callable(exact):
            perms = list(itertools.permutations(range(N)))
            if len(perms) > 720:
                perms = [tuple(self.np_random.permutation(N)) for _ in range(720)]
            for perm in perms:
                share[list(perm)] += exact([images[j] for j in perm], self.layout)
            return share / len(perms)
        n = 0
        for _ in range(self.eval_queries):
            perm = self.np_random.permutation(N)
            try:
                share[perm] += self.chooser.choose([images[j] for j in perm], self.prompt, self.layout, meta={"eval": True})
            except ChooserError:
                continue
            n += 1
        return share / n if n else np.full(N, np.nan)

    def _metrics(self) -> dict[str, float]:
        originals = [p.original_rgb for p in self._products]
        base = self._shares_of(originals)
        gains = []
        for k, p in enumerate(self._products):
            imgs = list(originals)
            imgs[k] = p.rgb
            gains.append(self._shares_of(imgs)[k] - base[k])
        mean_ssim = float(np.mean([p.ssim for p in self._products]))
        out = {
            "mean_objective": float(np.mean(gains) - self.drift_penalty * (1.0 - mean_ssim)),
            "mean_appeal_gain": float(np.mean(gains)),
            "mean_ssim": mean_ssim,
            "final_share_std": float(self._shares[self._round - 1].std()),
            "eval_exact": float(callable(getattr(self.chooser, "exact_probabilities", None))),
        }
        for k in range(self.n_sellers):
            out[f"share_seller_{k}"] = float(self._shares[: self._round, k].mean())
        return out

    def _cost(self) -> dict[str, float]:
        return {"queries": self._queries, "chooser_errors": self._errors, "env_steps": self._round}

    # ------------------------------------------------------------------ PettingZoo API

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        if hasattr(self.chooser, "seed"):
            self.chooser.seed(int(self.np_random.integers(2**31 - 1)))
        products = pick_products(self.np_random, self.n_sellers, self.catalog, None, self.category, self.image_size)
        self._products = [EditedProduct(p) for p in products]
        self._drift = np.zeros(self.n_sellers)
        self._shares = np.zeros((self.rounds, self.n_sellers))
        self._round = 0
        self._queries = 0
        self._errors = 0
        self.agents = list(self.possible_agents)
        obs = {a: self._obs(k) for k, a in enumerate(self.possible_agents)}
        infos = {a: {"cost": self._cost()} for a in self.agents}
        return obs, infos

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise RuntimeError("step() called after the episode ended; call reset()")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"actions missing for agents {missing}; every live agent acts each round")
        for a, act in actions.items():
            if a not in self.possible_agents:
                raise ValueError(f"unknown agent {a!r}; agents: {self.possible_agents}")
            edit, magnitude = parse_action(act, self.action_space(a))
            self._products[self.possible_agents.index(a)].set(edit, magnitude)
        shares = self._play_round()
        self._shares[self._round] = shares
        self._round += 1
        drift = np.array([1.0 - p.ssim for p in self._products])
        rewards_v = shares - self.drift_penalty * (drift - self._drift)
        self._drift = drift
        done = self._round >= self.rounds
        obs = {a: self._obs(k) for k, a in enumerate(self.possible_agents)}
        rewards = {a: float(rewards_v[k]) for k, a in enumerate(self.possible_agents)}
        terms = {a: False for a in self.possible_agents}
        truncs = {a: done for a in self.possible_agents}
        info_common: dict[str, Any] = {"cost": self._cost()}
        if done:
            info_common["metrics"] = self._metrics()
        infos = {a: {**info_common, "share": float(shares[k])} for k, a in enumerate(self.possible_agents)}
        if done:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def close(self) -> None:
        return None
