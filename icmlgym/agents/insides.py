"""The SAE layer-transition OOD detector (the paper's method, one-class) and its shared core.

For each layer of the observed hidden states a TopK sparse autoencoder
(:func:`icmlgym.zoo.sae.train_sae`) is fitted on the in-domain training states; a ridge
regression from one layer's codes to the next layer's codes models "which codes follow
which". An input's features are each layer's reconstruction error and each transition's
residual (how far the next layer's codes are from what the previous layer's codes
predict). The detector is fitted one-class: SAEs and transitions on 80% of the training
texts, and the features' mean and spread on the other 20% (so that held-out in-domain
text, not memorised text, sets the scale); an input's score is the mean z-score of its
features, mapped into (0, 1) by a logistic (a monotone map: AUROC reads only the order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import BaseAgent


def squash(score: np.ndarray) -> np.ndarray:
    """A monotone map of real scores into [0, 1] that keeps float32 ties rare for |score| < ~15."""
    return (0.5 * (1.0 + np.tanh(np.asarray(score, np.float64) / 8.0))).astype(np.float32)


class LayerStandardiser:
    """Per-layer standardisation of ``(n, layers, d)`` states with the training mean and spread."""

    def fit(self, x: np.ndarray) -> "LayerStandardiser":
        self.mean = x.mean(0, keepdims=True)
        self.std = x.std(0, keepdims=True) + 1e-6
        return self

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.std


class SAETransitionAgent(BaseAgent):
    """TopK SAEs per layer + ridge transitions between consecutive layers' codes; z-scored residuals.

    Args:
        d_latent: SAE latents per layer.
        k: active latents per input.
        ridge: L2 penalty of the transition regressions.
        trained: False leaves the SAEs at their random initialisation (the random-feature sanity check).
        first_layer: the first hidden state used (1 skips the embedding output).
    """

    name = "ood-sae-transitions"

    def __init__(self, d_latent: int = 128, k: int = 8, ridge: float = 1.0, trained: bool = True, first_layer: int = 1) -> None:
        super().__init__()
        if d_latent < 1 or not 1 <= k <= d_latent or ridge <= 0 or first_layer < 0:
            raise ValueError(f"need d_latent >= 1, 1 <= k <= d_latent, ridge > 0, first_layer >= 0; got {d_latent}, {k}, {ridge}, {first_layer}")
        self.d_latent, self.k, self.ridge, self.trained, self.first_layer = int(d_latent), int(k), float(ridge), bool(trained), int(first_layer)
        self.saes: list | None = None
        self._seed = 0

    def reset(self, seed, spec) -> None:
        super().reset(seed, spec)
        if self.saes is None and seed is not None:
            self._seed = int(seed)

    # ------------------------------------------------------------------ features
    def _codes(self, x: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        import torch

        codes, errs = [], []
        with torch.no_grad():
            for i, sae in enumerate(self.saes):
                t = torch.as_tensor(x[:, self.first_layer + i], dtype=torch.float32)
                recon, c = sae(t)
                codes.append(c.double().numpy())
                errs.append(((recon - t) ** 2).mean(1).double().numpy())
        return codes, np.stack(errs, 1)

    def features(self, x: np.ndarray) -> np.ndarray:
        """Per input: each layer's SAE reconstruction error and each transition's residual norm."""
        codes, errs = self._codes(self.standardise(np.asarray(x, np.float64)))
        resid = [np.linalg.norm(codes[i + 1] - np.c_[codes[i], np.ones(len(x))] @ w, axis=1) for i, w in enumerate(self.transitions)]
        return np.c_[errs, np.stack(resid, 1)]

    # ------------------------------------------------------------------ training
    def train(self, env, budget) -> None:
        import torch

        from icmlgym.nn import Budget, seed_everything
        from icmlgym.zoo.sae import TopKSAE, train_sae

        seed_everything(self._seed, "cpu")
        x, _ = env.unwrapped.training_data()
        x = np.asarray(x, np.float64)
        if x.ndim != 3 or x.shape[1] < self.first_layer + 2:
            raise ValueError(f"the SAE-transition detector needs (n, layers >= {self.first_layer + 2}, d) states, got {x.shape}")
        rng = np.random.default_rng(self._seed)
        order = rng.permutation(len(x))
        cut = int(0.8 * len(x))
        fit_x, cal_x = x[order[:cut]], x[order[cut:]]
        self.standardise = LayerStandardiser().fit(fit_x)
        z = self.standardise(fit_x)
        steps = int(Budget.of(budget).amount) if int(budget) > 0 else 150
        layers = range(self.first_layer, x.shape[1])
        if self.trained:
            self.saes = [train_sae(z[:, layer], self.d_latent, self.k, steps=steps, batch_size=64, seed=self._seed + layer) for layer in layers]
        else:
            self.saes = []
            for layer in layers:
                torch.manual_seed(self._seed + layer)
                self.saes.append(TopKSAE(x.shape[2], self.d_latent, self.k).eval())
        codes, _ = self._codes(z)
        self.transitions = []
        for a, b in zip(codes[:-1], codes[1:]):
            design = np.c_[a, np.ones(len(a))]
            reg = self.ridge * np.eye(design.shape[1])
            reg[-1, -1] = 0.0  # no penalty on the intercept
            self.transitions.append(np.linalg.solve(design.T @ design + reg, design.T @ b))
        cal = self.features(cal_x)
        self.mu, self.sd = cal.mean(0), cal.std(0) + 1e-9

    def score(self, x: np.ndarray) -> np.ndarray:
        """Real-valued OOD scores (mean z-score of the features)."""
        return ((self.features(x) - self.mu) / self.sd).mean(1)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if self.saes is None:
            raise RuntimeError(f"{type(self).__name__} scores inputs after train(env, budget); it was not trained")
        return squash(self.score(obs["inputs"]))


__all__ = ["LayerStandardiser", "SAETransitionAgent", "squash"]
