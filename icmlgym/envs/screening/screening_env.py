"""Screening-v0 and ScreeningCompounds-v0: bandit-guided screening of an ultra-large virtual library.

## Description

BOBA ("bandit-guided surrogate optimization", ICML 2026): find the best
compounds of a synthesis-on-demand library of 10^7-10^12 molecules, where each
evaluation (docking) is expensive and even running a surrogate model over the
whole library is too costly. The library is split into partitions that act as
bandit arms; each round the agent picks an arm, the env draws a batch of
not-yet-evaluated compounds from it, runs its surrogate (ridge regression on Morgan
fingerprints by default, refit on every evaluated compound as data arrives)
over the batch, and evaluates the ``eval_batch`` compounds it predicts best
with the oracle. Libraries are virtual (building blocks x reaction SMARTS,
:mod:`icmlgym.envs.screening.library`); oracles are pluggable (2D similarity,
a table of docking scores, real docking with dockstring, a callable).

``ScreeningCompounds-v0`` is the compound-level access to the same library,
oracle, surrogate and meters, for agents that choose compounds themselves:
reagent Thompson sampling (Klarich et al., JCIM 2024) evaluates compounds it
builds from building blocks, and full-library-inference greedy (MolPAL style,
Graff et al. 2021) asks the env to run the surrogate over every unevaluated
compound and evaluate the top predicted ones.

## Action Space

- ``Screening-v0``: ``Discrete(n_arms)``, the partition to draw from.
- ``ScreeningCompounds-v0``: ``Dict(op=Discrete(2), compound=Discrete(library size))``.
  ``op=0`` evaluates ``compound`` with the oracle (no surrogate); ``op=1`` runs one
  full-library round: the surrogate predicts every unevaluated compound and the
  ``eval_batch`` best are evaluated (the first such round, with no training data,
  evaluates a random batch, as MolPAL's initialisation does). ``compound`` is ignored
  by ``op=1``. Compound indices decode with ``info["layout"]`` (given at reset).

## Observation Space

- ``Screening-v0``: ``Dict`` of float32 arrays, one entry per arm: ``pulls`` (times
  drawn), ``mean_reward`` (mean step reward, 0 before the first pull), ``best``
  (best objective evaluated from the arm, 0 before), ``remaining`` (fraction of the
  arm that may still be drawn), and ``budget`` (2,): remaining fractions of the evaluation and
  inference budgets.
- ``ScreeningCompounds-v0``: ``Box(4,)``: the last step's reward, the fractions of
  the evaluation and inference budgets used, and the best objective so far.

## Rewards

The mean *objective* of the compounds evaluated this step (0 when none was).
The objective is the oracle's score when larger is better (similarity) and its
negation otherwise (docking scores: -kcal/mol), so it is always maximised.
``info["evaluated"]`` lists the evaluated compound indices and objectives.

## Starting State

The library, oracle and ground truth are fixed for the env instance.
``reset(seed=...)`` clears what was seen and evaluated, resets the surrogate,
and seeds the draws from the arms.

## Episode End

Terminated when the evaluation budget or the inference budget is spent, or
when nothing unseen is left to draw. Truncated after ``max_rounds`` steps (a
guard against agents that keep picking exhausted arms or duplicates).

## Arguments

- ``library``: ``"embedded"`` or a dict spec (see :func:`~icmlgym.envs.screening.problem.build_library`:
  ``{"kind": "embedded", "n_amines": 120, "n_acids": 250, "reactions": ["amide"]}``,
  ``{"kind": "files", "building_blocks": {...}, "reactions": [...]}``,
  ``{"kind": "table", "path": ...}``) or a :class:`VirtualLibrary`.
- ``oracle``: ``"similarity"`` (default query :data:`~icmlgym.envs.screening.oracles.DEFAULT_QUERY`),
  ``{"kind": "similarity", "query": SMILES}``, ``{"kind": "lookup", "table": path, "maximize": False}``,
  ``{"kind": "docking", "target": "DRD2"}``, an :class:`Oracle` or a callable.
- ``partition`` (Screening-v0): ``"reagent"`` / ``"reagent:<axis>"`` (axis: reactant position or
  building-block set), ``"reaction"``, ``"cluster:<n>[:<axis>]"``, ``"random[:<n>]"``.
- ``surrogate``: ``"ridge"`` (default), ``"rf"``, or an object with ``reset/add/predict``.
- ``discard_inferred`` (Screening-v0, default False): when False, a compound that was inferred
  but not evaluated may be drawn again later (and is re-inferred by the updated surrogate, as
  full-library inference re-infers every round); when True every compound is drawn at most once
  (inferred-and-rejected compounds are discarded), so small arms run out quickly.
- ``inference_batch`` (Screening-v0, default 40): compounds drawn and inferred per step;
  ``eval_batch`` (default 4): compounds evaluated per step (when ``inference_batch <= eval_batch``
  the surrogate is skipped and the drawn compounds are evaluated directly).
- ``eval_budget`` (default 400); ``inference_budget`` (default: ``inference_batch * eval_budget /
  eval_batch`` for Screening-v0, unlimited for ScreeningCompounds-v0).
- ``top_k`` (default 100): the size of the top set whose recall is the primary metric.
- ``hit_threshold``: a raw-score threshold; ``hits_over_threshold`` counts evaluated compounds
  at least as good (the full tier's metric where no ground truth exists).
- ``cost_weights``: weights of the counters in the total cost (defaults:
  ``surrogate_inferences`` 1, ``enumerations`` 1, ``evaluations`` 100).
- ``ground_truth``: ``"auto"`` (exact for libraries up to ``ground_truth_max`` = 2 x 10^6
  compounds with a cacheable oracle) or ``False``; ``cache_dir``: overrides the cache location.
- ``max_rounds``: the truncation guard (default: 4x the rounds the evaluation budget allows;
  10x for ScreeningCompounds-v0).

## Metrics

``info["cost"]`` holds ``surrogate_inferences`` (predictions made, repeats counted),
``evaluations`` (oracle calls) and ``enumerations`` (distinct compounds built and
fingerprinted) on every step. At episode end ``info["metrics"]`` holds
``top_k_recall`` (primary; hits among the true top-``top_k``, ties at the cut-off
included, divided by ``top_k``), ``top1pct_recall``, ``auc_recall_cost`` (area under
top-k recall against total cost from 0 to ``auc_cost_ref``, divided by it; default
``auc_cost_ref`` = the cost of ``eval_budget`` evaluations plus ``10 * eval_budget``
inferences and enumerations, the same for every inference setting, so AUCs compare),
``best_score`` (raw units), ``best_objective``, ``fraction_inferred`` (distinct
compounds inferred / library size), ``total_cost``, ``hits_over_threshold``,
``failed_products`` (tuples the reaction could not make), ``failed_evaluations``
and ``ground_truth`` (1 if exact ground truth was available; recall metrics are
NaN without it). ``info["curves"]`` holds ``evaluations``, ``total_cost``,
``top_k_recall`` and ``top1pct_recall`` after every evaluation (recall against
evaluations and against total cost).

## Version History

- v0: initial release.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import require_extra

require_extra("chem", what="icmlgym/Screening-v0")

from icmlgym.envs.screening.library import VirtualLibrary  # noqa: E402
from icmlgym.envs.screening.partitions import Partition, SeenSet, make_partition  # noqa: E402
from icmlgym.envs.screening.problem import build_library, build_oracle  # noqa: E402
from icmlgym.envs.screening.problem import ground_truth as compute_ground_truth  # noqa: E402
from icmlgym.envs.screening.surrogates import make_surrogate  # noqa: E402

_BLAS = None


def _single_thread_blas():
    """A context that runs BLAS on one thread: the surrogate's small matrix products are
    40x slower with OpenBLAS's threads on a busy 2-core machine than on one thread."""
    global _BLAS
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn ([chem])
        import contextlib

        return contextlib.nullcontext()
    if _BLAS is None:
        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


DEFAULT_COST_WEIGHTS = {"surrogate_inferences": 1.0, "enumerations": 1.0, "evaluations": 100.0}
COST_KEYS = ("surrogate_inferences", "evaluations", "enumerations")


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class _ScreeningBase(gym.Env):
    metadata = {"render_modes": []}

    def __init__(
        self,
        library: Any = "embedded",
        oracle: Any = "similarity",
        surrogate: Any = "ridge",
        eval_batch: int = 4,
        eval_budget: int = 400,
        inference_budget: int | None = None,
        top_k: int = 100,
        hit_threshold: float | None = None,
        cost_weights: dict[str, float] | None = None,
        ground_truth: bool | str = "auto",
        ground_truth_max: int = 2_000_000,
        cache_dir: str | None = None,
        max_rounds: int | None = None,
        auc_cost_ref: float | None = None,
    ) -> None:
        if auc_cost_ref is not None and not auc_cost_ref > 0:
            raise ValueError(f"auc_cost_ref must be positive, got {auc_cost_ref!r}")
        self.auc_cost_ref = None if auc_cost_ref is None else float(auc_cost_ref)
        self.eval_batch = _positive_int("eval_batch", eval_batch)
        self.eval_budget = _positive_int("eval_budget", eval_budget)
        if self.eval_batch > self.eval_budget:
            raise ValueError(f"eval_batch ({eval_batch}) cannot exceed eval_budget ({eval_budget})")
        self.inference_budget = None if inference_budget is None else _positive_int("inference_budget", inference_budget)
        self.top_k = _positive_int("top_k", top_k)
        self.cost_weights = {**DEFAULT_COST_WEIGHTS, **(cost_weights or {})}
        unknown = set(self.cost_weights) - set(COST_KEYS)
        if unknown:
            raise ValueError(f"unknown cost_weights keys {sorted(unknown)}; counters: {COST_KEYS}")
        if ground_truth not in ("auto", False, True):
            raise ValueError(f"ground_truth must be 'auto', True or False, got {ground_truth!r}")
        self.library: VirtualLibrary = build_library(library)
        self.oracle = build_oracle(oracle)
        self.surrogate = make_surrogate(surrogate)
        self.cache_dir = cache_dir
        self.truth = None
        if ground_truth:
            self.truth = compute_ground_truth(self.library, self.oracle, self.top_k, ground_truth_max, cache_dir)
            if self.truth is None and ground_truth is True:
                raise ValueError(
                    f"no exact ground truth for {self.library!r} with oracle {self.oracle.name!r}: "
                    f"the library exceeds ground_truth_max={ground_truth_max:,} or the oracle has no cache key"
                )
        if self.truth is not None:  # small library: every fingerprint in memory (cached on disk)
            self.library.enumerate_all(max_size=ground_truth_max, cache_dir=cache_dir)
        self.hit_threshold = hit_threshold
        self._hit_obj = None if hit_threshold is None else float(self.oracle.objective(np.array([hit_threshold]))[0])
        self.max_rounds = max_rounds
        self._reset_state()

    # --------------------------------------------------------------- state
    def _reset_state(self) -> None:
        # compounds that may not be drawn again: evaluated ones, tuples without a product, and
        # (Screening-v0 with discard_inferred=True) every compound drawn
        self._seen = SeenSet(self.library.size)
        self._inf_seen: SeenSet | None = None  # distinct compounds inferred (made on first use)
        self._enumerated = SeenSet(self.library.size)
        self._n_enum = 0
        self._inferences = 0
        self._evaluations = 0
        self._failed_products = 0
        self._failed_evals = 0
        self._inferred_distinct = 0
        self._hits_k = 0
        self._hits_1pct = 0
        self._hits_thr = 0
        self._best_obj = -math.inf
        self._rounds = 0
        self._curve_evals: list[int] = [0]
        self._curve_cost: list[float] = [0.0]
        self._curve_recall: list[float] = [0.0]
        self._curve_recall_1pct: list[float] = [0.0]
        self._eval_idx: list[np.ndarray] = []
        self._eval_obj: list[np.ndarray] = []

    def _count_inferred(self, idx: np.ndarray) -> None:
        self._inferences += len(idx)
        if self._inf_seen is None:
            self._inf_seen = SeenSet(self.library.size)
        before = self._inf_seen.count
        self._inf_seen.add(idx)
        self._inferred_distinct += self._inf_seen.count - before

    def _count_enumerated(self, idx: np.ndarray) -> None:
        before = self._enumerated.count
        self._enumerated.add(idx)
        self._n_enum += self._enumerated.count - before

    def _cost(self) -> dict[str, float]:
        return {
            "surrogate_inferences": float(self._inferences),
            "evaluations": float(self._evaluations),
            "enumerations": float(self._n_enum),
        }

    def _total_cost(self) -> float:
        c = self._cost()
        return float(sum(self.cost_weights[k] * c[k] for k in COST_KEYS))

    def _ref_cost(self) -> float:
        if self.auc_cost_ref is not None:
            return self.auc_cost_ref
        # the same for every inference setting and both envs, so AUCs compare across them
        w = self.cost_weights
        return w["evaluations"] * self.eval_budget + (w["surrogate_inferences"] + w["enumerations"]) * 10 * self.eval_budget

    def _evaluate(self, idx: np.ndarray, fps: np.ndarray) -> np.ndarray:
        """Call the oracle on ``idx``, feed the surrogate, update hits and curves; returns objectives."""
        if len(idx) == 0:
            return np.zeros(0)
        raw = self.oracle.score(self.library, idx)
        obj = self.oracle.objective(raw)
        self._evaluations += len(idx)
        ok = np.isfinite(obj)
        self._failed_evals += int((~ok).sum())
        if ok.any():
            self.surrogate.add(fps[ok], obj[ok])
            good = obj[ok]
            self._best_obj = max(self._best_obj, float(good.max()))
            if self.truth is not None:
                self._hits_k += int((good >= self.truth.topk_threshold).sum())
                self._hits_1pct += int((good >= self.truth.top1pct_threshold).sum())
            if self._hit_obj is not None:
                self._hits_thr += int((good >= self._hit_obj).sum())
        self._eval_idx.append(np.asarray(idx, dtype=np.int64))
        self._eval_obj.append(obj)
        self._curve_evals.append(self._evaluations)
        self._curve_cost.append(self._total_cost())
        self._curve_recall.append(self._recall_k())
        self._curve_recall_1pct.append(self._recall_1pct())
        return obj

    def _recall_k(self) -> float:
        if self.truth is None:
            return float("nan")
        return min(self._hits_k, self.truth.k) / self.truth.k

    def _recall_1pct(self) -> float:
        if self.truth is None:
            return float("nan")
        return min(self._hits_1pct, self.truth.n_top1pct) / self.truth.n_top1pct

    def _auc(self) -> float:
        if self.truth is None:
            return float("nan")
        ref = self._ref_cost()
        cost = np.minimum(np.asarray(self._curve_cost), ref)
        rec = np.asarray(self._curve_recall)
        # recall is a step function of cost; after the episode it stays at its final value up to ref
        widths = np.diff(np.append(cost, ref))
        return float(np.sum(rec * widths) / ref)

    def _budget_spent(self) -> bool:
        if self._evaluations >= self.eval_budget:
            return True
        return self.inference_budget is not None and self._inferences >= self.inference_budget

    def _metrics(self) -> dict[str, float]:
        t = self.truth
        best_raw = self._best_obj if self.oracle.maximize else -self._best_obj
        return {
            "top_k_recall": self._recall_k(),
            "top1pct_recall": self._recall_1pct(),
            "auc_recall_cost": self._auc(),
            "best_score": float(best_raw) if math.isfinite(self._best_obj) else float("nan"),
            "best_objective": float(self._best_obj) if math.isfinite(self._best_obj) else float("nan"),
            "fraction_inferred": self._inferred_distinct / self.library.size,
            "total_cost": self._total_cost(),
            "hits_over_threshold": float(self._hits_thr) if self._hit_obj is not None else float("nan"),
            "failed_products": float(self._failed_products),
            "failed_evaluations": float(self._failed_evals),
            "ground_truth": 1.0 if t is not None else 0.0,
        }

    def _end_info(self, info: dict[str, Any]) -> None:
        info["metrics"] = self._metrics()
        info["curves"] = {
            "evaluations": np.asarray(self._curve_evals),
            "total_cost": np.asarray(self._curve_cost),
            "top_k_recall": np.asarray(self._curve_recall),
            "top1pct_recall": np.asarray(self._curve_recall_1pct),
        }

    def evaluated(self) -> tuple[np.ndarray, np.ndarray]:
        """Indices and objectives of every compound evaluated this episode (for analysis)."""
        if not self._eval_idx:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return np.concatenate(self._eval_idx), np.concatenate(self._eval_obj)


class ScreeningEnv(_ScreeningBase):
    """Screening-v0: pick a partition (bandit arm) per step; see the module docstring."""

    def __init__(
        self,
        partition: str | Partition = "reagent",
        inference_batch: int = 40,
        partition_seed: int = 0,
        discard_inferred: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.discard_inferred = bool(discard_inferred)
        self.inference_batch = _positive_int("inference_batch", inference_batch)
        self.partition = make_partition(self.library, partition, seed=partition_seed)
        if self.inference_budget is None:
            self.inference_budget = self.inference_batch * math.ceil(self.eval_budget / self.eval_batch)
        if self.max_rounds is None:
            self.max_rounds = 4 * math.ceil(self.eval_budget / self.eval_batch)
        n = self.partition.n_arms
        self.action_space = spaces.Discrete(n)
        self.observation_space = spaces.Dict(
            {
                "pulls": spaces.Box(0.0, np.inf, (n,), np.float32),
                "mean_reward": spaces.Box(-np.inf, np.inf, (n,), np.float32),
                "best": spaces.Box(-np.inf, np.inf, (n,), np.float32),
                "remaining": spaces.Box(0.0, 1.0, (n,), np.float32),
                "budget": spaces.Box(0.0, 1.0, (2,), np.float32),
            }
        )
        self._reset_arms()

    def _reset_arms(self) -> None:
        n = self.partition.n_arms
        self._pulls = np.zeros(n)
        self._rsum = np.zeros(n)
        self._best = np.zeros(n)
        self._has_best = np.zeros(n, dtype=bool)
        self._arm_seen = np.zeros(n)

    def _obs(self) -> dict[str, np.ndarray]:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(self._pulls > 0, self._rsum / np.maximum(self._pulls, 1), 0.0)
        return {
            "pulls": self._pulls.astype(np.float32),
            "mean_reward": mean.astype(np.float32),
            "best": self._best.astype(np.float32),
            "remaining": np.clip(1.0 - self._arm_seen / self.partition.sizes, 0.0, 1.0).astype(np.float32),
            "budget": np.array(
                [
                    max(0.0, 1.0 - self._evaluations / self.eval_budget),
                    max(0.0, 1.0 - self._inferences / self.inference_budget),
                ],
                dtype=np.float32,
            ),
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._reset_state()
        self._reset_arms()
        self.surrogate.reset(None if seed is None else int(seed))
        info = {"cost": self._cost(), "arm_names": list(self.partition.names), "partition": self.partition.kind}
        return self._obs(), info

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space}")
        if self._budget_spent() or self._rounds >= self.max_rounds:
            raise RuntimeError("step() called after the episode ended; call reset()")
        with _single_thread_blas():
            return self._step(int(action))

    def _step(self, arm: int):
        self._rounds += 1
        evals_left = self.eval_budget - self._evaluations
        inf_left = self.inference_budget - self._inferences
        use_surrogate = self.inference_batch > self.eval_batch
        want = min(self.inference_batch, inf_left) if use_surrogate else min(self.eval_batch, evals_left)
        idx = self.partition.sample(arm, want, self.np_random, self._seen)
        self._count_enumerated(idx)
        fps, ok = self.library.fingerprints(idx)
        n_bad = int((~ok).sum())
        if n_bad:  # tuples the reaction cannot make: counted, never drawn again
            self._failed_products += n_bad
            self._seen.add(idx[~ok])
            self._arm_seen[arm] += n_bad
        drawn = idx
        idx, fps = idx[ok], fps[ok]
        chosen = idx
        chosen_fps = fps
        if use_surrogate and len(idx):
            pred = self.surrogate.predict(fps)
            self._count_inferred(idx)
            # ties (an untrained surrogate predicts a constant) are broken at random
            order = np.lexsort((self.np_random.random(len(idx)), -pred))
            top = order[: min(self.eval_batch, evals_left)]
            chosen, chosen_fps = idx[top], fps[top]
        retired = idx if self.discard_inferred else chosen
        self._seen.add(retired)
        self._arm_seen[arm] += len(retired)
        obj = self._evaluate(chosen, chosen_fps)
        finite = obj[np.isfinite(obj)]
        reward = float(finite.mean()) if len(finite) else 0.0
        self._pulls[arm] += 1
        self._rsum[arm] += reward
        if len(finite):
            self._best[arm] = finite.max() if not self._has_best[arm] else max(self._best[arm], finite.max())
            self._has_best[arm] = True
        exhausted = bool(np.all(self._arm_seen >= self.partition.sizes))
        terminated = self._budget_spent() or exhausted
        truncated = (not terminated) and self._rounds >= self.max_rounds
        info: dict[str, Any] = {
            "cost": self._cost(),
            "evaluated": {"indices": chosen, "objectives": obj},
            "drawn": int(len(drawn)),
        }
        if terminated or truncated:
            self._end_info(info)
        return self._obs(), reward, terminated, truncated, info


class ScreeningCompoundsEnv(_ScreeningBase):
    """ScreeningCompounds-v0: compound-level access; see the module docstring."""

    def __init__(self, full_inference_max: int = 2_000_000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.full_inference_max = int(full_inference_max)
        if self.max_rounds is None:
            self.max_rounds = 10 * self.eval_budget
        self.action_space = spaces.Dict({"op": spaces.Discrete(2), "compound": spaces.Discrete(self.library.size)})
        self.observation_space = spaces.Box(-np.inf, np.inf, (4,), np.float32)
        self._last = 0.0

    def _obs(self) -> np.ndarray:
        inf_frac = 0.0 if self.inference_budget is None else self._inferences / self.inference_budget
        best = self._best_obj if math.isfinite(self._best_obj) else 0.0
        return np.array([self._last, self._evaluations / self.eval_budget, inf_frac, best], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._reset_state()
        self._last = 0.0
        self.surrogate.reset(None if seed is None else int(seed))
        info = {"cost": self._cost(), "layout": self.library.layout(), "library_size": self.library.size}
        return self._obs(), info

    def _full_round(self, evals_left: int) -> tuple[np.ndarray, np.ndarray]:
        if self.library.size > self.full_inference_max:
            raise ValueError(
                f"op=1 (full-library inference) needs a library of at most full_inference_max="
                f"{self.full_inference_max:,} compounds; this one has {self.library.size:,}"
            )
        fps_all, ok_all = self.library.enumerate_all(max_size=self.full_inference_max, cache_dir=self.cache_dir)
        unseen = self._seen.unseen_indices()
        self._count_enumerated(unseen)
        bad = unseen[~ok_all[unseen]]
        if len(bad):  # tuples the reaction cannot make: counted once, never drawn again
            self._failed_products += len(bad)
            self._seen.add(bad)
        cand = unseen[ok_all[unseen]]
        if len(cand) == 0:
            return cand, np.zeros((0, fps_all.shape[1]), np.uint8)
        k = min(self.eval_batch, evals_left)
        if self.surrogate.n_train == 0:
            top = cand[self.np_random.choice(len(cand), size=min(k, len(cand)), replace=False)]
            return top, fps_all[top]
        if self.inference_budget is not None:
            left = self.inference_budget - self._inferences
            if left < len(cand):
                cand = np.sort(cand[self.np_random.choice(len(cand), size=left, replace=False)])
        preds = np.empty(len(cand))
        for s in range(0, len(cand), 8192):
            preds[s : s + 8192] = self.surrogate.predict(fps_all[cand[s : s + 8192]])
        self._count_inferred(cand)
        order = np.lexsort((self.np_random.random(len(cand)), -preds))
        top = cand[order[:k]]
        return top, fps_all[top]

    def step(self, action):
        if not isinstance(action, dict) or not self.action_space.contains(
            {"op": int(action.get("op", -1)), "compound": int(action.get("compound", -1))}
        ):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space}")
        if self._budget_spent() or self._rounds >= self.max_rounds:
            raise RuntimeError("step() called after the episode ended; call reset()")
        with _single_thread_blas():
            return self._step(int(action["op"]), int(action["compound"]))

    def _step(self, op: int, compound: int):
        self._rounds += 1
        evals_left = self.eval_budget - self._evaluations
        info: dict[str, Any] = {}
        if op == 0:
            idx = np.array([compound], dtype=np.int64)
            if self._seen.contains(idx)[0]:
                chosen, fps = idx[:0], np.zeros((0, self.library.fp_bits // 8), np.uint8)
                info["duplicate"] = True
            else:
                self._count_enumerated(idx)
                fps, ok = self.library.fingerprints(idx)
                self._seen.add(idx)
                if not ok[0]:
                    self._failed_products += 1
                    info["failed_product"] = True
                chosen, fps = idx[ok], fps[ok]
        else:
            chosen, fps = self._full_round(evals_left)
            self._seen.add(chosen)
        obj = self._evaluate(chosen, fps)
        finite = obj[np.isfinite(obj)]
        reward = float(finite.mean()) if len(finite) else 0.0
        self._last = reward
        nothing_left = self._seen.count >= self.library.size
        terminated = self._budget_spent() or nothing_left
        truncated = (not terminated) and self._rounds >= self.max_rounds
        info.update({"cost": self._cost(), "evaluated": {"indices": chosen, "objectives": obj}})
        if terminated or truncated:
            self._end_info(info)
        return self._obs(), reward, terminated, truncated, info
