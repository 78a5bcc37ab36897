"""Imported by the workers' fork server before its first fork: what every run would otherwise redo.

Registers the catalog, imports the runner, fills the per-process provenance
caches (CPU model, hardware, package versions, git commit, the parsed imports
behind each run's code hash) and imports the modules named in ``$ICMLGYM_WARM_MODULES``
(comma-separated: the envs' and agents' modules of the sweep, set by
:func:`icmlgym.runner.worker.context`) and, when the code they reach imports torch
anywhere, torch and its lazily loaded compiler modules, and the modules of
:data:`LAZY_PACKAGES` (scikit-learn, stable-baselines3) that code imports inside
functions (:func:`lazy_imports`), and calls the ``warm_fork_server()`` hook of each
loaded icmlgym module that has one (:func:`run_hooks`). A module
that fails to import is skipped here; its worker imports it again and reports
the error in the run's record as usual.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Iterable

ENV_VAR = "ICMLGYM_WARM_MODULES"
MAIN_VAR = "ICMLGYM_WARM_MAIN"


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
    try:  # parse every loaded icmlgym module's imports once (each run's code hash walks them)
        from icmlgym.codehash import module_closure

        module_closure(sorted(m for m in sys.modules if m == "icmlgym" or m.startswith("icmlgym.")))
        sweep = module_closure([m for m in modules if m not in failed])
    except Exception:  # noqa: BLE001 - a cold cache is only slower
        sweep = {}
    if any(_imports_torch(path) for path in sweep.values()):  # the sweep's code imports torch (lazily, mostly)
        _warm_torch()
    for name in lazy_imports(sweep.values()):  # what its runs would each import again inside a function
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - its runs import it and report the error as usual
            pass
    run_hooks()
    if "numpy" in sys.modules:  # the BLAS controller, for the workers' limit_blas (libraries loaded by now)
        try:
            from icmlgym.nn.runtime import limit_blas

            limit_blas(1)
        except Exception:  # noqa: BLE001 - workers build their own
            pass
    return failed


HOOK = "warm_fork_server"


def run_hooks() -> list[str]:
    """Call ``warm_fork_server()`` of every loaded icmlgym module that defines one; returns the modules whose hook failed.

    A module's hook does, once in the fork server, per-process work that every run of it would
    otherwise repeat and that leaves nothing a run could observe: loading JIT-compiled code
    (Craft-v0's world generator), never drawing from a global random stream. A hook that
    fails is skipped: its runs do the work themselves, as before."""
    failed = []
    for name in sorted(m for m in list(sys.modules) if m.startswith("icmlgym.")):
        hook = getattr(sys.modules.get(name), HOOK, None)
        if callable(hook):
            try:
                hook()
            except BaseException:  # noqa: BLE001 - the fork server must survive any hook
                failed.append(name)
    return failed


# Third-party packages that the sweep's code imports inside functions (so importing the sweep's
# modules does not load them) and that are safe to import in the fork server: nothing at import
# starts a thread or fixes a per-run setting. Measured per run of the main job, forked from a warm
# server (benchmarks/mainjob_entries.py): sklearn.datasets 0.27 CPU-s (DigitsOOD-v0,
# CIMRobustTraining-v0's digits), sklearn.linear_model 0.25 s (HallucinationLabeling-v0),
# stable_baselines3 0.08 s (every sb3-ppo and craft-ppo run).
LAZY_PACKAGES: tuple[str, ...] = ("sklearn", "stable_baselines3")
_LAZY_IMPORT = re.compile(
    r"^\s*(?:from\s+((?:%s)(?:\.\w+)*)\s+import\b|import\s+((?:%s)(?:\.\w+)*)\b)" % (("|".join(LAZY_PACKAGES),) * 2),
    re.MULTILINE,
)


def lazy_imports(paths: Iterable[os.PathLike | str]) -> list[str]:
    """The modules of :data:`LAZY_PACKAGES` that these source files import, at module level or in a function.

    ``from sklearn.linear_model import LogisticRegression`` names ``sklearn.linear_model``;
    ``import stable_baselines3`` names ``stable_baselines3``. Files that cannot be read are skipped."""
    found: set[str] = set()
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            continue
        for m in _LAZY_IMPORT.finditer(text):
            found.add(m.group(1) or m.group(2))
    return sorted(found)


_TORCH_IMPORT = re.compile(r"^\s*(import torch|from torch[ .])", re.MULTILINE)


def _imports_torch(path: os.PathLike) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            return _TORCH_IMPORT.search(fh.read()) is not None
    except OSError:
        return False


def _warm_torch() -> None:
    """Import the parts of torch that every neural run imports lazily, so that no worker pays them.

    ``torch.use_deterministic_algorithms`` (called by ``icmlgym.nn.runtime.seed_everything``)
    imports ``torch._inductor``, and the first entry of ``FlopCounterMode`` (``icmlgym.nn.train``
    and ``icmlgym.nn.counters`` count every training run's FLOPs with it) imports
    ``torch._dynamo``. Measured in a fresh process: 1.9 CPU-seconds to import torch and 1.6 for
    those two, once per worker process otherwise, so once per neural run.
    """
    try:
        import torch
        import torch._inductor  # see the docstring
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False):
            torch.ones(2, 2) @ torch.ones(2, 2)
    except Exception:  # noqa: BLE001 - the workers still run, only slower
        pass


def import_main(path: str) -> bool:
    """Run the driver's main script here as ``__mp_main__``, as each worker would otherwise do before its run.

    A worker's ``multiprocessing`` start runs the parent's main script (``spawn.prepare``) unless
    its ``__main__`` already comes from that file. multiprocessing's forkserver never imports it
    itself on Python 3.11 (its ``"__main__"`` preload reads a ``main_path`` key that the
    preparation data does not have), so every worker of ``icmlgym benchmark`` imported the CLI
    (typer, rich, every command: about 90 ms of CPU) again. A script that fails here (one
    without a ``__main__`` guard that starts workers) is left to the workers, as before.
    """
    from multiprocessing import process, spawn

    process.current_process()._inheriting = True  # a script that starts processes at import fails, as in a worker
    try:
        spawn.import_main_path(path)
        return True
    except BaseException:  # noqa: BLE001 - the fork server must survive any main script
        return False
    finally:
        del process.current_process()._inheriting


try:
    FAILED = warm_up([m for m in os.environ.get(ENV_VAR, "").split(",") if m])
except BaseException:  # noqa: BLE001 - the workers still run cold
    FAILED = ["*"]
MAIN_IMPORTED = bool(os.environ.get(MAIN_VAR)) and import_main(os.environ[MAIN_VAR])

# Workers are forked from this process: move everything imported so far out of the
# garbage collector's reach, so that a worker's collections do not touch (and copy)
# the pages of these objects.
import gc  # noqa: E402

gc.collect()
gc.freeze()
