"""The on-disk cache of the screening family (fingerprints, ground truth, docking scores).

The family's namespace of the shared cache (:mod:`icmlgym.cache`):
``$ICMLGYM_HOME/screening`` if ``ICMLGYM_HOME`` is set, else
``~/.cache/icmlgym/screening``; every function takes an explicit directory
that overrides both. Writes follow the shared cache's rule (a uniquely named
temporary file renamed into place), so concurrent processes never read a
half-written file; two processes computing the same entry both write it, and
the last rename wins with identical content.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from icmlgym.cache import Cache, atomic_write_bytes

__all__ = ["atomic_write_bytes", "cache_dir", "load_arrays", "save_arrays"]


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    """The screening cache folder (created if missing)."""
    path = Cache("screening", override).dir
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_arrays(name: str, arrays: dict[str, np.ndarray], directory: str | os.PathLike | None = None) -> Path:
    """Save arrays as ``<cache>/<name>`` (npz) atomically."""
    import io

    path = cache_dir(directory) / name
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())
    return path


def load_arrays(name: str, directory: str | os.PathLike | None = None) -> dict[str, np.ndarray] | None:
    """The arrays saved under ``name``, or None when absent or unreadable (a corrupt entry is recomputed)."""
    path = cache_dir(directory) / name
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError):
        return None
