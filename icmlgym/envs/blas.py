"""One-thread BLAS for small linear algebra in env and agent hot paths.

OpenBLAS starts one thread per core; on a busy machine a small LAPACK call (the
SVD of a 1000 x 10 arm matrix) then waits for a second thread that is not
scheduled: 60-110 ms instead of 0.15 ms on the shared 2-core machine. The results
are the same on one thread (checked for the SVDs :mod:`icmlgym.envs.fairbandit.design`
takes). Without ``threadpoolctl`` (it ships with scikit-learn) this is a no-op.
"""

from __future__ import annotations

import contextlib
from typing import Any

_CONTROLLER: Any = None


def single_thread_blas() -> contextlib.AbstractContextManager:
    """A context in which BLAS/LAPACK run on one thread (a no-op without threadpoolctl)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
            return contextlib.nullcontext()
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


__all__ = ["single_thread_blas"]
