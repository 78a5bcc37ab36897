"""Where the main job's wall time goes: per family and env, from an ``icmlgym benchmark`` progress log.

    ICMLGYM_HOME=<fresh dir> icmlgym benchmark 2> log        # the per-run lines go to stderr when it is not a TTY
    python benchmarks/mainjob_wall.py log [--workers 2] [--wall SECONDS] [--top 12] [--plot out.png]

Each progress line (``[ 12/180] icmlgym/Bandit-v0 ucb1 seed 2: ok in 0.4 s · 1m02s elapsed, ...``)
gives one run's own time (its record's ``wall_time``: env construction, agent load or
training, episodes, record) and the sweep's elapsed time when it finished. The table sums
the runs' own time per family and env: its share of all run time is its share of the
workers' busy time. What the workers spent outside runs (forking a worker, shipping the
record, a worker idle while the last runs finish) is ``workers x wall - sum of run time``:
the executor's overhead plus the tail. Per family, "wall while its runs finished" sums the
sweep clock's advance up to each of its progress lines (families run one after another,
overlapping at their borders), and "outside runs per run" is that wall times the workers,
minus the family's run time, per run: for the cheap families it is the executor's
per-run overhead (1 s clock resolution, so only over many runs). ``--wall`` gives the sweep's wall time when the log
ends before the summary line (default: the last line's elapsed time).
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict

LINE = re.compile(
    r"\[\s*(\d+)/(\d+)\]\s+(\S+)\s+(\S+)\s+seed\s+(-?\d+):\s+(\w+)\s+in\s+([\d.]+)\s+s\s+·\s+(?:(\d+)h)?(?:(\d+)m)?(\d+)s elapsed"
)


def family_of(env_id: str) -> str:
    """The env's family: the package of its card's entry point (``icmlgym.envs.<family>....``)."""
    from icmlgym.catalog import card
    from icmlgym.envs import register_all

    register_all()
    try:
        module = card(env_id).entry_point.split(":")[0].split(".")
    except KeyError:
        return "?"
    return module[2] if len(module) > 2 and module[:2] == ["icmlgym", "envs"] else module[0]


def parse(path: str) -> tuple[list[dict], int, float]:
    runs, total, elapsed = [], 0, 0.0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = LINE.search(line)
            if not m:
                continue
            _, tot, env, agent, seed, status, secs, h, mins, s = m.groups()
            total = int(tot)
            elapsed = 3600 * int(h or 0) + 60 * int(mins or 0) + int(s)
            runs.append({"env": env, "agent": agent, "seed": int(seed), "status": status, "secs": float(secs), "elapsed": elapsed})
    return runs, total, float(elapsed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--wall", type=float, default=None, help="the sweep's wall time in seconds (default: last elapsed)")
    ap.add_argument("--top", type=int, default=12, help="entries (env x agent) listed by their run time")
    ap.add_argument("--plot", default=None, help="write a bar chart of run time per family here (needs matplotlib)")
    args = ap.parse_args()
    runs, total, elapsed = parse(args.log)
    if not runs:
        raise SystemExit(f"{args.log}: no progress lines found")
    wall = args.wall if args.wall is not None else elapsed
    busy = sum(r["secs"] for r in runs)
    fams: dict[str, dict] = defaultdict(lambda: {"runs": 0, "secs": 0.0, "envs": defaultdict(float), "failed": 0, "wall": 0.0})
    entries: dict[tuple[str, str], list[float]] = defaultdict(list)
    previous = runs[0]["elapsed"] - runs[0]["secs"]  # the start-up before the first run is nobody's
    for r in runs:
        f = fams[family_of(r["env"])]
        f["wall"] += r["elapsed"] - previous  # the sweep's clock advanced while this run finished: its family's wall
        previous = r["elapsed"]
        f["runs"] += 1
        f["secs"] += r["secs"]
        f["envs"][r["env"]] += r["secs"]
        f["failed"] += r["status"] != "ok"
        entries[(r["env"], r["agent"])].append(r["secs"])
    print(f"{len(runs)} of {total} runs logged; wall {wall:.0f} s x {args.workers} workers = {wall * args.workers:.0f} worker-s; "
          f"sum of run time {busy:.0f} s; outside runs (executor overhead + tail) {wall * args.workers - busy:.0f} worker-s "
          f"({100 * (1 - busy / (wall * args.workers)):.0f}%)\n")
    first = runs[0]["elapsed"] - runs[0]["secs"]
    print(f"start-up before the first run (imports, catalog, warm server): about {first:.0f} s\n")
    print("| family | runs | run time (s) | share of run time | wall while its runs finished (s) | outside runs per run (s) | slowest env (s) |")
    print("|---|---|---|---|---|---|---|")
    for name, f in sorted(fams.items(), key=lambda kv: -kv[1]["secs"]):
        env, secs = max(f["envs"].items(), key=lambda kv: kv[1])
        failed = f" ({f['failed']} not ok)" if f["failed"] else ""
        outside = max(0.0, f["wall"] * args.workers - f["secs"]) / f["runs"]
        print(f"| {name} | {f['runs']}{failed} | {f['secs']:.1f} | {100 * f['secs'] / busy:.1f}% | "
              f"{f['wall']:.0f} | {outside:.2f} | {env.split('/')[-1]} {secs:.1f} |")
    print(f"\n| entry (env, agent) | runs | run time (s) | mean per run (s) |\n|---|---|---|---|")
    for (env, agent), secs in sorted(entries.items(), key=lambda kv: -sum(kv[1]))[: args.top]:
        print(f"| {env.split('/')[-1]} {agent} | {len(secs)} | {sum(secs):.1f} | {sum(secs) / len(secs):.1f} |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = sorted(fams, key=lambda n: fams[n]["secs"])
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(names) + 1))
        ax.barh(names, [fams[n]["secs"] for n in names])
        ax.set_xlabel("sum of run time (s)")
        ax.set_title(f"icmlgym benchmark: {len(runs)} runs, {wall:.0f} s wall on {args.workers} workers")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)


if __name__ == "__main__":
    main()
