"""Where a sweep's worker time goes outside the runs, from an ``$ICMLGYM_TRACE`` file (icmlgym.runner.trace).

    ICMLGYM_TRACE=/tmp/trace.jsonl ICMLGYM_HOME=<warm home> icmlgym benchmark --store <fresh file> 2> log
    python benchmarks/mainjob_trace.py /tmp/trace.jsonl [--workers 2] [--top 10]

Each unit of work (a run, or a batch of seeds) has the driver's stages ``submit`` ->
``started`` -> ``received`` -> ``joined`` -> ``ready`` -> ``stored`` and its worker's ``child``
-> ``exec0`` -> ``exec1`` -> ``sent`` on one clock. A worker slot is held from ``submit`` to
``ready`` (the executor starts the next run in that slot after it); the sweep's slot-seconds
(``workers`` x the time from the first submit to the last ready) split into:

- fork: ``submit`` -> ``child`` (the driver asks the fork server, which forks; the child unpickles its task)
- before the run: ``child`` -> ``exec0``
- run: ``exec0`` -> ``exec1`` (``execute``: the record's own wall time plus the run context)
- record out: ``exec1`` -> ``sent`` (the record as a dict, pickled into the pipe)
- to the driver: ``sent`` -> ``received`` (the driver was busy elsewhere, or waking up)
- exit: ``received`` -> ``joined`` (the worker exits; the fork server reports it)
- check: ``joined`` -> ``ready`` (the driver checks the record against its task)

Session 8's executor (measured, then reverted: docs/performance.md, perf8-mj8) freed a slot once the record was read (``ready`` came before
``joined``: the worker was joined later, off the slot's path) and handed the slot's next work to
a worker forked ahead (a standby, marked ``standby0`` -> ``standby1`` on the driver, key
``standby``), so ``submit`` -> ``child`` was the hand-off rather than a fork. For such a trace,
exit is 0 in the slot's split and check is ``received`` -> ``ready``; its exit is listed apart.
- idle slots while runs were still waiting (the driver stored records, or was slow to start the next)
- idle slots in the tail (after the last run was started: the last runs finish one worker at a time)

``stored`` - ``ready`` is the store's write (and progress line) per run, on the driver, listed
apart: it holds a slot only as long as the driver does not start the next run during it.
CPU: each worker's CPU seconds at ``sent`` (its count starts at the fork) and the driver's
CPU from its first to its last mark.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

DRIVER = ("submit", "started", "received", "joined", "ready", "stored")
CHILD = ("child", "exec0", "exec1", "sent")
STAGES = [
    ("fork", "submit", "child"),
    ("before the run", "child", "exec0"),
    ("run", "exec0", "exec1"),
    ("record out", "exec1", "sent"),
    ("to the driver", "sent", "received"),
    ("exit", "received", "joined"),
    ("check", "joined", "ready"),
]


def unit_stages(u: dict[str, dict]) -> list[tuple[str, str, str]]:
    """STAGES, or for a unit whose slot was freed before its worker was joined: exit 0, check from ``received``."""
    if "joined" in u and "ready" in u and u["joined"]["t"] > u["ready"]["t"]:
        late = {"exit": ("exit", "received", "received"), "check": ("check", "received", "ready")}
        return [late.get(n, (n, a, b)) for n, a, b in STAGES]
    return STAGES


def load(path: str) -> tuple[dict[str, dict[str, dict]], list[dict]]:
    """``{key: {event: line}}`` (the last line of each event per key) and every line in order."""
    units: dict[str, dict[str, dict]] = defaultdict(dict)
    lines = []
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            try:
                d = json.loads(raw)
            except json.JSONDecodeError:
                continue
            lines.append(d)
            units[d["key"]][d["ev"]] = d
    return units, lines


def idle_slots(intervals: list[tuple[float, float]], workers: int, last_submit: float) -> tuple[float, float, float, float]:
    """(start, end, idle slot-seconds before ``last_submit``, idle slot-seconds after it) of the held slots."""
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    start, end = events[0][0], events[-1][0]
    held, t_prev, before, after = 0, start, 0.0, 0.0
    for t, d in events:
        idle = max(0, workers - held)
        if t_prev < last_submit:
            cut = min(t, last_submit)
            before += idle * (cut - t_prev)
            after += idle * max(0.0, t - last_submit)
        else:
            after += idle * (t - t_prev)
        held += d
        t_prev = t
    return start, end, before, after


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--top", type=int, default=10, help="units listed by their time outside the run")
    ap.add_argument("--t0", type=float, help="time.monotonic() when the command started: prints the start-up before the first run")
    args = ap.parse_args()
    units, lines = load(args.trace)
    complete = {k: u for k, u in units.items() if all(e in u for e in ("submit", "exec0", "exec1", "ready"))}
    if not complete:
        raise SystemExit(f"{args.trace}: no complete unit of work")
    intervals = [(u["submit"]["t"], u["ready"]["t"]) for u in complete.values()]
    last_submit = max(u["submit"]["t"] for u in complete.values())
    start, end, idle_before, idle_after = idle_slots(intervals, args.workers, last_submit)
    slots = args.workers * (end - start)
    sums: dict[str, float] = defaultdict(float)
    late_exits = []
    for u in complete.values():
        for name, a, b in unit_stages(u):
            if a in u and b in u:
                sums[name] += u[b]["t"] - u[a]["t"]
        if "joined" in u and "received" in u and u["joined"]["t"] > u["ready"]["t"]:
            late_exits.append(u["joined"]["t"] - u["received"]["t"])
    n = len(complete)
    if args.t0 is not None:
        first = min(complete.values(), key=lambda u: u["submit"]["t"])
        print(f"start-up: {first['exec0']['t'] - args.t0:.1f} s from the command's start to the first run "
              f"(driver {first['submit']['t'] - args.t0:.1f} s, then the fork server's start and the fork "
              f"{first['exec0']['t'] - first['submit']['t']:.1f} s)")
    print(f"{n} units of work; first submit to last ready {end - start:.1f} s x {args.workers} workers = {slots:.1f} slot-s\n")
    print("| stage | slot-s | share | per unit (ms) |\n|---|---|---|---|")
    rows = [(name, sums[name]) for name, _, _ in STAGES] + [
        ("idle slots while runs waited", idle_before), ("idle slots in the tail", idle_after)]
    for name, secs in rows:
        print(f"| {name} | {secs:.1f} | {100 * secs / slots:.1f}% | {1000 * secs / n:.1f} |")
    accounted = sum(s for _, s in rows)
    print(f"| (unaccounted: overlaps, missing stages) | {slots - accounted:.1f} | {100 * (slots - accounted) / slots:.1f}% | |")
    if late_exits:
        print(f"\nexits after the slot moved on (received -> joined, off the slots' path): {len(late_exits)} units, "
              f"{1000 * sum(late_exits) / len(late_exits):.1f} ms per unit")
    forks = [(d["t"], d["ev"]) for d in lines if d["key"] == "standby" and d["ev"] in ("standby0", "standby1")]
    held = [b - a for (a, ea), (b, eb) in zip(forks, forks[1:]) if ea == "standby0" and eb == "standby1"]
    if held:
        print(f"standbys forked ahead by the driver: {len(held)}, {sum(held):.1f} s of the driver's time "
              f"({1000 * sum(held) / len(held):.1f} ms each, max {1000 * max(held):.0f} ms)")
    store = [u["stored"]["t"] - u["ready"]["t"] for u in complete.values() if "stored" in u]
    if store:
        print(f"\ndriver, ready -> stored (store write + progress line): {sum(store):.1f} s in all, "
              f"{1000 * sum(store) / len(store):.1f} ms per unit (max {1000 * max(store):.0f} ms)")
    child_cpu = [u["sent"]["cpu"] for u in complete.values() if "sent" in u]
    run_cpu = [u["exec1"]["cpu"] - u["exec0"]["cpu"] for u in complete.values()]
    print(f"workers' CPU: {sum(child_cpu):.1f} s, of which in runs {sum(run_cpu):.1f} s "
          f"(outside: {1000 * (sum(child_cpu) - sum(run_cpu)) / n:.1f} ms per unit)")
    driver = [d for d in lines if d["ev"] in DRIVER]
    if driver:
        pids = defaultdict(list)
        for d in driver:
            pids[d["pid"]].append(d["cpu"])
        cpu = sum(max(v) - min(v) for v in pids.values())
        print(f"driver's CPU from its first to its last mark: {cpu:.1f} s ({1000 * cpu / n:.1f} ms per unit)")
    print(f"\n| unit | run (s) | outside the run (ms): fork / before / out / to driver / exit / check |\n|---|---|---|")
    outside = []
    for k, u in complete.items():
        parts = [u[b]["t"] - u[a]["t"] if a in u and b in u else (0.0 if a == b else float("nan")) for _, a, b in unit_stages(u)]
        outside.append((sum(p for i, p in enumerate(parts) if i != 2 and p == p), k, parts))
    for tot, k, parts in sorted(outside, reverse=True)[: args.top]:
        rest = " / ".join(f"{1000 * p:.0f}" for i, p in enumerate(parts) if i != 2)
        print(f"| {k} | {parts[2]:.2f} | {rest} |")


if __name__ == "__main__":
    main()
