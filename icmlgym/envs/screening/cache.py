"""The on-disk cache of the screening family (fingerprints, ground truth, docking scores).

Location: ``$ICMLGYM_HOME/screening`` if ``ICMLGYM_HOME`` is set, else
``~/.cache/icmlgym/screening``; every function takes an explicit directory
that overrides both. Writes go to a temporary file in the same folder and are
renamed into place (``os.replace`` is atomic on POSIX), so concurrent processes
never read a half-written file; two processes computing the same entry both
write it, and the last rename wins with identical content.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    """The screening cache folder (created if missing)."""
    if override is not None:
        path = Path(override)
    elif os.environ.get("ICMLGYM_HOME"):
        path = Path(os.environ["ICMLGYM_HOME"]) / "screening"
    else:
        path = Path.home() / ".cache" / "icmlgym" / "screening"
    path.mkdir(parents=True, exist_ok=True)
    return path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
