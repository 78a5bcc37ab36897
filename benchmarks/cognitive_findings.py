"""Heavy-tailed vs light-tailed (and free) RNNs on icmlgym/CognitiveRNN-v0, paired over seeds.

Runs the reference (Dale + log-normal magnitudes held by OT) and its comparators through
``icmlgym.run`` on the same seeds (same training trials, same evaluation trials, same
initial gain), and prints, per metric, each agent's mean and the paired difference
reference - comparator with a 95% t-interval over seeds and the count of seeds where
the difference is positive. The figures in docs/cognitive.md come from:

    python benchmarks/cognitive_findings.py --task perceptual_decision --seeds 10
    python benchmarks/cognitive_findings.py --task context_integration --seeds 10
    python benchmarks/cognitive_findings.py --task context_integration --seeds 10 --shape 1.5 \
        --agents cognitive-dale-lognormal,cognitive-dale-halfnormal

(defaults: 64 units, 32 training trials, the standard tier's 300 gradient steps, log-normal shape 1.0).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

import icmlgym

METRICS = ("test_accuracy", "heldout_accuracy", "generalisation_gap", "effective_rank", "participation_ratio", "readout_error", "tail_index")
AGENTS = ("cognitive-dale-lognormal", "cognitive-dale-halfnormal", "cognitive-dale", "cognitive-unconstrained")


def paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, int]:
    """Mean of a - b, its 95% t-interval over the pairs, and how many pairs are positive."""
    d = np.asarray(a, float) - np.asarray(b, float)
    m = float(d.mean())
    half = float(stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")
    return m, m - half, m + half, int((d > 0).sum())


def measure(task: str, seeds: list[int], n_hidden: int, n_train: int, tier: str, shape: float, agents=AGENTS) -> dict[str, dict[str, np.ndarray]]:
    """agent -> metric -> per-seed values (the tier sets the gradient-step budget: smoke 100, standard 300)."""
    env_kwargs = {"task": task, "n_hidden": n_hidden, "n_train_trials": n_train, "n_eval_trials": 256}
    out: dict[str, dict[str, np.ndarray]] = {}
    for agent in agents:
        kw = {} if agent == "cognitive-unconstrained" else {"shape": shape}
        recs = icmlgym.run("icmlgym/CognitiveRNN-v0", agent, seeds=seeds, tier=tier, env_kwargs=env_kwargs, agent_kwargs=kw)
        bad = [r.error for r in recs if r.status != "ok"]
        if bad:
            raise RuntimeError(bad[0])
        out[agent] = {m: np.array([r.metric(m)[0] for r in recs]) for m in METRICS}
    return out


def table(results: dict[str, dict[str, np.ndarray]]) -> str:
    agents = list(results)
    reference = agents[0]
    lines = ["| metric | " + " | ".join(agents) + " | " + " | ".join(f"ref - {a.removeprefix('cognitive-')} [95% CI] (ref > on)" for a in agents[1:]) + " |"]
    lines.append("|" + "---|" * (1 + len(agents) + len(agents) - 1))
    n = len(next(iter(results.values()))[METRICS[0]])
    for m in METRICS:
        means = [f"{results[a][m].mean():.3f}" for a in agents]
        diffs = []
        for a in agents[1:]:
            d, lo, hi, pos = paired(results[reference][m], results[a][m])
            diffs.append(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}] ({pos}/{n})")
        lines.append(f"| {m} | " + " | ".join(means) + " | " + " | ".join(diffs) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="perceptual_decision")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n-hidden", type=int, default=64)
    ap.add_argument("--n-train", type=int, default=32)
    ap.add_argument("--tier", default="standard", help="sets the gradient steps: smoke 100, standard 300")
    ap.add_argument("--shape", type=float, default=1.0, help="log-normal shape (s.d. of log-magnitude)")
    ap.add_argument("--agents", default=",".join(AGENTS), help="comma-separated; the first is the reference of the differences")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    res = measure(args.task, list(range(args.seeds)), args.n_hidden, args.n_train, args.tier, args.shape, agents=tuple(args.agents.split(",")))
    print(f"task={args.task} seeds={args.seeds} n_hidden={args.n_hidden} n_train={args.n_train} tier={args.tier} shape={args.shape} ({time.perf_counter() - t0:.0f} s)")
    print(table(res))


if __name__ == "__main__":
    main()
