"""The classifier a split env cuts, and what the defender can measure at every block without attacking.

The classifier is a block network of constant width from the zoo, trained deterministically
and cached under its content key (:mod:`icmlgym.cache`, so an env made twice trains once):

- ``arch="mlp"`` (default): ``depth`` hidden blocks of ``width`` units and a logits block
  (:func:`icmlgym.zoo.vision.mlp`; the zoo's ``digits-mlp`` with overrides on digits and
  signals, the ``constant-width`` member on product images);
- ``arch="cnn"``: ``depth`` stride-1 convolutions of ``width`` channels without pooling
  (:func:`icmlgym.zoo.constant_width.constant_width_cnn`), so every hidden block sends
  ``width x H x W`` values, and a linear logits block.

Constant width means every hidden block sends a representation of the same dimension: a
change of inversion error between hidden blocks cannot come from the dimension (the
paper's point); only the logits block is narrower.

Per-block statistics (:func:`block_table`), measured on the defender's own training split:

- ``R_c^2``: the mean squared distance of a representation to its class mean (the
  intra-class mean squared radius);
- total variance: the mean squared distance to the global mean;
- their ratio (scale-free: 1 when classes are not separated, near 0 when they collapse);
- nearest-class-mean accuracy on the test split (how decodable the label is at the block).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from icmlgym.nn.runtime import fixed_threads

DATA_TYPES: dict[str, dict[str, Any]] = {
    "digits": {"data": "digits", "in_shape": [1, 8, 8]},
    "signals": {"data": "signals", "in_shape": [1, 40]},
    "products": {"data": "products", "in_shape": [3, 16, 16]},
}
ARCHS: tuple[str, ...] = ("mlp", "cnn")
COLUMNS: tuple[str, ...] = ("out_dim", "edge_flop_share", "rc2", "total_variance", "rc2_ratio", "ncm_accuracy")


@dataclass
class SplitModel:
    """A trained block classifier and the arrays the env needs (all splits as tensors)."""

    net: Any
    data: str
    x: dict[str, torch.Tensor]
    y: dict[str, np.ndarray]
    table: np.ndarray  # (depth + 2, len(COLUMNS)): row 0 the input, row b + 1 after block b
    block_flops: np.ndarray  # forward FLOPs per example of each block
    accuracy: float  # clean test accuracy of the whole model
    zoo_source: str
    rms: np.ndarray  # root mean square of each block's output on the training split (the noise unit)
    zoo_key: str = ""  # the zoo's content key of the classifier (part of attack cache keys)
    defended: dict = field(default_factory=dict)  # (noise levels, seed) -> defended accuracy table


def load_classifier(data: str, depth: int, width: int, steps: int, seed: int, arch: str = "mlp",
                    nopeek: float = 0.0, nopeek_block: int = 0):
    """The trained zoo classifier for ``data`` with ``depth`` hidden blocks of ``width`` (units or channels).

    With ``nopeek > 0`` it is the zoo member ``nopeek`` (:mod:`icmlgym.zoo.nopeek`): the same
    classifier trained with ``nopeek`` times the distance correlation between the input and the
    output of block ``nopeek_block`` added to its loss (NoPeek, Vepakomma et al. 2020).
    """
    from icmlgym import zoo

    if data not in DATA_TYPES:
        raise ValueError(f"data must be one of {sorted(DATA_TYPES)}, got {data!r}")
    if arch not in ARCHS:
        raise ValueError(f"arch must be one of {ARCHS}, got {arch!r}")
    overrides = {**DATA_TYPES[data], "depth": int(depth), "width": int(width), "steps": int(steps)}
    if nopeek > 0:
        from icmlgym.zoo.constant_width import CLASSES
        from icmlgym.zoo.nopeek import ensure_registered as nopeek_registered

        nopeek_registered()
        return zoo.load("nopeek", "smoke", seed=int(seed), overrides={
            **overrides, "arch": arch, "classes": CLASSES[data], "nopeek_weight": float(nopeek), "nopeek_block": int(nopeek_block)})
    if arch == "mlp" and data in ("digits", "signals"):
        return zoo.load("digits-mlp", "smoke", overrides=overrides, seed=int(seed))
    from icmlgym.zoo.constant_width import CLASSES, ensure_registered

    ensure_registered()
    return zoo.load("constant-width", "smoke", overrides={**overrides, "arch": arch, "classes": CLASSES[data]}, seed=int(seed))


@dataclass(frozen=True)
class Split:
    """One split of a data type: inputs ``x`` (float32, ``(n, *in_shape)``) and labels ``y`` (int64)."""

    x: np.ndarray
    y: np.ndarray


_SPLITS: dict[tuple[str, str], Split] = {}


def dataset(data: str, split: str) -> Split:
    """The split of ``data`` the classifier was trained and is measured on.

    The arrays are the zoo's (:func:`icmlgym.zoo.constant_width.dataset`), memoised in the process
    and cached on disk (:mod:`icmlgym.cache`, namespace ``split``) under the source of the code that
    makes them and the versions of numpy and scikit-learn: a sweep's worker process (one per run)
    reads them instead of importing scikit-learn (digits, ~0.9 CPU-s) or generating them again
    (signals ~0.7 s, product images ~0.5 s), which was most of a cached run's cost.
    """
    if data not in DATA_TYPES:
        raise ValueError(f"data must be one of {sorted(DATA_TYPES)}, got {data!r}")
    if (data, split) in _SPLITS:
        return _SPLITS[(data, split)]
    from importlib import metadata

    from icmlgym.cache import Cache, content_key, file_hash
    from icmlgym.corpora import product_images, vision
    from icmlgym.zoo import constant_width

    versions = []
    for dist in ("numpy", "scikit-learn"):
        try:
            versions.append(metadata.version(dist))
        except metadata.PackageNotFoundError:
            versions.append(None)
    key = content_key("split-data", data, split, versions,
                      file_hash(vision.__file__, product_images.__file__, constant_width.__file__))
    cache = Cache("split")
    arrays = cache.read_arrays(key)
    if arrays is None or set(arrays) != {"x", "y"}:
        d = constant_width.dataset(data, split)
        arrays = {"x": np.ascontiguousarray(d.x, dtype=np.float32), "y": np.asarray(d.y, dtype=np.int64)}
        cache.write_arrays(key, arrays)
    out = Split(arrays["x"], arrays["y"])
    _SPLITS[(data, split)] = out
    return out


def rc2_stats(z: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(R_c^2, total variance) of representations ``z`` (n, d) with labels ``y``."""
    z = z.reshape(len(z), -1).astype(np.float64)
    total = float(((z - z.mean(0)) ** 2).sum(1).mean())
    rc2 = 0.0
    for c in np.unique(y):
        zc = z[y == c]
        rc2 += float(((zc - zc.mean(0)) ** 2).sum())
    return rc2 / len(z), total


def ncm_accuracy(z_train: np.ndarray, y_train: np.ndarray, z_test: np.ndarray, y_test: np.ndarray) -> float:
    """Accuracy of the nearest class mean (means from the training representations)."""
    classes = np.unique(y_train)
    means = np.stack([z_train[y_train == c].mean(0) for c in classes])
    d = np.stack([((z_test - m) ** 2).sum(-1) for m in means], 1)  # one class at a time: wide conv features
    return float((classes[d.argmin(1)] == y_test).mean())


def block_table(net: Any, x: dict[str, torch.Tensor], y: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The per-block table (rows: input, then after each block; columns :data:`COLUMNS`) and per-block FLOPs."""
    from icmlgym.nn.counters import count_flops

    n_blocks = len(net.blocks)
    flops = np.array([count_flops(net.blocks[b], [x["test"][:1] if b == 0 else net(x["test"][:1], upto=b)],
                                  key=("split-block", b, tuple(p.shape for p in net.blocks[b].parameters())))[0]
                      for b in range(n_blocks)], dtype=np.float64)
    share = np.concatenate([[0.0], np.cumsum(flops) / flops.sum()])
    rows = []
    with torch.no_grad():
        zs_tr = [x["train"]] + net.activations(x["train"])
        zs_te = [x["test"]] + net.activations(x["test"])
    for r, (ztr, zte) in enumerate(zip(zs_tr, zs_te)):
        a = ztr.reshape(len(ztr), -1).numpy()
        b = zte.reshape(len(zte), -1).numpy()
        rc2, total = rc2_stats(a, y["train"])
        rows.append([a.shape[1], share[r], rc2, total, rc2 / max(total, 1e-12), ncm_accuracy(a, y["train"], b, y["test"])])
    return np.array(rows, dtype=np.float64), flops


_MODELS: dict[tuple, SplitModel] = {}


def split_model(data: str, depth: int, width: int, steps: int, seed: int, arch: str = "mlp",
                nopeek: float = 0.0, nopeek_block: int = 0) -> SplitModel:
    """The classifier and its table (memoised per process; the weights come from the zoo's cache).

    ``nopeek`` and ``nopeek_block``: the NoPeek penalty's weight and block (:func:`load_classifier`).
    """
    key = ((data, int(depth), int(width), int(steps), int(seed)) + (() if arch == "mlp" else (arch,))
           + (() if nopeek == 0 else ("nopeek", float(nopeek), int(nopeek_block))))
    if key in _MODELS:
        return _MODELS[key]
    with fixed_threads():  # the classifier and its table define the env: not the process's thread count
        return _build_split_model(key, data, depth, width, steps, seed, arch, nopeek, nopeek_block)


def _build_split_model(key: tuple, data: str, depth: int, width: int, steps: int, seed: int, arch: str = "mlp",
                       nopeek: float = 0.0, nopeek_block: int = 0) -> SplitModel:
    zm = load_classifier(data, depth, width, steps, seed, arch, nopeek, nopeek_block)
    net = zm.model.eval()
    for p in net.parameters():
        p.requires_grad_(False)
    x, y = {}, {}
    for split in ("train", "val", "test"):
        d = dataset(data, split)
        x[split], y[split] = torch.as_tensor(d.x), np.asarray(d.y)
    table, flops = block_table(net, x, y)
    with torch.no_grad():
        acc = float((net(x["test"]).argmax(-1).numpy() == y["test"]).mean())
        rms = np.array([float(z.pow(2).mean().sqrt()) for z in net.activations(x["train"])])
    out = SplitModel(net, data, x, y, table, flops, acc, zm.source, rms, str(zm.card.get("key", "")) or repr(key))
    if len(_MODELS) > 32:
        _MODELS.clear()
    _MODELS[key] = out
    return out


__all__ = ["ARCHS", "COLUMNS", "DATA_TYPES", "Split", "SplitModel", "block_table", "dataset", "load_classifier", "ncm_accuracy", "rc2_stats", "split_model"]
