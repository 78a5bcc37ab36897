"""CIMRobustTraining-v0: weight the training samples of a network that will run on noisy compute-in-memory hardware (DWP)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from icmlgym.envs.hardware.cim import SECONDS, additive, energy_per_inference, init_mlp, mismatch, mlp_forward, pcm_drift
from icmlgym.nn.runtime import fixed_threads

DATA_TYPES: tuple[str, ...] = ("digits", "signals", "products")
SAMPLE_COLUMNS: tuple[str, ...] = ("clean_loss", "margin", "disagreement", "fraction_correct")
DEFAULT_MISMATCH: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7)
DEFAULT_ADDITIVE: tuple[float, ...] = (0.02, 0.05, 0.1)
DEFAULT_DRIFT: tuple[str, ...] = tuple(SECONDS)
BACKENDS: tuple[str, ...] = ("ours", "aihwkit")  # the drift model of deployment
TRAIN_NOISE_TYPES: tuple[str, ...] = ("mismatch", "aihwkit")  # the training realisations' noise
_DATA: dict[tuple, tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]] = {}


def load_data(data: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Train and test inputs (flattened, standardised per feature by the train split) and labels, and the class count."""
    if data not in DATA_TYPES:
        raise ValueError(f"data must be one of {DATA_TYPES}, got {data!r}")
    if data not in _DATA:
        from icmlgym.corpora import vision

        if data == "digits":
            tr, te = vision.digits("train"), vision.digits("test")
        elif data == "signals":
            tr, te = vision.signals("train"), vision.signals("test")
        else:
            from icmlgym.corpora.product_images import product_images

            tr, te = product_images("train", per_class=16), product_images("test", per_class=8)
        classes = int(max(tr.y.max(), te.y.max())) + 1
        xtr, xte = torch.as_tensor(tr.x).reshape(len(tr.y), -1), torch.as_tensor(te.x).reshape(len(te.y), -1)
        # per-feature standardisation with the train split's statistics (the product images are far
        # from centred: unstandardised, some initialisations lose every ReLU in the first steps)
        mu, sd = xtr.mean(0), xtr.std(0)
        sd = torch.where(sd > 1e-3, sd, torch.ones_like(sd))
        _DATA[data] = ((xtr - mu) / sd, torch.as_tensor(tr.y), (xte - mu) / sd, torch.as_tensor(te.y), classes)
    return _DATA[data]


class CIMRobustTrainingEnv(gym.Env):
    """One training run of a small network and its deployment on perturbed compute-in-memory weights.

    ## Description
    DWP (ICML 2026) trains networks for compute-in-memory (CIM) accelerators, whose weights are
    perturbed by device mismatch, conductance noise and drift, by weighting training samples by
    their prediction disagreement under diverse weight-noise realisations (affinity-based
    selection, after the immune system). An episode is one training run: at each step the
    agent sees per-sample statistics of the next minibatch under ``K`` weight-noise
    realisations and chooses the weight of each sample's clean loss and of each of its ``K``
    noisy losses; the env takes one Adam step on the weighted loss. After ``train_steps`` steps
    the env deploys the network under a grid of perturbations (:mod:`~icmlgym.envs.hardware.cim`:
    multiplicative mismatch up to 70%, additive noise, a year of PCM drift with global drift
    compensation) and reports the accuracy at each and an energy estimate from a documented
    per-operation table (an assumption).

    ## Action Space
    ``Box(0, 1, (batch_size * (1 + K),), float32)``: per sample (row-major), the weight of its
    clean loss, then the weights of its loss under each of the ``K`` noise realisations shown.
    The loss is ``sum w * loss / sum w``; all-zero weights skip the update. Standard training is
    ``(1, 0, ..., 0)`` per sample, noise injection ``(0, 1, ..., 1)``. NaN, negative or
    over-1 weights raise a ``ValueError`` naming the value.

    ## Observation Space
    ``Dict``: ``samples`` ``(batch_size * (4 + K),)`` (row-major per sample:
    :data:`SAMPLE_COLUMNS` = clean loss, clean margin (true-class logit minus the best other),
    disagreement (fraction of the ``K`` noisy predictions differing from the clean one),
    fraction of the ``K`` noisy predictions correct; then the ``K`` noisy losses);
    ``progress`` ``(1,)``: the fraction of training steps done.

    ## Rewards
    0 during training; at the end ``robust_accuracy`` (mean test accuracy over every perturbed
    deployment condition).

    ## Starting State
    A network ``[inputs, hidden, classes]`` (ReLU) initialised from the episode's seed
    (``model_seed``, default: the reset seed), minibatches and noise realisations drawn from it.

    ## Episode End
    Terminates after ``train_steps`` steps, with the deployment metrics.

    ## Arguments
    ``data`` (``digits`` | ``signals`` | ``products``), ``hidden``, ``train_steps``,
    ``batch_size``, ``K`` (noise realisations per step), ``train_noise`` (the realisations'
    multiplicative mismatch), ``lr``, ``eval_realisations`` (per deployment condition),
    ``mismatch_levels``, ``additive_levels``, ``drift_times`` (names of
    :data:`icmlgym.envs.hardware.cim.SECONDS`), ``model_seed``; ``backend`` (``ours``, the
    default, or ``aihwkit``: the drift conditions on aihwkit's ``PCMLikeNoiseModel`` with its
    global drift compensation, extra ``[cim]``); ``train_noise_type`` (``mismatch``, the
    default, or ``aihwkit``: the K training realisations drawn by aihwkit's hardware-aware
    training weight modifier, additive Gaussian ``train_noise * max|W|`` per layer, extra
    ``[cim]``; :mod:`~icmlgym.envs.hardware.aihwkit_backend`).

    ## Metrics
    ``robust_accuracy`` (primary, higher is better), ``accuracy_clean``,
    ``acc_mismatch_<pct>``, ``acc_additive_<pct>``, ``acc_drift_<time>``, ``drift_range``
    (max - min accuracy over the drift times), ``drift_min``, ``acc_mismatch_mean``,
    ``acc_additive_mean``, ``acc_drift_mean``, ``energy_digital_pj``, ``energy_cim_pj``,
    ``energy_saving`` (1 - CIM / digital, from the assumed table), ``model_seed``.

    ## Version History
    v0: first version.
    """

    metadata = {"render_modes": []}  # noqa: RUF012 (gymnasium's convention)

    def __init__(
        self,
        data: str = "digits",
        hidden: int = 64,
        train_steps: int = 80,
        batch_size: int = 32,
        K: int = 4,
        train_noise: float = 0.5,
        lr: float = 3e-3,
        eval_realisations: int = 3,
        mismatch_levels: Sequence[float] = DEFAULT_MISMATCH,
        additive_levels: Sequence[float] = DEFAULT_ADDITIVE,
        drift_times: Sequence[str] = DEFAULT_DRIFT,
        model_seed: int | None = None,
        backend: str = "ours",
        train_noise_type: str = "mismatch",
    ) -> None:
        for name, v in (("hidden", hidden), ("train_steps", train_steps), ("batch_size", batch_size), ("K", K),
                        ("eval_realisations", eval_realisations)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        for name, v in (("train_noise", train_noise),):
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if not (np.isfinite(lr) and lr > 0):
            raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
        for name, levels in (("mismatch_levels", mismatch_levels), ("additive_levels", additive_levels)):
            if not levels or any(not (np.isfinite(s) and s > 0) for s in levels):
                raise ValueError(f"{name} must be non-empty and positive, got {list(levels)}")
        bad = [t for t in drift_times if t not in SECONDS]
        if not drift_times or bad:
            raise ValueError(f"drift_times must name times of {list(SECONDS)}, got {list(drift_times)}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be 'ours' (our PCM drift model) or 'aihwkit' (aihwkit's PCM model, extra [cim]), got {backend!r}")
        if train_noise_type not in TRAIN_NOISE_TYPES:
            raise ValueError(f"train_noise_type must be 'mismatch' (W * (1 + s * eps)) or 'aihwkit' (aihwkit's ADD_NORMAL weight "
                             f"modifier, extra [cim]), got {train_noise_type!r}")
        if "aihwkit" in (backend, train_noise_type):
            from icmlgym.envs.hardware import aihwkit_backend

            aihwkit_backend.require()
        self.backend, self.train_noise_type = backend, train_noise_type
        self.x_train, self.y_train, self.x_test, self.y_test, self.n_classes = load_data(data)
        self.data = data
        self.hidden, self.train_steps, self.batch_size, self.K = int(hidden), int(train_steps), int(batch_size), int(K)
        self.train_noise, self.lr, self.eval_realisations = float(train_noise), float(lr), int(eval_realisations)
        self.mismatch_levels = tuple(float(s) for s in mismatch_levels)
        self.additive_levels = tuple(float(s) for s in additive_levels)
        self.drift_times = tuple(drift_times)
        self.fixed_model_seed = None if model_seed is None else int(model_seed)
        self.sizes = [int(self.x_train.shape[1]), self.hidden, self.n_classes]
        B, K = self.batch_size, self.K
        self.action_space = spaces.Box(0.0, 1.0, (B * (1 + K),), np.float32)
        self.observation_space = spaces.Dict({
            "samples": spaces.Box(-np.inf, np.inf, (B * (len(SAMPLE_COLUMNS) + K),), np.float64),
            "progress": spaces.Box(0.0, 1.0, (1,), np.float64),
        })
        self._done, self._started = True, False

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if self.fixed_model_seed is not None:
            self.model_seed = self.fixed_model_seed
        elif seed is not None:
            self.model_seed = int(seed)
        else:
            self.model_seed = int(self.np_random.integers(2**31))
        self.gen = torch.Generator().manual_seed(self.model_seed)
        with fixed_threads():
            self.params = init_mlp(self.sizes, self.model_seed)
            self.opt = torch.optim.Adam(self.params, lr=self.lr)
            self._next_batch()
        self.step_count, self.noisy_forwards = 0, 0
        self._done, self._started = False, True
        return self._obs(), {"cost": self._cost()}

    @property
    def weights(self) -> list[torch.Tensor]:
        return self.params[0::2]

    @property
    def biases(self) -> list[torch.Tensor]:
        return self.params[1::2]

    def _next_batch(self) -> None:
        """Draw the next minibatch and its K noise realisations, and the statistics the agent sees."""
        idx = torch.randint(0, len(self.y_train), (self.batch_size,), generator=self.gen)
        self.bx, self.by = self.x_train[idx], self.y_train[idx]
        if self.train_noise_type == "mismatch":
            self.eps = [[torch.randn(w.shape, generator=self.gen) for w in self.weights] for _ in range(self.K)]
        else:  # aihwkit's ADD_NORMAL modifier, seeded from the run's generator
            from icmlgym.envs.hardware.aihwkit_backend import hwa_noise

            seeds = torch.randint(0, 2**31 - 1, (self.K,), generator=self.gen).tolist()
            self.eps = [hwa_noise(self.weights, self.train_noise, s) for s in seeds]
        # with the graph: the weights do not change before the training step, which reuses these outputs
        with torch.enable_grad():
            self.out_clean = mlp_forward(self.bx, self.weights, self.biases)
            self.out_noisy = [mlp_forward(self.bx, self._noisy(r), self.biases) for r in range(self.K)]
        clean, noisy = self.out_clean.detach(), [n.detach() for n in self.out_noisy]
        loss = F.cross_entropy(clean, self.by, reduction="none")
        true = clean.gather(1, self.by[:, None]).squeeze(1)
        other = clean.scatter(1, self.by[:, None], float("-inf")).max(1).values
        pred = clean.argmax(1)
        npred = torch.stack([n.argmax(1) for n in noisy], 1)
        nloss = torch.stack([F.cross_entropy(n, self.by, reduction="none") for n in noisy], 1)
        self.stats = torch.cat([
            loss[:, None], (true - other)[:, None], (npred != pred[:, None]).float().mean(1, keepdim=True),
            (npred == self.by[:, None]).float().mean(1, keepdim=True), nloss,
        ], 1).double().numpy()

    def _noisy(self, r: int) -> list[torch.Tensor]:
        if self.train_noise_type == "aihwkit":  # the modifier's additive noise, drawn at the batch's weights
            return [w + n for w, n in zip(self.weights, self.eps[r])]
        return [w * (1 + self.train_noise * e) for w, e in zip(self.weights, self.eps[r])]

    def _cost(self) -> dict[str, float]:
        return {"train_steps": float(self.step_count), "noisy_forwards": float(self.noisy_forwards)}

    def _obs(self) -> dict[str, np.ndarray]:
        return {"samples": self.stats.reshape(-1).copy(), "progress": np.array([self.step_count / self.train_steps])}

    def check_weights(self, action: Any) -> np.ndarray:
        """The action as a ``(batch_size, 1 + K)`` weight table, or a ValueError naming the bad value."""
        a = np.asarray(action, dtype=np.float64)
        if a.shape != self.action_space.shape:
            raise ValueError(f"sample weights must have shape {self.action_space.shape} (action space {self.action_space}), got {a.shape}")
        bad = np.flatnonzero(~np.isfinite(a))
        if len(bad):
            raise ValueError(f"sample weights must be finite: weight {bad[0]} is {float(a[bad[0]])!r} (action space {self.action_space})")
        bad = np.flatnonzero(a < 0)
        if len(bad):
            raise ValueError(f"sample weights must be >= 0: weight {bad[0]} is {float(a[bad[0]])!r} (action space {self.action_space})")
        bad = np.flatnonzero(a > 1)
        if len(bad):
            raise ValueError(f"sample weights must be <= 1: weight {bad[0]} is {float(a[bad[0]])!r} (action space {self.action_space})")
        return a.reshape(self.batch_size, 1 + self.K)

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended: call reset()")
        w = torch.as_tensor(self.check_weights(action), dtype=torch.float32)
        with fixed_threads():
            total = float(w.sum())
            if total > 0:
                self.opt.zero_grad()
                loss = torch.zeros(())
                if float(w[:, 0].sum()) > 0:
                    loss = loss + (w[:, 0] * F.cross_entropy(self.out_clean, self.by, reduction="none")).sum()
                for r in range(self.K):
                    if float(w[:, 1 + r].sum()) > 0:
                        loss = loss + (w[:, 1 + r] * F.cross_entropy(self.out_noisy[r], self.by, reduction="none")).sum()
                        self.noisy_forwards += 1
                (loss / total).backward()
                self.opt.step()
            self.step_count += 1
            terminated = self.step_count >= self.train_steps
            info: dict[str, Any] = {}
            if terminated:
                metrics = self._deploy()
                reward = metrics["robust_accuracy"]
                info["metrics"] = metrics
                self._done = True
            else:
                self._next_batch()
                reward = 0.0
        info["cost"] = self._cost()
        return self._obs(), float(reward), terminated, False, info

    # ------------------------------------------------------------------ deployment
    def _accuracy(self, weights: Sequence[torch.Tensor], scales: Sequence[float] | None = None) -> float:
        with torch.no_grad():
            pred = mlp_forward(self.x_test, weights, self.biases, scales).argmax(1)
        return float((pred == self.y_test).float().mean())

    def _deploy(self) -> dict[str, float]:
        gen = torch.Generator().manual_seed(1_000_003 * self.model_seed + 7)  # deployment draws: the same for every agent
        W = [w.detach() for w in self.weights]
        R = self.eval_realisations
        m: dict[str, float] = {"accuracy_clean": self._accuracy(W)}
        groups: dict[str, list[float]] = {"mismatch": [], "additive": [], "drift": []}
        for s in self.mismatch_levels:
            acc = float(np.mean([self._accuracy(mismatch(W, s, gen)) for _ in range(R)]))
            m[f"acc_mismatch_{round(100 * s)}"] = acc
            groups["mismatch"].append(acc)
        for s in self.additive_levels:
            acc = float(np.mean([self._accuracy(additive(W, s, gen)) for _ in range(R)]))
            m[f"acc_additive_{round(100 * s)}"] = acc
            groups["additive"].append(acc)
        if self.backend == "aihwkit":
            from icmlgym.envs.hardware.aihwkit_backend import pcm_drift_accuracy

            seed = int(torch.randint(0, 2**31 - 1, (1,), generator=gen))
            B = [b.detach() for b in self.biases]
            per_time = pcm_drift_accuracy(W, B, self.x_test, self.y_test, [SECONDS[t] for t in self.drift_times], R, seed)
        for i, t in enumerate(self.drift_times):
            if self.backend == "aihwkit":
                accs = per_time[i]
            else:
                accs = []
                for _ in range(R):
                    wt, scales = pcm_drift(W, SECONDS[t], gen)
                    accs.append(self._accuracy(wt, scales))
            m[f"acc_drift_{t}"] = float(np.mean(accs))
            groups["drift"].append(m[f"acc_drift_{t}"])
        for k, v in groups.items():
            m[f"acc_{k}_mean"] = float(np.mean(v))
        m["drift_range"] = float(max(groups["drift"]) - min(groups["drift"]))
        m["drift_min"] = float(min(groups["drift"]))
        m["robust_accuracy"] = float(np.mean(groups["mismatch"] + groups["additive"] + groups["drift"]))
        e = energy_per_inference(self.sizes)
        m.update(energy_digital_pj=e["energy_digital_pj"], energy_cim_pj=e["energy_cim_pj"], energy_saving=e["energy_saving"])
        m["model_seed"] = float(self.model_seed)
        return m


__all__ = ["BACKENDS", "DATA_TYPES", "SAMPLE_COLUMNS", "TRAIN_NOISE_TYPES", "CIMRobustTrainingEnv", "load_data"]
