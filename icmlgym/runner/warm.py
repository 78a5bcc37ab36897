"""Imported by the workers' fork server before its first fork: what every run would otherwise redo.

Registers the catalog, imports the runner, fills the per-process provenance
caches (CPU model, hardware, package versions, git commit, the parsed imports
behind each run's code hash), enters torch's FLOP counter once when torch is loaded, and imports the
modules named in ``$ICMLGYM_WARM_MODULES`` (comma-separated: the envs' and agents'
modules of the sweep, set by :func:`icmlgym.runner.worker.context`). A module
that fails to import is skipped here; its worker imports it again and reports
the error in the run's record as usual.
"""

from __future__ import annotations

import importlib
import os
import sys

ENV_VAR = "ICMLGYM_WARM_MODULES"


def warm_up(modules: list[str]) -> list[str]:
    """Import ``modules`` and fill the runner's caches; returns the modules that failed to import."""
    from icmlgym.envs import register_all
    from icmlgym.runner import batched, loop, provenance  # noqa: F401 - imported for the workers

    register_all()
    provenance.hardware()
    provenance.versions()
    provenance.git_commit()
    failed = []
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - a missing extra must not take the fork server down
            failed.append(name)
    if "torch" in sys.modules:  # a neural sweep: its first FLOP count imports torch._dynamo (seconds)
        _warm_flop_counter()
    try:  # parse every loaded icmlgym module's imports once (each run's code hash walks them)
        from icmlgym.codehash import module_closure

        module_closure(sorted(m for m in sys.modules if m == "icmlgym" or m.startswith("icmlgym.")))
    except Exception:  # noqa: BLE001 - a cold cache is only slower
        pass
    return failed


def _warm_flop_counter() -> None:
    """Enter torch's ``FlopCounterMode`` once, so that no worker pays its first entry.

    Its first entry imports ``torch._dynamo``: about 1 s on a quiet core, 6-7 s at load 18,
    once per worker process otherwise (``icmlgym.nn.train`` and ``icmlgym.nn.counters``
    count every training run's FLOPs with it).
    """
    try:
        import torch
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False):
            torch.ones(2, 2) @ torch.ones(2, 2)
    except Exception:  # noqa: BLE001 - the workers still count, only slower
        pass


try:
    FAILED = warm_up([m for m in os.environ.get(ENV_VAR, "").split(",") if m])
except BaseException:  # noqa: BLE001 - the workers still run cold
    FAILED = ["*"]

# Workers are forked from this process: move everything imported so far out of the
# garbage collector's reach, so that a worker's collections do not touch (and copy)
# the pages of these objects.
import gc  # noqa: E402

gc.collect()
gc.freeze()
