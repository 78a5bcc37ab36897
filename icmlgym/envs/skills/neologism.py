"""Teach a frozen language model new skills through new vocabulary tokens (skill neologisms).

Description:
    After the ICML 2026 paper on skill neologisms: fine-tuning a language model on a new skill
    risks forgetting old ones and prompting is limited by context; a *neologism* is a new
    vocabulary token whose embedding alone is optimised to invoke the skill, with no weight
    update. The model is the zoo's ``skill-lm`` (:mod:`icmlgym.zoo.skills`), a small transformer
    pre-trained on a library of skills invoked by tokens (a map skill then a permutation skill,
    single skills and compositions, and in-context prompts; :mod:`icmlgym.corpora.skills`),
    frozen. The new skills (default ``shift4`` and ``rot3``) have no token and were never seen.
    One episode is a budget of ``n_steps`` optimisation steps: each step the agent submits its
    current parameters, the env scores the new skills on a fresh batch, and, when asked, returns
    the gradient of the new skills' training loss on another fresh batch (the budgeted gradient
    oracle: one backward pass per request). After the last step the env measures new-skill
    accuracy, retention of the old skills, composition with old skills, and zero-shot
    composition of the independently learned new tokens.

Action Space:
    ``Dict``:

    - ``embeddings`` ``Box(-bound, bound, (n_new, d), float32)``: the input embedding row of each
      new token (the neologisms); new skill ``i`` is invoked by token ``VOCAB_SIZE + i`` in its slot.
    - ``prefix`` ``Box(-bound, bound, (n_new, d), float32)``: a soft prefix per new skill, added to
      the ``BOS`` input of every prompt involving that skill (prefix tuning with the same
      parameter count); zeros = none.
    - ``weights`` ``Box(-bound, bound, (n_params,), float32)``: a delta on the frozen weights in the
      order of ``info["parameters"]`` (LoRA, fine-tuning); zeros = frozen.
    - ``demos`` ``Discrete(max_demos + 1)``: in-context demonstrations of the prompt's own task
      placed before every new-skill prompt (their tokens are counted as ``context_tokens``).
    - ``gradient`` ``Discrete(3)``: 1 asks the oracle for the gradient at this submission with
      respect to ``embeddings`` and ``prefix``, 2 also with respect to ``weights`` (a dearer pass);
      0 asks nothing.

    A wrong key or shape, a NaN or infinite value, or a value outside the bounds raises
    ``ValueError`` naming it.

Observation Space:
    ``Box(0, 1, (1 + 2 n_new,), float32)``: the fraction of the step budget left, then per new
    skill the likelihood (geometric mean answer-token probability) and the exact-match rate on
    the step's fresh batch. ``info`` at reset: ``vocabulary`` (token names, the frozen input
    embeddings ``(VOCAB_SIZE, d)``, ``nop``, the slot kind of each skill token), ``new_skills``
    (name, kind, token id), ``parameters`` (name, shape, offset of each weight in ``weights``),
    ``max_demos``, ``bound``. Each step: ``eval`` (per-skill likelihood and exact match) and,
    when asked, ``gradient`` (``embeddings``, ``prefix``, and ``weights`` when asked: of the summed mean
    cross-entropy of every new skill's answers; the row of skill ``i`` only sees skill ``i``'s
    prompts, so the rows are learned independently).

Rewards:
    The mean likelihood of the new skills' answers on the step's fresh batch (in [0, 1]).

Starting State:
    The frozen model; the batches are drawn from the reset seed.

Episode End:
    Terminated after ``n_steps`` submissions (the optimisation budget); the last submission is the
    one measured.

Arguments:
    ``new_skills`` (default ``("shift4", "rot3")``: one or two of :data:`NEW_MAPS` and
    :data:`NEW_PERMS`; two must be a map and a permutation), ``n_steps`` (30), ``batch_size``
    (training prompts per skill per gradient, 32), ``eval_size`` (prompts per skill per step, 32),
    ``final_size`` (prompts per task in the final measurement, 128), ``max_demos`` (2),
    ``bound`` (8.0), ``model_size`` (zoo size, ``smoke``), ``model_seed`` (0).

Metrics:
    ``new_skill_accuracy`` (exact match of each new skill alone, mean over new skills),
    ``new_skill_likelihood``, ``old_skill_accuracy`` (every pre-trained skill and composition,
    under the submission's weights), ``base_old_accuracy`` (the same prompts, frozen weights),
    ``forgetting`` (base - old), ``composition_accuracy`` (each new skill composed with every old
    skill of the other kind), and with two new skills ``pair_accuracy`` (both new tokens in one
    prompt: zero-shot composition), ``pair_accuracy_map_only`` / ``pair_accuracy_perm_only``
    (the composed task with one of them), ``pair_gain`` (pair minus the better single),
    ``context_tokens_per_prompt``, ``weights_changed`` (fraction of weights with a non-zero delta).
    Cost: ``backward_passes``, ``gradient_prompts``, ``eval_prompts``, ``context_tokens``.

Version History:
    v0: first version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import require_extra

require_extra("skills", what="icmlgym/SkillNeologism-v0")

import torch  # noqa: E402

from icmlgym.corpora import skills as sk  # noqa: E402
from icmlgym.envs.skills.model import FrozenSkillModel, Prompts, build_prompts, masked_ce, to_tensor  # noqa: E402
from icmlgym.nn.runtime import fixed_threads  # noqa: E402

NEW_SKILLS: tuple[str, ...] = sk.NEW_MAPS + sk.NEW_PERMS
_MODELS: dict[tuple[str, int], FrozenSkillModel] = {}


@dataclass(frozen=True)
class SkillLibrary:
    """What the env needs of a pre-training library: its held-out skills, the old skills of each
    kind with their tokens, the vocabulary's names (symbols, ``BOS SEP DELIM NOP``, map tokens,
    permutation tokens, in that order) and the ``NOP`` id."""

    new_skills: tuple[str, ...]
    maps: tuple[str, ...]
    perms: tuple[str, ...]
    skill_tokens: Mapping[str, int]
    token_names: tuple[str, ...]
    kind: Callable[[str], str]
    nop: int
    n_symbols: int


LIBRARY = SkillLibrary(NEW_SKILLS, sk.OLD_MAPS, sk.OLD_PERMS, sk.SKILL_TOKENS, sk.TOKEN_NAMES, sk.kind, sk.NOP, sk.N_SYMBOLS)


def frozen_model(size: str = "smoke", seed: int = 0) -> FrozenSkillModel:
    """The pre-trained skill model (zoo cache or shipped weights), loaded once per process."""
    key = (size, int(seed))
    if key not in _MODELS:
        from icmlgym.zoo import skills as zoo_skills

        with fixed_threads():
            _MODELS[key] = FrozenSkillModel(zoo_skills.load(size, seed=seed).model)
    return _MODELS[key]


class SkillNeologismEnv(gym.Env):
    """Optimise new token embeddings (or a baseline's prefix, weights, demonstrations) for unseen skills of a frozen model."""

    metadata = {"render_modes": []}
    library: SkillLibrary = LIBRARY

    def __init__(
        self,
        new_skills: tuple[str, ...] | list[str] | str = ("shift4", "rot3"),
        n_steps: int = 30,
        batch_size: int = 32,
        eval_size: int = 32,
        final_size: int = 128,
        max_demos: int = 2,
        bound: float = 8.0,
        model_size: str = "smoke",
        model_seed: int = 0,
    ) -> None:
        names = (new_skills,) if isinstance(new_skills, str) else tuple(new_skills)
        if not 1 <= len(names) <= 2:
            raise ValueError(f"new_skills must name one or two skills, got {names!r}")
        lib = self.library
        for n in names:
            if n not in lib.new_skills:
                hint = " (it has a token already: new skills are the held-out ones)" if n in lib.skill_tokens else ""
                raise ValueError(f"unknown new skill {n!r}{hint}; new skills: {lib.new_skills}")
        if len(names) == 2 and {lib.kind(n) for n in names} != {"map", "perm"}:
            raise ValueError(f"two new skills must be one map and one permutation (they compose), got {names!r}")
        for arg, v, lo in (("n_steps", n_steps, 1), ("batch_size", batch_size, 1), ("eval_size", eval_size, 1), ("final_size", final_size, 1)):
            if int(v) < lo:
                raise ValueError(f"{arg} must be >= {lo}, got {v}")
        if not 0 <= int(max_demos) <= 2:
            raise ValueError(f"max_demos must be in 0..2 (the model's context holds two demonstrations), got {max_demos}")
        if not (np.isfinite(bound) and bound > 0):
            raise ValueError(f"bound must be a positive number, got {bound}")
        self.new_skills = names
        self.n_new = len(names)
        self.n_steps, self.batch_size, self.eval_size, self.final_size = int(n_steps), int(batch_size), int(eval_size), int(final_size)
        self.max_demos, self.bound = int(max_demos), float(bound)
        self.model = self._load_model(model_size, model_seed)
        d, n_params = self.model.d, self.model.n_params
        box = lambda shape: spaces.Box(-self.bound, self.bound, shape=shape, dtype=np.float32)  # noqa: E731
        self.action_space = spaces.Dict({
            "embeddings": box((self.n_new, d)),
            "prefix": box((self.n_new, d)),
            "weights": box((n_params,)),
            "demos": spaces.Discrete(self.max_demos + 1),
            "gradient": spaces.Discrete(3),
        })
        self.observation_space = spaces.Box(0.0, 1.0, shape=(1 + 2 * self.n_new,), dtype=np.float32)
        self._tok = {n: self.model.vocab_size + i for i, n in enumerate(names)}
        self._t: int | None = None

    # -- the library (a subclass on another library overrides these) -----------------------
    def _load_model(self, size: str, seed: int) -> FrozenSkillModel:
        return frozen_model(size, seed)

    def _build(self, rng: np.random.Generator, slots: list, n: int, demos: int) -> Prompts:
        """``n`` prompts per slot filling (as :meth:`_slot` gives them)."""
        return build_prompts(rng, slots, n, demos, self.n_new)

    def _old_prompts(self, rng: np.random.Generator, n: int) -> Prompts:
        """The retention set: every pre-trained task (no new token, no demonstration), ``n // 8`` prompts each."""
        return self._build(rng, [self._slot(m_, p_, ()) for m_, p_ in sk.old_combos()], max(1, n // 8), 0)

    # -- prompts -------------------------------------------------------------------------
    def _slot(self, map_skill: str | None, perm_skill: str | None, use: tuple[str, ...]):
        """The prompt of the task "map, then permutation": a new skill in ``use`` gets its new token,
        one not in ``use`` leaves its slot empty (NOP)."""
        def tok(s: str | None) -> int:
            if s is None:
                return sk.NOP
            if s in self._tok:
                return self._tok[s] if s in use else sk.NOP
            return sk.SKILL_TOKENS[s]

        involved = tuple(i for i, n in enumerate(self.new_skills) if n in use and n in (map_skill, perm_skill))
        return (tok(map_skill), tok(perm_skill), (map_skill, perm_skill), involved)

    def _alone(self, name: str):
        return self._slot(name, None, (name,)) if self.library.kind(name) == "map" else self._slot(None, name, (name,))

    def _new_prompts(self, n: int, demos: int) -> Prompts:
        return self._build(self.np_random, [self._alone(s) for s in self.new_skills], n, demos)

    # -- gym API --------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._t = 0
        self._cost = {"backward_passes": 0, "gradient_prompts": 0, "eval_prompts": 0, "context_tokens": 0}
        m, lib = self.model, self.library
        kinds = ["symbol"] * lib.n_symbols + ["special"] * 4 + ["map"] * len(lib.maps) + ["perm"] * len(lib.perms)
        info = {
            "vocabulary": {
                "names": list(lib.token_names),
                "kinds": kinds,
                "embeddings": m.params["gpt.wte.weight"].numpy().copy(),
                "nop": lib.nop,
            },
            "new_skills": [{"name": n, "kind": lib.kind(n), "token": self._tok[n]} for n in self.new_skills],
            "parameters": [{"name": k, "shape": list(s), "offset": o} for k, s, o in m.layout],
            "n_params": m.n_params,
            "max_demos": self.max_demos,
            "bound": self.bound,
            "n_steps": self.n_steps,
            "cost": dict(self._cost),
        }
        obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        obs[0] = 1.0
        return obs, info

    def validate(self, action: Any) -> dict[str, Any]:
        """The submission as arrays, or ``ValueError`` naming the key and what is wrong."""
        if not isinstance(action, dict):
            raise ValueError(f"action {type(action).__name__} is not in the action space {self.action_space} (a dict)")
        want = set(self.action_space.spaces)
        if set(action) != want:
            raise ValueError(
                f"the action must have exactly the keys {sorted(want)}; missing {sorted(want - set(action))}, unexpected {sorted(set(action) - want)}"
            )
        out: dict[str, Any] = {}
        for k in ("embeddings", "prefix", "weights"):
            space = self.action_space[k]
            a = np.asarray(action[k])
            if a.shape != space.shape:
                what = f"(n_new={self.n_new} new skills {self.new_skills}, d={self.model.d})" if k != "weights" else f"(n_params={self.model.n_params})"
                raise ValueError(f"action[{k!r}] has shape {a.shape}, expected {space.shape} {what}")
            if not np.issubdtype(a.dtype, np.number):
                raise ValueError(f"action[{k!r}] has dtype {a.dtype}, expected numbers")
            a = a.astype(np.float32)
            if not np.all(np.isfinite(a)):
                raise ValueError(f"action[{k!r}] has {int((~np.isfinite(a)).sum())} non-finite (NaN or inf) values")
            if np.any(np.abs(a) > self.bound):
                raise ValueError(f"action[{k!r}] has values outside the action space {space} (max |value| {float(np.abs(a).max()):.3g} > bound {self.bound})")
            out[k] = a
        for k in ("demos", "gradient"):
            v = np.asarray(action[k])
            if v.shape != () or not np.issubdtype(v.dtype, np.integer) or not self.action_space[k].contains(np.int64(v)):
                raise ValueError(f"action[{k!r}] = {action[k]!r} is not in the action space {self.action_space[k]}")
            out[k] = int(v)
        return out

    def step(self, action: Any):
        if self._t is None:
            raise RuntimeError("call reset() before step()")
        if self._t >= self.n_steps:
            raise RuntimeError("the episode has ended (the step budget is spent); call reset()")
        a = self.validate(action)
        rows, prefix = to_tensor(a["embeddings"]), to_tensor(a["prefix"])
        delta = to_tensor(a["weights"]) if np.any(a["weights"]) else None
        use_prefix = prefix if np.any(a["prefix"]) else None
        info: dict[str, Any] = {}
        with fixed_threads():
            p = self._new_prompts(self.eval_size, a["demos"])
            s = self.model.scores(p, rows, use_prefix, delta)
            self._count(p, a["demos"], "eval_prompts")
            ex = s["exact"].reshape(self.n_new, -1).mean(1)
            lik = np.exp(s["loglik"].reshape(self.n_new, -1).mean(1))
            info["eval"] = {"likelihood": {n: float(v) for n, v in zip(self.new_skills, lik)}, "exact_match": {n: float(v) for n, v in zip(self.new_skills, ex)}}
            if a["gradient"]:
                info["gradient"] = self._gradient(a, a["demos"], weights=a["gradient"] == 2)
            self._t += 1
            terminated = self._t >= self.n_steps
            if terminated:
                info["metrics"] = self._final(rows, prefix, delta, a)
        info["cost"] = dict(self._cost)
        obs = np.concatenate([[1.0 - self._t / self.n_steps], lik, ex]).astype(np.float32)
        return np.clip(obs, 0.0, 1.0), float(lik.mean()), terminated, False, info

    def _count(self, p: Prompts, demos: int, counter: str) -> None:
        self._cost[counter] += int(p.tokens.shape[0])
        self._cost["context_tokens"] += int(p.tokens.shape[0]) * demos * sk.DEMO_LEN

    def _gradient(self, a: dict[str, Any], demos: int, weights: bool) -> dict[str, Any]:
        p = self._new_prompts(self.batch_size, demos)
        rows = to_tensor(a["embeddings"]).requires_grad_(True)
        prefix = to_tensor(a["prefix"]).requires_grad_(True)
        delta = to_tensor(a["weights"]).requires_grad_(weights)
        if not weights and not np.any(a["weights"]):
            delta = None
        with torch.enable_grad():
            n = self.batch_size
            logits = self.model.logits(p, rows, prefix, delta)
            total = 0.0
            for i in range(self.n_new):  # the summed per-skill mean losses: row i sees only skill i's prompts
                sub = Prompts(p.tokens[i * n : (i + 1) * n], p.mask[i * n : (i + 1) * n], p.involves[i * n : (i + 1) * n])
                total = total + masked_ce(logits[i * n : (i + 1) * n], sub)
            wrt = (rows, prefix, delta) if weights else (rows, prefix)
            grads = torch.autograd.grad(total, wrt)
        self._cost["backward_passes"] += 1
        self._cost["gradient_prompts"] += int(p.tokens.shape[0])
        self._cost["context_tokens"] += int(p.tokens.shape[0]) * demos * sk.DEMO_LEN
        out: dict[str, Any] = {"embeddings": grads[0].numpy(), "prefix": grads[1].numpy(), "loss": float(total.detach()) / self.n_new}
        if weights:
            out["weights"] = grads[2].numpy()
        return out

    def _final(self, rows: torch.Tensor, prefix: torch.Tensor, delta: torch.Tensor | None, a: dict[str, Any]) -> dict[str, float]:
        n, demos, rng = self.final_size, a["demos"], self.np_random
        use_prefix = prefix if bool(prefix.abs().sum() > 0) else None

        def acc(slots, with_demos: bool = True) -> np.ndarray:
            d = demos if with_demos else 0
            p = self._build(rng, slots, n, d)
            self._count(p, d, "eval_prompts")
            return self.model.scores(p, rows, use_prefix, delta)

        out: dict[str, float] = {}
        alone = [acc([self._alone(s)]) for s in self.new_skills]
        out["new_skill_accuracy"] = float(np.mean([s["exact"].mean() for s in alone]))
        out["new_skill_likelihood"] = float(np.mean([np.exp(s["loglik"].mean()) for s in alone]))
        # retention: every pre-trained task (no new token, no prefix, no demonstrations)
        old_prompts = self._old_prompts(rng, n)
        self._count(old_prompts, 0, "eval_prompts")
        old = self.model.scores(old_prompts, rows, None, delta)["exact"].mean()
        base = old if delta is None else self.model.scores(old_prompts, rows, None, None)["exact"].mean()
        out["old_skill_accuracy"], out["base_old_accuracy"], out["forgetting"] = float(old), float(base), float(base - old)
        comp = []
        kind = self.library.kind
        for s in self.new_skills:
            partners = self.library.perms if kind(s) == "map" else self.library.maps
            slots = [self._slot(s, q, (s,)) if kind(s) == "map" else self._slot(q, s, (s,)) for q in partners]
            comp.append(self._build(rng, slots, max(1, n // len(partners)), demos))
        comp_scores = [self.model.scores(c, rows, use_prefix, delta)["exact"].mean() for c in comp]
        for c in comp:
            self._count(c, demos, "eval_prompts")
        out["composition_accuracy"] = float(np.mean(comp_scores))
        if self.n_new == 2:
            mp = next(s for s in self.new_skills if kind(s) == "map")
            pm = next(s for s in self.new_skills if kind(s) == "perm")
            both = acc([self._slot(mp, pm, (mp, pm))])["exact"].mean()
            map_only = acc([self._slot(mp, pm, (mp,))])["exact"].mean()
            perm_only = acc([self._slot(mp, pm, (pm,))])["exact"].mean()
            out.update(pair_accuracy=float(both), pair_accuracy_map_only=float(map_only), pair_accuracy_perm_only=float(perm_only),
                       pair_gain=float(both - max(map_only, perm_only)))
        out["context_tokens_per_prompt"] = float(demos * sk.DEMO_LEN)
        out["weights_changed"] = 0.0 if delta is None else float((a["weights"] != 0).mean())
        return out


__all__ = ["LIBRARY", "NEW_SKILLS", "SkillLibrary", "SkillNeologismEnv", "frozen_model"]
