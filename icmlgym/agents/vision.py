"""Olaf-World's Seq-Delta-REPA on LatentActionTransfer-v0, and the latent action model core its baselines share.

A latent action model (LAM) learns from unlabelled clips: an inverse dynamics model (IDM)
reads a transition ``(o_t, o_t+1)`` and emits a latent action ``z_t``; a forward dynamics
model (FDM) must predict ``o_t+1`` from ``o_t`` and ``z_t``. Frames enter at the sprite
world's cell resolution (9 x 9 x 3, each cell's mean colour); the IDM is two 3 x 3
convolutions with global pooling (translation-invariant), the FDM three convolutions over
the cells with the latent tiled as extra channels.

- **Seq-Delta-REPA** (the paper's method, :class:`SeqDeltaREPAAgent`): continuous latents plus
  an alignment loss: for every window ``s < e`` of a clip, a linear head of the *integrated*
  latent ``sum_{t=s}^{e-1} z_t`` must match the difference ``f(o_e) - f(o_s)`` of a frozen
  self-supervised encoder's features (the zoo's ``sprite-ssl``; differences standardised by
  their RMS over the clips, squared error). The head has no bias, so the integrated latent's
  image is the sum of the per-step images: one coordinate system along the sequence.
- **LAPO** (baseline): the same IDM/FDM with a vector-quantised latent (codebook, straight-through).
- **no alignment** (baseline): Seq-Delta-REPA's model without the alignment loss.

Each episode of the env hands over labelled transitions (``source_labelled`` from the
training contexts and ``n_labels`` of the unseen eval context); a LAM agent fits a
multinomial logistic-regression probe from its (standardised) latents to the real actions on
all of them, and answers each query or demonstration step with the probe's action for the
latent of the shown transition.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent

N_ACTIONS = 5


# ----------------------------------------------------------------------------- inputs
def cells(frames: np.ndarray) -> np.ndarray:
    """uint8 frames ``(..., 36, 36, 3)`` -> float32 ``(..., 3, 9, 9)``: the mean colour of each 4 x 4 cell, in [0, 1]."""
    f = np.asarray(frames, dtype=np.float32)
    lead = f.shape[:-3]
    f = f.reshape(*lead, 9, 4, 9, 4, 3).mean(axis=(-4, -2)) / 255.0
    return np.moveaxis(f, -1, -3)


def transition_features(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """``(n, 9, 9, 9)``: the two frames' cells and their difference as channels (the IDM's and BC's input)."""
    b, a = cells(before), cells(after)
    return np.concatenate([b, a, a - b], axis=-3)


# ----------------------------------------------------------------------------- the model
def _torch():
    import torch

    return torch


def transition_encoder(width: int, out: int):
    """A translation-invariant transition reader: two 3 x 3 convolutions over the cells, global max and mean pooling, a linear map."""
    torch = _torch()
    nn = torch.nn

    class TransitionEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(9, width, 3, padding=1), nn.ReLU(), nn.Conv2d(width, width, 3, padding=1), nn.ReLU())
            self.out = nn.Linear(2 * width, out)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.conv(x)
            return self.out(torch.cat([h.amax(dim=(2, 3)), h.mean(dim=(2, 3))], dim=1))

    return TransitionEncoder()


def build_lam(latent_dim: int, hidden: int, quantise: bool, codes: int, align_dim: int | None):
    """The IDM, FDM, optional codebook and optional alignment head as one ``nn.Module``."""
    torch = _torch()
    nn = torch.nn

    class LatentActionModel(nn.Module):
        """IDM + FDM (+ a VQ codebook for LAPO, + a linear alignment head for Seq-Delta-REPA)."""

        def __init__(self) -> None:
            super().__init__()
            self.idm = transition_encoder(hidden, latent_dim)
            self.fdm = nn.Sequential(nn.Conv2d(3 + latent_dim, hidden, 3, padding=1), nn.ReLU(), nn.Conv2d(hidden, hidden, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(hidden, 3, 3, padding=1))
            self.codebook = nn.Parameter(torch.randn(codes, latent_dim) * 0.5) if quantise else None
            self.head = nn.Linear(latent_dim, align_dim, bias=False) if align_dim else None
            self.register_buffer("initialised", torch.zeros((), dtype=torch.bool))
            self.gen = torch.Generator().manual_seed(0)

        def revive(self, z: torch.Tensor, used: torch.Tensor) -> int:
            """Move codes no latent of the last steps used onto random latents of this batch (LAPO-style codebook upkeep)."""
            dead = torch.nonzero(~used).flatten()
            if len(dead):
                with torch.no_grad():
                    self.codebook[dead] = z[torch.randint(0, len(z), (len(dead),), generator=self.gen)].detach()
            return len(dead)

        def latent(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """(latent used by the FDM, VQ loss) for transition features ``x``."""
            z = self.idm(x)
            if self.codebook is None:
                return z, z.new_zeros(())
            if self.training and not bool(self.initialised):  # codebook from the first batch's latents (no dead codes at the start)
                with torch.no_grad():
                    self.codebook.copy_(z[torch.randperm(len(z), generator=self.gen)[: len(self.codebook)]].detach())
                    self.initialised.fill_(True)
            d = torch.cdist(z, self.codebook)
            q = self.codebook[d.argmin(dim=1)]
            vq = ((q - z.detach()) ** 2).mean() + 0.25 * ((z - q.detach()) ** 2).mean()
            return z + (q - z).detach(), vq

        def predict(self, before_cells: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
            tiled = z[:, :, None, None].expand(-1, -1, *before_cells.shape[-2:])
            return before_cells + self.fdm(torch.cat([before_cells, tiled], dim=1))

    return LatentActionModel()


def train_lam(
    clips: np.ndarray,
    *,
    seed: int,
    steps: int,
    batch_clips: int = 16,
    latent_dim: int = 8,
    hidden: int = 16,
    lr: float = 2e-3,
    quantise: bool = False,
    codes: int = 16,
    features: np.ndarray | None = None,
    align_weight: float = 1.0,
) -> tuple[Any, dict[str, float]]:
    """Train a LAM on unlabelled ``clips`` ``(n, L, 36, 36, 3)``; with ``features`` ``(n, L, F)`` add the Seq-Delta-REPA loss.

    Returns the model (eval mode) and training facts (final losses). Counters go to the run's meter.
    """
    torch = _torch()
    from icmlgym.nn.runtime import seed_everything

    seed_everything(seed)
    n, length = clips.shape[:2]
    c = torch.as_tensor(cells(clips))  # (n, L, 3, 9, 9)
    x = torch.cat([c[:, :-1], c[:, 1:], c[:, 1:] - c[:, :-1]], dim=2)  # (n, L-1, 9, 9, 9)
    align = features is not None and align_weight > 0
    f = None
    if align:
        f = torch.as_tensor(np.asarray(features, dtype=np.float32))
        delta = f[:, None, :, :] - f[:, :, None, :]  # (n, s, e, F): f(o_e) - f(o_s)
        scale = float(delta.pow(2).mean().sqrt()) + 1e-8
        f = f / scale
    model = build_lam(latent_dim, hidden, quantise, codes, f.shape[-1] if align else None)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(int(seed))
    model.gen.manual_seed(int(seed) + 1)
    upper = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)  # windows s < e
    bc = min(int(batch_clips), n)
    facts = {"recon": 0.0, "align": 0.0, "vq": 0.0}
    used = torch.zeros(codes, dtype=torch.bool)
    model.train()
    for step in range(int(steps)):
        idx = torch.randint(0, n, (bc,), generator=gen)
        m = bc * (length - 1)
        z, vq = model.latent(x[idx].reshape(m, 9, 9, 9))
        if quantise:
            with torch.no_grad():
                used[torch.cdist(model.idm(x[idx].reshape(m, 9, 9, 9)), model.codebook).argmin(1)] = True
            if (step + 1) % 25 == 0 and step < int(steps) * 3 // 4:
                model.revive(model.idm(x[idx].reshape(m, 9, 9, 9)), used)
                used[:] = False
        pred = model.predict(c[idx, :-1].reshape(m, 3, 9, 9), z)
        recon = ((pred - c[idx, 1:].reshape(m, 3, 9, 9)) ** 2).mean() * 100.0
        loss = recon + vq
        al = torch.zeros(())
        if align:
            zc = torch.cat([z.new_zeros(bc, 1, latent_dim), z.reshape(bc, length - 1, latent_dim).cumsum(1)], dim=1)  # (bc, L, d)
            hz = model.head(zc)  # linear without bias: head(sum z) = sum head(z)
            fb = f[idx]
            diff = (hz[:, None, :, :] - hz[:, :, None, :]) - (fb[:, None, :, :] - fb[:, :, None, :])
            al = diff.pow(2).mean(-1)[:, upper].mean()
            loss = loss + align_weight * al
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step >= int(steps) - 20:
            facts["recon"] += float(recon.detach()) / min(20, int(steps))
            facts["align"] += float(al.detach()) / min(20, int(steps))
            facts["vq"] += float(vq.detach()) / min(20, int(steps))
    _count(int(steps), int(steps) * bc * (length - 1))
    return model.eval(), facts


def _count(steps: int, examples: int) -> None:
    """Add a pre-training's counters to the run's meter (the runner adds them to the record's cost)."""
    from icmlgym.nn.runtime import current

    ctx = current()
    if ctx is not None:
        ctx.meter.add("gradient_steps", steps)
        ctx.meter.add("train_examples", examples)


# Pre-trained models of this process, keyed by everything that determines them (agent settings,
# seed, budget, the env's training contexts and clip length): runs that differ only in the
# evaluation episode (n_labels, contexts of the evaluation) reuse the same pre-training. Its
# counters are still charged to every run that uses it.
_TRAINED: OrderedDict[tuple, tuple] = OrderedDict()
_TRAINED_MAX = 64  # each model is about 100 KB; a findings run or the adaptation benchmark holds at most 4 agents x 10 seeds


def encoder_features(frames: np.ndarray, size: str = "smoke", batch: int = 2048) -> np.ndarray:
    """The frozen ``sprite-ssl`` encoder's features of frames ``(..., 36, 36, 3)`` -> ``(..., F)``."""
    torch = _torch()
    from icmlgym.zoo.sprites import frames_to_tensor, load_encoder

    enc = load_encoder(size)
    lead = frames.shape[:-3]
    flat = frames.reshape(-1, *frames.shape[-3:])
    out = []
    with torch.no_grad():
        for i in range(0, len(flat), batch):
            out.append(enc(frames_to_tensor(flat[i:i + batch])).numpy())
    return np.concatenate(out).reshape(*lead, -1)


# ----------------------------------------------------------------------------- the probe
class LinearProbe:
    """Multinomial logistic regression on standardised inputs (L2 ``l2``), fitted by full-batch gradient descent."""

    def __init__(self, l2: float = 1e-2, iters: int = 300, lr: float = 0.5) -> None:
        self.l2, self.iters, self.lr = float(l2), int(iters), float(lr)

    def fit(self, x: np.ndarray, y: np.ndarray) -> LinearProbe:
        x = np.asarray(x, np.float64)
        y = np.asarray(y, np.int64)
        if len(x) == 0:
            raise ValueError("the probe needs at least one labelled transition (source_labels + n_labels is 0)")
        self.mu, self.sd = x.mean(0), x.std(0) + 1e-6
        z = np.c_[(x - self.mu) / self.sd, np.ones(len(x))]
        onehot = np.eye(N_ACTIONS)[y]
        w = np.zeros((z.shape[1], N_ACTIONS))
        for _ in range(self.iters):
            logits = z @ w
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            grad = z.T @ (p - onehot) / len(z) + self.l2 * np.r_[w[:-1], np.zeros((1, N_ACTIONS))]
            w -= self.lr * grad
        self.w = w
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        z = np.c_[(np.asarray(x, np.float64) - self.mu) / self.sd, np.ones(len(x))]
        return np.argmax(z @ self.w, axis=1)


def labelled_set(info: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(before, after, action) of every labelled transition the reset info hands over (training contexts, then the eval context)."""
    parts = [info[k] for k in ("source_labelled", "labelled") if k in info and len(info[k]["action"])]
    if not parts:
        raise ValueError("the episode hands over no labelled transitions (source_labels = n_labels = 0): nothing maps latents to actions")
    return tuple(np.concatenate([p[k] for p in parts]) for k in ("before", "after", "action"))  # type: ignore[return-value]


# ----------------------------------------------------------------------------- agents
class LatentActionAgent(BaseAgent):
    """A LAM pre-trained on the env's unlabelled clips, decoded to real actions by a linear probe per episode.

    ``train(env, budget)`` asks the env for ``budget`` frames of clips
    (``env.unwrapped.clips``), trains for ``epochs`` passes over them (gradient steps =
    ``epochs * clips / batch_clips``, at least ``min_steps``), and keeps the model. At each
    episode's first step it fits the probe on the labelled transitions of the reset info.
    """

    quantise = False
    align = False

    def __init__(self, latent_dim: int = 8, hidden: int = 16, epochs: float = 3.0, min_steps: int = 100, batch_clips: int = 8,
                 lr: float = 2e-3, codes: int = 16, align_weight: float = 1.0, encoder_size: str = "smoke", probe_l2: float = 1e-2) -> None:
        super().__init__()
        self.latent_dim, self.hidden, self.epochs, self.min_steps = int(latent_dim), int(hidden), float(epochs), int(min_steps)
        self.batch_clips, self.lr, self.codes, self.align_weight = int(batch_clips), float(lr), int(codes), float(align_weight)
        self.encoder_size, self.probe_l2 = encoder_size, float(probe_l2)
        self.model = None
        self.facts: dict[str, float] = {}
        self._seed: int | None = None
        self._probe: LinearProbe | None = None

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        first = self.spec is None
        super().reset(seed, spec)
        if first:
            self._seed = 0 if seed is None else int(seed)
        self._probe = None

    def train(self, env: Any, budget: int) -> None:
        frames = int(budget)
        if frames <= 0:
            raise ValueError(f"{type(self).__name__} pre-trains on unlabelled clips: it needs a training budget in frames > 0, got {budget!r}")
        seed = self._seed if self._seed is not None else 0
        base = env.unwrapped
        key = (type(self).__name__, self.quantise, self.align, self.latent_dim, self.hidden, self.epochs, self.min_steps,
               self.batch_clips, self.lr, self.codes, self.align_weight, self.encoder_size, seed, frames,
               tuple(base.train_contexts), base.clip_len)
        hit = _TRAINED.get(key)
        if hit is not None:  # the same pre-training (same clips, seed and settings) already ran in this process
            self.model, self.facts, steps, examples = hit
            _TRAINED.move_to_end(key)
            _count(steps, examples)
            return
        clips = base.clips(frames, seed=seed)
        steps = max(self.min_steps, int(round(self.epochs * len(clips) / self.batch_clips)))
        feats = encoder_features(clips, self.encoder_size) if self.align else None
        self.model, self.facts = train_lam(
            clips, seed=seed, steps=steps, batch_clips=self.batch_clips, latent_dim=self.latent_dim, hidden=self.hidden,
            lr=self.lr, quantise=self.quantise, codes=self.codes, features=feats, align_weight=self.align_weight,
        )
        _TRAINED[key] = (self.model, self.facts, steps, steps * min(self.batch_clips, len(clips)) * (clips.shape[1] - 1))
        while len(_TRAINED) > _TRAINED_MAX:
            _TRAINED.popitem(last=False)

    def latents(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        """The latent actions (quantised for LAPO) of transitions ``before -> after``."""
        torch = _torch()
        if self.model is None:
            raise RuntimeError(f"{type(self).__name__}: train(env, budget) has not run (it pre-trains on the env's clips)")
        with torch.no_grad():
            z, _ = self.model.latent(torch.as_tensor(transition_features(before, after)))
        return z.numpy()

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> int:
        if self._probe is None or "labelled" in info:
            b, a, y = labelled_set(info)
            self._probe = LinearProbe(self.probe_l2).fit(self.latents(b, a), y)
        z = self.latents(np.asarray(obs["before"])[None], np.asarray(obs["after"])[None])
        return int(self._probe.predict(z)[0])


class SeqDeltaREPAAgent(LatentActionAgent):
    """Olaf-World's Seq-Delta-REPA: a continuous-latent LAM whose integrated latents align with a frozen encoder's feature differences."""

    align = True


__all__ = ["LatentActionAgent", "LinearProbe", "SeqDeltaREPAAgent", "build_lam", "cells", "encoder_features", "labelled_set",
           "train_lam", "transition_features"]


# ----------------------------------------------------------------------------- LaViD (LanguageToVisualKD-v0)
# LanguageToVisualKD's soft-target sources in action order: v0's eight, then v1's vision-language teacher ("vlm")
KD_TEACHERS: tuple[str, ...] = ("none", "language", "shuffled", "oracle", "smoothing", "visual-kd", "dkd", "mlkd", "vlm")
KD_WEIGHTS: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0)
KD_TEMPERATURES: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)


class LaViDAgent(BaseAgent):
    """LaViD: every epoch, distil the language teacher's conceptual signatures into the student's auxiliary head.

    A fixed schedule over LanguageToVisualKD-v0's action ``(teacher, weight, temperature,
    standardise)``: ``teacher`` (``language`` for LaViD; the baselines reuse this class with
    another soft-target source), ``weight`` and ``temperature`` (values of the env's grids) and
    ``standardise`` (logit standardisation, agent ``lavid-ls``).
    """

    def __init__(self, teacher: str = "language", weight: float = 1.0, temperature: float = 4.0, standardise: bool = False) -> None:
        super().__init__()
        for name, value, grid in (("teacher", teacher, KD_TEACHERS), ("weight", weight, KD_WEIGHTS), ("temperature", temperature, KD_TEMPERATURES)):
            if value not in grid:
                raise ValueError(f"{name} must be one of {grid}, got {value!r}")
        self.action = np.array([KD_TEACHERS.index(teacher), KD_WEIGHTS.index(weight), KD_TEMPERATURES.index(temperature), int(bool(standardise))],
                               dtype=np.int64)

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        return self.action.copy()


__all__ += ["KD_TEACHERS", "KD_TEMPERATURES", "KD_WEIGHTS", "LaViDAgent"]
