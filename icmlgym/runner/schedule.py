"""The order a sweep starts its runs in: longest first, from the run times of earlier sweeps.

A sweep on ``W`` workers ends when its last run ends. Started in catalog order, a long
run that starts late keeps one worker busy while the others have nothing left: the main
job ended with one worker idle for most of its last family. Starting the runs expected to
take longest first (the LPT rule) leaves a tail of short runs instead. The order changes
nothing in any record: every run is seeded by its own task.

A run's expected time is the mean wall time of its entry (env, agent, tier, env and agent
kwargs, device) in the last sweep that ran it with this ``$ICMLGYM_HOME``, kept in the cache
namespace ``runtimes`` (one JSON file, merged and rewritten atomically under the cache's
lock after each sweep, so concurrent sweeps do not lose each other's entries; ``icmlgym
cache clear runtimes`` forgets them). Entries without a time (a fresh home, a new agent)
start first, in their given order: nothing is known about how long they take.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from icmlgym.cache import Cache, content_key

NAMESPACE = "runtimes"
_KEY = "history"


def entry_key(env_id: str, agent: str, tier: str, env_kwargs: dict, agent_kwargs: dict, device: str) -> str:
    """The key of an entry's run time: everything a run's cost depends on but its seed."""
    return content_key(env_id, agent, tier, env_kwargs or {}, agent_kwargs or {}, (device or "cpu").lower())


def task_entry(task: Any) -> str:
    """The entry key of a :class:`~icmlgym.runner.task.RunTask`."""
    from icmlgym.runner.task import agent_label

    return entry_key(task.env_id, agent_label(task), task.tier, task.env_kwargs, task.agent_kwargs, task.device)


def record_entry(rec: Any) -> str:
    """The entry key of a run record (the same as its task's for a shipped agent name)."""
    device = str((rec.device or {}).get("requested", "cpu") or "cpu")
    return entry_key(rec.env_id, rec.agent_name, rec.tier, rec.env_kwargs, rec.agent_kwargs, device)


def load_times(cache: Cache | None = None) -> dict[str, float]:
    """``{entry key: seconds per run}`` from earlier sweeps (empty when none, or unreadable)."""
    raw = (cache or Cache(NAMESPACE)).read_json(_KEY)
    if not isinstance(raw, dict):
        return {}
    out = {}
    for k, v in raw.items():
        secs = v.get("seconds") if isinstance(v, dict) else None
        if isinstance(secs, (int, float)) and secs >= 0:
            out[k] = float(secs)
    return out


def record_times(records: Iterable[Any], cache: Cache | None = None) -> int:
    """Remember each entry's mean wall time over its ok runs among ``records``; returns the entries written."""
    sums: dict[str, list[float]] = {}
    names: dict[str, str] = {}
    for r in records:
        if r.status != "ok":
            continue
        k = record_entry(r)
        sums.setdefault(k, []).append(float(r.wall_time))
        names[k] = f"{r.env_id} {r.agent_name} {r.tier}"
    if not sums:
        return 0
    cache = cache or Cache(NAMESPACE)
    with cache.lock(_KEY):
        raw = cache.read_json(_KEY)
        merged = raw if isinstance(raw, dict) else {}
        for k, v in sums.items():
            merged[k] = {"seconds": sum(v) / len(v), "entry": names[k]}
        cache.write_json(_KEY, merged)
    return len(sums)


def longest_first(tasks: Sequence[Any], times: dict[str, float]) -> list[Any]:
    """``tasks`` ordered by expected run time, longest first; tasks without a known time first, in their order.

    The sort is stable, so the seeds of an entry stay together and in order."""
    def expected(item: tuple[int, Any]) -> tuple[int, float, int]:
        i, task = item
        secs = times.get(task_entry(task))
        return (0, 0.0, i) if secs is None else (1, -secs, i)

    return [t for _, t in sorted(enumerate(tasks), key=expected)]


__all__ = ["NAMESPACE", "entry_key", "load_times", "longest_first", "record_entry", "record_times", "task_entry"]
