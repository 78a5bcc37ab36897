"""A screening problem: a library, an oracle, and (for small libraries) exact ground truth.

Ground truth is the oracle's objective over the *whole* library, computed once
and cached on disk (see :mod:`icmlgym.envs.screening.cache`) under a name made
of the library's content hash and the oracle's key. It exists only for
libraries of at most ``ground_truth_max`` compounds whose oracle has a key
(similarity and lookup oracles; docking and anonymous callables do not):
larger libraries (the full tier's billions) report best-found and hits over a
threshold instead of recall.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from icmlgym.catalog import canonical_json
from icmlgym.envs.screening.cache import load_arrays, save_arrays
from icmlgym.envs.screening.library import VirtualLibrary
from icmlgym.envs.screening.oracles import Oracle, SimilarityOracle, make_oracle

_LIBRARIES: dict[str, VirtualLibrary] = {}
_TRUTH: dict[tuple[str, str], "GroundTruth"] = {}


def build_library(spec: Any) -> VirtualLibrary:
    """A library from a spec (memoised per process for string and dict specs).

    - a :class:`VirtualLibrary`: used as is;
    - ``"embedded"`` or ``{"kind": "embedded", "n_amines":, "n_acids":, "n_aminobenzoic_acids":, "reactions": [...]}``;
    - ``{"kind": "files", "building_blocks": {name: path}, "reactions": [{"name", "smarts", "components"}], "strict": bool}``;
    - ``{"kind": "table", "path": csv}``: the compounds of a ``smiles,score`` table as a flat list.
    """
    if isinstance(spec, VirtualLibrary):
        return spec
    if isinstance(spec, str):
        spec = {"kind": spec}
    if not isinstance(spec, dict):
        raise ValueError(f"library must be a VirtualLibrary, 'embedded' or a dict spec; got {spec!r}")
    key = canonical_json(spec)
    if key in _LIBRARIES:
        return _LIBRARIES[key]
    kind = spec.get("kind", "embedded")
    kw = {k: v for k, v in spec.items() if k != "kind"}
    if kind == "embedded":
        from icmlgym.envs.screening.embedded import embedded_library

        if "reactions" in kw:
            kw["reactions"] = tuple(kw["reactions"])
        lib = embedded_library(**kw)
    elif kind == "files":
        lib = VirtualLibrary.from_files(kw.pop("building_blocks"), kw.pop("reactions"), **kw)
    elif kind == "table":
        import pandas as pd

        df = pd.read_csv(kw["path"])
        if "smiles" not in df.columns:
            raise ValueError(f"table {kw['path']} has no 'smiles' column")
        lib = VirtualLibrary.from_smiles_list(df["smiles"].astype(str).tolist(), name=os.path.basename(str(kw["path"])))
    else:
        raise ValueError(f"unknown library kind {kind!r}; kinds: embedded, files, table")
    _LIBRARIES[key] = lib
    return lib


@dataclass
class GroundTruth:
    """The exact objective of every compound (-inf where there is no product) and its thresholds."""

    objective: np.ndarray
    top_k: int

    def __post_init__(self) -> None:
        valid = np.sort(self.objective[np.isfinite(self.objective)])[::-1]
        if len(valid) == 0:
            raise ValueError("no compound of the library has a finite score: ground truth is empty")
        self.n_valid = len(valid)
        self.k = min(self.top_k, self.n_valid)
        # ties at the cut-off count as hits; recall is capped at 1
        self.topk_threshold = float(valid[self.k - 1])
        self.n_top1pct = max(1, math.ceil(0.01 * self.n_valid))
        self.top1pct_threshold = float(valid[self.n_top1pct - 1])
        self.best = float(valid[0])


def ground_truth(
    library: VirtualLibrary,
    oracle: Oracle,
    top_k: int = 100,
    max_size: int = 2_000_000,
    cache_dir: str | os.PathLike | None = None,
) -> GroundTruth | None:
    """Exact ground truth for ``library`` under ``oracle``, cached on disk; None when not computable."""
    if library.size > max_size or oracle.key is None:
        return None
    okey = hashlib.sha256(oracle.key.encode()).hexdigest()[:16]
    mem = (library.key, okey)
    if mem in _TRUTH and _TRUTH[mem].top_k == top_k:
        return _TRUTH[mem]
    name = f"truth-{library.key}-{okey}.npz"
    cached = load_arrays(name, cache_dir)
    if cached is not None and cached["objective"].shape == (library.size,):
        obj = cached["objective"]
    else:
        if isinstance(oracle, SimilarityOracle):
            library.enumerate_all(max_size=max_size, cache_dir=cache_dir)
        obj = np.empty(library.size, dtype=np.float64)
        chunk = 50_000
        for s in range(0, library.size, chunk):
            idx = np.arange(s, min(s + chunk, library.size), dtype=np.int64)
            obj[s : s + len(idx)] = oracle.objective(oracle.score(library, idx))
        obj = np.where(np.isfinite(obj), obj, -np.inf)
        save_arrays(name, {"objective": obj}, cache_dir)
    gt = GroundTruth(obj, top_k)
    _TRUTH[mem] = gt
    return gt


def build_oracle(spec: Any) -> Oracle:
    """An oracle from an env kwarg (see :func:`icmlgym.envs.screening.oracles.make_oracle`)."""
    return make_oracle(spec)
