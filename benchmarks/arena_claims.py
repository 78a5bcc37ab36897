"""The numbers behind the arena finding tests (tests/arena/test_findings.py), for docs/arena.md.

Run from the repository root: ``PYTHONPATH=. /work/venv/bin/python benchmarks/arena_claims.py``

Prints: VPO's final photo head-to-head against the original and against the random-edit
agent's photo (pooled over env seeds 0-5, Wilson 95% intervals), the Spearman correlation
of recovered vs true chooser weights (experiment seeds 0-2, 800 counterbalanced pairs), and
the position-bias test for a biased and an unbiased chooser (seeds 0-2, 500 pairs).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from icmlgym.envs.arena import revealed as R
from icmlgym.envs.arena.choosers import DEFAULT_WEIGHTS, SyntheticChooser
from icmlgym.envs.arena.features import FEATURES
from tests.arena.test_findings import _final_target, _head_to_head


def main() -> None:
    judge = SyntheticChooser(seed=12345)
    for rival in ("original", "random", "arena-greedy"):
        wins = n = 0
        for seed in range(6):
            vpo, original, _ = _final_target("arena-vpo", seed)
            other = original if rival == "original" else _final_target(rival, seed)[0]
            wins += _head_to_head(judge, vpo, other, 100)
            n += 100
        lo, hi = R.wilson_interval(wins, n)
        print(f"VPO final vs {rival}: {wins}/{n} = {wins / n:.3f}, Wilson 95% ({lo:.3f}, {hi:.3f})")
    true = np.array([DEFAULT_WEIGHTS[f] for f in FEATURES])
    for seed in range(3):
        recs, bank = R.run_preference_experiment(SyntheticChooser(seed=seed), n_pairs=800, seed=seed)
        fit = R.fit_feature_utility(recs, bank)
        k = fit.names.index("slot_0")
        print(
            f"recovery seed {seed}: Spearman {stats.spearmanr(true, fit.beta).statistic:.3f}; "
            f"fitted {np.round(fit.beta, 2).tolist()}; slot_0 {fit.coef[k]:.2f} ({fit.lo[k]:.2f}, {fit.hi[k]:.2f})"
        )
    print("true weights", true.tolist())
    for seed in range(3):
        for name, bias, off in (("biased 0.4", (0.4,), 0), ("unbiased", (), 100)):
            recs, bank = R.run_preference_experiment(SyntheticChooser(position_bias=bias, seed=seed), n_pairs=500, seed=seed + off)
            rep = R.position_bias(recs, bank.covariates, FEATURES)
            print(
                f"position seed {seed} {name}: slot0 {rep.slot_effects[0]:+.3f} ({rep.slot_lo[0]:+.3f}, {rep.slot_hi[0]:+.3f}), "
                f"LR p={rep.p_value:.2g}, first-slot rate {rep.first_slot_rate:.3f}, order-flip rate {rep.order_flip_rate:.3f}, "
                f"flagged={rep.flagged}"
            )


if __name__ == "__main__":
    main()
