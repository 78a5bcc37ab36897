"""The insides family's methods: the SAE layer-transition OOD detector (LayerOOD-v0) and
APORIA-LP (HallucinationLabeling-v0), with the cores their baselines share.

SAE transitions (one-class): for each layer of the observed hidden states a TopK sparse autoencoder
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


def fit_logistic(z: np.ndarray, y: np.ndarray, l2: float = 1e-2, iters: int = 500, lr: float = 0.5) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by full-batch gradient descent, classes weighted equally: (weights, bias)."""
    w, b = np.zeros(z.shape[1]), 0.0
    weight = np.where(y == 1, 0.5 / max(y.sum(), 1), 0.5 / max((1 - y).sum(), 1))
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(z @ w + b)))
        g = weight * (p - y)
        w -= lr * (z.T @ g + l2 * w)
        b -= lr * g.sum()
    return w, float(b)


class SAETransitionAgent(BaseAgent):
    """TopK SAEs per layer + ridge transitions between consecutive layers' codes; z-scored residuals.

    When the training data holds labelled OOD inputs (label -1; LayerOOD-v0's ``n_labelled_ood``)
    a logistic regression on the z-scored features (held-out in-domain against those) scores
    instead of the mean z-score.

    Args:
        d_latent: SAE latents per layer.
        k: active latents per input.
        ridge: L2 penalty of the transition regressions.
        trained: False leaves the SAEs at their random initialisation (the random-feature sanity check).
        first_layer: the first hidden state used (1 skips the embedding output).
    """

    name = "ood-sae-transitions"
    min_layers = 2  # layers from first_layer on (one transition at least)

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
        return np.c_[errs, np.stack(resid, 1)] if resid else errs

    # ------------------------------------------------------------------ training
    def train(self, env, budget) -> None:
        import torch

        from icmlgym.nn import Budget, seed_everything
        from icmlgym.zoo.sae import TopKSAE, train_sae

        seed_everything(self._seed, "cpu")
        x, y = env.unwrapped.training_data()
        x, y = np.asarray(x, np.float64), np.asarray(y)
        ood_x, x = x[y < 0], x[y >= 0]  # labelled OOD inputs (label -1), when the env gives some
        if x.ndim != 3 or x.shape[1] < self.first_layer + self.min_layers:
            raise ValueError(f"the SAE-transition detector needs (n, layers >= {self.first_layer + self.min_layers}, d) states, got {x.shape}")
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
        self.light = None
        if len(ood_x):  # a light learner: held-out in-domain features against the labelled OOD ones
            z = np.r_[(cal - self.mu) / self.sd, (self.features(ood_x) - self.mu) / self.sd]
            self.light = fit_logistic(z, np.r_[np.zeros(len(cal)), np.ones(len(ood_x))])

    def score(self, x: np.ndarray) -> np.ndarray:
        """Real-valued OOD scores: the mean z-score of the features (one-class), or the light learner's logit."""
        z = (self.features(x) - self.mu) / self.sd
        if self.light is not None:
            w, b = self.light
            return z @ w + b
        return z.mean(1)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if self.saes is None:
            raise RuntimeError(f"{type(self).__name__} scores inputs after train(env, budget); it was not trained")
        return squash(self.score(obs["inputs"]))




# ============================================================================ HallucinationLabeling-v0


def unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def unpack(obs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(embeddings ``(R, d)`` L2-normalised, prompt ids ``(R,)``, revealed labels ``(R,)`` (-1 unknown), annotations left)."""
    prompt = np.asarray(obs["prompt"], np.int64)
    emb = np.asarray(obs["embeddings"], np.float64).reshape(len(prompt), -1)
    return unit_rows(emb), prompt, np.asarray(obs["labels"], np.float64), int(obs["budget_left"])


def prompt_geometry(emb: np.ndarray, prompt: np.ndarray) -> np.ndarray:
    """Per response, how it sits among the other responses to its prompt (no labels needed).

    Columns: cosine similarity to the prompt's centroid, mean and max similarity to the other
    responses, the share of near-duplicates (similarity > 0.95), the mean similarity z-scored
    within the prompt, and the prompt's dispersion (1 - its mean pairwise similarity).
    """
    feats = np.zeros((len(emb), 6))
    for p in np.unique(prompt):
        idx = np.flatnonzero(prompt == p)
        e = emb[idx]
        sim = e @ e.T
        m = len(idx)
        off = sim - np.eye(m) * 2.0  # push the diagonal out of max / duplicate counts
        mean_sim = (sim.sum(1) - np.diag(sim)) / max(m - 1, 1)
        centre = unit_rows(e.mean(0, keepdims=True))[0]
        feats[idx, 0] = e @ centre
        feats[idx, 1] = mean_sim
        feats[idx, 2] = off.max(1) if m > 1 else 1.0
        feats[idx, 3] = (off > 0.95).sum(1) / max(m - 1, 1)
        feats[idx, 4] = (mean_sim - mean_sim.mean()) / (mean_sim.std() + 1e-6)
        feats[idx, 5] = 1.0 - mean_sim.mean()
    return feats


def self_consistency(emb: np.ndarray, prompt: np.ndarray) -> np.ndarray:
    """1 - the mean cosine similarity of each response to the other responses of its prompt (higher = less consistent)."""
    return 1.0 - prompt_geometry(emb, prompt)[:, 1]


def two_means_threshold(s: np.ndarray) -> float:
    """The threshold that splits scores into two groups with the least within-group variance (Otsu, 1-D)."""
    v = np.sort(np.asarray(s, np.float64))
    u = np.unique(v)
    if len(u) < 2:
        return float(v[-1]) + 1.0  # one group: nothing flagged
    best, thr = np.inf, (u[0] + u[1]) / 2
    for c in (u[:-1] + u[1:]) / 2:  # midpoints between distinct values: no score sits on the threshold
        lo, hi = v[v <= c], v[v > c]
        cost = lo.var() * len(lo) + hi.var() * len(hi)
        if cost < best:
            best, thr = cost, c
    return float(thr)


def scores_around(s: np.ndarray, threshold: float) -> np.ndarray:
    """Map raw scores into [0, 1] so that ``threshold`` lands on 0.5 (a monotone map: AUROC is unchanged)."""
    s = np.asarray(s, np.float64)
    scale = s.std() + 1e-9
    return squash(8.0 * (s - threshold) / scale)


def fisher_direction(x: np.ndarray, y: np.ndarray, shrink: float = 0.1) -> np.ndarray | None:
    """Fisher's discriminant direction from labelled rows (shrunk within-class scatter); None without two of each class."""
    if (y == 0).sum() < 2 or (y == 1).sum() < 2:
        return None
    mu0, mu1 = x[y == 0].mean(0), x[y == 1].mean(0)
    sw = np.cov(x[y == 0].T, bias=True) * (y == 0).sum() + np.cov(x[y == 1].T, bias=True) * (y == 1).sum()
    sw = sw / len(y)
    reg = shrink * np.trace(sw) / len(sw) + 1e-6
    w = np.linalg.solve(sw + reg * np.eye(len(sw)), mu1 - mu0)
    return w / (np.linalg.norm(w) + 1e-12)


def label_spreading(z: np.ndarray, labelled: np.ndarray, y: np.ndarray, k: int = 10, alpha: float = 0.9) -> np.ndarray:
    """Label spreading (Zhou et al. 2004) over a symmetric kNN graph of ``z``; returns P(class 1) per row.

    Class-mass normalisation (Zhu et al. 2003) scales each class's spread mass to the labelled class shares.
    """
    n = len(z)
    k = min(k, n - 1)
    d2 = ((z[:, None, :] - z[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    nn = np.argsort(d2, 1)[:, :k]
    rows = np.repeat(np.arange(n), k)
    dist = d2[rows, nn.ravel()]
    sigma2 = np.median(dist) + 1e-12
    w = np.zeros((n, n))
    w[rows, nn.ravel()] = np.exp(-dist / sigma2)
    w = np.maximum(w, w.T)
    dinv = 1.0 / np.sqrt(w.sum(1) + 1e-12)
    s = w * dinv[:, None] * dinv[None, :]
    target = np.zeros((n, 2))
    target[labelled, y.astype(int)] = 1.0
    f = np.linalg.solve(np.eye(n) - alpha * s, target)
    share = np.array([(y == 0).mean(), (y == 1).mean()])
    f = f / (f.sum(0, keepdims=True) + 1e-12) * share
    return f[:, 1] / (f.sum(1) + 1e-12)


class LabellingAgent(BaseAgent):
    """Base of HallucinationLabeling-v0's agents: query with :meth:`choose` while annotations are left, then predict.

    Subclasses implement :meth:`predict` (scores in [0, 1] from the observation) and may
    override :meth:`choose` (default: responses in a seeded random order, so that two agents
    run with the same seed get the same labels).

    Args:
        max_labels: annotations to use at most (None: the whole budget; 0: none).
    """

    def __init__(self, max_labels: int | None = None) -> None:
        super().__init__()
        if max_labels is not None and max_labels < 0:
            raise ValueError(f"max_labels must be >= 0 or None, got {max_labels}")
        self.max_labels = max_labels
        self._order: np.ndarray | None = None
        self._asked = 0

    def reset(self, seed, spec) -> None:
        super().reset(seed, spec)
        self._order = None
        self._asked = 0

    def choose(self, emb: np.ndarray, prompt: np.ndarray, labels: np.ndarray) -> int | None:
        if self._order is None:
            self._order = self.np_random.permutation(len(labels))
        for i in self._order:
            if labels[i] < 0:
                return int(i)
        return None

    def predict(self, emb: np.ndarray, prompt: np.ndarray, labels: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        from icmlgym.envs.insides.hallucination import predict_action, query_action

        emb, prompt, labels, left = unpack(obs)
        limit = left if self.max_labels is None else min(left, self.max_labels - self._asked)
        if limit > 0:
            i = self.choose(emb, prompt, labels)
            if i is not None:
                self._asked += 1
                return query_action(i, len(labels))
        return predict_action(np.clip(self.predict(emb, prompt, labels), 0.0, 1.0), len(labels))


class APORIALPAgent(LabellingAgent):
    """APORIA-LP: Fisher projection on the labelled few, prompt-wise geometry, a kNN graph and label spreading.

    Features per response: its projection on Fisher's direction fitted to the labelled
    responses' embeddings, and :func:`prompt_geometry`; standardised over the episode. Labels
    spread over the features' kNN graph (:func:`label_spreading`). With fewer than two labels of
    a class the Fisher projection is dropped; with no label of a class the agent falls back to
    self-consistency split in two by :func:`two_means_threshold`.

    Args:
        k: neighbours in the graph. alpha: spreading strength. shrink: Fisher's shrinkage.
        max_labels: see :class:`LabellingAgent`.
    """

    name = "aporia-lp"

    def __init__(self, k: int = 10, alpha: float = 0.9, shrink: float = 0.1, max_labels: int | None = None) -> None:
        super().__init__(max_labels)
        if k < 1 or not 0 < alpha < 1 or shrink < 0:
            raise ValueError(f"need k >= 1, 0 < alpha < 1, shrink >= 0; got {k}, {alpha}, {shrink}")
        self.k, self.alpha, self.shrink = int(k), float(alpha), float(shrink)

    def features(self, emb: np.ndarray, prompt: np.ndarray, labels: np.ndarray) -> np.ndarray:
        known = labels >= 0
        geo = prompt_geometry(emb, prompt)
        w = fisher_direction(emb[known], labels[known], self.shrink)
        z = geo if w is None else np.c_[emb @ w, geo]
        return (z - z.mean(0)) / (z.std(0) + 1e-9)

    def predict(self, emb: np.ndarray, prompt: np.ndarray, labels: np.ndarray) -> np.ndarray:
        known = np.flatnonzero(labels >= 0)
        y = labels[known]
        if len(known) == 0 or y.min() == y.max():
            s = self_consistency(emb, prompt)
            return scores_around(s, two_means_threshold(s))
        return label_spreading(self.features(emb, prompt, labels), known, y, self.k, self.alpha)


__all__ = ["APORIALPAgent", "LabellingAgent", "fit_logistic", "LayerStandardiser", "SAETransitionAgent", "fisher_direction", "label_spreading",
           "prompt_geometry", "scores_around", "self_consistency", "squash", "two_means_threshold", "unit_rows", "unpack"]
