"""The worker protocol: one run (or one batch of seeds) in a process of its own, forked from a warm server.

Shared by the process executor (a worker per run) and the Ray executor (a run
with a memory limit executes in a child of its Ray worker), so that both start,
watch, kill and read a worker the same way.

**Warm server.** Workers are forked by multiprocessing's fork server, which
imports, before its first fork, the modules the runs need
(:func:`warm_modules`: icmlgym and its runner, the envs' and agents' modules)
and fills the per-process caches a run would otherwise rebuild (hardware,
package versions, git commit, agent code hashes): each worker starts with them
in memory, so a short run pays a fork and its own work, not imports. Each run
still gets a fresh process (isolation, timeouts, memory limits are unchanged).
The fork server is single-threaded, so forking it is safe even when the driver
runs threads.

**Messages** (child to parent, over a one-way pipe)::

    {"__meta__": {...}}          once the agent is loaded (its name, entry point, code hash)
    {"__records__": [dict, ...]} the run's record (a batch: one per seed), then the child exits
    {"__error__": "..."}         the worker itself failed outside the run

A child that dies without a result (signal, exit, memory limit) is reported by
:class:`WorkerProcess` as failed records naming the reason.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from typing import Any, Iterable, Union

from icmlgym.runner.batched import BatchTask, execute_batch
from icmlgym.runner.channel import cap_text
from icmlgym.runner.checks import checked_record
from icmlgym.runner.limits import TreeMemoryLimit, kill_tree
from icmlgym.runner.loop import RunTask, execute, failed_record
from icmlgym.runner.record import RunRecord
from icmlgym.runner.sandbox import set_parent_death_signal
from icmlgym.runner.trace import mark

Work = Union[RunTask, BatchTask]

_DIED_EARLY_HINT = (
    "; it died before loading the agent: if this was started from a script, run it under "
    '`if __name__ == "__main__":` (workers re-import the main module), and see its stderr'
)


def work_tasks(work: Work) -> list[RunTask]:
    """The run tasks a unit of work stands for (one, or every seed of a batch)."""
    return list(work.tasks) if isinstance(work, BatchTask) else [work]


# ----------------------------------------------------------------------------- child side
def _release_driver_alive_pipe() -> None:
    """Close this worker's copy of the driver's end of the fork server's "alive" pipe.

    multiprocessing hands every forkserver child that write end (``_forkserver_alive_fd``); the
    fork server exits when the pipe reaches EOF, so while any worker held a copy, a killed
    driver's fork server and its workers ran on until their runs ended. Released, the fork
    server ends with the driver and every worker with it (its parent-death signal)."""
    from multiprocessing import forkserver

    fs = forkserver._forkserver
    fd = getattr(fs, "_forkserver_alive_fd", None)
    if fd is None:
        return
    try:
        os.close(fd)
    except OSError:
        pass
    fs._forkserver_alive_fd = None
    fs._forkserver_pid = None  # a forkserver pool this worker starts gets a fork server of its own


def _limit_blas(work: Work) -> None:
    """BLAS threads of this worker = its run's threads (see :func:`icmlgym.nn.runtime.limit_blas`)."""
    from icmlgym.nn.runtime import limit_blas
    from icmlgym.runner.loop import run_threads

    try:
        limit_blas(run_threads(work_tasks(work)[0]))
    except Exception:  # noqa: BLE001 - a BLAS without a thread setting runs as it is
        pass


def child_main(conn, work: Work, gpu: str | None = None) -> None:
    """The body of a worker process: run ``work`` and send its messages on ``conn``."""
    # a worker never outlives its parent (the fork server, which ends with the driver; or the
    # Ray worker that started it, when Ray kills that for a timeout or loses the node)
    set_parent_death_signal()
    _release_driver_alive_pipe()
    mark("child", work)
    if gpu is not None:  # pin this worker to one GPU before anything initialises CUDA
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    _limit_blas(work)
    try:
        mark("exec0", work)
        if isinstance(work, BatchTask):
            records = execute_batch(work)
        else:
            records = [execute(work, on_loaded=lambda meta: conn.send({"__meta__": meta}))]
        mark("exec1", work)
        conn.send({"__records__": [r.to_dict() for r in records]})
        mark("sent", work)
    except MemoryError:
        conn.send({"__error__": "MemoryError: the run ran out of memory"})
    except BaseException as err:  # noqa: BLE001
        try:
            conn.send({"__error__": f"{type(err).__name__}: {err}"})
        except Exception:
            pass
    finally:
        conn.close()


# ----------------------------------------------------------------------------- warm server
def _module_of(entry_point: str | None) -> str | None:
    """The module of an icmlgym ``module:Class`` entry point. Other modules (a user's agents) are never
    imported by the fork server: one that crashes, hangs or starts threads at import would take every
    later run down with it, so their workers import them, as a cold worker would."""
    if not entry_point or ":" not in entry_point:
        return None
    module = entry_point.split(":", 1)[0]
    return module if module.startswith("icmlgym.") and module.replace(".", "").replace("_", "").isalnum() else None


def warm_modules(tasks: Iterable[RunTask]) -> list[str]:
    """Modules worth importing before forking workers for ``tasks``: the envs' entry points and the shipped
    agents' modules, icmlgym's own only (agents given as other modules, files or objects are imported by
    their worker)."""
    from icmlgym.catalog import AGENTS, card

    mods: list[str] = []
    for task in tasks:
        try:
            c = task.card or card(task.env_id)
        except Exception:
            continue
        if not c.installed:
            continue
        for ep in (c.entry_point, c.vector_entry_point):
            m = _module_of(ep)
            if m and not _threaded(m):
                mods.append(m)
        if isinstance(task.agent, str):
            info = AGENTS.get(task.agent)
            m = _module_of(info.entry_point if info is not None else task.agent)
            if m:
                mods.append(m)
    return list(dict.fromkeys(mods))


def _threaded(module: str) -> bool:
    """Modules that start threads when imported (JAX backends): never imported by the fork server."""
    return "craftax" in module


_CTX: Any = None
_PRELOADED: set[str] = set()


def context(modules: Iterable[str] = ()) -> Any:
    """The multiprocessing context whose fork server has imported ``modules`` (see :mod:`icmlgym.runner.warm`).

    The fork server starts on the first worker. When a later sweep in the same process
    needs modules it lacks and no worker is running, it is restarted with the union."""
    global _CTX
    if "forkserver" not in mp.get_all_start_methods():  # pragma: no cover - not Linux
        if _CTX is None:
            _CTX = mp.get_context("spawn")
        return _CTX
    from multiprocessing import forkserver

    from multiprocessing import spawn

    from icmlgym.runner.warm import ENV_VAR, MAIN_VAR

    if _CTX is None:
        _CTX = mp.get_context("forkserver")
        _CTX.set_forkserver_preload(["icmlgym.runner.warm"])
        # the warm server imports the main script once, so that each worker finds it loaded and
        # does not run it again (multiprocessing's own preload of "__main__" does nothing on 3.11)
        main_path = spawn.get_preparation_data("icmlgym-worker").get("init_main_from_path")
        if main_path:
            os.environ[MAIN_VAR] = main_path
    missing = set(modules) - _PRELOADED
    if missing:
        server = forkserver._forkserver
        running = getattr(server, "_forkserver_pid", None) is not None
        if running and not mp.active_children() and hasattr(server, "_stop"):
            server._stop()  # no worker of it is alive: restart it with the larger set
            running = False
        if not running:
            _PRELOADED.update(missing)
            os.environ[ENV_VAR] = ",".join(sorted(_PRELOADED))
    return _CTX


def start_server(tasks: Iterable[RunTask]) -> None:
    """Start the warm fork server for ``tasks`` now and return at once, so that it imports the sweep's
    modules on one core while the driver goes on with its own set-up (opening the store, ordering the
    runs) on the other; the first worker then waits for the rest of its start only. A no-op where
    workers are not forked from a fork server."""
    ctx = context(warm_modules(tasks))
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


# ----------------------------------------------------------------------------- parent side
class WorkerProcess:
    """The parent's side of one worker: start it, read its messages, turn its end into records.

    Args:
        work: a RunTask or a BatchTask.
        memory_limit_mb: resident-memory limit of the worker's process tree (:mod:`icmlgym.runner.limits`).
        gpu: a GPU id to pin the worker to (``CUDA_VISIBLE_DEVICES``).
        ctx: the multiprocessing context (default: :func:`context`).
    """

    def __init__(self, work: Work, memory_limit_mb: int | None = None, gpu: str | None = None, ctx: Any = None) -> None:
        self.work = work
        self.tasks = work_tasks(work)
        self.memory_limit_mb = memory_limit_mb
        ctx = ctx or context()
        self.conn, send = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=child_main, args=(send, work, gpu), daemon=True)
        self.start = time.monotonic()
        self.proc.start()
        send.close()
        self.watch = TreeMemoryLimit(self.proc.pid, memory_limit_mb).start() if memory_limit_mb else None
        self.meta: dict[str, str] | None = None
        self._result: dict[str, Any] | None = None

    @property
    def sentinel(self) -> int:
        return self.proc.sentinel

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def poll(self) -> list[RunRecord] | None:
        """Read what the worker sent; its records once it has finished (or died), else None."""
        try:
            while self._result is None and self.conn.poll():
                message = self.conn.recv()
                if isinstance(message, dict) and "__meta__" in message:
                    self.meta = message["__meta__"]
                else:
                    self._result = message
                    mark("received", self.work)
        except (EOFError, OSError):
            pass
        if self._result is None and self.proc.is_alive():
            return None
        return self._finish()

    def wait(self) -> list[RunRecord]:
        """Block until the worker finishes and return its records."""
        try:
            while self._result is None:
                message = self.conn.recv()
                if isinstance(message, dict) and "__meta__" in message:
                    self.meta = message["__meta__"]
                else:
                    self._result = message
        except (EOFError, OSError):
            pass
        return self._finish()

    def kill(self, status: str, error: str) -> list[RunRecord]:
        """Kill the worker's process tree and record every task of it with ``status``."""
        elapsed = self.elapsed
        self._close(kill=True)
        return [failed_record(t, status, error, elapsed, self.meta) for t in self.tasks]

    def _close(self, kill: bool = False) -> None:
        if self.watch is not None:
            self.watch.stop()
        if kill:
            kill_tree(self.proc.pid)
            self.proc.kill()
        self.proc.join(timeout=5)
        self.conn.close()

    def _finish(self) -> list[RunRecord]:
        elapsed = self.elapsed
        self._close()
        mark("joined", self.work)
        message = self._result
        if isinstance(message, dict) and "__records__" in message:
            got = message["__records__"]
            if isinstance(got, list) and len(got) == len(self.tasks):
                return [checked_record(t, d, elapsed, self.meta) for t, d in zip(self.tasks, got)]
            error = f"the worker's result was rejected: {len(got) if isinstance(got, list) else type(got).__name__} records for {len(self.tasks)} task(s)"
        elif isinstance(message, dict) and "__error__" in message:
            error = cap_text(str(message["__error__"]))
            if error.startswith("MemoryError") and self.memory_limit_mb:
                error = f"MemoryError: the run exceeded its memory limit of {self.memory_limit_mb} MB"
        elif message is not None:
            error = f"the worker's result was rejected: a {type(message).__name__}, not a message of the worker protocol"
        elif self.watch is not None and self.watch.exceeded:
            error = self.watch.message()
        else:
            code = self.proc.exitcode
            why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            error = f"worker process died ({why}) before reporting a result{'' if self.meta is not None else _DIED_EARLY_HINT}"
        return [failed_record(t, "failed", error, elapsed, self.meta) for t in self.tasks]


def run_in_worker(work: Work, memory_limit_mb: int | None = None) -> list[RunRecord]:
    """Run ``work`` in a worker process and wait for its records (the Ray executor's memory-limited path)."""
    return WorkerProcess(work, memory_limit_mb).wait()


__all__ = ["WorkerProcess", "child_main", "context", "run_in_worker", "start_server", "warm_modules", "work_tasks"]
