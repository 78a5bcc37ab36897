"""One core for an evaluator and its agent: the channel's ping-pong without cross-core wake-ups.

An isolated run is a strict ping-pong: the evaluator waits while the agent acts,
the agent waits while the env steps, so the two processes never need two cores at
once. Left to the scheduler, each often sits on its own core, and every message
then wakes a core that went idle. On the virtual machines we measured on (see
``benchmarks/sandbox_channel.py``) that costs about 150-200 us per round trip, against
10-25 us when both ends take turns on one core. So by default the evaluator's
thread and the agent host's main thread are pinned to one CPU for the run.

**Which CPU.** The CPU the evaluator runs on when the sandbox starts, if no other
pinned evaluator holds it, else another CPU of its affinity mask that none holds.
A claim is an exclusive ``flock`` on ``<tmp>/icmlgym-cpus-<uid>/<cpu>``, held for the
run and released by the kernel if the process dies, so parallel workers (``--workers
N``, threads of one process) each keep a core of their own. When every allowed CPU
is claimed, or only one is allowed, the run is not pinned.

**What is pinned.** Only the evaluator's thread that plays the episodes (its other
threads keep their mask) and the agent host's main thread, from the agent's load to
the end of the run; the host unpins itself while the agent trains (``train`` may use
every core). Threads the agent starts during an episode inherit the pin. Pinning
changes no result: it is a scheduling hint, and the agent may change its own
affinity as any process may.

Switched off with ``SandboxOptions(pin_cpu=False)`` or ``ICMLGYM_SANDBOX_PIN=0`` in the
evaluator's environment.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import tempfile
from pathlib import Path

ENV_SWITCH = "ICMLGYM_SANDBOX_PIN"


def _libc_sched_getcpu():  # resolved once: it is called at every sandbox start
    try:
        fn = ctypes.CDLL(None, use_errno=True).sched_getcpu
        fn.restype = ctypes.c_int
        fn.argtypes = []
        return fn
    except (OSError, AttributeError):
        return None


_SCHED_GETCPU = _libc_sched_getcpu()


def current_cpu() -> int | None:
    """The CPU the calling thread runs on now (None where it cannot be told)."""
    if _SCHED_GETCPU is not None:
        cpu = _SCHED_GETCPU()
        if cpu >= 0:
            return int(cpu)
    try:  # field 39 of /proc/thread-self/stat: the CPU last run on
        with open("/proc/thread-self/stat", "rb") as fh:
            raw = fh.read()
        return int(raw[raw.rindex(b")") + 2 :].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def pinning_enabled(option: bool = True) -> bool:
    """Whether a run pins: the option, unless ``ICMLGYM_SANDBOX_PIN=0`` (or ``false``/``no``/``off``) says no."""
    return option and os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def _lock_dir() -> Path:
    d = Path(tempfile.gettempdir()) / f"icmlgym-cpus-{os.getuid()}"
    d.mkdir(mode=0o700, exist_ok=True)
    return d


class CpuClaim:
    """The calling thread pinned to one claimed CPU until :meth:`release` (see the module docstring).

    ``cpu`` is None when nothing was pinned (switched off, one CPU allowed, all claimed, no affinity API)."""

    def __init__(self) -> None:
        self.cpu: int | None = None
        self._fd: int | None = None
        self._old: set[int] | None = None

    @classmethod
    def take(cls, enabled: bool = True) -> "CpuClaim":
        """Claim a CPU and pin the calling thread to it (a claim with ``cpu`` None if that is not possible)."""
        claim = cls()
        if not enabled or not hasattr(os, "sched_setaffinity"):
            return claim
        try:
            allowed = os.sched_getaffinity(0)
            if len(allowed) < 2:
                return claim
            here = current_cpu()
            order = ([here] if here in allowed else []) + sorted(c for c in allowed if c != here)
            d = _lock_dir()
        except OSError:
            return claim
        for cpu in order:
            try:
                fd = os.open(d / str(cpu), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            try:
                os.sched_setaffinity(0, {cpu})
            except OSError:
                os.close(fd)
                return claim
            claim.cpu, claim._fd, claim._old = cpu, fd, allowed
            return claim
        return claim

    def release(self) -> None:
        """Restore the thread's affinity and give the CPU back (idempotent; call from the claiming thread)."""
        if self._old is not None:
            try:
                os.sched_setaffinity(0, self._old)
            except OSError:
                pass
            self._old = None
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None
        self.cpu = None


def pin_self(cpu: int | None) -> set[int] | None:
    """The agent host's side: pin the calling thread to ``cpu``; returns the mask it had (None if not pinned)."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return None
    try:
        old = os.sched_getaffinity(0)
        if cpu not in old:
            return None
        os.sched_setaffinity(0, {cpu})
        return old
    except OSError:
        return None


def unpin_self(old: set[int] | None) -> None:
    """Undo :func:`pin_self`."""
    if old is not None:
        try:
            os.sched_setaffinity(0, old)
        except OSError:
            pass


__all__ = ["CpuClaim", "ENV_SWITCH", "current_cpu", "pin_self", "pinning_enabled", "unpin_self"]
