"""The sandbox a submitted agent runs in: bubblewrap where available, else a scrubbed child process.

:class:`Sandbox` starts :mod:`icmlgym.runner.agent_host` in its own process and
hands back the evaluator's end of the channel. Two kinds (``SandboxOptions.mode``):

- ``bwrap`` (Debian's ``bubblewrap``): new user, PID, network, IPC, UTS and
  cgroup namespaces (no network at all; the agent's processes are the only ones
  it sees, so neither the store's path nor the driver's command line is visible
  in ``/proc``); the agent runs as ``nobody`` with no capabilities, in a new
  session; the file system holds only ``/usr``, the Python environment (read-only),
  the ``icmlgym`` package (read-only), the agent's file or folder at ``/agent``
  (read-only), a private ``/tmp`` and fresh ``/proc`` and ``/dev``. The store, the
  user's home and the project checkout are not mounted. When the evaluator dies,
  bubblewrap's ``--die-with-parent`` takes PID 1 of the namespace down and the
  kernel kills every process in it.
- ``none`` (the fallback): the same process split and channel, a scrubbed
  environment, a private temporary working folder, a new session (its own
  process group) under a reaper (:mod:`icmlgym.runner.reaper`: a child subreaper
  with a parent-death signal, which keeps double-forked daemons in its tree and
  kills the whole tree when the agent host ends or the evaluator dies); at the end
  the process tree, the group, and any process still carrying the sandbox's id in
  its environment are killed too. It does not hide the file system, the network or
  other processes, and an agent that kills the reaper first can leave daemons
  behind. Records say ``sandbox: none``.

Both kinds enforce limits over the agent's whole process tree from outside it
(a watcher thread polls ``/proc``): resident memory summed over every process
(:mod:`icmlgym.runner.limits`), the number of live processes, and CPU seconds
(own and reaped children's); a tree past a limit is killed and the reason kept
for the record. The agent's stdout and stderr go to a capped log (the first
``log_limit`` bytes kept, the rest counted), never to the evaluator's output.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icmlgym.runner.affinity import CpuClaim, pinning_enabled
from icmlgym.runner.channel import DEFAULT_MAX_MESSAGE, Channel
from icmlgym.runner.limits import kill_tree, process_tree, rss_bytes

MODES = ("auto", "bwrap", "none")
LOG_LIMIT = 64 * 1024
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# environment variables passed through (thread counts change nothing a run reports; all else is dropped)
_PASS_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "LANG", "TZ")


def bwrap_path() -> str | None:
    """The bubblewrap binary if it is installed and can create namespaces here, else None."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    return path if _bwrap_works(path) else None


_BWRAP_OK: dict[str, bool] = {}


def _bwrap_works(path: str) -> bool:
    if path not in _BWRAP_OK:
        try:
            r = subprocess.run([path, "--unshare-all", "--ro-bind", "/", "/", "--", "true"], capture_output=True, timeout=10)
            _BWRAP_OK[path] = r.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _BWRAP_OK[path] = False
    return _BWRAP_OK[path]


def resolve_mode(mode: str) -> str:
    """``bwrap`` or ``none`` for a requested mode; ``bwrap`` that is not available is an error."""
    if mode not in MODES:
        raise ValueError(f"sandbox mode must be one of {MODES}, got {mode!r}")
    if mode == "none":
        return "none"
    if bwrap_path() is not None:
        return "bwrap"
    if mode == "bwrap":
        raise RuntimeError("sandbox mode 'bwrap' asked for, but bubblewrap is not installed or cannot create namespaces here (apt-get install bubblewrap)")
    return "none"


@dataclass
class SandboxOptions:
    """How a submitted agent is confined.

    Args:
        mode: ``auto`` (bubblewrap when it works here, else ``none``), ``bwrap`` or ``none``.
        memory_mb: resident memory of the agent's whole process tree (None: no limit).
        max_processes: live processes in the agent's tree.
        cpu_seconds: CPU time of the agent's tree (None: no limit).
        call_timeout: seconds the agent may take to answer one call (act, train, ...).
        load_timeout: seconds the agent may take to import and construct itself.
        max_message: the largest message either side accepts, in bytes.
        log_limit: bytes of the agent's stdout/stderr kept per run (the rest is counted).
        agent_path: the agent's folder, mounted read-only at ``/agent``.
        hide: paths masked inside the agent's folder (the store and its WAL, when they lie there).
        hidden_seeds: a secret (bytes) from which evaluation env seeds are derived (None: public seeds).
        interval: seconds between limit checks (a scan of /proc costs about 10 ms under load and holds the
            evaluator's GIL; a tree can overshoot a limit for up to one interval before it is killed).
        pin_cpu: run the evaluator's thread and the agent host's main thread on one claimed CPU
            (:mod:`icmlgym.runner.affinity`; off also with ``ICMLGYM_SANDBOX_PIN=0``).
    """

    mode: str = "auto"
    memory_mb: float | None = None
    max_processes: int = 64
    cpu_seconds: float | None = None
    call_timeout: float = 120.0
    load_timeout: float = 60.0
    max_message: int = DEFAULT_MAX_MESSAGE
    log_limit: int = LOG_LIMIT
    agent_path: str | None = None
    hidden_seeds: bytes | None = field(default=None, repr=False)
    interval: float = 0.25
    hide: list[str] = field(default_factory=list)
    pin_cpu: bool = True

    def agent_dir(self, mode: str) -> str | None:
        """Where the agent's folder appears to the agent (``/agent`` under bubblewrap)."""
        if not self.agent_path:
            return None
        return "/agent" if mode == "bwrap" else os.path.realpath(self.agent_path)


def _cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return 0.0
    f = raw[raw.rindex(b")") + 2 :].split()
    # fields 14-17 (utime, stime, cutime, cstime) are 11-14 after the command name
    return sum(int(x) for x in f[11:15]) / _CLK_TCK


def _with_environ(entry: bytes) -> list[int]:
    """Pids of the processes whose environment holds ``entry`` (``NAME=value``)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/environ", "rb") as fh:
                    if entry in fh.read().split(b"\0"):
                        out.append(int(name))
            except OSError:
                continue
    return out


def _libc_prctl() -> Any:
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except Exception:  # not glibc Linux
        return None


# resolved once, in the parent: a child between fork and exec then calls it without loading a
# library (a dlopen there could wait forever on a lock another thread of the parent held at the fork)
_PRCTL = _libc_prctl()


def set_parent_death_signal() -> None:
    """Ask the kernel to SIGKILL this process when its parent ends (Linux; a no-op elsewhere)."""
    if _PRCTL is not None:
        try:
            _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except Exception:
            pass


def _package_root() -> Path:
    return Path(__file__).resolve().parents[1]  # icmlgym/ (this file is icmlgym/runner/sandbox.py)


class Sandbox:
    """One agent process (see the module docstring). Use as a context manager, or ``start``/``stop``."""

    def __init__(self, options: SandboxOptions | None = None) -> None:
        self.options = options or SandboxOptions()
        self.mode = resolve_mode(self.options.mode)
        self.proc: subprocess.Popen | None = None
        self.channel: Channel | None = None
        self.limit_error = ""
        self.peak_rss = 0
        self.peak_processes = 0
        self.cpu_seconds = 0.0
        self.log_bytes = 0
        self._log = bytearray()
        self._stop = threading.Event()
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._threads: list[threading.Thread] = []
        self.start_time = 0.0
        self.token = uuid.uuid4().hex
        self._claim = CpuClaim()

    @property
    def cpu(self) -> int | None:
        """The CPU the evaluator's thread is pinned to for this run (the agent host pins to it too), or None."""
        return self._claim.cpu

    # -- the command ---------------------------------------------------------------------------

    def _env(self, home: str, pkg_parent: str) -> dict[str, str]:
        env = {
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": home,
            "TMPDIR": home,
            "PYTHONPATH": pkg_parent,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "LC_ALL": "C.UTF-8",
        }
        for k in _PASS_ENV:
            if k in os.environ:
                env[k] = os.environ[k]
        if self.mode == "none":  # inherited by every process the agent starts: found and killed at the end
            env["ICMLGYM_SANDBOX_ID"] = self.token
        return env

    def command(self, fd: int | tuple[int, int]) -> tuple[list[str], dict[str, str] | None, str | None]:
        """The argv, environment and working folder of the agent process for its end of the channel:
        a socket's descriptor, or the (read, write) descriptors of its two pipes."""
        pkg = _package_root()
        where = f"{fd[0]},{fd[1]}" if isinstance(fd, tuple) else str(fd)
        host = [sys.executable, "-s", "-m", "icmlgym.runner.agent_host", where, str(self.options.max_message)]
        if self.mode == "none":  # behind the reaper, so that the agent's daemons die even if the evaluator is killed
            self._tmp = tempfile.TemporaryDirectory(prefix="icmlgym-agent-")
            reaper = [sys.executable, "-S", "-I", str(Path(__file__).with_name("reaper.py"))]
            return reaper + host, self._env(self._tmp.name, str(pkg.parent)), self._tmp.name
        args = [
            bwrap_path() or "bwrap",
            "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        ]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            p = Path(top)
            if p.is_symlink():
                args += ["--symlink", os.readlink(p), top]
            elif p.is_dir():
                args += ["--ro-bind", top, top]
        args += ["--ro-bind", "/usr", "/usr"]
        for etc in ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/alternatives"):
            if os.path.exists(etc):
                args += ["--ro-bind", etc, etc]
        bound: list[str] = []
        for prefix in {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}:
            if not prefix.startswith("/usr"):
                bound.append(prefix)
        # the interpreter may be reached through symlinks (a venv's python -> a pyenv build)
        exe_real = os.path.realpath(sys.executable)
        if not any(exe_real.startswith(b + "/") for b in bound) and not exe_real.startswith("/usr/"):
            bound.append(str(Path(exe_real).parent.parent))
        for b in sorted(set(bound)):
            args += ["--ro-bind", b, b]
        venv_bin = str(Path(sys.executable).parent)
        if sys.executable != exe_real and not any(venv_bin.startswith(b + "/") for b in bound):
            args += ["--ro-bind", venv_bin, venv_bin]
        args += ["--ro-bind", str(pkg), str(pkg)]
        agent = self.options.agent_path
        if agent:
            real = os.path.realpath(agent)
            args += ["--ro-bind", real, "/agent"]
            # a store (or anything else asked to be hidden) inside the agent's folder is masked
            for h in self.options.hide:
                hr = os.path.realpath(h)
                if hr == real or not hr.startswith(real + "/") or not os.path.exists(hr):
                    continue
                inside = "/agent/" + os.path.relpath(hr, real)
                args += ["--tmpfs", inside] if os.path.isdir(hr) else ["--ro-bind", "/dev/null", inside]
        args += ["--chdir", "/tmp", "--clearenv"]
        for k, v in self._env("/tmp", str(pkg.parent)).items():
            args += ["--setenv", k, v]
        return args + ["--"] + host, None, None

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> Channel:
        """Start the agent process; returns the evaluator's end of the channel."""
        t0 = time.perf_counter()
        channel, theirs = Channel.pipes(self.options.max_message)
        log_r, log_w = os.pipe()
        try:
            argv, env, cwd = self.command(theirs)
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log_w, stderr=log_w, pass_fds=theirs,
                env=env if env is not None else {}, cwd=cwd, start_new_session=True, preexec_fn=set_parent_death_signal,
                close_fds=True,
            )
        except BaseException:
            os.close(log_r)
            channel.close()
            raise
        finally:
            os.close(log_w)
            for fd in theirs:
                os.close(fd)
        self.channel = channel
        reader = threading.Thread(target=self._read_log, args=(log_r,), name="agent-log", daemon=True)
        watcher = threading.Thread(target=self._watch, name="agent-limits", daemon=True)
        self._threads = [reader, watcher]
        for t in self._threads:
            t.start()
        # after the watchers start (they keep the whole mask): only this thread, the one that plays the episodes
        self._claim = CpuClaim.take(pinning_enabled(self.options.pin_cpu))
        self.start_time = time.perf_counter() - t0
        return channel

    def _read_log(self, fd: int) -> None:
        limit = self.options.log_limit
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return
                self.log_bytes += len(chunk)
                room = limit - len(self._log)
                if room > 0:
                    self._log += chunk[:room]
        except OSError:
            return
        finally:
            os.close(fd)

    def _watch(self) -> None:
        o = self.options
        mem = None if o.memory_mb is None else int(o.memory_mb * 2**20)
        proc = self.proc
        assert proc is not None
        while not self._stop.is_set() and proc.poll() is None:
            tree = process_tree(proc.pid)
            rss = sum(rss_bytes(p) for p in tree)
            cpu = sum(_cpu_seconds(p) for p in tree)
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_processes = max(self.peak_processes, len(tree))
            self.cpu_seconds = max(self.cpu_seconds, cpu)
            why = ""
            if mem is not None and rss > mem:
                why = (f"MemoryError: the agent exceeded its memory limit of {o.memory_mb:g} MB "
                       f"(resident memory of its {len(tree)} process(es) reached {rss / 2**20:.0f} MB)")
            elif len(tree) - self._overhead() > o.max_processes:
                why = f"the agent exceeded its limit of {o.max_processes} processes ({len(tree) - self._overhead()} running)"
            elif o.cpu_seconds is not None and cpu > o.cpu_seconds:
                why = f"the agent exceeded its CPU-time limit of {o.cpu_seconds:g} s ({cpu:.1f} s used by its processes)"
            if why:
                self.limit_error = why
                self._kill()
                return
            self._stop.wait(o.interval)

    def _overhead(self) -> int:
        """Processes of the sandbox itself (bubblewrap's outer process and its PID 1; the fallback's reaper)."""
        return 2 if self.mode == "bwrap" else 1

    def _kill(self) -> None:
        proc = self.proc
        if proc is None:
            return
        kill_tree(proc.pid)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # what left the tree but not the group
        except (ProcessLookupError, PermissionError):
            pass
        if self.mode == "none":  # what left the tree and the group (a daemon): by its environment
            for pid in _with_environ(f"ICMLGYM_SANDBOX_ID={self.token}".encode()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def stop(self, grace: float = 2.0) -> None:
        """End the agent process and everything it started, and stop the watchers.

        The channel is closed first (a host waiting for a call then ends at once); the agent
        gets ``grace`` seconds to exit before its whole tree is killed (0 after a failed run:
        nothing it would do on its way out is wanted)."""
        self._stop.set()
        self._claim.release()
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        proc = self.proc
        if proc is not None:
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
            self._kill()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for t in self._threads:
            t.join(timeout=5)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Channel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def log(self) -> str:
        """The agent's stdout and stderr, capped; the count of bytes not kept at the end."""
        text = bytes(self._log).decode("utf-8", errors="replace")
        dropped = self.log_bytes - len(self._log)
        return text + (f"\n[... {dropped} more bytes of agent output not kept]" if dropped > 0 else "")

    def summary(self) -> dict[str, Any]:
        """What the record says about the sandbox."""
        return {
            "sandbox": self.mode,
            "peak_rss_mb": round(self.peak_rss / 2**20, 1),
            "peak_processes": self.peak_processes - self._overhead() if self.peak_processes else 0,
            "cpu_seconds": round(self.cpu_seconds, 2),
            "log_bytes": self.log_bytes,
        }


__all__ = ["LOG_LIMIT", "MODES", "Sandbox", "SandboxOptions", "bwrap_path", "resolve_mode"]
