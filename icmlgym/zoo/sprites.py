"""The zoo's frozen self-supervised video encoder for the sprite world (``sprite-ssl``).

A small CNN with a spatial-softmax keypoint output (features = the expected row and column of
each of 16 keypoint maps, as in deep spatial autoencoders) trained once, without labels, on frames of the sprite world's training contexts
(:mod:`icmlgym.corpora.sprites`) with an augmentation-based objective (SimCLR's InfoNCE
between two photometric views of the same frame: channel permutation, per-channel gain and
offset, pixel noise; no crops or shifts, so where things are survives). Olaf-World's
Seq-Delta-REPA aligns latent actions with the temporal differences of this encoder's features
(:mod:`icmlgym.agents.vision`). Importing this module registers the member; it does not
import torch until the model is built.

Held-out quality, on frames of the unseen contexts: ``pair_top1`` (an augmented view finds its
own frame among 256 by cosine similarity) and ``position_r2`` (a ridge regression fitted on
training-context features predicts the sprite's cell in unseen contexts; R^2).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.zoo.registry import Member, get, register

NAME = "sprite-ssl"


def frames_to_tensor(frames: np.ndarray):
    """uint8 frames ``(..., 36, 36, 3)`` -> float tensor ``(N, 3, 18, 18)`` in [0, 1] (2x2 average pooling)."""
    import torch

    x = torch.as_tensor(np.asarray(frames)).reshape(-1, *np.asarray(frames).shape[-3:])
    x = x.permute(0, 3, 1, 2).float().div_(255.0)
    return torch.nn.functional.avg_pool2d(x, 2)


def _make(cfg: dict[str, Any]):
    import torch
    import torch.nn as nn

    w, k = int(cfg["width"]), int(cfg["keypoints"])

    class KeypointEncoder(nn.Module):
        """Three 3 x 3 convolutions to ``k`` maps, a spatial softmax per map, its expected (row, col): ``2 k`` features."""

        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(3, w, 3, padding=1), nn.ReLU(), nn.Conv2d(w, w, 3, padding=1), nn.ReLU(), nn.Conv2d(w, k, 3, padding=1))
            self.log_temperature = nn.Parameter(torch.zeros(()))

        def forward(self, x: "torch.Tensor") -> "torch.Tensor":
            h = self.conv(x)
            n, c, hh, ww = h.shape
            p = torch.softmax(h.reshape(n, c, hh * ww) / self.log_temperature.exp(), dim=2).reshape(n, c, hh, ww)
            rows = torch.linspace(-1, 1, hh, device=x.device)
            cols = torch.linspace(-1, 1, ww, device=x.device)
            return torch.cat([(p.sum(3) * rows).sum(2), (p.sum(2) * cols).sum(2)], dim=1)

    return KeypointEncoder()


def augment(x, gen):
    """Two photometric views' worth of randomness applied to ``x`` (N, 3, H, W): positions are untouched."""
    import torch

    n = x.shape[0]
    perm = torch.argsort(torch.rand(n, 3, generator=gen), dim=1)
    x = torch.gather(x, 1, perm[:, :, None, None].expand_as(x))
    gain = 0.6 + 0.8 * torch.rand(n, 3, 1, 1, generator=gen)
    offset = 0.4 * torch.rand(n, 3, 1, 1, generator=gen) - 0.2
    return x * gain + offset + 0.03 * torch.randn(x.shape, generator=gen)


def _frames(contexts: tuple[int, ...], n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    from icmlgym.corpora import sprites

    per = -(-n // len(contexts))
    frames, cells = [], []
    for c in contexts:
        a, d = sprites.random_states(per, rng)
        frames.append(sprites.render(sprites.context(c), a, d))
        cells.append(a)
    return np.concatenate(frames)[:n], np.concatenate(cells)[:n]


def _train(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    from icmlgym.corpora import sprites

    rng = np.random.default_rng(seed)
    frames, _ = _frames(sprites.TRAIN_CONTEXTS, int(cfg["frames"]), rng)
    x_all = frames_to_tensor(frames)
    dim = 2 * int(cfg["keypoints"])
    head = torch.nn.Sequential(torch.nn.Linear(dim, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64))
    opt = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=float(cfg["lr"]))
    gen = torch.Generator().manual_seed(seed)
    bs, tau = int(cfg["batch"]), float(cfg["temperature"])
    losses = []
    model.train()
    for _ in range(int(cfg["steps"])):
        idx = torch.randint(0, len(x_all), (bs,), generator=gen)
        x = x_all[idx]
        z = F.normalize(head(model(torch.cat([augment(x, gen), augment(x, gen)]))), dim=1)
        sim = z @ z.T / tau
        sim.fill_diagonal_(-1e9)
        target = torch.cat([torch.arange(bs, 2 * bs), torch.arange(bs)])
        loss = F.cross_entropy(sim, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        meter.add("gradient_steps")
        meter.add("train_examples", 2 * bs)
    return {"final_loss": float(np.mean(losses[-20:])), "frames": int(cfg["frames"]), "contexts": list(sprites.TRAIN_CONTEXTS)}


def _evaluate(model, cfg: dict[str, Any]) -> dict[str, float]:
    import torch
    import torch.nn.functional as F

    from icmlgym.corpora import sprites

    rng = np.random.default_rng(12345)
    test, test_cells = _frames(sprites.UNSEEN_CONTEXTS, 256, rng)
    train, train_cells = _frames(sprites.TRAIN_CONTEXTS, 1024, rng)
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        x = frames_to_tensor(test)
        a = F.normalize(model(augment(x, gen)), dim=1)
        b = F.normalize(model(augment(x, gen)), dim=1)
        top1 = float((torch.argmax(a @ b.T, dim=1) == torch.arange(len(x))).float().mean())
        f_train = model(frames_to_tensor(train)).double().numpy()
        f_test = model(x).double().numpy()
    mu, sd = f_train.mean(0), f_train.std(0) + 1e-6
    xt, xs = (f_train - mu) / sd, (f_test - mu) / sd
    xt1, xs1 = np.c_[xt, np.ones(len(xt))], np.c_[xs, np.ones(len(xs))]
    w = np.linalg.solve(xt1.T @ xt1 + 1.0 * np.eye(xt1.shape[1]), xt1.T @ train_cells)
    pred = xs1 @ w
    r2 = 1 - ((pred - test_cells) ** 2).sum(0) / ((test_cells - test_cells.mean(0)) ** 2).sum(0)
    return {"pair_top1": round(top1, 4), "position_r2": round(float(r2.mean()), 4)}


def _register() -> Member:
    try:
        return get(NAME)
    except Exception:  # noqa: BLE001 - not registered yet
        pass
    return register(Member(
        name=NAME,
        kind="video-encoder",
        description="frozen self-supervised CNN (SimCLR, photometric views) over sprite-world frames",
        data="sprite world, frames of training contexts 0-5 (icmlgym.corpora.sprites)",
        configs={
            "smoke": {"width": 16, "keypoints": 16, "frames": 6000, "steps": 300, "batch": 128, "lr": 2e-3, "temperature": 0.2},
            "standard": {"width": 16, "keypoints": 16, "frames": 30000, "steps": 2000, "batch": 256, "lr": 1e-3, "temperature": 0.2},
        },
        make=_make,
        train=_train,
        evaluate=_evaluate,
        code=("icmlgym.zoo.sprites", "icmlgym.corpora.sprites"),
        quality="pair_top1",
    ))


MEMBER = _register()


def load_encoder(size: str = "smoke", device: str = "cpu"):
    """The trained, frozen encoder (from the zoo's cache; trained on first use)."""
    from icmlgym.zoo.registry import load

    zm = load(NAME, size, device=device)
    for p in zm.model.parameters():
        p.requires_grad_(False)
    return zm.model.eval()


__all__ = ["MEMBER", "NAME", "augment", "frames_to_tensor", "load_encoder"]
