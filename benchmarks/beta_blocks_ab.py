"""Two versions of ``icmlgym.baselines.draws.BetaBlocks`` in one process: Bandit-v0 ``bandit-thompson``,
64 seeds batched and 32 single runs, by CPU time, the versions alternated repeat by repeat.

    git show <rev>:icmlgym/baselines/draws.py > /tmp/old_draws.py
    python benchmarks/beta_blocks_ab.py /tmp/old_draws.py --repeats 12

Both the single agent (``baselines.bandit``) and its vector twin (``baselines.vector``) take the
class from the file given, then from the checkout. Runs in one process see the same CPU, caches
and load, which separate runs of ``benchmarks/limits.py`` on two trees do not (on the shared VM
two such runs of one tree differ by up to 20%). Before timing it checks that both versions give
the same episodes (the draws are the same stream).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", help="path of the other version's draws.py")
    ap.add_argument("--repeats", type=int, default=12)
    args = ap.parse_args()

    import icmlgym.baselines.bandit as single_mod
    import icmlgym.baselines.draws as new
    import icmlgym.baselines.vector as vector_mod
    from icmlgym.runner import execute
    from icmlgym.runner.api import make_tasks
    from icmlgym.runner.batched import execute_batch

    spec = importlib.util.spec_from_file_location("other_draws", args.old)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    versions = {"other": old.BetaBlocks, "checkout": new.BetaBlocks}

    def use(name: str) -> None:
        single_mod.BetaBlocks = vector_mod.BetaBlocks = versions[name]

    tasks = make_tasks("icmlgym/Bandit-v0", "bandit-thompson", seeds=64, tier="smoke")
    episodes = {}
    for name in versions:
        use(name)
        episodes[name] = [[e.metrics for e in r.episodes] for r in execute_batch(tasks)]
        assert [[e.metrics for e in execute(t).episodes] for t in tasks[:4]] == episodes[name][:4]
    assert episodes["other"] == episodes["checkout"], "the two versions draw different episodes"

    t: dict[tuple[str, str], list[float]] = {}
    for rep in range(args.repeats):
        for name in versions if rep % 2 == 0 else reversed(list(versions)):
            use(name)
            c = time.process_time()
            execute_batch(tasks)
            t.setdefault((name, "batch"), []).append(time.process_time() - c)
            c = time.process_time()
            for x in tasks[:32]:
                execute(x)
            t.setdefault((name, "single"), []).append((time.process_time() - c) * 2)  # per 64 runs
    print("| version | 64 seeds batched, CPU-s min / median | 64 single runs, CPU-s min / median | throughput (min / min) |")
    print("|---|---|---|---|")
    for name in versions:
        b, s = t[(name, "batch")], t[(name, "single")]
        print(f"| {name} | {min(b):.3f} / {statistics.median(b):.3f} | {min(s):.2f} / {statistics.median(s):.2f} | x{min(s) / min(b):.1f} |")


if __name__ == "__main__":
    main()
