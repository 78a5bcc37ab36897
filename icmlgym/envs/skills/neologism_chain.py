"""SkillNeologism-v1: the same task on a model whose held-out skills exist as chains of library skills.

Description:
    As :mod:`icmlgym.envs.skills.neologism` (v0: action, observation, oracle, metrics, bad input),
    but the frozen model is the zoo's ``skill-chain-lm`` (:mod:`icmlgym.zoo.skill_chains`),
    pre-trained on the chain library of :mod:`icmlgym.corpora.skill_chains`: prompts
    ``BOS m1 m2 p1 p2 x SEP y`` with two map and two permutation slots applied in order. The
    held-out skills (``shift4``, ``shift6``, ``rot3``, ``rot4``) have no token, but the model ran
    their procedures in pre-training as two-token chains (``shift4`` = ``shift1 shift3`` ...). A
    new skill's neologism sits in the first slot of its kind with the second slot empty, so one
    new token has to name a procedure the model already has: the paper's premise that
    pre-trained models hold procedural knowledge tied to tokens. On v0's library the model never
    computed its held-out skills and no neologism reaches them (docs/skills.md).

Action Space, Observation Space, Rewards, Starting State, Episode End:
    As v0, with ``d = 64`` and the chain model's parameter count.

Arguments:
    As v0; ``new_skills`` (default ``("shift4", "rot3")``) from ``shift4``, ``shift6`` (maps),
    ``rot3``, ``rot4`` (permutations).

Metrics:
    As v0. The retention set is every task of the chain library (625: each slot empty or any of
    its skills), ``final_size // 64`` prompts each; composition puts each new skill beside every
    old skill of the other kind (first slots, second slots empty); the pair puts both new tokens
    in their first slots.

Version History:
    v1: the chain-library model (v0 stays on ``skill-lm``).
"""

from __future__ import annotations

import numpy as np

from icmlgym.catalog import require_extra

require_extra("skills", what="icmlgym/SkillNeologism-v1")

import torch  # noqa: E402

from icmlgym.corpora import skill_chains as sc  # noqa: E402
from icmlgym.corpora import skills as sk  # noqa: E402
from icmlgym.envs.skills.model import FrozenSkillModel, Prompts  # noqa: E402
from icmlgym.envs.skills.neologism import SkillLibrary, SkillNeologismEnv  # noqa: E402
from icmlgym.nn.runtime import fixed_threads  # noqa: E402

CHAIN_NEW_SKILLS: tuple[str, ...] = sc.NEW_MAPS + sc.NEW_PERMS
CHAIN_LIBRARY = SkillLibrary(
    CHAIN_NEW_SKILLS, sc.MAPS, sc.PERMS, sc.SKILL_TOKENS,
    tuple(str(i) for i in range(sc.N_SYMBOLS)) + ("BOS", "SEP", "DELIM", "NOP") + sc.MAPS + sc.PERMS,
    sc.kind, sc.NOP, sc.N_SYMBOLS,
)
_MODELS: dict[tuple[str, int], FrozenSkillModel] = {}
assert sc.DEMO_LEN == sk.DEMO_LEN  # the base env counts context tokens with v0's demonstration length


def chain_model(size: str = "smoke", seed: int = 0) -> FrozenSkillModel:
    """The pre-trained chain-library model (zoo cache or shipped weights), loaded once per process."""
    key = (size, int(seed))
    if key not in _MODELS:
        from icmlgym.zoo import skill_chains

        with fixed_threads():
            _MODELS[key] = FrozenSkillModel(skill_chains.load(size, seed=seed).model)
    return _MODELS[key]


def build_chain_prompts(rng: np.random.Generator, slots: list, n: int, demos: int, n_new: int) -> Prompts:
    """``n`` prompts per slot filling ``(slot ids (4), task (4 skills), new skills involved)``; with
    ``demos > 0`` that many demonstrations ``x SEP y DELIM`` of the prompt's task precede the query."""
    toks, masks, inv = [], [], []
    for ids, task, involved in slots:
        x = sk.strings(rng, n)
        head = [np.full((n, 1), sc.BOS), np.tile(np.asarray(ids, dtype=np.int64), (n, 1))]
        for _ in range(demos):
            dx = sk.strings(rng, n)
            head += [dx, np.full((n, 1), sc.SEP), sc.target(task, dx), np.full((n, 1), sc.DELIM)]
        seq = np.concatenate(head + [x, np.full((n, 1), sc.SEP), sc.target(task, x)], axis=1)
        mask = np.zeros(seq.shape, np.float32)
        mask[:, -sc.LENGTH:] = 1.0
        toks.append(seq)
        masks.append(mask)
        row = np.zeros((n, n_new), np.float32)
        row[:, list(involved)] = 1.0
        inv.append(row)
    return Prompts(
        torch.from_numpy(np.concatenate(toks).astype(np.int64)),
        torch.from_numpy(np.concatenate(masks)),
        torch.from_numpy(np.concatenate(inv)),
    )


class SkillNeologismChainEnv(SkillNeologismEnv):
    """SkillNeologism on the chain-library model: a neologism names a procedure the model runs for a two-token chain."""

    library = CHAIN_LIBRARY

    def _load_model(self, size: str, seed: int) -> FrozenSkillModel:
        return chain_model(size, seed)

    def _build(self, rng: np.random.Generator, slots: list, n: int, demos: int) -> Prompts:
        return build_chain_prompts(rng, slots, n, demos, self.n_new)

    def _old_prompts(self, rng: np.random.Generator, n: int) -> Prompts:
        slots = [(tuple(sc.slot_tokens(t)), t, ()) for t in sc.all_tasks()]
        return self._build(rng, slots, max(1, n // 64), 0)

    def _slot(self, map_skill: str | None, perm_skill: str | None, use: tuple[str, ...]):
        """The task "map, then permutation" in the first slot of each kind (second slots empty); a
        new skill in ``use`` gets its new token, one not in ``use`` leaves its slot empty."""

        def tok(s: str | None) -> int:
            if s is None:
                return sc.NOP
            if s in self._tok:
                return self._tok[s] if s in use else sc.NOP
            return sc.SKILL_TOKENS[s]

        involved = tuple(i for i, n in enumerate(self.new_skills) if n in use and n in (map_skill, perm_skill))
        return ((tok(map_skill), sc.NOP, tok(perm_skill), sc.NOP), (map_skill, None, perm_skill, None), involved)


__all__ = ["CHAIN_LIBRARY", "CHAIN_NEW_SKILLS", "SkillNeologismChainEnv", "build_chain_prompts", "chain_model"]
