"""GEMQ on MoEQuantAlloc-v0: global mixed-precision allocation over every expert by one integer program.

:func:`allocate_milp` is the core every allocator here shares (scipy's ``milp``, HiGHS): a
multiple-choice knapsack with one binary ``x[e, j]`` per expert ``e`` and offered width ``j``,

    minimise  sum_{e,j} cost[e, j] x[e, j]
    s.t.      sum_j x[e, j] = 1                      (one width per expert)
              sum_{e,j} size[e] bits[j] x[e, j] <= budget   (the memory cap, in weight-bits)

GEMQ's cost is the second-order (empirical Fisher) estimate of the loss increase that the
env reports for every (expert, width), comparable across layers, so the program is *global*;
router fine-tuning follows every allocation; with ``rounds > 1`` the env re-estimates on the
quantised model and the agent re-allocates (the progressive loop). In the env's group mode
(``mode="group"``) the progressive loop is group by group: each step the program runs over the
experts not yet set, with the budget the set ones leave, and the agent takes the next group's
widths from its solution; the env then quantises that group, re-estimates on the model it
leaves, and the next step solves again. The comparators (layer-wise,
routing-frequency, uniform) are in :mod:`icmlgym.baselines.hardware`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from icmlgym.agents.protocol import BaseAgent
from icmlgym.envs.hardware.moe_env import NEXT, SET, bits_to_action, expert_table

IMPORTANCES = ("fisher", "output_error", "weight_error", "frequency")


def allocate_milp(cost: np.ndarray, sizes: Sequence[float], bit_widths: Sequence[int], budget_bits: float) -> list[int]:
    """The bit-width per expert minimising the summed ``cost[e, j]`` with ``sum size[e] * bits <= budget_bits``.

    Raises ValueError when even the lowest width of every expert is over the budget or the
    solver finds no solution."""
    cost = np.asarray(cost, dtype=np.float64)
    sizes = np.asarray(sizes, dtype=np.float64)
    bits = np.asarray(bit_widths, dtype=np.float64)
    E, B = cost.shape
    if sizes.shape != (E,) or bits.shape != (B,):
        raise ValueError(f"cost {cost.shape} needs {E} sizes and {B} bit-widths, got {sizes.shape} and {bits.shape}")
    if not np.all(np.isfinite(cost)):
        raise ValueError("cost must be finite")
    lowest = float(sizes.sum() * bits.min())
    if lowest > budget_bits * (1 + 1e-12):
        raise ValueError(f"budget of {budget_bits:g} weight-bits is below the lowest width's {lowest:g}")
    scale = float(np.abs(cost).max()) or 1.0
    c = (cost / scale).reshape(-1)
    one_each = sparse.kron(sparse.identity(E, format="csr"), np.ones((1, B)), format="csr")
    memory = np.outer(sizes, bits).reshape(1, -1)
    res = milp(
        c,
        constraints=[LinearConstraint(one_each, 1, 1), LinearConstraint(memory, -np.inf, budget_bits)],
        integrality=np.ones(E * B),
        bounds=Bounds(0, 1),
        options={"mip_rel_gap": 1e-9},
    )
    if res.x is None:
        raise ValueError(f"the allocation program has no solution: {res.message}")
    choice = res.x.reshape(E, B).argmax(1)
    return [int(bits[j]) for j in choice]


def group_of(obs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(fixed, next_group)`` boolean masks over experts: in the full mode nothing is fixed and
    the next group is every expert; in the group mode from ``obs["group_status"]``."""
    n = len(expert_table(obs, "experts"))
    if "group_status" not in obs:
        return np.zeros(n, dtype=bool), np.ones(n, dtype=bool)
    status = np.asarray(obs["group_status"])
    return status == SET, status == NEXT


def group_action(obs: dict[str, Any], bits: Sequence[int], router_ft: bool) -> np.ndarray:
    """The env's action for a full allocation ``bits``: all of it (full mode) or the next group's widths."""
    _, nxt = group_of(obs)
    widths = [int(b) for b in np.asarray(obs["bit_widths"])]
    return bits_to_action([int(b) for b, n in zip(bits, nxt) if n], widths, router_ft)


def importance_cost(obs: dict[str, Any], importance: str) -> np.ndarray:
    """The ``(E, B)`` cost an allocator minimises, from the observation."""
    if importance in ("fisher", "output_error", "weight_error"):
        return expert_table(obs, importance)
    if importance == "frequency":  # routing frequency x the expert's relative weight error
        return expert_table(obs, "experts")[:, 2:3] * expert_table(obs, "weight_error")
    raise ValueError(f"importance must be one of {IMPORTANCES}, got {importance!r}")


class MILPAllocator(BaseAgent):
    """Allocate widths by :func:`allocate_milp` on an importance, globally or layer by layer.

    ``scope="global"``: one program over all experts with the model's budget; ``"layer"``:
    one program per layer, each with that layer's share of the budget (the cap's average
    bits over the layer's weights), as layer-wise methods do. ``router_ft``: set the env's
    router fine-tuning flag on every allocation.
    """

    def __init__(self, importance: str = "fisher", scope: str = "global", router_ft: bool = True) -> None:
        super().__init__()
        if importance not in IMPORTANCES:
            raise ValueError(f"importance must be one of {IMPORTANCES}, got {importance!r}")
        if scope not in ("global", "layer"):
            raise ValueError(f"scope must be 'global' or 'layer', got {scope!r}")
        self.importance, self.scope, self.router_ft = importance, scope, bool(router_ft)

    def allocate(self, obs: dict[str, Any]) -> list[int]:
        experts = expert_table(obs, "experts")
        layer, sizes = experts[:, 0].astype(int), experts[:, 1]
        widths = [int(b) for b in np.asarray(obs["bit_widths"])]
        cap = float(np.asarray(obs["budget"])[0])
        cost = importance_cost(obs, self.importance)
        # experts already set (group mode) keep their widths and use their share of the budget
        fixed, _ = group_of(obs)
        current = experts[:, 3].astype(int)
        bits = [int(b) for b in current]
        scopes = [np.ones(len(sizes), dtype=bool)] if self.scope == "global" else [layer == li for li in np.unique(layer)]
        for m in scopes:
            idx = np.flatnonzero(m & ~fixed)
            if not len(idx):
                continue
            budget = cap * sizes[m].sum() - float(np.dot(sizes[m & fixed], current[m & fixed]))
            for e, b in zip(idx, allocate_milp(cost[idx], sizes[idx], widths, budget)):
                bits[int(e)] = b
        return bits

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        return group_action(obs, self.allocate(obs), self.router_ft)


class GEMQAgent(MILPAllocator):
    """GEMQ: global program on the second-order loss estimate, router fine-tuning after each allocation.

    Each step re-reads the estimates (taken by the env on the current quantised model), so over
    ``rounds > 1`` this is the progressive re-estimation and re-allocation loop; in the env's
    group mode it is the group-by-group refinement (re-solved over the experts not yet set
    after each group is quantised and the routers fine-tuned).
    ``router_ft=False`` is the ablation "GEMQ without router fine-tuning".
    """

    def __init__(self, router_ft: bool = True) -> None:
        super().__init__(importance="fisher", scope="global", router_ft=router_ft)


# ----------------------------------------------------------------------------- CIMRobustTraining-v0 (DWP)

def sample_table(obs: dict[str, Any], action_size: int) -> tuple[np.ndarray, int]:
    """The observation's per-sample table ``(batch, 4 + K)`` and ``K``, given the action's length."""
    flat = np.asarray(obs["samples"], dtype=np.float64)
    batch = (len(flat) - action_size) // 3  # batch * (4 + K) - batch * (1 + K)
    if batch < 1 or len(flat) % batch:
        raise ValueError(f"observation of {len(flat)} values does not fit an action of {action_size}")
    return flat.reshape(batch, -1), len(flat) // batch - 4


class SampleWeighter(BaseAgent):
    """Weights on each sample's clean loss and its K noisy losses, from a per-sample score.

    ``noisy``: 0 = standard training (clean loss only), ``"all"`` = all K noisy losses,
    an int ``n`` = the first ``n`` realisations only. ``score``: None (uniform), or a column
    name (``disagreement``, ``noisy_loss``); the weight of sample ``i`` is
    ``(1 - mix) + mix * score_i / max score`` (uniform when every score is 0).
    """

    def __init__(self, noisy: int | str = "all", score: str | None = None, mix: float = 0.5) -> None:
        super().__init__()
        if score not in (None, "disagreement", "noisy_loss"):
            raise ValueError(f"score must be None, 'disagreement' or 'noisy_loss', got {score!r}")
        if not 0.0 <= float(mix) <= 1.0:
            raise ValueError(f"mix must be in [0, 1], got {mix!r}")
        if noisy != "all" and (isinstance(noisy, bool) or not isinstance(noisy, int) or noisy < 0):
            raise ValueError(f"noisy must be 'all' or an integer >= 0, got {noisy!r}")
        self.noisy, self.score, self.mix = noisy, score, float(mix)

    def sample_weights(self, table: np.ndarray, K: int) -> np.ndarray:
        if self.score is None:
            return np.ones(len(table))
        v = table[:, 2] if self.score == "disagreement" else table[:, 4:].mean(1)
        top = float(v.max())
        return np.ones(len(table)) if top <= 0 else (1 - self.mix) + self.mix * v / top

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        size = int(np.prod(self.action_space.shape))
        table, K = sample_table(obs, size)
        w = self.sample_weights(table, K)
        out = np.zeros((len(table), 1 + K), dtype=np.float32)
        if self.noisy == 0:
            out[:, 0] = w
        else:
            n = K if self.noisy == "all" else min(int(self.noisy), K)
            out[:, 1 : 1 + n] = w[:, None]
        return np.clip(out.reshape(-1), 0.0, 1.0)


class DWPAgent(SampleWeighter):
    """DWP: each sample's K noisy losses weighted by its prediction disagreement under the K
    noise realisations (affinity: samples whose prediction the noise flips weigh more)."""

    def __init__(self, mix: float = 0.5) -> None:
        super().__init__(noisy="all", score="disagreement", mix=mix)


__all__ = ["DWPAgent", "GEMQAgent", "IMPORTANCES", "MILPAllocator", "SampleWeighter", "allocate_milp", "group_action", "group_of",
           "importance_cost", "sample_table"]
