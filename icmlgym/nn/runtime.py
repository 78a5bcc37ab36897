"""Seeding, device resolution and the determinism policy (plain Python; torch is imported only when used).

Determinism policy (what a run record's ``device["determinism"]`` says):

- ``"bitwise"`` (CPU): :func:`seed_everything` seeds Python, numpy and torch,
  turns on ``torch.use_deterministic_algorithms(True)`` and fixes torch's thread
  count (the run's ``threads``: the card's ``resources.num_cpus``). Float sums
  in torch's CPU kernels depend on how work is split over threads, so the
  thread count is part of the policy: with it fixed, a run is bit-identical
  in process, in a worker process and on a Ray worker (Ray sets
  ``OMP_NUM_THREADS=1`` in its workers; we override that with the same count).
- ``"cuda-deterministic"`` (CUDA): the same seeding, plus cuDNN's deterministic
  mode, no cuDNN benchmarking, no TF32, ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` and
  ``torch.use_deterministic_algorithms(True, warn_only=True)``. Identical on the
  same GPU model, driver and library versions for every op torch has a
  deterministic kernel for; ops without one (torch warns) and different GPUs
  give results that agree within :data:`CUDA_TOLERANCE` (relative, on the
  metrics), which the record states.

"Bitwise" holds on one numerics platform (:func:`numerics_platform`: the CPU model, torch's
version and the kernel set torch dispatches, e.g. AVX2 or AVX512): torch's CPU kernels and
BLAS accumulate in a different order on another CPU, so trained weights, and a neural env's
observations, agree only to rounding error across CPU models (seen between the AMD EPYC and
the Intel Xeon machines this project ran on). A recorded rollout or weights digest is
therefore recorded per platform (``icmlgym check --record-platform``, docs/contributing.md).
- ``"unseeded"``: nothing called :func:`seed_everything` in the run (a run whose
  env and agent never touch torch is deterministic through its own seeds).
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import random
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

from pathlib import Path

from icmlgym.nn.counters import CostMeter

DEVICES = ("cpu", "cuda", "cuda:N", "auto")
CUDA_TOLERANCE = 1e-4


@dataclass
class RunContext:
    """The torch-facing settings of the run in progress (see :func:`run_context`).

    Attributes:
        device: the requested device (``cpu``, ``cuda``, ``cuda:N``, ``auto``).
        threads: torch's intra-op thread count for the run (part of the determinism policy).
        meter: counters (gradient steps, training examples/tokens, FLOPs, GPU seconds) that
            training inside the run adds to; the runner adds them to the record's cost.
        seeded: the determinism mode set by :func:`seed_everything` (None until called).
    """

    device: str = "cpu"
    threads: int = 1
    meter: CostMeter = field(default_factory=CostMeter)
    seeded: str | None = None


_STACK: list[RunContext] = []


def current() -> RunContext | None:
    """The context of the run in progress, or None outside the runner."""
    return _STACK[-1] if _STACK else None


_BLAS: Any = None  # threadpoolctl's controller of the BLAS libraries loaded here (built once: ~20 ms)
_BLAS_THREADS: int | None = None  # what limit_blas last set here; a forked child inherits both


def limit_blas(threads: int) -> bool:
    """Give this process's BLAS libraries (numpy's and scipy's OpenBLAS) ``threads`` threads; False without threadpoolctl.

    A worker is one run of ``threads`` threads (its card's ``num_cpus``, as torch gets), but
    OpenBLAS starts one thread per core, whose spinning waits cost CPU that the other workers
    needed: HallucinationLabeling-v0 ``hal-uncertainty`` (scikit-learn's L-BFGS) took 3.2 CPU-s
    a run with two BLAS threads on two busy cores and 0.3 s with one. The runner's fork server
    builds the controller once and sets one thread (:mod:`icmlgym.runner.warm`); its workers
    call this before their run (never restored: the process ends with the run). A call that asks
    for the threads already set returns at once: setting them again in a forked worker cost about
    0.1 CPU-s a run (threadpoolctl and OpenBLAS after a fork), more than a smoke Bandit run."""
    global _BLAS, _BLAS_THREADS
    if int(threads) < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    if _BLAS_THREADS == int(threads):
        return True
    if _BLAS is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # scikit-learn's dependency; without it BLAS keeps its default
            return False
        _BLAS = ThreadpoolController()
    _BLAS.limit(limits=int(threads), user_api="blas")
    _BLAS_THREADS = int(threads)
    return True


@contextlib.contextmanager
def run_context(device: str = "cpu", threads: int = 1) -> Iterator[RunContext]:
    """Make ``device`` and ``threads`` the run's settings while the block runs.

    torch, if already imported, gets ``threads`` at once (and back afterwards);
    a torch imported later inside the block gets it from :func:`seed_everything`
    or from ``OMP_NUM_THREADS``, which is set for the block.
    """
    if int(threads) < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    ctx = RunContext(str(device or "cpu"), int(threads))
    old_env = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(ctx.threads)
    torch = sys.modules.get("torch")
    old_threads = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(ctx.threads)
    _STACK.append(ctx)
    try:
        yield ctx
    finally:
        _STACK.pop()
        if old_env is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = old_env
        torch = sys.modules.get("torch")
        if torch is not None and old_threads is not None:
            torch.set_num_threads(old_threads)


@contextlib.contextmanager
def fixed_threads(threads: int = 1) -> Iterator[RunContext]:
    """Run the block at a fixed torch thread count, on the run's device (``cpu`` outside a run).

    For computations that define an env's behaviour (a classifier it trains, an attack it
    runs): float sums depend on the thread count, so the env must not inherit whatever
    count the process happens to have, or its recorded rollout would vary with it.
    """
    ctx = current()
    with run_context(ctx.device if ctx is not None else "cpu", threads) as inner:
        yield inner


def torch_threads() -> int | None:
    """The run's thread count (None outside a run: leave torch's default)."""
    ctx = current()
    return ctx.threads if ctx is not None else None


def resolve_device(spec: str | None = "cpu") -> str:
    """A concrete torch device string from a spec: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``.

    ``auto`` is ``cuda`` when torch sees a GPU, else ``cpu``. A CUDA device that is
    not there is an error (a run never silently falls back from an explicit GPU).

    Raises:
        ValueError: an unknown spec.
        RuntimeError: ``cuda``/``cuda:N`` without such a GPU.
    """
    spec = (spec or "cpu").strip().lower()
    if spec == "cpu":
        return "cpu"
    if spec != "auto" and spec != "cuda" and not (spec.startswith("cuda:") and spec[5:].isdigit()):
        raise ValueError(f"unknown device {spec!r}; use one of {DEVICES}")
    import torch

    available = torch.cuda.is_available()
    if spec == "auto":
        return "cuda" if available else "cpu"
    if not available:
        raise RuntimeError(f"device {spec!r} requested but torch sees no CUDA GPU (torch {torch.__version__}); use 'cpu' or 'auto'")
    if spec.startswith("cuda:") and int(spec[5:]) >= torch.cuda.device_count():
        raise RuntimeError(f"device {spec!r} requested but torch sees {torch.cuda.device_count()} GPU(s)")
    return spec


def seed_everything(seed: int, device: str | None = None, threads: int | None = None) -> str:
    """Seed Python, numpy and torch and apply the determinism policy; returns the mode.

    Args:
        seed: any int (reduced modulo 2**32 for numpy).
        device: the device the run computes on (default: the run context's, else ``cpu``).
        threads: torch's thread count (default: the run context's; outside a run, unchanged).
    """
    seed = int(seed)
    random.seed(seed)
    import numpy as np

    np.random.seed(seed % 2**32)
    ctx = current()
    device = resolve_device(device if device is not None else (ctx.device if ctx is not None else "cpu"))
    threads = threads if threads is not None else torch_threads()
    if device.startswith("cuda"):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    if threads is not None:
        torch.set_num_threads(int(threads))
    torch.manual_seed(seed)
    if device.startswith("cuda"):
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.use_deterministic_algorithms(True, warn_only=True)
        mode = "cuda-deterministic"
    else:
        torch.use_deterministic_algorithms(True)
        mode = "bitwise"
    if ctx is not None:
        ctx.seeded = mode
    return mode


def determinism(device: str | None = None) -> dict[str, Any]:
    """What the run record says about determinism (see the module docstring)."""
    ctx = current()
    mode = ctx.seeded if ctx is not None else None
    out: dict[str, Any] = {"mode": mode or "unseeded"}
    if ctx is not None:
        out["threads"] = ctx.threads
    if mode == "cuda-deterministic":
        out["tolerance"] = CUDA_TOLERANCE
    return out


@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; the platform's processor name elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def numerics_platform() -> str:
    """What a CPU run's floats depend on beyond the code, the seeds and the thread count.

    For example ``"Intel(R) Xeon(R) Processor, torch 2.13.0+cpu AVX512"``: the CPU model, torch's
    version and the kernel set it dispatches (imports torch; without torch, the CPU model alone)."""
    try:
        import torch
    except ImportError:
        return cpu_model()
    return f"{cpu_model()}, torch {torch.__version__} {torch.backends.cpu.get_cpu_capability()}"


__all__ = ["CUDA_TOLERANCE", "DEVICES", "RunContext", "cpu_model", "current", "determinism", "fixed_threads", "numerics_platform",
           "resolve_device", "run_context", "seed_everything", "torch_threads"]
