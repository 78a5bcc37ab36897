"""The torch runtime every neural family shares: seeding, devices, a budgeted training loop, cost counters.

Importing ``icmlgym.nn`` does not import torch: :mod:`icmlgym.nn.runtime` and
:mod:`icmlgym.nn.counters` are plain Python (the runner uses them for every run);
the torch parts load on first use.

- :func:`seed_everything`, :func:`resolve_device`, :func:`determinism`,
  :func:`run_context` / :func:`current` (the device and thread policy of the run
  in progress): :mod:`icmlgym.nn.runtime`.
- :class:`CostMeter`, :data:`STANDARD_COUNTERS`, :func:`count_flops`:
  :mod:`icmlgym.nn.counters`.
- :class:`Budget`, :func:`train_loop`: :mod:`icmlgym.nn.train` (torch).
- a rate RNN with pluggable weight constraints: :mod:`icmlgym.nn.recurrent` (torch).

The determinism policy is in :mod:`icmlgym.nn.runtime` and docs/substrate.md.
"""

from __future__ import annotations

from typing import Any

from icmlgym.nn.counters import STANDARD_COUNTERS, CostMeter, count_flops
from icmlgym.nn.runtime import RunContext, current, determinism, fixed_threads, resolve_device, run_context, seed_everything, torch_threads

_LAZY = {"Budget": "icmlgym.nn.train", "TrainResult": "icmlgym.nn.train", "train_loop": "icmlgym.nn.train"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'icmlgym.nn' has no attribute {name!r}")


__all__ = [
    "STANDARD_COUNTERS", "Budget", "CostMeter", "RunContext", "TrainResult", "count_flops", "current",
    "determinism", "fixed_threads", "resolve_device", "run_context", "seed_everything", "torch_threads", "train_loop",
]
