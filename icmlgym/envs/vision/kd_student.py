"""The student, the visual teacher and the distillation losses of LanguageToVisualKD-v0 (torch).

Student: two 3 x 3 convolutions (16, 32 channels) with 2 x 2 max-pooling, a 64-unit feature
layer, a class head and an auxiliary head (one logit per answer option of the signature's
questions). Visual teacher: the same shape at twice the width, trained with cross-entropy for
``teacher_epochs`` on the same images. Losses (each added to the cross-entropy with weight ``w``
at temperature ``T``; ``standardise`` z-scores logits first, Sun et al. 2024):

- ``signature`` (LaViD): per question, KL(teacher answers || softmax(aux logits / T)) x T^2,
  the answers sharpened or softened by the same T (``p^(1/T)`` renormalised).
- ``smoothing``: KL(label-smoothed one-hot (epsilon 0.1) || softmax(class logits / T)) x T^2.
- ``kd``: Hinton's KD from the visual teacher's logits.
- ``dkd``: decoupled KD (Zhao et al. 2022), alpha 1 x target-class KD + beta 8 x non-target KD.
- ``mlkd``: multi-level logit distillation (Jin et al. 2023) without its strong augmentation:
  instance-level KD at T, 2T and 3T, plus batch-level (sample-by-sample) and class-level
  (class-by-class) correlation matrices of the probabilities matched by squared error.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Student(nn.Module):
    """A small CNN with a class head and an auxiliary signature head."""

    def __init__(self, n_classes: int, n_aux: int, width: int = 16) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.LazyLinear(64), nn.ReLU(),
        )
        self.head = nn.Linear(64, n_classes)
        self.aux = nn.Linear(64, max(1, n_aux))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.features(x)
        return self.head(h), self.aux(h)


def _std(z: torch.Tensor, on: bool) -> torch.Tensor:
    return (z - z.mean(-1, keepdim=True)) / (z.std(-1, keepdim=True) + 1e-6) if on else z


def kd(student: torch.Tensor, teacher: torch.Tensor, t: float, standardise: bool = False) -> torch.Tensor:
    s, te = _std(student, standardise), _std(teacher, standardise)
    return F.kl_div(F.log_softmax(s / t, -1), F.softmax(te / t, -1), reduction="batchmean") * t * t


def signature_loss(aux: torch.Tensor, target: torch.Tensor, sizes: tuple[int, ...], t: float, standardise: bool = False) -> torch.Tensor:
    total, start = aux.new_zeros(()), 0
    for k in sizes:
        logp = torch.log(target[:, start:start + k].clamp_min(1e-8))
        total = total + kd(aux[:, start:start + k], logp, t, standardise)
        start += k
    return total / len(sizes)


def smoothing_loss(logits: torch.Tensor, y: torch.Tensor, t: float, standardise: bool = False, eps: float = 0.1) -> torch.Tensor:
    c = logits.shape[1]
    target = torch.full_like(logits, eps / c).scatter_(1, y[:, None], 1 - eps + eps / c)
    return kd(logits, torch.log(target), t, standardise)


def dkd(student: torch.Tensor, teacher: torch.Tensor, y: torch.Tensor, t: float, standardise: bool = False,
        alpha: float = 1.0, beta: float = 8.0) -> torch.Tensor:
    s, te = _std(student, standardise) / t, _std(teacher, standardise) / t
    mask = F.one_hot(y, s.shape[1]).bool()
    ps, pt = F.softmax(s, 1), F.softmax(te, 1)
    bs = torch.stack([ps[mask], 1 - ps[mask]], 1).clamp_min(1e-8)
    bt = torch.stack([pt[mask], 1 - pt[mask]], 1).clamp_min(1e-8)
    tckd = (bt * (bt.log() - bs.log())).sum(1).mean() * t * t
    nckd = F.kl_div(F.log_softmax(s.masked_fill(mask, -1e9), 1), F.softmax(te.masked_fill(mask, -1e9), 1), reduction="batchmean") * t * t
    return alpha * tckd + beta * nckd


def mlkd(student: torch.Tensor, teacher: torch.Tensor, t: float, standardise: bool = False) -> torch.Tensor:
    inst = sum(kd(student, teacher, t * m, standardise) for m in (1, 2, 3)) / 3
    ps, pt = F.softmax(_std(student, standardise) / t, 1), F.softmax(_std(teacher, standardise) / t, 1)
    batch = ((ps @ ps.T - pt @ pt.T) ** 2).mean()
    cls = ((ps.T @ ps - pt.T @ pt) ** 2).mean()
    return inst + batch + cls


def train_teacher(x: torch.Tensor, y: torch.Tensor, n_classes: int, epochs: int, seed: int, batch: int = 64, lr: float = 3e-3) -> Student:
    """The visual teacher: a double-width student trained with cross-entropy only."""
    torch.manual_seed(seed)
    net = Student(n_classes, 1, width=32)
    net(x[:2])
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for idx in torch.randperm(len(x), generator=gen).split(batch):
            xb = flip(x[idx], gen)
            loss = F.cross_entropy(net(xb)[0], y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net.eval()


def flip(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Random horizontal flips (the only augmentation)."""
    m = torch.rand(len(x), generator=gen) < 0.5
    return torch.where(m[:, None, None, None], x.flip(-1), x)


def accuracy(net: Student, x: torch.Tensor, y: np.ndarray, groups: np.ndarray | None) -> tuple[float, float, float]:
    """(accuracy, worst-group accuracy, average-group accuracy); without groups the last two equal the accuracy."""
    with torch.no_grad():
        pred = net(x)[0].argmax(1).numpy()
    right = pred == y
    if groups is None:
        return float(right.mean()), float(right.mean()), float(right.mean())
    per = [float(right[groups == g].mean()) for g in np.unique(groups)]
    return float(right.mean()), float(min(per)), float(np.mean(per))


__all__ = ["Student", "accuracy", "dkd", "flip", "kd", "mlkd", "signature_loss", "smoothing_loss", "train_teacher"]
