"""SplitInference-v0: choose where to cut a classifier between edge and cloud against model inversion."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.envs.split.attack import (
    ATTACKERS,
    AttackResult,
    attack,
    cached_attack,
    defended_accuracy,
)
from icmlgym.envs.split.criteria import gpz_block, jump_hits
from icmlgym.envs.split.model import ARCHS, COLUMNS, DATA_TYPES, SplitModel, split_model
from icmlgym.nn.counters import CostMeter

PROBE, COMMIT = 0, 1
DEFAULT_NOISE_LEVELS: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0)
DEFAULT_WIDTH: dict[str, int] = {"mlp": 64, "cnn": 8}  # units of an MLP block, channels of a CNN block


class SplitInferenceEnv(gym.Env):
    """Probe split points with real inversion attacks, then commit to one (with optional noise).

    ## Description
    A classifier of ``depth`` hidden blocks of constant ``width`` plus a logits block
    (``L = depth + 1`` blocks; the zoo's MLP, or with ``arch="cnn"`` a stride-1 CNN of
    ``width`` channels without pooling, trained on ``data``) is to be split: the
    edge device runs blocks ``0..b`` and sends their output to the cloud, where an
    attacker tries to reconstruct the input (model inversion, He et al. 2019). The
    Golden Partition Zone paper (ICML 2026) argues that a split resists inversion
    intrinsically once the representation has gone through the transition where the
    intra-class radius R_c^2 collapses relative to the total variance, and that this
    can be read from statistics the defender has, without attacking. The agent sees
    those statistics for every block, may pay for real attacks (probes), and commits.

    ## Action Space
    ``MultiDiscrete([2, L, K])``: ``(kind, block, noise)``. ``kind`` 0 probes: the env
    trains the attacker against the split after ``block`` with noise level
    ``noise_levels[noise]`` and reports its error (a repeated probe returns the stored
    result at no cost). ``kind`` 1 commits to that split and defence; the episode ends.

    ## Observation Space
    ``Dict``: ``blocks`` ``(L + 1, 6)``, row 0 the input and row ``b + 1`` the output of
    block ``b``, columns :data:`icmlgym.envs.split.model.COLUMNS` (output dimension,
    edge share of forward FLOPs, R_c^2, total variance, R_c^2 / total variance,
    nearest-class-mean test accuracy); ``probes`` ``(L, K)``: normalised reconstruction
    error of each probed (block, noise), -1 where not probed; ``defended_accuracy``
    ``(L, K)``: the classifier's test accuracy with that noise at that block (what a
    defence costs; measuring it needs no attack); ``noise_levels`` ``(K,)``.

    ## Rewards
    A probe that trains an attacker: ``-probe_penalty``. The commit:
    ``recon_error - w_accuracy * accuracy_lost - w_flops * edge_flop_share``, where
    ``recon_error`` is the normalised reconstruction MSE of the attacker at the
    committed split (1 = no better than the mean image), ``accuracy_lost`` the clean
    minus the defended test accuracy, and ``edge_flop_share`` the share of the model's
    forward FLOPs run on the edge. Defaults: ``w_accuracy = 1``, ``w_flops = 0.1``,
    ``probe_penalty = 0.02``.

    ## Starting State
    The classifier comes from the zoo's cache (trained once per configuration and
    ``model_seed``); with ``model_seed=None`` (the default) ``reset(seed)`` takes
    ``seed % model_pool`` (drawn from the env's generator when ``seed`` is None), so seeds of a run see different classifiers while the
    smoke tier trains at most ``model_pool`` of them. An attack's outcome is a deterministic function of the classifier,
    the split, the defence and its seed (``attack_seed``, by default derived from
    ``model_seed``), so the problem an episode poses does not depend on ``reset(seed)``:
    the independent unit of a finding is ``model_seed``. Attack results are cached on
    disk (:mod:`icmlgym.cache`, namespace ``split``); ``attack_trainings`` still counts
    every attack the agent asks for.

    ## Episode End
    Terminates on a commit. After ``max_probe_steps`` probe steps the episode is
    truncated with the default deployment: the deepest split (logits), no noise.

    ## Arguments
    ``data`` (``digits`` | ``signals`` | ``products``: the generated product classes of
    :mod:`icmlgym.corpora.product_images`, 48 classes of 16x16 RGB), ``arch`` (``mlp`` |
    ``cnn``), ``depth`` (hidden blocks), ``width`` (units or channels; default 64 for the MLP,
    8 for the CNN), ``classifier_steps`` (training steps of the classifier), ``model_seed``,
    ``model_pool``, ``attack_seed``, ``attacker`` (``inverse-net`` | ``decoder-large`` |
    ``rmle`` | ``glass``), ``attack_steps``,
    ``noise_levels`` (non-negative, first 0), ``w_accuracy``, ``w_flops``,
    ``probe_penalty``, ``max_probe_steps`` (default ``2 L K``), ``nopeek`` (default 0: off) and
    ``nopeek_block`` (default 0): the NoPeek defence (Vepakomma et al. 2020), a classifier trained
    with ``nopeek`` times the distance correlation between the input and block ``nopeek_block``'s
    output added to its loss (the zoo member ``nopeek``); its accuracy cost shows in ``accuracy_clean``.

    ## Metrics
    ``utility`` (the commit's reward minus the probe penalties: the episode return),
    ``recon_error``, ``recon_mse``, ``accuracy``, ``accuracy_clean``, ``accuracy_lost``,
    ``edge_flop_share``, ``split_depth`` (blocks on the edge, 1..L), ``noise_scale``,
    ``rc2_ratio`` (at the split), ``gpz_depth`` (the R_c^2 criterion's split, for
    analysis), ``model_seed``, ``is_logits``, ``attacks`` (attacks trained by probes), ``committed``;
    when every block was probed without noise (``split-oracle`` does), also ``jump_block`` (the
    block whose error rises most over the previous one) and ``jump_at_rc2``, ``jump_at_dimension``,
    ``jump_at_variance``, ``jump_at_chance``: how each predictor of
    :mod:`icmlgym.envs.split.criteria` hits that block (1, 0, or 1/k for k tied blocks).

    ## Version History
    v0: first version; later additions that leave the defaults' behaviour unchanged: the
    ``products`` data type, ``arch="cnn"``, the ``glass`` attacker, the ``nopeek`` defence.
    """

    metadata = {"render_modes": []}  # noqa: RUF012 (gymnasium's convention)

    def __init__(
        self,
        data: str = "digits",
        depth: int = 4,
        width: int | None = None,
        classifier_steps: int = 600,
        model_seed: int | None = None,
        model_pool: int = 3,
        attack_seed: int | None = None,
        attacker: str = "inverse-net",
        attack_steps: int = 150,
        noise_levels: tuple[float, ...] | list[float] = DEFAULT_NOISE_LEVELS,
        w_accuracy: float = 1.0,
        w_flops: float = 0.1,
        probe_penalty: float = 0.02,
        max_probe_steps: int | None = None,
        arch: str = "mlp",
        nopeek: float = 0.0,
        nopeek_block: int = 0,
    ) -> None:
        self._model: SplitModel | None = None
        if data not in DATA_TYPES:
            raise ValueError(f"data must be one of {sorted(DATA_TYPES)}, got {data!r}")
        if arch not in ARCHS:
            raise ValueError(f"arch must be one of {ARCHS}, got {arch!r}")
        if width is None:
            width = DEFAULT_WIDTH[arch]
        if attacker not in ATTACKERS:
            raise ValueError(f"attacker must be one of {ATTACKERS}, got {attacker!r}")
        for name, v in (("depth", depth), ("width", width), ("classifier_steps", classifier_steps), ("attack_steps", attack_steps)):
            if int(v) < 1:
                raise ValueError(f"{name} must be >= 1, got {v}")
        levels = [float(s) for s in noise_levels]
        if not levels or any(not np.isfinite(s) or s < 0 for s in levels):
            raise ValueError(f"noise_levels must be finite and non-negative, got {list(noise_levels)}")
        if levels[0] != 0.0:
            raise ValueError(f"noise_levels must start with 0 (no defence), got {levels}")
        for name, v in (("w_accuracy", w_accuracy), ("w_flops", w_flops), ("probe_penalty", probe_penalty)):
            if not float(v) >= 0:
                raise ValueError(f"{name} must be >= 0, got {v}")
        self.data, self.depth, self.width, self.arch = data, int(depth), int(width), arch
        if not (isinstance(nopeek, (int, float, np.integer, np.floating)) and np.isfinite(nopeek) and nopeek >= 0):
            raise ValueError(f"nopeek (the distance-correlation penalty's weight) must be a finite number >= 0, got {nopeek!r}")
        if not (isinstance(nopeek_block, (int, np.integer)) and 0 <= int(nopeek_block) < self.depth):
            raise ValueError(f"nopeek_block must be a hidden block in 0..{self.depth - 1}, got {nopeek_block!r}")
        self.nopeek, self.nopeek_block = float(nopeek), int(nopeek_block)
        if int(model_pool) < 1:
            raise ValueError(f"model_pool must be >= 1, got {model_pool}")
        self.classifier_steps, self.model_pool = int(classifier_steps), int(model_pool)
        self.fixed_model_seed = None if model_seed is None else int(model_seed)
        self.model_seed = 0 if model_seed is None else int(model_seed)
        self.fixed_attack_seed = None if attack_seed is None else int(attack_seed)
        self._set_model_seed(self.model_seed)
        self.attacker, self.attack_steps = attacker, int(attack_steps)
        self.noise_levels = tuple(levels)
        self.weights = {"w_accuracy": float(w_accuracy), "w_flops": float(w_flops), "probe_penalty": float(probe_penalty)}
        self.n_blocks = self.depth + 1
        K = len(levels)
        self.max_probe_steps = int(max_probe_steps) if max_probe_steps is not None else 2 * self.n_blocks * K
        if self.max_probe_steps < 0:
            raise ValueError(f"max_probe_steps must be >= 0, got {max_probe_steps}")
        self.action_space = spaces.MultiDiscrete([2, self.n_blocks, K])
        self.observation_space = spaces.Dict({
            "blocks": spaces.Box(0.0, np.inf, (self.n_blocks + 1, len(COLUMNS)), np.float64),
            "probes": spaces.Box(-1.0, np.inf, (self.n_blocks, K), np.float64),
            "defended_accuracy": spaces.Box(0.0, 1.0, (self.n_blocks, K), np.float64),
            "noise_levels": spaces.Box(0.0, np.inf, (K,), np.float64),
        })
        self._done = True
        self._started = False

    # ------------------------------------------------------------------ direct API
    def _set_model_seed(self, seed: int) -> None:
        if self._model is not None and seed != self.model_seed:
            self._model = None
        self.model_seed = int(seed)
        self.attack_seed = self.fixed_attack_seed if self.fixed_attack_seed is not None else 1_000_003 * self.model_seed + 17

    @property
    def model(self) -> SplitModel:
        """The classifier and its per-block table (loaded on first use)."""
        if self._model is None:
            self._model = split_model(self.data, self.depth, self.width, self.classifier_steps, self.model_seed, self.arch,
                                      self.nopeek, self.nopeek_block)
        return self._model

    def _check_block(self, block: int) -> int:
        if not (isinstance(block, (int, np.integer)) and 0 <= int(block) < self.n_blocks):
            raise ValueError(f"block must be an integer in 0..{self.n_blocks - 1} (the model has {self.n_blocks} blocks), got {block!r}")
        return int(block)

    def run_attack(self, block: int, noise_scale: float = 0.0, seed: int = 0, meter: CostMeter | None = None) -> AttackResult:
        """Attack the split after ``block`` with noise ``noise_scale`` (x the block's RMS), outside any episode."""
        block = self._check_block(block)
        if not (np.isfinite(noise_scale) and noise_scale >= 0):
            raise ValueError(f"noise_scale must be a finite number >= 0, got {noise_scale!r}")
        m = self.model
        return attack(m.net, m.x["val"], m.x["test"], block, float(noise_scale), float(m.rms[block]), self.attacker,
                      self.attack_steps, seed, meter)

    def accuracy_with_noise(self, block: int, noise_scale: float, seed: int = 0) -> float:
        """Test accuracy with noise ``noise_scale`` added after ``block``."""
        block = self._check_block(block)
        if not (np.isfinite(noise_scale) and noise_scale >= 0):
            raise ValueError(f"noise_scale must be a finite number >= 0, got {noise_scale!r}")
        m = self.model
        return defended_accuracy(m.net, m.x["test"], m.y["test"], block, float(noise_scale), float(m.rms[block]), seed)

    # ------------------------------------------------------------------ episode
    def _seed_of(self, block: int, level: int) -> int:
        return int(self.attack_seed + 7919 * block + 104729 * level) % (2**31)

    def _result(self, block: int, level: int) -> AttackResult:
        key = (block, level)
        if key not in self._results:
            self._results[key] = cached_attack(self, block, self.noise_levels[level], self._seed_of(block, level))
        return self._results[key]

    def _defended_table(self) -> np.ndarray:
        key = (self.noise_levels, self.attack_seed)
        table = self.model.defended.get(key)
        if table is None:
            m = self.model
            table = np.array([[m.accuracy if s == 0 else self.accuracy_with_noise(b, s, self._seed_of(b, k) + 11)
                               for k, s in enumerate(self.noise_levels)] for b in range(self.n_blocks)])
            m.defended[key] = table
        return table

    def _obs(self) -> dict[str, np.ndarray]:
        return {
            "blocks": np.round(self.model.table, 6),
            "probes": self._probes.copy(),
            "defended_accuracy": self._def_acc.copy(),
            "noise_levels": np.array(self.noise_levels, dtype=np.float64),
        }

    def _cost(self) -> dict[str, float]:
        return {"attack_trainings": float(self._attacks)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if self.fixed_model_seed is None:  # seeds 0, 1, 2 of a run: three different classifiers
            pick = int(seed) % self.model_pool if seed is not None else int(self.np_random.integers(self.model_pool))
            self._set_model_seed(pick)
        self._results: dict[tuple[int, int], AttackResult] = {}
        self._attacks = 0
        self._probe_steps = 0
        self._return = 0.0
        K = len(self.noise_levels)
        self._probes = -np.ones((self.n_blocks, K))
        self._def_acc = self._defended_table()
        self._done = False
        self._started = True
        return self._obs(), {"cost": self._cost(), "weights": dict(self.weights), "columns": list(COLUMNS)}

    def _commit(self, block: int, level: int) -> tuple[float, dict[str, float]]:
        m = self.model
        res = self._result(block, level)
        acc = float(self._def_acc[block, level])
        lost = m.accuracy - acc
        share = float(m.table[block + 1, 1])
        reward = res.normalised_error - self.weights["w_accuracy"] * lost - self.weights["w_flops"] * share
        self._return += reward
        gpz = gpz_block(m.table[:, 4])
        # every block attacked without noise (e.g. by split-oracle): where the error jumps, and which predictor said so
        jumps = jump_hits(self._probes[:, 0], m.table) if np.all(self._probes[:, 0] >= 0) else {}
        return reward, {**jumps,
            "utility": float(self._return), "recon_error": float(res.normalised_error), "recon_mse": float(res.mse),
            "accuracy": acc, "accuracy_clean": float(m.accuracy), "accuracy_lost": float(lost), "edge_flop_share": share,
            "split_depth": float(block + 1), "noise_scale": float(self.noise_levels[level]),
            "rc2_ratio": float(m.table[block + 1, 4]), "gpz_depth": float(gpz + 1),
            "is_logits": float(block == self.n_blocks - 1), "attacks": float(self._attacks),
            "model_seed": float(self.model_seed),
        }

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended (committed or truncated): probing or committing after it needs reset()")
        a = np.asarray(action)
        if a.shape != (3,) or not np.issubdtype(a.dtype, np.integer) or not self.action_space.contains(a.astype(np.int64)):
            raise ValueError(f"action {a.tolist()!r} is not in the action space {self.action_space} ((kind, block, noise level))")
        kind, block, level = (int(v) for v in a)
        info: dict[str, Any] = {}
        if kind == PROBE:
            reward = 0.0
            if self._probes[block, level] < 0:
                self._attacks += 1
                reward = -self.weights["probe_penalty"]
                self._return += reward
                self._probes[block, level] = self._result(block, level).normalised_error
            self._probe_steps += 1
            truncated = self._probe_steps >= self.max_probe_steps
            if truncated:
                final, metrics = self._commit(self.n_blocks - 1, 0)
                reward += final
                info["metrics"] = {**metrics, "committed": 0.0}
            self._done = truncated
            info["cost"] = self._cost()
            return self._obs(), float(reward), False, truncated, info
        reward, metrics = self._commit(block, level)
        self._done = True
        info["metrics"] = {**metrics, "committed": 1.0}
        info["cost"] = self._cost()
        return self._obs(), float(reward), True, False, info


__all__ = ["COMMIT", "DEFAULT_NOISE_LEVELS", "PROBE", "SplitInferenceEnv", "gpz_block"]
