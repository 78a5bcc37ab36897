"""The Ray executor: each run is a Ray task, on a local Ray instance or an existing cluster.

Same contract as :class:`icmlgym.runner.executors.ProcessExecutor`: ``imap(tasks)``
yields one :class:`RunRecord` per task as runs finish (not in task order), and a
run never stops the others.

- **Resources.** Each run asks Ray for ``num_cpus`` (the executor's ``num_cpus``,
  else the agent class's ``num_cpus`` attribute, else the card's
  ``resources.num_cpus``), for GPUs when the task's device starts with ``cuda``
  (or is ``auto`` and the cluster has GPUs; the card's ``resources.num_gpus`` when
  it asks for more than one) or when the agent class or the card sets ``num_gpus``,
  and for the card's ``resources.memory_mb`` (or the memory limit) as Ray's ``memory``. A run that needs a GPU on a cluster without
  one, or more CPUs or memory than the whole cluster has, is recorded as ``failed`` at
  once instead of waiting forever.
- **Worker death.** A Ray worker (or node) that dies mid-run is retried up to
  ``max_retries`` times; after that the run is recorded as ``failed`` with every
  attempt's reason. ``RunRecord.attempts`` counts the attempts.
- **Timeouts.** A run past ``timeout`` seconds is cancelled with
  ``ray.cancel(force=True)`` (which kills its worker) and recorded as ``timeout``.
  The clock starts when the run is handed to Ray; the executor hands out only as
  many runs as the cluster has room for, so that is when the run starts.
- **Memory limit.** With ``memory_limit_mb`` each run reserves that much of Ray's
  ``memory`` resource and executes in a child process of its Ray worker whose
  process tree's resident memory the worker watches (:mod:`icmlgym.runner.limits`),
  so a run past it is killed and recorded as ``failed`` with a MemoryError.
- **Local instance.** Without ``address`` or ``$RAY_ADDRESS`` a private Ray instance
  starts on loopback with ``workers`` CPUs (default: all cores) and no dashboard, and
  :meth:`RayExecutor.close` shuts it down. With ``address`` (``"auto"``,
  ``"ray://host:10001"``, ``"host:6379"``) the executor connects to that cluster
  (an address nobody listens on is an error at once) and disconnects in ``close()``;
  every node needs icmlgym installed with the extras the runs use. In a process
  where Ray is already initialised (Ray allows one session per process) the executor
  runs on that session and leaves it running.

Resuming a sweep is the caller's side: pass ``skip_keys=Leaderboard(...).run_keys()``
to :func:`icmlgym.runner.api.run_tasks`, which drops tasks whose run key is done.
"""

from __future__ import annotations

import os
import time
from collections import deque
from typing import Any, Iterable, Iterator

from icmlgym.catalog import card, require_extra
from icmlgym.runner.checks import checked_record
from icmlgym.runner.loop import execute, failed_record
from icmlgym.runner.task import RunTask, agent_meta
from icmlgym.runner.record import RunRecord

# Read by Ray when it is imported: on Linux, False makes a node advertise 127.0.0.1
# instead of its network address. Used only for the private local instance.
_LOOPBACK_FLAG = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_REFRESH_RESOURCES_S = 10.0
_UNSET = object()


def _wants_gpu(device: str, cluster_gpus: float) -> bool:
    device = (device or "cpu").lower()
    return device.startswith("cuda") or (device == "auto" and cluster_gpus > 0)


def _load(task: RunTask) -> Any:
    """The task's LoadedAgent (for its resource attributes and provenance), or None if it cannot be loaded here."""
    from icmlgym.agents.loading import load_agent

    if getattr(task, "isolation", None) is not None:
        return None  # a submission is never imported by the driver
    try:
        return load_agent(task.agent, **task.agent_kwargs)
    except Exception:  # the driver may lack an extra the workers have; use the defaults
        return None


def _agent_class(task: RunTask) -> Any:
    loaded = _load(task)
    return loaded.cls if loaded is not None else None


def task_resources(
    task: RunTask,
    num_cpus: float | None = None,
    cluster_gpus: float = 0.0,
    memory_limit_mb: int | None = None,
    agent_cls: Any = _UNSET,
) -> dict[str, float]:
    """The Ray resource request of one run: ``num_cpus``, ``num_gpus`` and, with a memory limit, ``memory`` (bytes).

    Args:
        task: the run.
        num_cpus: CPUs for every run (overrides the agent's and the card's needs).
        cluster_gpus: GPUs in the cluster (decides what ``device="auto"`` asks for).
        memory_limit_mb: the per-run memory limit, reserved as Ray's ``memory`` resource.
        agent_cls: the task's agent class when the caller has loaded it already (None: unknown).
    """
    cls = _agent_class(task) if agent_cls is _UNSET else agent_cls
    try:
        needs = (task.card or card(task.env_id)).resources
    except Exception:
        needs = None
    cpus = num_cpus
    if cpus is None:
        cpus = getattr(cls, "num_cpus", None) if cls is not None else None
    if cpus is None:
        cpus = needs.num_cpus if needs is not None else 1
    card_gpus = needs.num_gpus if needs is not None else 0
    gpus = 1.0 if _wants_gpu(task.device, cluster_gpus) else float(getattr(cls, "num_gpus", 0) or card_gpus or 0)
    if _wants_gpu(task.device, cluster_gpus) and card_gpus > 1:
        gpus = float(card_gpus)
    if float(cpus) < 0 or gpus < 0:
        raise ValueError(f"resource requests must be >= 0, got num_cpus={cpus}, num_gpus={gpus} for {task.env_id} / {task.agent}")
    out = {"num_cpus": float(cpus), "num_gpus": gpus}
    memory_mb = memory_limit_mb or (needs.memory_mb if needs is not None else None)
    if memory_mb:
        out["memory"] = float(int(memory_mb) * 1024 * 1024)
    return out


def _run_with_memory_limit(task: RunTask, memory_limit_mb: int | None) -> dict[str, Any]:
    """The run in a child of this Ray worker (the process executor's worker protocol), under the memory limit;
    the child dies with the Ray worker (a limit on the pooled worker itself would break Ray's own threads)."""
    from icmlgym.runner.worker import run_in_worker

    (record,) = run_in_worker(task, memory_limit_mb)
    return record.to_dict()


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``host:port`` (or ``ray://host:port``) nobody listens on: Ray itself
    retries such an address for minutes before it gives up."""
    import socket

    target = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = target.rpartition(":")
    if address == "auto" or not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as err:
        raise ConnectionError(
            f"cannot reach the Ray cluster at {address!r} ({err}); start it with `ray start --head` "
            "there, or check the address (`ray status --address ...`)"
        ) from None


def _ray_run(task: RunTask, memory_limit_mb: int | None) -> dict[str, Any]:
    """The body of the Ray task (module-level so workers import it by name).

    An isolated run's evaluator also runs in a child of the Ray worker: the direct children of a
    cancelled Ray worker are SIGKILLed with it (seen with Ray 2.60), which would take the
    fallback sandbox's reaper down before it could kill the agent's daemons; one level down,
    the sandbox dies with its evaluator (bubblewrap's ``--die-with-parent``, the reaper)."""
    if memory_limit_mb or getattr(task, "isolation", None) is not None:
        return _run_with_memory_limit(task, memory_limit_mb)
    return execute(task).to_dict()


class RayExecutor:
    """Runs each task as a Ray task on a local Ray instance or an existing cluster.

    Args:
        workers: CPUs of the local instance (default: all cores); with ``address``,
            at most this many runs in flight (default: as many as the cluster's CPUs hold).
        timeout: seconds a run may take before it is cancelled and recorded as ``timeout``.
        address: a Ray cluster to connect to (``"auto"``, ``"ray://host:10001"``, ``"host:port"``);
            None uses ``$RAY_ADDRESS`` when set, else starts a private local instance.
        max_retries: how many times a run whose worker or node died is retried before it is
            recorded as ``failed``.
        memory_limit_mb: per-run memory limit (reserved in Ray and enforced on the resident memory of the run's process tree).
        num_cpus: CPUs per run, overriding the agent's and the card's needs.
        runtime_env: a Ray runtime environment for the runs (e.g. ``{"pip": [...]}`` on a cluster).

    Raises:
        MissingExtraError: if Ray is not installed (``pip install "icmlgym[ray]"``).
        ValueError: for a negative ``max_retries``, ``timeout`` or ``workers``.
        ConnectionError: if nothing listens at ``address``.
    """

    name = "ray"

    def __init__(
        self,
        workers: int | None = None,
        timeout: float | None = None,
        address: str | None = None,
        max_retries: int = 2,
        memory_limit_mb: int | None = None,
        num_cpus: float | None = None,
        runtime_env: dict[str, Any] | None = None,
        **_: object,
    ) -> None:
        if max_retries is None or int(max_retries) < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        if timeout is not None and float(timeout) <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if workers is not None and int(workers) < 1:
            raise ValueError(f"workers must be >= 1, got {workers!r}")
        if memory_limit_mb is not None and int(memory_limit_mb) <= 0:
            raise ValueError(f"memory_limit_mb must be positive, got {memory_limit_mb!r}")
        require_extra("ray", what="the Ray executor (--executor ray)")
        self.workers = int(workers) if workers is not None else None
        self.timeout = float(timeout) if timeout is not None else None
        # as in `ray.init()`: RAY_ADDRESS names the cluster when no address is given
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.max_retries = int(max_retries)
        self.memory_limit_mb = int(memory_limit_mb) if memory_limit_mb else None
        self.num_cpus = num_cpus
        self.runtime_env = runtime_env
        self._owns_ray = False
        self._ray = self._connect()
        self._remote = self._ray.remote(max_retries=0, retry_exceptions=False)(_ray_run)

    def _connect(self):
        local = self.address is None
        saved_flag = os.environ.get(_LOOPBACK_FLAG)
        if local:
            os.environ[_LOOPBACK_FLAG] = "0"  # inherited by the processes ray.init starts
        try:
            import ray
            from ray._private import ray_constants

            if not local:
                _check_reachable(self.address)
            if ray.is_initialized():
                return ray  # the caller's Ray session (one per process): use it, leave it running
            saved_const = ray_constants.ENABLE_RAY_CLUSTER
            if local:
                ray_constants.ENABLE_RAY_CLUSTER = False  # in case ray was imported before the flag was set
            try:
                kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR", "configure_logging": True}
                if local:
                    ray.init(num_cpus=self.workers or os.cpu_count() or 1, **kwargs)
                else:
                    kwargs.pop("include_dashboard")
                    try:
                        ray.init(address=self.address, **kwargs)
                    except ConnectionError as err:
                        raise ConnectionError(f"cannot connect to the Ray cluster at {self.address!r}: {err}") from err
            finally:
                ray_constants.ENABLE_RAY_CLUSTER = saved_const
            self._owns_ray = True
            return ray
        finally:
            if local:
                if saved_flag is None:
                    os.environ.pop(_LOOPBACK_FLAG, None)
                else:
                    os.environ[_LOOPBACK_FLAG] = saved_flag

    def _cluster(self) -> dict[str, float]:
        return {k: float(v) for k, v in self._ray.cluster_resources().items()}

    def imap(self, tasks: Iterable[RunTask]) -> Iterator[RunRecord]:
        """Submit the tasks and yield a record per task as its run finishes."""
        ray = self._ray
        from ray.exceptions import RayError, RayTaskError

        cluster = self._cluster()
        refreshed = time.monotonic()
        pending: deque[tuple[RunTask, dict[str, float]]] = deque()
        loaded: dict[Any, Any] = {}  # load each agent once, not once per seed
        metas: dict[int, dict[str, str] | None] = {}  # id(task) -> agent provenance for failure records
        for task in tasks:
            key = (task.agent, repr(sorted(task.agent_kwargs.items()))) if isinstance(task.agent, str) else id(task.agent)
            if key not in loaded:
                loaded[key] = _load(task)
            la = loaded[key]
            metas[id(task)] = agent_meta(la, task.card) if la is not None else None
            try:
                needs = task_resources(task, self.num_cpus, cluster.get("GPU", 0.0), self.memory_limit_mb, la.cls if la is not None else None)
            except ValueError as err:
                yield failed_record(task, "failed", f"invalid resource request: {err}", 0.0, metas[id(task)])
                continue
            pending.append((task, needs))

        def failed(task: RunTask, status: str, error: str, elapsed: float = 0.0) -> RunRecord:
            return failed_record(task, status, error, elapsed, metas.get(id(task)))

        # ref -> (task, needs, attempt, start, reasons of earlier attempts)
        inflight: dict[Any, tuple[RunTask, dict[str, float], int, float, list[str]]] = {}
        used = {"num_cpus": 0.0, "num_gpus": 0.0, "memory": 0.0}

        def fits(needs: dict[str, float]) -> bool:
            if not inflight:
                return True
            if self.workers is not None and self.address is not None and len(inflight) >= self.workers:
                return False
            for key, res in (("num_cpus", "CPU"), ("num_gpus", "GPU"), ("memory", "memory")):
                if needs.get(key, 0.0) > 0 and used[key] + needs[key] > cluster.get(res, 0.0) + 1e-9:
                    return False
            return True

        def submit(task: RunTask, needs: dict[str, float], attempt: int, reasons: list[str]) -> None:
            options: dict[str, Any] = {"num_cpus": needs["num_cpus"], "num_gpus": needs["num_gpus"]}
            if "memory" in needs:
                options["memory"] = needs["memory"]
            if self.runtime_env:  # per run, so that it applies on a Ray session started by someone else too
                options["runtime_env"] = self.runtime_env
            ref = self._remote.options(**options).remote(task, self.memory_limit_mb)
            inflight[ref] = (task, needs, attempt, time.monotonic(), reasons)
            for key in used:
                used[key] += needs.get(key, 0.0)

        def release(ref: Any):
            entry = inflight.pop(ref)
            for key in used:
                used[key] -= entry[1].get(key, 0.0)
            return entry

        try:
            while pending or inflight:
                if time.monotonic() - refreshed > _REFRESH_RESOURCES_S:
                    cluster, refreshed = self._cluster(), time.monotonic()  # nodes may have joined or left
                while pending and fits(pending[0][1]):
                    task, needs = pending.popleft()
                    if needs["num_gpus"] > cluster.get("GPU", 0.0):
                        yield failed(
                            task, "failed",
                            f"the run needs {needs['num_gpus']:g} GPU (device={task.device!r}) but the Ray cluster has "
                            f"{cluster.get('GPU', 0.0):g}; run it with --device cpu or on a cluster with GPUs",
                        )
                        continue
                    if needs["num_cpus"] > cluster.get("CPU", 0.0) or needs.get("memory", 0.0) > cluster.get("memory", 0.0):
                        yield failed(
                            task, "failed",
                            f"the run needs {needs['num_cpus']:g} CPUs and {needs.get('memory', 0.0) / 2**20:.0f} MB but the Ray cluster "
                            f"has {cluster.get('CPU', 0.0):g} CPUs and {cluster.get('memory', 0.0) / 2**20:.0f} MB in all; "
                            "lower the request (num_cpus, memory_limit_mb) or add nodes",
                        )
                        continue
                    submit(task, needs, 1, [])
                if not inflight:
                    continue
                wait_for = None
                deadlines = [start + lim for t, _, _, start, _ in inflight.values() if (lim := self._limit(t)) is not None]
                if deadlines:
                    wait_for = max(0.0, min(deadlines) - time.monotonic())
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=wait_for)
                for ref in ready:
                    task, needs, attempt, start, reasons = release(ref)
                    elapsed = time.monotonic() - start
                    try:
                        result = ray.get(ref)
                    except RayTaskError as err:  # our function raised: deterministic, not retried
                        yield self._final(failed(task, "failed", f"the Ray task raised: {err}", elapsed), attempt)
                        continue
                    except RayError as err:  # the worker or its node died: retry
                        reasons = reasons + [f"attempt {attempt}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"]
                        if attempt <= self.max_retries:
                            submit(task, needs, attempt + 1, reasons)  # ahead of new work
                        else:
                            msg = f"Ray worker died during the run in all {attempt} attempts (max_retries={self.max_retries}):\n" + "\n".join(reasons)
                            yield self._final(failed(task, "failed", msg, elapsed), attempt)
                        continue
                    rec = checked_record(task, result, elapsed)
                    yield self._final(rec, attempt)
                now = time.monotonic()
                late = [r for r, (t, _, _, start, _) in inflight.items() if (lim := self._limit(t)) is not None and now - start >= lim]
                for ref in late:
                    task, needs, attempt, start, _ = release(ref)
                    ray.cancel(ref, force=True)
                    yield self._final(
                        failed(task, "timeout", f"run exceeded its timeout of {self._limit(task):g} s and was cancelled (its Ray worker was killed)", now - start),
                        attempt,
                    )
        finally:
            for ref in list(inflight):
                try:
                    ray.cancel(ref, force=True)
                except Exception:
                    pass
            inflight.clear()

    def _limit(self, task: Any) -> float | None:
        """Seconds this run may take: the task's own timeout, else the executor's (None: no limit)."""
        own = getattr(task, "timeout", None)
        return float(own) if own is not None else self.timeout

    @staticmethod
    def _final(rec: RunRecord, attempt: int) -> RunRecord:
        rec.attempts = attempt
        return rec

    def close(self) -> None:
        """Shut down the local Ray instance this executor started, or disconnect from the cluster."""
        if self._owns_ray:
            self._owns_ray = False
            self._ray.shutdown()

    def __enter__(self) -> "RayExecutor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["RayExecutor", "task_resources"]
