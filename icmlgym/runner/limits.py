"""Resident-memory limits on a whole process tree, enforced from outside it.

An address-space limit (``RLIMIT_AS``) is the wrong tool for neural runs: CUDA,
JAX and even torch's CPU allocator reserve large virtual ranges at start-up that
they never touch, so a limit tight enough to matter kills them before they begin;
and it is per process, so a run that forks a helper escapes it. This module counts
what actually occupies memory, the resident set (RSS) of the watched process and
of every descendant, by polling ``/proc``, and kills the whole tree once the sum
passes the limit.

Semantics (documented because they differ from a kernel limit):

- The check runs every ``interval`` seconds (0.1 s by default), so a tree can
  overshoot for up to one interval before it is killed. It is a cap on what a run
  holds, not a guard against a single enormous allocation.
- RSS counts shared pages (shared libraries, copy-on-write pages inherited from a
  pre-importing server) once per process that maps them, so the sum over a tree
  is an upper bound on what the tree adds to the machine.
- Linux only (``/proc``); elsewhere :func:`supported` is False and the executors
  refuse a memory limit with a clear error instead of silently ignoring it.

The runner's process and Ray executors use :class:`TreeMemoryLimit`; the sandbox
uses the same class around its agent process.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Callable

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_PROC = Path("/proc")


def supported() -> bool:
    """Whether process-tree memory can be measured here (a Linux ``/proc``)."""
    return (_PROC / "self" / "statm").is_file()


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process visible in ``/proc``."""
    out: dict[int, int] = {}
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:  # the process ended while we looked
            continue
        # the command name (field 2) may hold spaces and parentheses: split after the last ')'
        fields = raw[raw.rindex(b")") + 2 :].split()
        out[int(entry.name)] = int(fields[1])
    return out


def _children(pid: int) -> list[int] | None:
    """The children of ``pid`` from the kernel's per-thread ``children`` lists (None where there
    are none: no such files), a few reads instead of a scan of every process."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return []  # it has exited
    except OSError:
        return None
    out: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(c) for c in fh.read().split())
        except FileNotFoundError:
            if os.path.exists(f"/proc/{pid}/task/{tid}"):
                return None  # the thread is there but the kernel keeps no children list
            # else the thread ended while we looked
        except OSError:
            return None
    return out


def process_tree(pid: int) -> list[int]:
    """``pid`` followed by all its live descendants (children, grandchildren, ...)."""
    tree, stack = [], [int(pid)]
    while stack:  # the kernel's children lists when it keeps them (CONFIG_PROC_CHILDREN)
        p = stack.pop()
        kids = _children(p)
        if kids is None:
            break
        tree.append(p)
        stack.extend(kids)
    else:
        return tree
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    tree, stack = [], [int(pid)]
    while stack:
        p = stack.pop()
        tree.append(p)
        stack.extend(children.get(p, ()))
    return tree


def rss_bytes(pid: int) -> int:
    """Resident memory of one process in bytes (0 if it has exited)."""
    try:
        with open(f"/proc/{int(pid)}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants, summed, in bytes."""
    return sum(rss_bytes(p) for p in process_tree(pid))


def kill_tree(pid: int, sig: int = signal.SIGKILL) -> list[int]:
    """Send ``sig`` to ``pid`` and every descendant (children first); returns the pids signalled."""
    pids = process_tree(pid)
    for p in reversed(pids):
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            pass
    return pids


class TreeMemoryLimit:
    """Kills a process tree whose summed resident memory passes ``limit_mb``.

    A daemon thread in the *watching* process polls ``/proc``; the watched process
    needs no cooperation. After the tree is killed, :attr:`exceeded` is True and
    :meth:`message` says what happened (for the run record).

    Args:
        pid: the root of the tree (e.g. a worker process).
        limit_mb: the limit in MiB (> 0).
        interval: seconds between checks.
        on_exceed: called (in the watcher thread) with the peak bytes once the tree is killed.

    Raises:
        ValueError: for a limit or interval that is not positive.
        OSError: where ``/proc`` is missing (not Linux).

    Example::

        proc.start()
        with TreeMemoryLimit(proc.pid, 2000) as watch:
            proc.join()
        if watch.exceeded:
            print(watch.message())
    """

    def __init__(self, pid: int, limit_mb: float, interval: float = 0.1, on_exceed: Callable[[int], None] | None = None) -> None:
        if not limit_mb or float(limit_mb) <= 0:
            raise ValueError(f"memory limit must be a positive number of MB, got {limit_mb!r}")
        if interval <= 0:
            raise ValueError(f"interval must be > 0 s, got {interval!r}")
        if not supported():
            raise OSError("process-tree memory limits need Linux's /proc; none here")
        self.pid = int(pid)
        self.limit_mb = float(limit_mb)
        self.limit_bytes = int(float(limit_mb) * 1024 * 1024)
        self.interval = float(interval)
        self.on_exceed = on_exceed
        self.peak_bytes = 0
        self.exceeded = False
        self.killed: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"memory-limit-{pid}", daemon=True)

    def start(self) -> "TreeMemoryLimit":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching (the tree is left alone)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> "TreeMemoryLimit":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _watch(self) -> None:
        while not self._stop.is_set():
            if not _PROC.joinpath(str(self.pid)).exists():
                return
            used = tree_rss_bytes(self.pid)
            self.peak_bytes = max(self.peak_bytes, used)
            if used > self.limit_bytes:
                self.exceeded = True
                self.killed = kill_tree(self.pid)
                if self.on_exceed is not None:
                    self.on_exceed(used)
                return
            self._stop.wait(self.interval)

    def message(self) -> str:
        """What the record says about a run killed by this limit."""
        return (
            f"MemoryError: the run exceeded its memory limit of {self.limit_mb:g} MB "
            f"(resident memory of its process tree reached {self.peak_bytes / 2**20:.0f} MB; "
            f"{len(self.killed)} process(es) killed)"
        )


__all__ = ["TreeMemoryLimit", "kill_tree", "process_tree", "rss_bytes", "supported", "tree_rss_bytes"]
