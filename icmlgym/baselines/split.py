"""Baselines for SplitInference-v0: fixed splits, a shallow split with noise, and an exhaustive-probing oracle."""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import BaseAgent
from icmlgym.envs.split.split_env import COMMIT, PROBE, gpz_block

WHERES: tuple[str, ...] = ("shallowest", "deepest", "middle", "penultimate")
_RATIO, _SHARE = 4, 1


def _n_blocks(obs: dict[str, Any]) -> int:
    return int(np.asarray(obs["probes"]).shape[0])


class FixedSplitAgent(BaseAgent):
    """Commit at once to a fixed block, no noise.

    ``where``: ``shallowest`` (block 0), ``deepest`` (the logits), ``middle`` (block L // 2),
    ``penultimate`` (the last hidden block: the deepest feature-level representation).
    """

    def __init__(self, where: str = "shallowest") -> None:
        if where not in WHERES:
            raise ValueError(f"where must be one of {WHERES}, got {where!r}")
        self.where = where

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        n = _n_blocks(obs)
        block = {"shallowest": 0, "deepest": n - 1, "middle": n // 2, "penultimate": n - 2}[self.where]
        return np.array([COMMIT, block, 0], dtype=np.int64)


class ShallowNoiseAgent(BaseAgent):
    """The usual defence: keep the shallowest split and add noise until it is as private as the R_c^2 split.

    Probes the R_c^2 criterion's split without noise (one attack), then block 0 at increasing
    noise levels; commits to block 0 with the first level whose error reaches the target (or
    the largest level). Its ``accuracy_lost`` metric is the price of this defence.
    """

    def reset(self, seed: int | None = None, spec: Any = None) -> None:
        super().reset(seed, spec)
        self._level = 0

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        probes = np.asarray(obs["probes"])
        target_block = gpz_block(np.asarray(obs["blocks"])[:, _RATIO])
        if probes[target_block, 0] < 0:
            return np.array([PROBE, target_block, 0], dtype=np.int64)
        target = probes[target_block, 0]
        K = probes.shape[1]
        for k in range(K):
            if probes[0, k] < 0:
                return np.array([PROBE, 0, k], dtype=np.int64)
            if probes[0, k] >= target:
                return np.array([COMMIT, 0, k], dtype=np.int64)
        return np.array([COMMIT, 0, K - 1], dtype=np.int64)


class OracleAgent(BaseAgent):
    """Exhaustive probing: attack every block without noise (L attacks), then commit to the best trade-off.

    The trade-off is the env's commit reward without defence: ``error - w_flops * edge share``
    (the weights come in the reset info).
    """

    def reset(self, seed: int | None = None, spec: Any = None) -> None:
        super().reset(seed, spec)
        self._w_flops = 0.1

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if "weights" in info:
            self._w_flops = float(info["weights"]["w_flops"])
        probes = np.asarray(obs["probes"])
        todo = np.flatnonzero(probes[:, 0] < 0)
        if len(todo):
            return np.array([PROBE, int(todo[0]), 0], dtype=np.int64)
        share = np.asarray(obs["blocks"])[1:, _SHARE]
        return np.array([COMMIT, int(np.argmax(probes[:, 0] - self._w_flops * share)), 0], dtype=np.int64)


__all__ = ["WHERES", "FixedSplitAgent", "OracleAgent", "ShallowNoiseAgent"]
