"""Compare two leaderboard stores run by run (matched by run key): every record field except the
attempt's own (run id, timestamp, wall times, git commit). Exit 1 on any difference.

    python benchmarks/mainjob_compare.py A.db B.db [--with-clock-metrics] [--by-entry]

``--by-entry`` matches runs by env, agent, seed, tier and arguments instead of the run key, and
leaves out the code hashes (the run key holds the code hash: runs of changed code are other keys).

Used for the main job before and after a runner change (docs/performance.md, Session 6): the records
must be the same.
"""
import json
import sys
from icmlgym.leaderboard.store import Store

OWN = {"run_id", "timestamp", "wall_time", "train_wall_time", "git_commit"}
CODE = {"run_key", "code_hash", "agent_source_hash", "env_source_hash"}
BY_ENTRY = "--by-entry" in sys.argv
# metrics that are measured clock times (reasoning's speculative decoding): differ between any two runs
CLOCK = {"wall_ms", "reference_wall_ms", "wall_speedup"}


def load(path):
    s = Store(path, read_only=True)
    out = {}
    for r in s.iter_records():
        d = r.to_dict()
        key = d["run_key"]
        if BY_ENTRY:
            key = json.dumps([d["env_id"], d["agent_name"], d["seed"], d["tier"], d["env_kwargs"], d["agent_kwargs"]], sort_keys=True)
        for k in OWN | (CODE if BY_ENTRY else set()):
            d.pop(k, None)
        for e in d["episodes"]:
            e.pop("wall_time", None)
            if "--with-clock-metrics" not in sys.argv:
                for m in CLOCK & set(e["metrics"]):
                    e["metrics"].pop(m)
        # the measured device/hardware strings are the machine's; kept (same machine)
        out[key] = json.loads(json.dumps(d, sort_keys=True).replace("NaN", '"NaN"'))  # NaN equals NaN
    s.close()
    return out


a, b = load(sys.argv[1]), load(sys.argv[2])
only_a, only_b = set(a) - set(b), set(b) - set(a)
diff = [k for k in set(a) & set(b) if a[k] != b[k]]
print(f"{len(a)} vs {len(b)} runs; {len(set(a) & set(b))} keys in both; only in A {len(only_a)}, only in B {len(only_b)}; "
      f"{len(diff)} differ in content")
for k in sorted(diff)[:10]:
    fields = sorted(f for f in set(a[k]) | set(b[k]) if a[k].get(f) != b[k].get(f))
    print("  differs:", a[k]["env_id"], a[k]["agent_name"], a[k]["seed"], fields)
for k in sorted(only_a)[:5]:
    print("  only in A:", a[k]["env_id"], a[k]["agent_name"], a[k]["seed"], a[k]["status"])
for k in sorted(only_b)[:5]:
    print("  only in B:", b[k]["env_id"], b[k]["agent_name"], b[k]["seed"], b[k]["status"])
sys.exit(1 if diff or only_a or only_b else 0)
