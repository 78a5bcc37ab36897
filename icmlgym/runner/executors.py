"""Executors: where runs execute. In process, or one worker process per run on a local pool.

Each executor's ``imap(tasks)`` yields a :class:`RunRecord` per task as runs
finish (not in task order). A run that raises is recorded as ``failed``; in the
process executor a run past its timeout is killed and recorded as ``timeout``,
and a worker that dies (segfault, out of memory) is recorded as ``failed`` with
its exit code. The other runs go on either way.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections import deque
from multiprocessing.connection import wait
from typing import Iterable, Iterator

from icmlgym.runner.limits import TreeMemoryLimit, kill_tree
from icmlgym.runner.channel import cap_text
from icmlgym.runner.checks import checked_record
from icmlgym.runner.loop import RunTask, execute, failed_record
from icmlgym.runner.sandbox import set_parent_death_signal
from icmlgym.runner.record import RunRecord

EXECUTORS = ("inprocess", "process", "ray")


class InProcessExecutor:
    """Runs tasks one after another in this process (no timeout: use ``process`` for that)."""

    name = "inprocess"

    def __init__(self, **_: object) -> None:
        pass

    def imap(self, tasks: Iterable[RunTask]) -> Iterator[RunRecord]:
        for task in tasks:
            yield execute(task)


def _child(conn, task: RunTask, memory_limit_mb: int | None, gpu: str | None = None) -> None:
    set_parent_death_signal()  # a worker never outlives the forkserver (which ends with the driver)
    # the memory limit is enforced from the parent (icmlgym.runner.limits), on resident memory
    if gpu is not None:  # pin this worker to one GPU before anything initialises CUDA
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    try:
        record = execute(task, on_loaded=lambda meta: conn.send({"__meta__": meta}))
        conn.send(record.to_dict())
    except MemoryError:
        conn.send({"__error__": f"MemoryError: the run exceeded its memory limit of {memory_limit_mb} MB"})
    except BaseException as err:  # noqa: BLE001
        try:
            conn.send({"__error__": f"{type(err).__name__}: {err}"})
        except Exception:
            pass
    finally:
        conn.close()


def _wants_gpu(device: str) -> bool:
    device = (device or "cpu").lower()
    return device.startswith("cuda") or device == "auto"


def _gpu_ids() -> list[str]:
    """GPUs visible to workers, without importing torch (CUDA_VISIBLE_DEVICES, else nvidia-smi)."""
    from icmlgym.runner.provenance import _nvidia_gpus

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [d.strip() for d in visible.split(",") if d.strip() and d.strip() != "-1"]
    return [str(i) for i in range(len(_nvidia_gpus()))]


_CTX = None


def _context():
    """A forkserver context that preloads icmlgym, so each worker starts in milliseconds
    without inheriting the parent's threads (fork + torch/JAX threads can deadlock)."""
    global _CTX
    if _CTX is None:
        if "forkserver" in mp.get_all_start_methods():
            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(["icmlgym.runner.loop"])
        else:
            ctx = mp.get_context("spawn")
        _CTX = ctx
    return _CTX


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

    def imap(self, tasks: Iterable[RunTask]) -> Iterator[RunRecord]:
        ctx = _context()
        pending = deque(tasks)
        running: dict = {}  # sentinel -> (process, conn, task, start)
        metas: dict = {}  # sentinel -> agent metadata the worker reported
        watches: dict = {}  # sentinel -> TreeMemoryLimit of the worker's process tree
        gpus = _gpu_ids()
        started = 0
        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    task = pending.popleft()
                    recv, send = ctx.Pipe(duplex=False)
                    gpu = gpus[started % len(gpus)] if len(gpus) > 1 and _wants_gpu(task.device) else None
                    started += 1
                    proc = ctx.Process(target=_child, args=(send, task, self.memory_limit_mb, gpu), daemon=True)
                    proc.start()
                    send.close()
                    if self.memory_limit_mb:
                        watches[proc.sentinel] = TreeMemoryLimit(proc.pid, self.memory_limit_mb).start()
                    running[proc.sentinel] = (proc, recv, task, time.monotonic())
                wait_for = None
                if self.timeout is not None:
                    now = time.monotonic()
                    wait_for = max(0.0, min(start + self.timeout - now for _, _, _, start in running.values()))
                ready = wait([r for _, r, _, _ in running.values()] + list(running), timeout=wait_for)
                for key in list(running):
                    proc, recv, task, start = running[key]
                    elapsed = time.monotonic() - start
                    message = None
                    if recv in ready or key in ready:
                        try:
                            while recv.poll():
                                message = recv.recv()
                                if not isinstance(message, dict) or "__meta__" not in message:
                                    break
                                metas[key] = message["__meta__"]
                                message = None
                        except (EOFError, OSError):
                            message = None
                        if message is None and proc.is_alive():
                            continue  # metadata only, or the pipe woke without data
                        proc.join(timeout=5)
                        del running[key]
                        recv.close()
                        watch = watches.pop(key, None)
                        if watch is not None:
                            watch.stop()
                        if message is None and watch is not None and watch.exceeded:
                            yield failed_record(task, "failed", watch.message(), elapsed, metas.pop(key, None))
                        elif message is None:
                            code = proc.exitcode
                            why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
                            meta = metas.pop(key, None)
                            hint = "" if meta is not None else (
                                "; it died before loading the agent: if this was started from a script, run it under "
                                "`if __name__ == \"__main__\":` (workers re-import the main module), and see its stderr"
                            )
                            yield failed_record(task, "failed", f"worker process died ({why}) before reporting a result{hint}", elapsed, meta)
                        elif isinstance(message, dict) and "__error__" in message:
                            yield failed_record(task, "failed", cap_text(str(message["__error__"])), elapsed, metas.pop(key, None))
                        else:
                            yield checked_record(task, message, elapsed, metas.pop(key, None))
                    elif self.timeout is not None and elapsed >= self.timeout:
                        if key in watches:
                            watches.pop(key).stop()
                        kill_tree(proc.pid)
                        proc.kill()
                        proc.join(timeout=5)
                        del running[key]
                        recv.close()
                        yield failed_record(task, "timeout", f"run exceeded its timeout of {self.timeout:g} s and was killed", elapsed, metas.pop(key, None))
        finally:
            for watch in watches.values():
                watch.stop()
            for proc, recv, _, _ in running.values():
                kill_tree(proc.pid)
                proc.kill()
                proc.join(timeout=5)
                recv.close()


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
