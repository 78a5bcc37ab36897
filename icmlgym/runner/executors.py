"""Executors: where runs execute. In process, or one worker process per run on a local pool.

Each executor's ``imap(tasks)`` yields a :class:`RunRecord` per task as runs
finish (not in task order). A run that raises is recorded as ``failed``; in the
process executor a run past its timeout is killed and recorded as ``timeout``,
and a worker that dies (segfault, out of memory) is recorded as ``failed`` with
its exit code. The other runs go on either way. A :class:`~icmlgym.runner.batched.BatchTask`
(several seeds of one entry, see :mod:`icmlgym.runner.batched`) is one unit of work
that yields a record per seed; its timeout is the per-run timeout times its seeds.

The process executor's workers speak the protocol of :mod:`icmlgym.runner.worker`
(shared with the Ray executor) and are forked from a warm server that has already
imported the sweep's modules.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import deque
from multiprocessing.connection import wait
from typing import Iterable, Iterator, Union

from icmlgym.runner.batched import BatchTask, execute_batch
from icmlgym.runner.loop import RunTask, execute
from icmlgym.runner.record import RunRecord
from icmlgym.runner.trace import mark
from icmlgym.runner.worker import WorkerProcess, context, warm_modules, work_tasks

EXECUTORS = ("inprocess", "process", "ray")


class RunTimeout(BaseException):
    """Raised inside an in-process run when its timeout passes (a BaseException, so that an
    agent's ``except Exception`` cannot swallow it)."""


class InProcessExecutor:
    """Runs tasks one after another in this process.

    A ``timeout`` (or a task's own) is honoured with ``SIGALRM``: the run is interrupted where
    Python code runs next and recorded as ``timeout``. That needs the main thread of a Unix
    process; elsewhere a timeout is refused rather than ignored (use ``process`` or ``ray``).
    Code stuck in C without returning to Python is only stopped by the process executor."""

    name = "inprocess"

    def __init__(self, timeout: float | None = None, **_: object) -> None:
        self.timeout = timeout

    def imap(self, tasks: Iterable[Union[RunTask, BatchTask]]) -> Iterator[RunRecord]:
        for task in tasks:
            own = getattr(task, "timeout", None)
            limit = own if own is not None else self.timeout
            if isinstance(task, BatchTask):
                n = len(work_tasks(task))
                yield from self._timed(lambda: list(execute_batch(task)), None if limit is None else limit * n)
            else:
                yield from self._timed(lambda: [execute(task)], limit)

    @staticmethod
    def _timed(run, limit: float | None) -> list[RunRecord]:
        if limit is None:
            return run()
        if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
            raise ValueError(
                f"the inprocess executor can only enforce timeout={limit!r} in the main thread of a Unix process; "
                "use executor='process' or 'ray'"
            )

        def alarm(signum, frame):
            raise RunTimeout(f"run exceeded its timeout of {limit:g} s and was interrupted")

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, float(limit))
        try:
            records = run()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        for rec in records:
            if rec.status == "failed" and rec.error.startswith("RunTimeout:"):
                rec.status = "timeout"
        return records


def _wants_gpu(device: str) -> bool:
    device = (device or "cpu").lower()
    return device.startswith("cuda") or device == "auto"


def _gpu_ids() -> list[str]:
    """GPUs visible to workers, without importing torch (CUDA_VISIBLE_DEVICES, else nvidia-smi)."""
    from icmlgym.runner.provenance import nvidia_gpus

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [d.strip() for d in visible.split(",") if d.strip() and d.strip() != "-1"]
    return [str(i) for i in range(len(nvidia_gpus()))]


class ProcessExecutor:
    """One fresh worker process per run, at most ``workers`` at a time, each with a timeout.

    Args:
        workers: concurrent worker processes (default: the number of cores).
        timeout: seconds a run may take before it is killed and recorded as ``timeout``.
        memory_limit_mb: resident-memory limit of each run's whole process tree, in MB
            (see :mod:`icmlgym.runner.limits`); a run past it is killed and recorded as ``failed``.

    With several GPUs visible and a task on ``cuda``/``auto``, each worker is pinned to
    one GPU (``CUDA_VISIBLE_DEVICES``), round robin over the GPUs.
    """

    name = "process"

    def __init__(self, workers: int | None = None, timeout: float | None = None, memory_limit_mb: int | None = None, **_: object) -> None:
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        self.timeout = timeout
        if memory_limit_mb is not None and memory_limit_mb <= 0:
            raise ValueError(f"memory_limit_mb must be positive, got {memory_limit_mb}")
        self.memory_limit_mb = memory_limit_mb

    def imap(self, tasks: Iterable[Union[RunTask, BatchTask]]) -> Iterator[RunRecord]:
        pending = deque(tasks)
        ctx = context(warm_modules(t for w in pending for t in work_tasks(w)))
        running: dict[int, tuple[WorkerProcess, float | None]] = {}  # sentinel -> (worker, its timeout)
        gpus = _gpu_ids()
        started = 0

        def fill() -> None:
            nonlocal started
            while pending and len(running) < self.workers:
                work = pending.popleft()
                n = len(work_tasks(work))
                device = work_tasks(work)[0].device
                gpu = gpus[started % len(gpus)] if len(gpus) > 1 and _wants_gpu(device) else None
                started += 1
                mark("submit", work)
                worker = WorkerProcess(work, self.memory_limit_mb, gpu, ctx=ctx)
                mark("started", work)
                own = getattr(work_tasks(work)[0], "timeout", None)  # a task's own timeout overrides the executor's
                per_run = own if own is not None else self.timeout
                running[worker.sentinel] = (worker, None if per_run is None else per_run * n)

        try:
            fill()
            while running:
                wait_for = None
                limits = [w.start + lim for w, lim in running.values() if lim is not None]
                if limits:
                    wait_for = max(0.0, min(limits) - time.monotonic())
                ready = set(wait([w.conn for w, _ in running.values()] + list(running), timeout=wait_for))
                finished: list[RunRecord] = []
                for key in list(running):
                    worker, limit = running[key]
                    if worker.conn in ready or key in ready:
                        records = worker.poll()
                        if records is not None:
                            mark("ready", worker.work)
                            del running[key]
                            finished += records
                            continue
                    if limit is not None and worker.elapsed >= limit:
                        del running[key]
                        finished += worker.kill("timeout", f"run exceeded its timeout of {limit:g} s and was killed")
                # the next runs start before the caller stores these records, so that no slot
                # waits for the store's write
                fill()
                yield from finished
        finally:
            for worker, _ in running.values():
                worker.kill("failed", "the sweep was interrupted")


def get_executor(name: str, **kwargs: object):
    """An executor by name: ``inprocess``, ``process`` or ``ray`` (extra ``[ray]``)."""
    if name == "inprocess":
        return InProcessExecutor(**kwargs)
    if name == "process":
        return ProcessExecutor(**kwargs)
    if name == "ray":
        from icmlgym.runner.ray_executor import RayExecutor

        return RayExecutor(**kwargs)
    raise ValueError(f"unknown executor {name!r}; choose one of {EXECUTORS}")
