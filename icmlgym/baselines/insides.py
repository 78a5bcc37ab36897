"""Comparators of the insides family.

HallucinationLabeling-v0 (after the LayerOOD-v0 ones, below): self-consistency and
semantic-entropy-style clustering (no labels), logistic regression and kNN on the raw
embeddings with the same random queries as APORIA-LP, and uncertainty sampling.

LayerOOD-v0: classifier-based scores (max softmax probability, energy),
Mahalanobis and kNN on the last layer, and the SAE-transition detector over random-feature SAEs.

All are one-class: they learn from the in-domain train split only (labelled with the
in-domain topic, which the classifier-based scores need). Mahalanobis and kNN reuse the
prediction family's detectors (:mod:`icmlgym.baselines.prediction`) on the last layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.insides import (
    LabellingAgent,
    SAETransitionAgent,
    scores_around,
    self_consistency,
    squash,
    two_means_threshold,
)
from icmlgym.agents.protocol import BaseAgent
from icmlgym.baselines.prediction import KNNDistanceAgent, MahalanobisAgent


def _last_layer(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    if x.ndim != 3:
        raise ValueError(f"expected (n, layers, d) hidden states, got shape {x.shape}")
    return x[:, -1]


class _LastLayerEnv:
    """A view of a prediction env whose training data is the last layer's states only."""

    def __init__(self, env, normalise: bool) -> None:
        self.unwrapped = self
        self._env, self._normalise = env, normalise

    def training_data(self) -> tuple[np.ndarray, np.ndarray]:
        x, y = self._env.unwrapped.training_data()
        keep = np.asarray(y) >= 0  # in-domain only (labelled OOD inputs carry -1)
        x, y = np.asarray(x)[keep], np.asarray(y)[keep]
        last = _last_layer(x)
        return (_unit(last) if self._normalise else last), y


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


class LastLayerMahalanobisAgent(MahalanobisAgent):
    """Mahalanobis distance to the in-domain mean of the last layer's pooled states (Lee et al. 2018, one class)."""

    name = "ood-mahalanobis-last"

    def train(self, env, budget) -> None:
        super().train(_LastLayerEnv(env, normalise=False), budget)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        return super().act({"inputs": _last_layer(obs["inputs"])}, info)


class LastLayerKNNAgent(KNNDistanceAgent):
    """Mean distance to the k nearest in-domain sentence embeddings (L2-normalised last layer; Sun et al. 2022)."""

    name = "ood-knn-last"

    def train(self, env, budget) -> None:
        super().train(_LastLayerEnv(env, normalise=True), budget)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        return super().act({"inputs": _unit(_last_layer(obs["inputs"]))}, info)


class _TopicClassifier(BaseAgent):
    """A softmax regression over the in-domain topics on the standardised last layer (full-batch gradient descent)."""

    def __init__(self, l2: float = 1e-2, iters: int = 300, lr: float = 0.5) -> None:
        super().__init__()
        if l2 < 0 or iters < 1 or lr <= 0:
            raise ValueError(f"need l2 >= 0, iters >= 1, lr > 0; got {l2}, {iters}, {lr}")
        self.l2, self.iters, self.lr = float(l2), int(iters), float(lr)
        self.w: np.ndarray | None = None

    def train(self, env, budget) -> None:
        x, y = env.unwrapped.training_data()
        y = np.asarray(y, np.int64)
        x = _last_layer(x)[y >= 0]  # the in-domain topics (labelled OOD inputs carry -1)
        y = y[y >= 0]
        if len(y) == 0:
            raise ValueError("the topic classifier needs in-domain topic labels (>= 0) in the training data")
        self.mean, self.std = x.mean(0), x.std(0) + 1e-6
        z = np.c_[(x - self.mean) / self.std, np.ones(len(x))]
        onehot = np.eye(int(y.max()) + 1)[y]
        w = np.zeros((z.shape[1], onehot.shape[1]))
        for _ in range(self.iters):
            p = _softmax(z @ w)
            w -= self.lr * (z.T @ (p - onehot) / len(z) + self.l2 * w)
        self.w = w
        self.ref = self.score_logits(z[:, :-1] * self.std + self.mean)
        self.centre, self.spread = float(np.median(self.ref)), float(np.std(self.ref)) or 1.0

    def logits(self, x: np.ndarray) -> np.ndarray:
        return np.c_[(x - self.mean) / self.std, np.ones(len(x))] @ self.w

    def score_logits(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if self.w is None:
            raise RuntimeError(f"{type(self).__name__} scores inputs after train(env, budget); it was not trained")
        s = self.score_logits(_last_layer(obs["inputs"]))
        return squash(8.0 * (s - self.centre) / self.spread)


def _softmax(a: np.ndarray) -> np.ndarray:
    a = a - a.max(1, keepdims=True)
    e = np.exp(a)
    return e / e.sum(1, keepdims=True)


class MaxSoftmaxAgent(_TopicClassifier):
    """Score = 1 - max softmax probability of the topic classifier (Hendrycks & Gimpel 2017)."""

    name = "ood-msp"

    def score_logits(self, x: np.ndarray) -> np.ndarray:
        return 1.0 - _softmax(self.logits(x)).max(1)


class EnergyAgent(_TopicClassifier):
    """Score = energy, -logsumexp of the topic classifier's logits (Liu et al. 2020)."""

    name = "ood-energy"

    def score_logits(self, x: np.ndarray) -> np.ndarray:
        a = self.logits(x)
        m = a.max(1)
        return -(m + np.log(np.exp(a - m[:, None]).sum(1)))


class LastLayerLogisticAgent(BaseAgent):
    """Few-label baseline: logistic regression on the standardised last layer, in-domain train texts
    against the labelled OOD ones (LayerOOD-v0 with ``n_labelled_ood > 0``; classes weighted equally)."""

    name = "ood-logreg-last"

    def train(self, env, budget) -> None:
        from icmlgym.agents.insides import fit_logistic

        x, y = env.unwrapped.training_data()
        x, y = _last_layer(x), np.asarray(y)
        if not (y < 0).any():
            raise ValueError("ood-logreg-last needs labelled OOD inputs in the training data: make the env with n_labelled_ood > 0")
        self.mean, self.std = x.mean(0), x.std(0) + 1e-6
        self.w, self.b = fit_logistic((x - self.mean) / self.std, (y < 0).astype(float))

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if not hasattr(self, "w"):
            raise RuntimeError("ood-logreg-last scores inputs after train(env, budget); it was not trained")
        z = (_last_layer(obs["inputs"]) - self.mean) / self.std
        return squash(z @ self.w + self.b)


class BestSingleLayerKNNAgent(BaseAgent):
    """kNN on the best single layer: mean cosine distance to the k nearest in-domain pooled states of one layer.

    The layer is chosen on the training data only: with labelled OOD inputs, the layer whose kNN
    score best separates a held-out 20% of the in-domain texts from them (AUROC); one-class there
    is nothing to choose by, and it reads the last layer (then it equals ``ood-knn-last``).
    """

    name = "ood-best-single-layer"

    def __init__(self, k: int = 5) -> None:
        super().__init__()
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.k = int(k)
        self.bank: np.ndarray | None = None

    def _score(self, bank: np.ndarray, x: np.ndarray) -> np.ndarray:
        d = 1.0 - _unit(x) @ bank.T
        k = min(self.k, bank.shape[0])
        return np.sort(d, 1)[:, :k].mean(1)

    def train(self, env, budget) -> None:
        from icmlgym.envs.prediction.metrics import auroc

        x, y = env.unwrapped.training_data()
        x, y = np.asarray(x, np.float64), np.asarray(y)
        if x.ndim != 3:
            raise ValueError(f"expected (n, layers, d) hidden states, got shape {x.shape}")
        ind, ood = x[y >= 0], x[y < 0]
        self.layer = x.shape[1] - 1
        self.layer_auroc: dict[int, float] = {}
        if len(ood):
            order = self.np_random.permutation(len(ind))
            cut = int(0.8 * len(ind))
            fit, held = ind[order[:cut]], ind[order[cut:]]
            for layer in range(1, x.shape[1]):
                bank = _unit(fit[:, layer])
                s = np.r_[self._score(bank, held[:, layer]), self._score(bank, ood[:, layer])]
                self.layer_auroc[layer] = auroc(np.r_[np.zeros(len(held)), np.ones(len(ood))], s)
            self.layer = max(self.layer_auroc, key=self.layer_auroc.get)
        self.bank = _unit(ind[:, self.layer])
        own = self._score(self.bank, ind[:, self.layer])
        self.centre, self.spread = float(np.median(own)), float(np.std(own)) or 1.0

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if self.bank is None:
            raise RuntimeError("ood-best-single-layer scores inputs after train(env, budget); it was not trained")
        s = self._score(self.bank, np.asarray(obs["inputs"], np.float64)[:, self.layer])
        return squash(8.0 * (s - self.centre) / self.spread)


class SingleLayerSAEAgent(SAETransitionAgent):
    """Single-layer SAE features: one TopK SAE on the last layer, its reconstruction error z-scored
    (one-class), or a light learner on it when labelled OOD inputs exist. No transitions."""

    name = "ood-single-layer-sae"
    min_layers = 1

    def __init__(self, d_latent: int = 128, k: int = 8, ridge: float = 1.0, layer: int = 6) -> None:
        super().__init__(d_latent=d_latent, k=k, ridge=ridge, trained=True, first_layer=layer)

    def train(self, env, budget) -> None:
        x, _ = env.unwrapped.training_data()
        if np.ndim(x) != 3 or np.shape(x)[1] != self.first_layer + 1:
            raise ValueError(f"ood-single-layer-sae reads layer {self.first_layer}, the last of (n, {self.first_layer + 1}, d) states; got {np.shape(x)}")
        super().train(env, budget)


class RandomSAETransitionAgent(SAETransitionAgent):
    """The SAE-transition detector over untrained, random-feature SAEs (the sanity check)."""

    name = "ood-sae-transitions-random"

    def __init__(self, d_latent: int = 128, k: int = 8, ridge: float = 1.0, first_layer: int = 1) -> None:
        super().__init__(d_latent=d_latent, k=k, ridge=ridge, trained=False, first_layer=first_layer)




# ============================================================================ HallucinationLabeling-v0


class SelfConsistencyAgent(LabellingAgent):
    """SelfCheckGPT-style self-consistency, no labels: a response unlike its prompt's other responses is flagged.

    Score: 1 - mean cosine similarity to the prompt's other responses; the flag threshold
    splits the episode's scores in two groups (:func:`~icmlgym.agents.insides.two_means_threshold`).
    """

    name = "hal-self-consistency"

    def __init__(self) -> None:
        super().__init__(max_labels=0)

    def predict(self, emb, prompt, labels) -> np.ndarray:
        s = self_consistency(emb, prompt)
        return scores_around(s, two_means_threshold(s))


def cluster_shares(emb: np.ndarray, prompt: np.ndarray, distance: float) -> np.ndarray:
    """Per response, the share of its prompt's responses in its cluster (single-link, cosine distance <= ``distance``)."""
    share = np.zeros(len(emb))
    for p in np.unique(prompt):
        idx = np.flatnonzero(prompt == p)
        close = (emb[idx] @ emb[idx].T) >= 1.0 - distance
        comp = -np.ones(len(idx), np.int64)
        for start in range(len(idx)):  # connected components of the "close" graph
            if comp[start] >= 0:
                continue
            stack, comp[start] = [start], start
            while stack:
                j = stack.pop()
                for nb in np.flatnonzero(close[j] & (comp < 0)):
                    comp[nb] = start
                    stack.append(int(nb))
        sizes = np.bincount(comp, minlength=len(idx))
        share[idx] = sizes[comp] / len(idx)
    return share


class SemanticEntropyAgent(LabellingAgent):
    """Semantic-entropy-style clustering, no labels (Farquhar et al. 2024, with embedding clusters for entailment).

    Each prompt's responses are clustered (single link, cosine distance <= ``distance``); a
    response's score is 1 - its cluster's share of the prompt's responses, flagged when its
    cluster holds at most half of them.
    """

    name = "hal-semantic-entropy"

    def __init__(self, distance: float = 0.3) -> None:
        super().__init__(max_labels=0)
        if not 0 < distance < 2:
            raise ValueError(f"distance must be in (0, 2), got {distance}")
        self.distance = float(distance)

    def predict(self, emb, prompt, labels) -> np.ndarray:
        return 1.0 - cluster_shares(emb, prompt, self.distance)


def _fallback(emb, prompt) -> np.ndarray:
    s = self_consistency(emb, prompt)
    return scores_around(s, two_means_threshold(s))


class LogisticRegressionAgent(LabellingAgent):
    """Logistic regression on the raw embeddings of the annotated responses (the same random queries as APORIA-LP).

    With labels of one class only it falls back to self-consistency.
    """

    name = "hal-logreg"

    def __init__(self, c: float = 1.0, max_labels: int | None = None) -> None:
        super().__init__(max_labels)
        if c <= 0:
            raise ValueError(f"c must be > 0, got {c}")
        self.c = float(c)

    def proba(self, emb, labels) -> np.ndarray | None:
        from sklearn.linear_model import LogisticRegression

        known = labels >= 0
        y = labels[known].astype(int)
        if len(y) == 0 or y.min() == y.max():
            return None
        clf = LogisticRegression(C=self.c, max_iter=1000).fit(emb[known], y)
        return clf.predict_proba(emb)[:, 1]

    def predict(self, emb, prompt, labels) -> np.ndarray:
        p = self.proba(emb, labels)
        return _fallback(emb, prompt) if p is None else p


class KNNLabelAgent(LabellingAgent):
    """Random queries, then the share of hallucinated labels among the k nearest annotated responses (cosine)."""

    name = "hal-knn"

    def __init__(self, k: int = 5, max_labels: int | None = None) -> None:
        super().__init__(max_labels)
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.k = int(k)

    def predict(self, emb, prompt, labels) -> np.ndarray:
        known = np.flatnonzero(labels >= 0)
        if len(known) == 0:
            return _fallback(emb, prompt)
        k = min(self.k, len(known))
        sim = emb @ emb[known].T
        nn = np.argsort(-sim, 1)[:, :k]
        return labels[known][nn].mean(1)


class UncertaintySamplingAgent(LogisticRegressionAgent):
    """Uncertainty sampling: random queries until both classes are seen, then the response whose
    logistic-regression probability is closest to 0.5; predicts with that regression."""

    name = "hal-uncertainty"

    def choose(self, emb, prompt, labels) -> int | None:
        p = self.proba(emb, labels)
        if p is None:
            return super().choose(emb, prompt, labels)
        gap = np.where(labels < 0, np.abs(p - 0.5), np.inf)
        return int(np.argmin(gap)) if np.isfinite(gap.min()) else None


__all__ = ["BestSingleLayerKNNAgent", "EnergyAgent", "KNNLabelAgent", "LastLayerKNNAgent", "LastLayerLogisticAgent", "LastLayerMahalanobisAgent", "LogisticRegressionAgent", "MaxSoftmaxAgent",
           "RandomSAETransitionAgent", "SelfConsistencyAgent", "SingleLayerSAEAgent", "SemanticEntropyAgent", "UncertaintySamplingAgent", "cluster_shares"]


class _HeldOutEnv:
    """A view of a prediction env whose training data leaves out the calibration rows."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.unwrapped = self
        self._x, self._y = x, y

    def training_data(self) -> tuple[np.ndarray, np.ndarray]:
        return self._x, self._y


class OperatingPointAgent(BaseAgent):
    """A detector's scores turned into flags at a calibrated operating point (LayerOOD-v0 ``action_mode="flag"``).

    It trains ``detector`` on the training data less a held-out calibration part (20% of the
    in-domain rows; with labelled OOD rows, half of those too), then sets one threshold. With
    labelled OOD rows it flags at ``level`` TPR on the held-out OOD ones (the ``1 - level``
    quantile of their scores); one-class there is no OOD to calibrate on, and it flags at
    ``1 - level`` FPR (the ``level`` quantile of held-out in-domain scores). Its actions are
    0/1, valid in flag mode and in score mode (there they rank in two ties).
    """

    name = "ood-mahalanobis-flag"

    def __init__(self, detector: BaseAgent | None = None, level: float = 0.95, holdout: float = 0.2) -> None:
        super().__init__()
        if not 0.0 < level < 1.0 or not 0.0 < holdout < 1.0:
            raise ValueError(f"level and holdout must be in (0, 1), got {level}, {holdout}")
        self.detector = detector if detector is not None else LastLayerMahalanobisAgent()
        self.level, self.holdout = float(level), float(holdout)
        self.threshold: float | None = None
        self.calibrated_on: str = ""

    def reset(self, seed, spec) -> None:
        super().reset(seed, spec)
        self.detector.reset(seed, spec)

    def train(self, env, budget) -> None:
        x, y = env.unwrapped.training_data()
        x, y = np.asarray(x), np.asarray(y)
        rng = self.np_random
        ins, outs = rng.permutation(np.flatnonzero(y >= 0)), rng.permutation(np.flatnonzero(y < 0))
        cal_in = ins[: max(1, int(round(self.holdout * len(ins))))]
        cal_out = outs[: len(outs) // 2]
        fit = np.setdiff1d(np.arange(len(y)), np.r_[cal_in, cal_out])
        self.detector.train(_HeldOutEnv(x[fit], y[fit]), budget)
        if len(cal_out):
            scores = np.asarray(self.detector.act({"inputs": x[cal_out]}, {}), np.float64)
            self.threshold, self.calibrated_on = float(np.quantile(scores, 1 - self.level)), "tpr"
        else:
            scores = np.asarray(self.detector.act({"inputs": x[cal_in]}, {}), np.float64)
            self.threshold, self.calibrated_on = float(np.quantile(scores, self.level)), "fpr"

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if self.threshold is None:
            raise RuntimeError(f"{self.name} flags inputs after train(env, budget); it was not trained")
        s = np.asarray(self.detector.act(obs, info), np.float64)
        return (s >= self.threshold).astype(np.int8)
