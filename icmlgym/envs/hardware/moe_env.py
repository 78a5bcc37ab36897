"""MoEQuantAlloc-v0 / -v1: give every expert of a mixture-of-experts model a bit-width under a memory cap (GEMQ)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

from icmlgym.envs.hardware.moe_model import Estimates, QuantMoE, lm_metrics, router_shift, split_tokens
from icmlgym.envs.hardware.quant import check_bits
from icmlgym.nn.runtime import fixed_threads

DEFAULT_BITS: tuple[int, ...] = (2, 3, 4, 8)
EXPERT_COLUMNS: tuple[str, ...] = ("layer", "size", "routing_freq", "bits")
MODES: tuple[str, ...] = ("full", "group")
# the zoo models the env quantises (smoke weights): the shipped MoE, and the same function with outlier weight
# columns migrated into layer 0's experts, whose layers differ sharply in quantisation sensitivity (v1's default)
MODELS: tuple[str, ...] = ("reasoner-moe", "reasoner-moe-outlier")
# obs["group_status"] in the group mode: the expert is set (its width counts as fixed), in the next group,
# or not yet set in this episode (still at the lowest width)
SET, NEXT, UNSET = 0.0, 1.0, 2.0
_DATA_CACHE: OrderedDict[tuple, dict[str, Any]] = OrderedDict()
_DATA_CACHE_SIZE = 16


def bits_to_action(bits: Sequence[int], offered: Sequence[int], router_ft: bool | int = False) -> np.ndarray:
    """The MoEQuantAlloc action for a bit-width per expert (each must be offered) and the router flag."""
    offered = [int(b) for b in offered]
    idx = []
    for e, b in enumerate(bits):
        if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer)) or int(b) not in offered:
            raise ValueError(f"bit-width {b!r} of expert {e} is not offered (offered bit-widths: {offered})")
        idx.append(offered.index(int(b)))
    return np.array(idx + [int(bool(router_ft))], dtype=np.int64)


def expert_table(obs: dict[str, Any], key: str) -> np.ndarray:
    """An observation's per-expert table as 2-D: ``experts`` ``(E, 4)``, an error table ``(E, B)``."""
    flat = np.asarray(obs[key], dtype=np.float64)
    cols = len(EXPERT_COLUMNS) if key == "experts" else len(np.asarray(obs["bit_widths"]))
    return flat.reshape(-1, cols)


def _data(model_seed_key: str, data_seed: int, n_calib: int, n_eval: int, block_size: int) -> dict[str, torch.Tensor]:
    """Calibration problems (train split) and held-out problems (test split) of one data seed, encoded."""
    from icmlgym.corpora.reasoning import DOMAINS, generate
    from icmlgym.zoo.builtin import encode_problems

    key = (model_seed_key, data_seed, n_calib, n_eval, block_size)
    if key in _DATA_CACHE:
        _DATA_CACHE.move_to_end(key)
        return _DATA_CACHE[key]
    calib = encode_problems(generate(n_calib, 2 * data_seed, "train", DOMAINS, (1, 2)), block_size)
    held = encode_problems(generate(n_eval, 2 * data_seed + 1, "test", DOMAINS, (1, 2)), block_size)
    out = {"calib": calib, "heldout": held}
    _DATA_CACHE[key] = out
    while len(_DATA_CACHE) > _DATA_CACHE_SIZE:
        _DATA_CACHE.popitem(last=False)
    return out


class MoEQuantAllocEnv(gym.Env):
    """Allocate bit-widths to the experts of the zoo's MoE transformer under a memory cap, measuring for real.

    ## Description
    GEMQ (ICML 2026) quantises the experts of a mixture-of-experts language model to mixed
    precision: a *global* linear program over every expert of the model, with importances
    from a quantisation-error analysis, then router fine-tuning so that routing adapts to
    the quantised experts, in a progressive loop that re-estimates and re-allocates. This
    env is that problem on the zoo's ``reasoner-moe`` (smoke size: 2 layers x 4 experts,
    top-2 routing, trained on the generated reasoning corpus; shipped weights). The env
    quantises for real (group-wise round-to-nearest, :mod:`~icmlgym.envs.hardware.quant`),
    measures the calibration loss, the memory and the router shift, and refuses an
    allocation over the memory cap.

    **v1** is the same env on ``reasoner-moe-outlier`` (``model="reasoner-moe-outlier"``,
    :mod:`icmlgym.zoo.outlier_moe`): the same function as ``reasoner-moe``, with outlier weight
    columns migrated into layer 0's router and experts (SmoothQuant's migration, gain 20 on
    one channel per quantisation group), so that layer 0's experts are very sensitive to low
    bit-widths and layer 1's are not: the sharp sensitivity spread across layers that GEMQ's
    global allocation is built for (docs/hardware.md measures both models' spreads).

    ## Action Space
    ``MultiDiscrete([B] * E + [2])``: for each of the ``E`` experts (layer by layer) the
    index of its bit-width in ``bit_widths`` (``B`` offered widths), then a router
    fine-tuning flag (1: after quantising, fine-tune the routers on the calibration set).
    :func:`bits_to_action` builds it from bit-widths. An allocation whose expert memory is
    over the cap is refused (``info["refused"]`` says why, the reward is
    ``-refusal_penalty``, the current allocation stays); with ``strict=True`` it raises a
    ``ValueError`` naming the bytes and the cap.

    **Group mode** (``mode="group"``, GEMQ's progressive "next group" action): the experts are
    split into groups of ``experts_per_group`` consecutive experts (default: one layer's), set
    one group per step, first to last, ``rounds`` passes. The action is
    ``MultiDiscrete([B] * G + [2])``: a width index for each of the ``G`` experts of the next
    group, then the router flag; the experts not yet set in the episode stay at the lowest
    width. Every action is accepted: a group whose widths put the whole model over the cap is
    refused like a full allocation (``-refusal_penalty``, the group keeps its widths, the
    episode moves on to the next group; ``strict=True`` raises), and ``info["width_mask"]``
    ``(G, B)`` marks, for each expert of the next group, the widths that fit with the rest of
    its group at the lowest width (a mask a masking agent can use).

    ## Observation Space
    ``Dict`` of 1-D vectors (tables flattened row-major; :func:`expert_table` gives them
    back as 2-D): ``experts`` ``(E * 4,)`` (:data:`EXPERT_COLUMNS`: layer, weights, routing
    frequency on the calibration tokens, current bits); ``weight_error``, ``output_error``,
    ``fisher`` ``(E * B,)``: the relative weight error, the gated output error and the
    second-order (empirical Fisher) estimate of the loss increase of each expert at each
    offered width, measured in the current state (see
    :mod:`~icmlgym.envs.hardware.moe_model`; zero in the final observation of an episode,
    where no allocation is left to make); ``bit_widths`` ``(B,)``; ``budget`` ``(4,)``:
    the cap in average bits per expert weight, the current average bits, the bits per
    weight left under the cap, the rounds left; ``calibration`` ``(3,)``: the calibration
    loss of the current model, of the full-precision model, and the router shift (KL) on
    the calibration tokens. In the group mode also ``group_status`` ``(E,)``: per expert
    0 = set (by an earlier step, or in an earlier pass), 1 = in the next group, 2 = not yet set
    (at the lowest width); ``budget[3]`` is then the steps left.

    ## Rewards
    The decrease of the calibration-loss gap (current minus full precision) at each
    accepted step; the episode's return is the gap of the starting model (every expert at
    the lowest width) minus the final gap. A refused allocation: ``-refusal_penalty``.

    ## Starting State
    Every expert at the lowest offered width (it always fits the cap), routers at full
    precision. Calibration (``n_calib`` train-split problems) and held-out (``n_eval``
    test-split problems) sets of the reasoning corpus are drawn from ``data_seed``; with
    ``data_seed=None``, ``reset(seed)`` takes ``seed % data_pool``. The model is fixed (the
    zoo model's smoke weights), so the independent unit of a finding is the data seed.

    ## Episode End
    Terminates after ``rounds`` steps (accepted or refused): ``rounds > 1`` is GEMQ's
    progressive loop (each observation re-estimated on the current quantised model). In the
    group mode: after ``rounds`` passes over the groups (``rounds * n_groups`` steps), each
    observation re-estimated on the model the earlier groups left.

    ## Arguments
    ``avg_bits`` (the cap, in average bits per expert weight; memory cap =
    that many bits per weight plus group metadata and biases), ``bit_widths`` (offered,
    1..8, distinct), ``group_size``, ``rounds``, ``router_ft_steps``, ``router_ft_lr``,
    ``n_calib``, ``n_eval``, ``data_seed``, ``data_pool``, ``strict``, ``refusal_penalty``,
    ``backend`` (``rtn``, the default, or ``hqq``: HQQ's calibration-free quantiser, extra ``[quant]``),
    ``mode`` (``full``, the default: a width per expert each step; ``group``: the next group's
    widths each step), ``experts_per_group`` (group mode; default the experts of one layer;
    must divide the number of experts), ``model`` (:data:`MODELS`: ``reasoner-moe``, v0's default, or
    ``reasoner-moe-outlier``, v1's default).

    ## Metrics
    ``heldout_loss`` (primary, lower is better), ``heldout_accuracy`` (next token),
    ``fp_heldout_loss``, ``loss_gap`` (held-out minus full precision), ``calib_loss``,
    ``avg_bits``, ``memory_bytes`` (experts, packed), ``memory_ratio`` (against float16
    experts), ``cap_bytes``, ``router_shift`` (mean KL of routing distributions, held-out
    tokens), ``routing_agreement`` (top-k overlap), ``router_ft_rounds``, ``refusals``,
    ``data_seed``. Inference time of the quantised model: benchmarks/hardware_quant.py
    (wall-clock figures are not episode metrics: they do not reproduce).

    ## Version History
    v0: first version (the shipped ``reasoner-moe``).
    v1: the same env on ``reasoner-moe-outlier``, whose layers differ sharply in quantisation
    sensitivity (spaces unchanged; its own score references and findings).
    """

    metadata = {"render_modes": []}  # noqa: RUF012 (gymnasium's convention)

    def __init__(
        self,
        avg_bits: float = 3.0,
        bit_widths: Sequence[int] = DEFAULT_BITS,
        group_size: int = 32,
        rounds: int = 1,
        router_ft_steps: int = 10,
        router_ft_lr: float = 1e-3,
        n_calib: int = 32,
        n_eval: int = 64,
        data_seed: int | None = None,
        data_pool: int = 1000,
        strict: bool = False,
        refusal_penalty: float = 1.0,
        backend: str = "rtn",
        mode: str = "full",
        experts_per_group: int | None = None,
        model: str = "reasoner-moe",
    ) -> None:
        if model not in MODELS:
            raise ValueError(f"model must be one of {MODELS} (zoo mixture-of-experts models), got {model!r}")
        offered = [check_bits(b) for b in bit_widths]
        if not offered or len(set(offered)) != len(offered):
            raise ValueError(f"bit_widths must be distinct integers in 1..8, got {list(bit_widths)}")
        self.bit_widths = tuple(sorted(offered))
        if not (np.isfinite(avg_bits) and self.bit_widths[0] <= float(avg_bits)):
            raise ValueError(f"avg_bits must be a finite number >= the lowest offered bit-width {self.bit_widths[0]}, got {avg_bits!r}")
        for name, v in (("group_size", group_size), ("rounds", rounds), ("n_calib", n_calib), ("n_eval", n_eval), ("data_pool", data_pool)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if isinstance(router_ft_steps, bool) or int(router_ft_steps) < 0:
            raise ValueError(f"router_ft_steps must be an integer >= 0, got {router_ft_steps!r}")
        if not (np.isfinite(router_ft_lr) and router_ft_lr > 0):
            raise ValueError(f"router_ft_lr must be a finite number > 0, got {router_ft_lr!r}")
        if not (np.isfinite(refusal_penalty) and refusal_penalty >= 0):
            raise ValueError(f"refusal_penalty must be a finite number >= 0, got {refusal_penalty!r}")
        if data_seed is not None and int(data_seed) < 0:
            raise ValueError(f"data_seed must be >= 0 or None, got {data_seed!r}")
        if backend not in ("rtn", "hqq"):
            raise ValueError(f"backend must be 'rtn' (group-wise round-to-nearest) or 'hqq' (extra [quant]), got {backend!r}")
        if mode not in MODES:
            raise ValueError(f"mode must be 'full' (a width per expert each step) or 'group' (the next group's widths), got {mode!r}")
        if experts_per_group is not None and (isinstance(experts_per_group, bool)
                                              or not isinstance(experts_per_group, (int, np.integer)) or int(experts_per_group) < 1):
            raise ValueError(f"experts_per_group must be an integer >= 1 or None (one layer's experts), got {experts_per_group!r}")
        self.backend, self.mode = backend, mode
        self.avg_bits, self.group_size, self.rounds = float(avg_bits), int(group_size), int(rounds)
        self.router_ft_steps, self.router_ft_lr = int(router_ft_steps), float(router_ft_lr)
        self.n_calib, self.n_eval, self.data_pool = int(n_calib), int(n_eval), int(data_pool)
        self.fixed_data_seed = None if data_seed is None else int(data_seed)
        self.strict, self.refusal_penalty = bool(strict), float(refusal_penalty)

        from icmlgym.zoo.registry import load

        with fixed_threads():
            zoo = load(model, "smoke")
            self.qm = QuantMoE(zoo.model, self.bit_widths, self.group_size, backend)
        self.model_name = model
        self._model_key = f"{model}/smoke/{zoo.card.get('key', '')}"
        self.block_size = zoo.model.config.block_size
        self.top_k = zoo.model.config.top_k
        E, B = self.qm.n_experts, len(self.bit_widths)
        self.n_experts = E
        self.total_weights = int(self.qm.size.sum())
        self.cap_bytes = self._bytes_at(self.avg_bits)
        per_layer = int(np.bincount(self.qm.layer).max())
        G = per_layer if experts_per_group is None else int(experts_per_group)
        if mode == "group" and E % G:
            raise ValueError(f"experts_per_group must divide the {E} experts, got {G}")
        self.experts_per_group = G if mode == "group" else E
        self.n_groups = E // self.experts_per_group
        self.n_steps = self.rounds * self.n_groups
        self.action_space = spaces.MultiDiscrete([B] * self.experts_per_group + [2])
        obs_spaces = {
            # 2-D tables flattened row-major (stable-baselines3's checker wants 1-D vectors); expert_table() unflattens
            "experts": spaces.Box(-1.0, np.inf, (E * len(EXPERT_COLUMNS),), np.float64),
            "weight_error": spaces.Box(0.0, np.inf, (E * B,), np.float64),
            "output_error": spaces.Box(0.0, np.inf, (E * B,), np.float64),
            "fisher": spaces.Box(0.0, np.inf, (E * B,), np.float64),
            "bit_widths": spaces.Box(1.0, 8.0, (B,), np.float64),
            "budget": spaces.Box(-np.inf, np.inf, (4,), np.float64),
            "calibration": spaces.Box(0.0, np.inf, (3,), np.float64),
        }
        if mode == "group":
            obs_spaces["group_status"] = spaces.Box(SET, UNSET, (E,), np.float64)
        self.observation_space = spaces.Dict(obs_spaces)
        self._done = True
        self._started = False

    # ------------------------------------------------------------------ direct API
    def _bytes_at(self, avg_bits: float) -> float:
        """Expert memory with every weight at ``avg_bits`` (fractional allowed): the cap's definition."""
        meta = self.qm.memory_bytes([self.bit_widths[0]] * self.n_experts) - self.total_weights * self.bit_widths[0] / 8.0
        return self.total_weights * avg_bits / 8.0 + meta

    def check_allocation(self, bits: Sequence[int]) -> float:
        """The expert memory of ``bits`` (one offered width per expert), or a ValueError when it is over the cap."""
        if len(bits) != self.n_experts:
            raise ValueError(f"an allocation needs one bit-width per expert ({self.n_experts}), got {len(bits)}")
        for e, b in enumerate(bits):
            if int(b) not in self.bit_widths:
                raise ValueError(f"bit-width {b!r} of expert {e} is not offered (offered bit-widths: {list(self.bit_widths)})")
        need = self.qm.memory_bytes(bits)
        if need > self.cap_bytes + 1e-6:
            avg = float(np.dot(self.qm.size, bits)) / self.total_weights
            raise ValueError(
                f"allocation {[int(b) for b in bits]} needs {need:.0f} bytes of expert memory ({avg:.3f} average bits), "
                f"over the memory cap of {self.cap_bytes:.0f} bytes ({self.avg_bits:g} average bits)"
            )
        return need

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if self.fixed_data_seed is not None:
            self.data_seed = self.fixed_data_seed
        elif seed is not None:
            self.data_seed = int(seed) % self.data_pool
        else:
            self.data_seed = int(self.np_random.integers(self.data_pool))
        d = _data(self._model_key, self.data_seed, self.n_calib, self.n_eval, self.block_size)
        self.calib, self.heldout = d["calib"], d["heldout"]
        self.n_quant, self.n_ft_steps = 0, 0
        with fixed_threads():
            self.qm.reset_routers()
            self.qm.apply([-1] * self.n_experts)
            if "teacher" not in d:
                d["teacher"], _, d["calib_routing"] = self.qm.logits_and_routing(self.calib)
                held_logits, y, d["heldout_routing"] = self.qm.logits_and_routing(self.heldout)
                d["fp_heldout"] = lm_metrics(held_logits, y)
                d["fp_calib"] = lm_metrics(d["teacher"], split_tokens(self.calib)[1])
            self._d = d
            self.qm.apply([self.bit_widths[0]] * self.n_experts)
            # the starting state (lowest widths, full-precision routers) is the same for every episode on this data
            start_key = ("start", self.bit_widths, self.group_size, self.backend)
            if start_key not in d:
                self.round = 0
                self._measure()
                d[start_key] = (self.calib_loss, self.calib_shift, self.est)
            self.calib_loss, self.calib_shift, self.est = d[start_key]
            self.freq = self.est.freq
        self.n_quant, self.n_ft_steps = 0, 0
        self.gap0 = self.calib_loss - d["fp_calib"][0]
        self.gap = self.gap0
        self.round = 0
        self.ever_set = np.zeros(self.n_experts, dtype=bool)
        self.refusals = 0
        self.ft_rounds = 0
        self._done, self._started = False, True
        info: dict[str, Any] = {"cost": self._cost()}
        if self.mode == "group":
            info["width_mask"] = self.width_mask()
        return self._obs(), info

    def _measure(self) -> None:
        """Calibration loss, calibration router shift and (while steps are left) error estimates of the current model."""
        logits, y, routing = self.qm.logits_and_routing(self.calib)
        self.calib_loss = lm_metrics(logits, y)[0]
        self.calib_shift = router_shift(self._d["calib_routing"], routing, self.top_k)[0]
        if self.round < self.n_steps:
            self.est: Estimates = self.qm.estimates(self.calib)
            self.freq = self.est.freq
        else:  # at the end no allocation is left to inform: skip the estimates' backward pass
            self.freq = np.zeros(self.n_experts)
            for e, (li, ei, _) in enumerate(self.qm.experts):
                choice = routing[li].topk(self.top_k, dim=-1).indices
                self.freq[e] = float((choice == ei).sum()) / max(1, choice.numel())

    def _group(self) -> np.ndarray:
        """Indices of the experts the next step sets (every expert in the full mode)."""
        g = self.round % self.n_groups
        return np.arange(g * self.experts_per_group, (g + 1) * self.experts_per_group)

    def width_mask(self) -> np.ndarray:
        """``(G, B)``: for each expert of the next group, the widths that fit the cap with the rest of
        the group at the lowest width and every other expert at its current width."""
        group = self._group()
        base = self.qm.bits.copy()
        base[group] = self.bit_widths[0]
        mask = np.zeros((len(group), len(self.bit_widths)), dtype=bool)
        for i, e in enumerate(group):
            for j, b in enumerate(self.bit_widths):
                bits = base.copy()
                bits[e] = b
                mask[i, j] = self.qm.memory_bytes(bits) <= self.cap_bytes + 1e-6
        return mask

    def _cost(self) -> dict[str, float]:
        return {"quantisations": float(self.n_quant), "router_ft_steps": float(self.n_ft_steps)}

    def _obs(self) -> dict[str, np.ndarray]:
        bits = self.qm.bits.astype(np.float64)
        used = float(np.dot(self.qm.size, bits)) / self.total_weights
        experts = np.stack([self.qm.layer.astype(np.float64), self.qm.size.astype(np.float64), self.freq, bits], axis=1)
        over = self.round >= self.n_steps  # the final observation: nothing left to allocate, error tables are zero
        tables = {k: np.zeros(self.n_experts * len(self.bit_widths)) if over else np.maximum(np.asarray(v, dtype=np.float64), 0.0).reshape(-1)
                  for k, v in (("weight_error", self.est.weight_error), ("output_error", self.est.output_error), ("fisher", self.est.fisher))}
        obs = {
            "experts": experts.reshape(-1),
            **tables,
            "bit_widths": np.array(self.bit_widths, dtype=np.float64),
            "budget": np.array([self.avg_bits, used, self.avg_bits - used, float(self.n_steps - self.round)]),
            "calibration": np.array([self.calib_loss, self._d["fp_calib"][0], max(self.calib_shift, 0.0)]),
        }
        if self.mode == "group":
            status = np.where(self.ever_set, SET, UNSET)
            if self.round < self.n_steps:
                status[self._group()] = NEXT
            obs["group_status"] = status
        return obs

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended: call reset()")
        a = np.asarray(action)
        if a.shape != self.action_space.shape or not np.issubdtype(a.dtype, np.integer) or not self.action_space.contains(a.astype(np.int64)):
            what = "per expert" if self.mode == "full" else f"per expert of the next group of {self.experts_per_group}"
            raise ValueError(f"action must be in {self.action_space} (a bit-width index {what}, then the router flag), got {action!r}")
        group = self._group()
        full = self.qm.bits.copy()
        full[group] = [self.bit_widths[int(i)] for i in a[:-1]]
        bits = [int(b) for b in full]
        ft = bool(a[-1])
        info: dict[str, Any] = {}
        try:
            self.check_allocation(bits)
            refused = None
        except ValueError as err:
            if self.strict:
                raise
            refused = str(err) if self.mode == "full" else f"group {self.round % self.n_groups} (experts {group[0]}-{group[-1]}): {err}"
        self.round += 1
        if refused is not None:
            self.refusals += 1
            reward = -self.refusal_penalty
            info["refused"] = refused
        else:
            self.ever_set[group] = True
            with fixed_threads():
                self.qm.apply(bits)
                self.n_quant += 1
                if ft and self.router_ft_steps:
                    self.qm.finetune_routers(self.calib, self._d["teacher"], self.router_ft_steps, self.router_ft_lr)
                    self.n_ft_steps += self.router_ft_steps
                    self.ft_rounds += 1
                self._measure()
            gap = self.calib_loss - self._d["fp_calib"][0]
            reward = self.gap - gap
            self.gap = gap
        if refused is not None:
            self.ever_set[group] = True  # refused: the group keeps its widths and counts as set
        terminated = self.round >= self.n_steps
        info["cost"] = self._cost()
        if self.mode == "group" and not terminated:
            info["width_mask"] = self.width_mask()
        if terminated:
            self._done = True
            info["metrics"] = self._metrics()
        return self._obs(), float(reward), terminated, False, info

    def _metrics(self) -> dict[str, float]:
        with fixed_threads():
            logits, y, routing = self.qm.logits_and_routing(self.heldout)
        loss, acc = lm_metrics(logits, y)
        shift, agree = router_shift(self._d["heldout_routing"], routing, self.top_k)
        mem = self.qm.memory_bytes()
        fp16 = self.qm.memory_bytes([-1] * self.n_experts)
        return {
            "heldout_loss": loss,
            "heldout_accuracy": acc,
            "fp_heldout_loss": float(self._d["fp_heldout"][0]),
            "loss_gap": loss - float(self._d["fp_heldout"][0]),
            "calib_loss": float(self.calib_loss),
            "avg_bits": float(np.dot(self.qm.size, self.qm.bits)) / self.total_weights,
            "memory_bytes": float(mem),
            "memory_ratio": float(mem / fp16),
            "cap_bytes": float(self.cap_bytes),
            "router_shift": shift,
            "routing_agreement": agree,
            "router_ft_rounds": float(self.ft_rounds),
            "refusals": float(self.refusals),
            "data_seed": float(self.data_seed),
        }


__all__ = ["DEFAULT_BITS", "EXPERT_COLUMNS", "MODES", "MoEQuantAllocEnv", "bits_to_action", "expert_table"]
