"""CPU cost of the main job's entries, each run forked from a warm process as the warm server does.

    python benchmarks/mainjob_entries.py [--only SUBSTR ...] [--seeds 1] [--repeat 1] [--forks N]
                                         [--records OUT.json] [--json TABLE.json]

Builds the main job's tasks (``icmlgym benchmark``: suite ``installed``, each env's agents,
smoke tier), imports in this process what the warm server imports for that sweep
(:mod:`icmlgym.runner.warm`, the same module list), then runs each selected task in a child
forked from here, one at a time: the child's CPU seconds (user + system, from ``wait4``), its
wall, and the part of its run spent importing modules (outermost imports only), with the
third-party packages it imported. One child at a time, so the CPU figures are insensitive to
load; wall is not. ``--records`` writes every run's record (for comparing the records of two
checkouts: ``python benchmarks/mainjob_entries.py --compare A.json B.json``: every field but
the attempt's own, wall/clock times and code hashes).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import sys
import time


def main_job_tasks(seeds: list[int], only: list[str]):
    """The main job's tasks for ``seeds`` whose ``"<env id> <agent>"`` contains one of ``only`` (all if empty)."""
    import icmlgym
    from icmlgym.runner import make_tasks

    tasks = []
    for env_id, kwargs in icmlgym.suite("installed"):
        c = icmlgym.card(env_id)
        if not c.installed:
            continue
        for name in c.agents:
            label = f"{c.id} {name}"
            if only and not any(s in label for s in only):
                continue
            tasks += make_tasks(c.id, name, seeds, "smoke", kwargs, None, None, "cpu", suite="installed")
    return tasks


def _child(task, w: int) -> None:
    """Run ``task`` here (a forked child); write its measurements and record to fd ``w``."""
    import builtins  # noqa: F401
    import importlib._bootstrap as bootstrap

    from icmlgym.runner import worker
    from icmlgym.runner.loop import execute

    prepare = getattr(worker, "_limit_blas", None)  # what a worker of this checkout does before its run
    if prepare is not None:
        prepare(task)
    before = set(sys.modules)
    spent = [0.0]
    depth = [0]
    original = bootstrap._find_and_load

    def timed(name, import_):
        depth[0] += 1
        t = time.process_time()
        try:
            return original(name, import_)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                spent[0] += time.process_time() - t

    bootstrap._find_and_load = timed
    c0 = time.process_time()
    rec = execute(task)
    cpu = time.process_time() - c0
    bootstrap._find_and_load = original
    new = sorted({m.split(".")[0] for m in set(sys.modules) - before} - {"icmlgym"})
    payload = pickle.dumps({"cpu_in_run": cpu, "import_cpu": spent[0], "new_packages": new,
                            "status": rec.status, "error": rec.error[:200], "record": rec.to_dict()})
    with os.fdopen(w, "wb") as fh:
        fh.write(payload)


def run_forked(task) -> dict:
    """Fork, run ``task`` in the child, and return its measurements (CPU of the whole child from ``wait4``)."""
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        code = 0
        try:
            _child(task, w)
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    out = pickle.loads(data) if data else {"status": "crashed", "error": f"wait status {status}", "record": None,
                                            "cpu_in_run": float("nan"), "import_cpu": float("nan"), "new_packages": []}
    out["cpu"] = usage.ru_utime + usage.ru_stime
    out["wall"] = wall
    return out


IGNORED = {"run_id", "timestamp", "wall_time", "train_wall_time", "git_commit", "code_hash", "agent_code_hash",
           "env_code_hash", "run_key"}
CLOCK = {"wall_ms", "reference_wall_ms", "wall_speedup"}


def comparable(d: dict) -> dict:
    """A record dict without the attempt's own fields, its code hashes and measured clock times."""
    d = {k: v for k, v in d.items() if k not in IGNORED and not k.endswith("_hash")}
    d["episodes"] = [{k: ({m: x for m, x in v.items() if m not in CLOCK} if k == "metrics" else v)
                      for k, v in e.items() if k != "wall_time"} for e in d.get("episodes", [])]
    return json.loads(json.dumps(d, sort_keys=True).replace("NaN", '"NaN"'))


def compare(a_path: str, b_path: str) -> int:
    """Compare two ``--records`` files entry by entry; 1 if any record differs."""
    a, b = (json.load(open(p)) for p in (a_path, b_path))
    common = sorted(set(a) & set(b))
    diff = [k for k in common if comparable(a[k]) != comparable(b[k])]
    print(f"{len(a)} vs {len(b)} records; {len(common)} in both; {len(diff)} differ")
    for k in diff:
        ca, cb = comparable(a[k]), comparable(b[k])
        fields = sorted(f for f in set(ca) | set(cb) if ca.get(f) != cb.get(f))
        print(f"  {k}: {fields}")
    return 1 if diff or not common else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=[], help='substrings of "<env id> <agent>" to select')
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each task (min/median/max of its CPU)")
    ap.add_argument("--records", help="write the records (by env, agent, seed) to this JSON file")
    ap.add_argument("--json", help="write the table rows to this JSON file")
    ap.add_argument("--forks", type=int, default=0,
                    help="also time this many empty children (fork, exit at once, reap): the fork's own cost")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two --records files and exit")
    args = ap.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.seeds < 1 or args.repeat < 1:
        ap.error("--seeds and --repeat must be at least 1")

    t_start = time.monotonic()
    tasks = main_job_tasks(list(range(args.seeds)), args.only)
    if not tasks:
        ap.error(f"no main-job entry matches {args.only}")
    from icmlgym.runner.worker import warm_modules

    # the whole sweep's modules, as the fork server gets them ($ICMLGYM_WARM_MODULES, read when
    # icmlgym.runner.warm is first imported: it must not be imported before this line)
    assert "icmlgym.runner.warm" not in sys.modules
    os.environ["ICMLGYM_WARM_MODULES"] = ",".join(sorted(set(warm_modules(main_job_tasks([0], [])))))
    import icmlgym.runner.warm  # noqa: F401  (warms this process, as the fork server)

    print(f"# warm-up {time.monotonic() - t_start:.1f} s; load {os.getloadavg()[0]:.2f}; {len(tasks)} tasks x {args.repeat}",
          flush=True)
    if args.forks:
        walls, cpus = [], []
        for _ in range(args.forks):
            t0 = time.monotonic()
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            _, _, usage = os.wait4(pid, 0)
            walls.append(time.monotonic() - t0)
            cpus.append(usage.ru_utime + usage.ru_stime)
        import resource

        walls.sort()
        print(f"# {args.forks} empty forks from a process of {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB "
              f"peak RSS: fork + exit + reap {walls[0] * 1e3:.1f} / {statistics.median(walls) * 1e3:.1f} / "
              f"{walls[-1] * 1e3:.1f} ms (min / median / max), child CPU {statistics.mean(cpus) * 1e3:.1f} ms",
              flush=True)
    rows, records = [], {}
    for task in tasks:
        label = f"{task.env_id} {task.agent} {task.seed}"
        runs = [run_forked(task) for _ in range(args.repeat)]
        cpus = sorted(r["cpu"] for r in runs)
        last = runs[-1]
        row = {"entry": label, "status": last["status"], "cpu_min": cpus[0], "cpu_median": statistics.median(cpus),
               "cpu_max": cpus[-1], "import_cpu": last["import_cpu"], "wall": last["wall"],
               "new_packages": last["new_packages"]}
        rows.append(row)
        if last["record"] is not None:
            records[label] = last["record"]
        print(f"{label:60s} {row['status']:7s} cpu {cpus[0]:6.2f}/{row['cpu_median']:6.2f}/{cpus[-1]:6.2f} s "
              f"imports {row['import_cpu']:5.2f} s wall {row['wall']:6.2f} s {' '.join(row['new_packages'])[:80]} "
              f"{last['error'][:100] if last['status'] != 'ok' else ''}", flush=True)
    total = sum(r["cpu_median"] for r in rows)
    imports = sum(r["import_cpu"] for r in rows)
    print(f"# {len(rows)} runs: {total:.1f} CPU-s (median of each), of which {imports:.1f} s importing; "
          f"load at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"load_end": os.getloadavg(), "rows": rows}, fh, indent=1)
    if args.records:
        with open(args.records, "w") as fh:
            json.dump(records, fh)


if __name__ == "__main__":
    main()
