"""Small image and signal classifiers for the zoo: an MLP, a 2-D CNN and a 1-D CNN, built as blocks.

Each model is an ``nn.Sequential`` of named blocks (``model.blocks``), so a family can
cut it at any block boundary (split inference), read each block's output (activations
for probes and SAEs) or perturb each block's weights (compute-in-memory noise).
"""

from __future__ import annotations

import torch
import torch.nn as nn


class BlockNet(nn.Module):
    """A classifier as a sequence of blocks; ``forward(x, upto=k)`` stops after block k (exclusive)."""

    def __init__(self, blocks: list[nn.Module]) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(blocks)

    def forward(self, x: torch.Tensor, upto: int | None = None, start: int = 0) -> torch.Tensor:
        for blk in self.blocks[start:upto]:
            x = blk(x)
        return x

    def activations(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The output of every block, in order (the last is the logits)."""
        out = []
        for blk in self.blocks:
            x = blk(x)
            out.append(x)
        return out


def mlp(in_shape: tuple[int, ...], classes: int, width: int = 128, depth: int = 2) -> BlockNet:
    """Flatten, then ``depth`` hidden layers of ``width`` (ReLU), then the classifier."""
    n_in = 1
    for s in in_shape:
        n_in *= int(s)
    blocks: list[nn.Module] = []
    prev = n_in
    for i in range(depth):
        blocks.append(nn.Sequential(nn.Flatten(), nn.Linear(prev, width), nn.ReLU()) if i == 0 else nn.Sequential(nn.Linear(prev, width), nn.ReLU()))
        prev = width
    blocks.append(nn.Sequential(nn.Flatten(), nn.Linear(prev, classes)) if depth == 0 else nn.Linear(prev, classes))
    return BlockNet(blocks)


def cnn2d(in_channels: int, classes: int, width: int = 16, depth: int = 2, pool_every: int = 1) -> BlockNet:
    """``depth`` blocks of 3x3 conv + BatchNorm-free ReLU (+ 2x2 max-pool every ``pool_every``), global pooling, classifier."""
    blocks: list[nn.Module] = []
    prev = in_channels
    for i in range(depth):
        layers: list[nn.Module] = [nn.Conv2d(prev, width, 3, padding=1), nn.ReLU()]
        if (i + 1) % pool_every == 0:
            layers.append(nn.MaxPool2d(2, ceil_mode=True))
        blocks.append(nn.Sequential(*layers))
        prev = width
    blocks.append(nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(prev, classes)))
    return BlockNet(blocks)


def cnn1d(in_channels: int, classes: int, width: int = 32, depth: int = 3) -> BlockNet:
    """``depth`` blocks of kernel-5 1-D conv + ReLU + stride-2 pooling, global pooling, classifier."""
    blocks: list[nn.Module] = []
    prev = in_channels
    for _ in range(depth):
        blocks.append(nn.Sequential(nn.Conv1d(prev, width, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2, ceil_mode=True)))
        prev = width
    blocks.append(nn.Sequential(nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(prev, classes)))
    return BlockNet(blocks)


__all__ = ["BlockNet", "cnn1d", "cnn2d", "mlp"]
