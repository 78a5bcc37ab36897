"""Screening-v0 and ScreeningCompounds-v0: API conformance, determinism, budgets, meters, metrics."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import icmlgym
from icmlgym.envs.screening.screening_env import ScreeningCompoundsEnv, ScreeningEnv

from .conftest import TINY_LIBRARY

SMALL = {"library": TINY_LIBRARY, "inference_batch": 10, "eval_batch": 2, "eval_budget": 40}


pytestmark = pytest.mark.filterwarnings("ignore:.*Box observation space m:UserWarning")


def _rollout(env, actions_fn, seed):
    obs, info = env.reset(seed=seed)
    traj = []
    while True:
        a = actions_fn(obs, info)
        obs, r, term, trunc, info = env.step(a)
        traj.append((a if not isinstance(a, dict) else tuple(a.values()), r, tuple(info["evaluated"]["indices"].tolist())))
        if term or trunc:
            return traj, info


@pytest.mark.parametrize("partition", ["reagent", "reagent:1", "reagent:amines", "reaction", "cluster:4", "random"])
def test_screening_env_passes_check_env(partition):
    env = ScreeningEnv(partition=partition, **SMALL)
    check_env(env, skip_render_check=True)


def test_compounds_env_passes_check_env():
    check_env(ScreeningCompoundsEnv(**{k: v for k, v in SMALL.items() if k != "inference_batch"}), skip_render_check=True)


def test_registered_ids_make_and_smoke_tier():
    env = icmlgym.make("icmlgym/Screening-v0", **icmlgym.card("icmlgym/Screening-v0").tier("smoke").env_kwargs)
    assert env.unwrapped.library.size == 30_000 and env.action_space.n == 120
    env.close()
    env = icmlgym.make("icmlgym/ScreeningCompounds-v0", **icmlgym.card("icmlgym/ScreeningCompounds-v0").tier("smoke").env_kwargs)
    assert env.action_space["compound"].n == 30_000
    env.close()


def test_deterministic_under_seed():
    env = ScreeningEnv(**SMALL)

    def policy(obs, info, rng=np.random.default_rng(0)):
        return int(np.argmax(obs["remaining"] + obs["mean_reward"]))

    a, info_a = _rollout(env, policy, seed=7)
    b, info_b = _rollout(env, policy, seed=7)
    c, _ = _rollout(env, policy, seed=8)
    assert a == b and repr(info_a["metrics"]) == repr(info_b["metrics"])  # repr: NaN == NaN
    assert a != c
    env2 = ScreeningCompoundsEnv(**{k: v for k, v in SMALL.items() if k != "inference_batch"})
    full = lambda obs, info: {"op": 1, "compound": 0}  # noqa: E731
    assert _rollout(env2, full, 3)[0] == _rollout(env2, full, 3)[0]


def test_invalid_actions_raise_value_error_naming_space():
    env = ScreeningEnv(**SMALL)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 999 is not in the action space Discrete"):
        env.step(999)
    cenv = ScreeningCompoundsEnv(**{k: v for k, v in SMALL.items() if k != "inference_batch"})
    cenv.reset(seed=0)
    with pytest.raises(ValueError, match="is not in the action space Dict"):
        cenv.step({"op": 2, "compound": 0})
    with pytest.raises(ValueError, match="is not in the action space"):
        cenv.step(3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"eval_batch": 0}, "eval_batch must be a positive integer"),
        ({"eval_batch": 50, "eval_budget": 10}, "cannot exceed eval_budget"),
        ({"partition": "stripes"}, "unknown partition"),
        ({"partition": "reagent:7"}, "reagent axis 7 is out of range"),
        ({"partition": "reagent:alcohols"}, "unknown building-block set 'alcohols'"),
        ({"oracle": "magic"}, "unknown oracle kind"),
        ({"oracle": {"kind": "similarity", "query": "C1CC"}}, "not a valid SMILES"),
        ({"surrogate": "svm"}, "unknown surrogate"),
        ({"cost_weights": {"gpu_hours": 1.0}}, "unknown cost_weights"),
        ({"library": {"kind": "zip"}}, "unknown library kind"),
    ],
)
def test_bad_arguments_are_reported(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ScreeningEnv(**{**SMALL, **kwargs})


def test_budgets_meters_and_metrics():
    env = ScreeningEnv(**SMALL)
    obs, info = env.reset(seed=1)
    assert info["cost"] == {"surrogate_inferences": 0.0, "evaluations": 0.0, "enumerations": 0.0}
    steps, done = 0, False
    while not done:
        obs, r, term, trunc, info = env.step(steps % env.action_space.n)
        steps += 1
        done = term or trunc
        c = info["cost"]
        assert c["evaluations"] <= 40 and c["surrogate_inferences"] <= 200
        assert c["enumerations"] <= c["surrogate_inferences"]  # built once, maybe drawn and inferred again
    assert term and not trunc
    assert info["cost"]["evaluations"] == 40 and steps == 20
    m = info["metrics"]
    assert set(m) >= {"top_k_recall", "top1pct_recall", "auc_recall_cost", "best_score", "fraction_inferred", "total_cost"}
    assert all(isinstance(v, float) for v in m.values())
    assert 0 <= m["top_k_recall"] <= 1 and 0 <= m["auc_recall_cost"] <= m["top_k_recall"]
    c = info["cost"]
    assert c["surrogate_inferences"] == 20 * 10  # rejected compounds may be drawn again
    assert m["fraction_inferred"] == pytest.approx(c["enumerations"] / env.library.size)  # distinct compounds
    assert m["total_cost"] == pytest.approx(c["surrogate_inferences"] + c["enumerations"] + 100 * c["evaluations"])
    # recall recomputed by brute force from what was evaluated
    idx, obj = env.evaluated()
    truth = np.sort(env.truth.objective)[::-1]
    hits = int((obj >= truth[99]).sum())
    assert m["top_k_recall"] == pytest.approx(min(hits, 100) / 100)
    assert m["best_score"] == pytest.approx(obj.max())
    assert info["curves"]["top_k_recall"][-1] == m["top_k_recall"]
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(0)


def test_exhausted_arms_and_discard_inferred():
    env = ScreeningEnv(library=TINY_LIBRARY, partition="reaction", inference_batch=400, eval_batch=5, eval_budget=100)
    obs, _ = env.reset(seed=0)
    obs, r, term, trunc, info = env.step(0)  # reaction 0 has 180 compounds: all drawn at once
    assert info["drawn"] == 180 and obs["remaining"][0] == pytest.approx(175 / 180)
    obs, r, term, trunc, info = env.step(0)  # the 175 unevaluated ones are drawn (and inferred) again
    assert info["drawn"] == 175 and info["cost"]["surrogate_inferences"] == 355
    assert info["cost"]["enumerations"] == 180  # each compound is built once
    env = ScreeningEnv(library=TINY_LIBRARY, partition="reaction", inference_batch=400, eval_batch=5, eval_budget=100,
                       discard_inferred=True)
    obs, _ = env.reset(seed=0)
    obs, r, term, trunc, info = env.step(0)
    assert obs["remaining"][0] == 0.0 and info["drawn"] == 180
    obs, r, term, trunc, info = env.step(0)  # nothing left there: no cost, reward 0
    assert r == 0.0 and info["drawn"] == 0 and info["cost"]["evaluations"] == 5


def test_lookup_ground_truth_and_hit_threshold(tmp_path):
    import pandas as pd

    from icmlgym.envs.screening.problem import build_library

    lib = build_library(TINY_LIBRARY)
    smiles = lib.smiles(np.arange(lib.size))
    scores = np.arange(lib.size, dtype=float) / 100  # docking-like: lower is better; compound 0 is the best
    path = tmp_path / "scores.csv"
    pd.DataFrame({"smiles": smiles, "score": scores}).to_csv(path, index=False)
    env = ScreeningEnv(
        library=TINY_LIBRARY, oracle={"kind": "lookup", "table": str(path), "maximize": False},
        inference_batch=10, eval_batch=10, eval_budget=900, hit_threshold=0.5, top_k=10,
    )
    env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, info = env.step(0)
        done = term or trunc
        if not done:
            done = bool(info.get("drawn", 1) == 0)
    # reagent partition: arm 0 is amine 0 (15 amides), which holds compounds 0..14, the 10 best
    m = env._metrics()
    assert m["top_k_recall"] == 1.0 and m["best_score"] == 0.0
    assert m["hits_over_threshold"] == 15.0  # scores 0.00 .. 0.14, all at least as good as 0.5


def test_cache_location_is_overridable(tmp_path, monkeypatch):
    from icmlgym.envs.screening import cache

    assert cache.cache_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.setenv("ICMLGYM_HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / "screening"
    monkeypatch.delenv("ICMLGYM_HOME")
    assert cache.cache_dir().parts[-3:] == (".cache", "icmlgym", "screening")


def test_ground_truth_cache_is_safe_under_concurrent_processes(tmp_path):
    """Two processes compute the same ground truth at once: both succeed, the cache holds one valid file."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from icmlgym.envs.screening.problem import build_library, ground_truth\n"
        "from icmlgym.envs.screening.oracles import make_oracle\n"
        "lib = build_library({'kind': 'embedded', 'n_amines': 30, 'n_acids': 40, 'reactions': ['amide']})\n"
        "gt = ground_truth(lib, make_oracle('similarity'), cache_dir=sys.argv[1])\n"
        "print(repr(float(gt.objective.sum())))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs[0] == outs[1]
    assert len(list(tmp_path.glob("truth-*.npz"))) == 1 and not list(tmp_path.glob("*.tmp"))
    from icmlgym.envs.screening.cache import load_arrays

    name = next(tmp_path.glob("truth-*.npz")).name
    assert repr(float(load_arrays(name, tmp_path)["objective"].sum())) == outs[0]


def test_ground_truth_matches_brute_force():
    from rdkit import Chem, DataStructs
    from rdkit.Chem import rdFingerprintGenerator

    from icmlgym.envs.screening.oracles import DEFAULT_QUERY

    env = ScreeningEnv(**SMALL)
    smiles = env.library.smiles(np.arange(env.library.size))
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
    q = gen.GetFingerprint(Chem.MolFromSmiles(DEFAULT_QUERY))
    sims = DataStructs.BulkTanimotoSimilarity(q, [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in smiles])
    assert np.allclose(env.truth.objective, sims)


def test_no_ground_truth_for_large_libraries_reports_best_and_hits():
    env = ScreeningEnv(
        library={"kind": "embedded", "n_amines": 200, "n_acids": 200, "n_aminobenzoic_acids": 20},
        inference_batch=20, eval_batch=4, eval_budget=40, ground_truth_max=10_000, hit_threshold=0.2,
    )
    assert env.truth is None and env.library.size == 840_000
    env.reset(seed=0)
    done = False
    while not done:
        _, _, t, tr, info = env.step(0)
        done = t or tr
    m = info["metrics"]
    assert m["ground_truth"] == 0.0 and np.isnan(m["top_k_recall"]) and np.isnan(m["auc_recall_cost"])
    assert m["best_score"] > 0 and m["hits_over_threshold"] >= 0
    with pytest.raises(ValueError, match="no exact ground truth"):
        ScreeningEnv(library={"kind": "embedded", "n_amines": 200, "n_acids": 200, "n_aminobenzoic_acids": 20},
                     ground_truth=True, ground_truth_max=10_000)


def test_random_forest_surrogate_in_the_env():
    env = ScreeningEnv(**{**SMALL, "surrogate": {"kind": "rf", "n_estimators": 10, "refit_every": 4}})
    env.reset(seed=0)
    done, t = False, 0
    while not done:
        _, _, term, trunc, info = env.step(t % env.action_space.n)
        done, t = term or trunc, t + 1
    assert info["cost"]["evaluations"] == 40 and 0 <= info["metrics"]["top_k_recall"] <= 1
    curves = info["curves"]
    assert len(curves["evaluations"]) == len(curves["top1pct_recall"]) == len(curves["total_cost"]) == 21
    assert np.all(np.diff(curves["top_k_recall"]) >= 0) and np.all(np.diff(curves["total_cost"]) > 0)


def test_partition_suite_lists_every_axis():
    suite = icmlgym.suite("screening-partitions")
    parts = [kw["partition"] for env_id, kw in suite]
    assert parts == ["reagent:amines", "reagent:acids", "cluster:20:amines", "random"]
    for env_id, kw in suite:
        rec = icmlgym.run(env_id, "screening-boba", seeds=[0], env_kwargs=kw)[0]
        assert rec.status == "ok", rec.error
