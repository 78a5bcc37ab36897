"""MidtrainingSchedule-v0: the sources and their distances, the schedule, mixtures, bad input, the agents."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("skills"), reason="needs the [skills] extra (torch)")

import icmlgym  # noqa: E402
from icmlgym.corpora import domains  # noqa: E402

ENV = "icmlgym/MidtrainingSchedule-v0"
TINY = {"n_chunks": 2, "steps_per_chunk": 3, "post_steps": 2, "batch_size": 4, "eval_size": 8, "seq_len": 12}


def test_sources_are_what_they_claim():
    rng = np.random.default_rng(0)
    arith = domains.sample("arith", rng, 4, 40)
    # every line "a + b = c ;" is a true sum
    for row in arith:
        toks = list(row)
        first = toks.index(domains.SEMI) + 1
        line = toks[first:]
        end = line.index(domains.SEMI)
        a, plus, b, eq, *c = line[:end]
        assert plus == domains.PLUS and eq == domains.EQ
        assert (a - domains.DIGIT0) + (b - domains.DIGIT0) == int("".join(str(d - domains.DIGIT0) for d in c))
    code = domains.sample("code", rng, 4, 40)
    assert np.all((code == domains.OPEN).sum(1) >= 0) and set(np.unique(code)) <= set(range(domains.VOCAB))
    # near is closer to general than the far domains, and general is at distance ~0 from itself
    d = {s: domains.distance(s, n=500) for s in domains.SOURCES}
    assert d["general"] < 0.05 < d["near"] < d["code"] and d["near"] < d["arith"]
    with pytest.raises(ValueError, match="unknown source 'prose'"):
        domains.sample("prose", rng, 1, 4)


def test_source_distances_are_kept_on_disk_across_processes(monkeypatch, tmp_path):
    """Each run is a fresh worker: the distances it reports come from the cache after the first,
    the same floats as computed (a corrupt entry is recomputed)."""
    from icmlgym.envs.skills import midtraining as mt

    monkeypatch.setenv("ICMLGYM_HOME", str(tmp_path))
    monkeypatch.setattr(mt, "_DISTANCES", {})
    computed = mt.source_distance("arith")
    assert computed == domains.distance("arith")
    monkeypatch.setattr(mt, "_DISTANCES", {})  # a new process: empty in memory, the entry on disk

    def not_again(*a, **k):
        raise AssertionError("recomputed although cached")

    monkeypatch.setattr(domains, "distance", not_again)
    assert mt.source_distance("arith") == computed
    (entry,) = (tmp_path / "cache" / "skills").glob("*.json")
    entry.write_text("{not json")
    monkeypatch.setattr(mt, "_DISTANCES", {})
    with pytest.raises(AssertionError, match="recomputed"):
        mt.source_distance("arith")


def test_learning_rate_schedule_warms_up_then_decays_to_a_tenth():
    env = icmlgym.make(ENV, **TINY).unwrapped
    lrs = env._lrs
    assert lrs.argmax() <= len(lrs) // 10 + 1
    assert lrs[-1] == pytest.approx(0.1 * env.lr, rel=0.05)
    assert np.all(np.diff(lrs[lrs.argmax():]) <= 1e-12)


def test_mixtures_are_normalised_and_counted():
    env = icmlgym.make(ENV, **TINY).unwrapped
    env.reset(seed=0)
    a = np.array([0.2, 0.0, 0.2, 0.0], np.float32)  # sums to 0.4: normalised to 0.5 / 0.5
    _, _, _, _, info = env.step(a)
    _, r, term, _, info = env.step(a)
    m = info["metrics"]
    assert term and r == pytest.approx(m["objective"]) == pytest.approx(-(m["target_loss"] + m["general_loss"]))
    assert m["tokens_near"] == m["tokens_arith"] == 0.0
    total = TINY["n_chunks"] * TINY["steps_per_chunk"] * TINY["batch_size"] * TINY["seq_len"]
    # the post-training tokens (all target) come on top of the chunks' mixture
    assert m["tokens_general"] + m["tokens_code"] == total + TINY["post_steps"] * TINY["batch_size"] * TINY["seq_len"]
    assert info["cost"]["gradient_steps"] == TINY["n_chunks"] * TINY["steps_per_chunk"] + TINY["post_steps"]


def test_the_same_seed_and_schedule_give_the_same_run():
    env = icmlgym.make(ENV, **TINY).unwrapped
    out = []
    for _ in range(2):
        env.reset(seed=5)
        for _ in range(TINY["n_chunks"]):
            _, _, _, _, info = env.step(np.array([0.5, 0.1, 0.3, 0.1], np.float32))
        out.append(info["metrics"])
    assert out[0] == out[1]


@pytest.mark.parametrize(
    "action, message",
    [
        (np.zeros(4, np.float32), "all zero: nothing to normalise"),
        (np.array([0.5, -0.1, 0.3, 0.3], np.float32), r"must lie in the action space"),
        (np.array([0.5, np.nan, 0.3, 0.2], np.float32), "must be finite"),
        (np.ones(3, np.float32), r"shape \(3,\), expected \(4,\)"),
    ],
)
def test_bad_mixtures_are_refused(action, message):
    env = icmlgym.make(ENV, **TINY).unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(action)


def test_bad_sources_and_targets_are_named():
    with pytest.raises(ValueError, match="unknown source 'prose'"):
        icmlgym.make(ENV, sources=("general", "prose"))
    with pytest.raises(ValueError, match="unknown target 'prose'"):
        icmlgym.make(ENV, target="prose")
    with pytest.raises(ValueError, match="must include 'general'"):
        icmlgym.make(ENV, sources=("code", "arith"), target="code")


def test_stable_baselines3_check_env_passes():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a plain Box in [0, 1]: no advice expected beyond the normalised-range note
        warnings.filterwarnings("ignore", message=".*symmetric and normalized Box action space.*")
        warnings.filterwarnings("ignore", message=".*not bounded.*|.*infinity.*")
        check_env(icmlgym.make(ENV, **TINY).unwrapped)


@pytest.mark.parametrize("agent", ["midtrain-bridge", "midtrain-general-only", "midtrain-continued", "midtrain-early-high", "midtrain-late-high"])
def test_schedules_put_the_target_where_they_say(agent):
    (rec,) = icmlgym.run(ENV, agent, seeds=1, env_kwargs={**TINY, "n_chunks": 4})
    assert rec.status == "ok", rec.error
    m = rec.episodes[0].metrics
    post = TINY["post_steps"] * TINY["batch_size"] * TINY["seq_len"]
    chunk = TINY["steps_per_chunk"] * TINY["batch_size"] * TINY["seq_len"]
    mid = m["tokens_code"] - post  # target tokens before post-training
    expected = {"midtrain-general-only": 0, "midtrain-continued": 2 * chunk, "midtrain-bridge": 0.3 * 2 * chunk,
                "midtrain-early-high": 0.5 * 4 * chunk, "midtrain-late-high": 0.5 * chunk}[agent]
    assert mid == pytest.approx(expected, abs=0.25 * chunk + 1)


def test_grid_agent_keeps_its_best_point():
    (rec,) = icmlgym.run(ENV, "midtrain-grid", seeds=1, env_kwargs=TINY)
    assert rec.status == "ok", rec.error
