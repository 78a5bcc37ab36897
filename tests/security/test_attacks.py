"""Issue #13's attacks as adversarial submissions: each fails, or ends as a failed run, in the sandbox.

Where an attack can cheat, the same agent run locally (in process, public seeds) shows
that the cheat is real; isolated with the board's hidden instances it does not pay.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from icmlgym.envs.bandit.bernoulli_bandit import BernoulliBanditEnv
from icmlgym.runner.evaluator import hidden_seed
from tests.security.conftest import ADVERSARIES, BANDIT, SECRET, SHORT, isolated, live_with_marker, local, side_by_side


def regret(rec) -> float:
    assert rec.status == "ok", rec.error
    return rec.episodes[0].metrics["pseudo_regret"]


def hidden_means(seed: int) -> np.ndarray:
    return BernoulliBanditEnv(instance_seed=hidden_seed(SECRET, f"{BANDIT}/instance_seed", seed)).means


@pytest.mark.parametrize("agent", ["TrainEnvReader", "Rebuilder"])
def test_reading_the_instance_through_train_env_or_a_rebuilt_env_does_not_pay(agent):
    assert regret(local(agent)) == 0.0  # the cheat works in process, on public instances
    rec = isolated(agent, hidden_seeds=SECRET)
    assert rec.isolation["seeds"] == "hidden" and rec.isolation["hidden_kwargs"] == ["instance_seed"]
    assert rec.env_spec["kwargs"]["instance_seed"] == "<hidden>"
    public_means = BernoulliBanditEnv().means
    truth = hidden_means(0)
    # the agent only ever sees the public instance; playing its best arm costs what it costs on the hidden one
    assert int(np.argmax(public_means)) != int(np.argmax(truth))
    assert regret(rec) == pytest.approx(SHORT["horizon"] * (truth.max() - truth[int(np.argmax(public_means))]))


def test_caller_frames_and_gc_hold_no_env():
    assert regret(local("FrameReader")) == 0.0  # in process the evaluation env is one frame up
    rec = isolated("FrameReader")
    assert "envs found through frames and gc: 0" in rec.log
    assert regret(rec) > 0


def test_patching_the_runner_and_the_env_changes_nothing():
    honest = local("random")
    patched = isolated("RunnerPatcher")
    assert patched.status == "ok"
    assert [e.metrics for e in patched.episodes] == [e.metrics for e in honest.episodes]
    assert patched.episodes[0].ret == honest.episodes[0].ret < SHORT["horizon"]


def test_forged_records_on_every_descriptor_are_a_failed_run():
    rec = isolated("RecordForger")
    assert rec.status == "failed" and rec.error.startswith("protocol:")
    assert rec.episodes == [] and rec.agent_name == "adversaries:RecordForger"


def test_impersonation_uses_the_submitters_name():
    rec = isolated("Impersonator")
    assert rec.status == "ok" and rec.agent_name == "adversaries:Impersonator"
    from icmlgym.runner.submission import SubmissionError

    with pytest.raises(SubmissionError, match="reserved"):
        isolated("Impersonator", name="bandit-thompson")


def test_forked_daemons_die_with_the_run(mode):
    marker = "icmlgym-security-forker"
    rec = isolated("Forker", mode=mode)
    assert rec.status == "ok", rec.error
    deadline = time.monotonic() + 5
    while live_with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = live_with_marker(marker)
    for pid in left:  # never leave them behind, whatever the assertion says
        os.kill(pid, 9)
    assert left == []


def test_memory_is_counted_over_the_whole_process_tree():
    rec = isolated("Hog", memory_mb=1000, env_kwargs={"horizon": 2000})
    assert rec.status == "failed"
    assert "MemoryError" in rec.error and "memory limit of 1000 MB" in rec.error
    assert rec.episodes == []


def test_process_count_and_cpu_time_limits():
    forker, late = side_by_side(lambda: isolated("Forker", max_processes=3), lambda: isolated("Late", cpu_seconds=0.5, call_timeout=60))
    assert forker.status == "failed" and "limit of 3 processes" in forker.error
    # sleeping uses no CPU: the call deadline, not the CPU limit, ends this one
    assert late.status == "failed"


def test_400_mb_of_output_goes_to_a_capped_log():
    rec = isolated("Printer")
    assert rec.status == "ok"
    assert len(rec.log) < 70_000 and "more bytes of agent output not kept" in rec.log
    assert rec.isolation["log_bytes"] >= 400 * 2**20


def test_a_50_mb_error_is_capped():
    rec = isolated("HugeError")
    assert rec.status == "failed" and rec.error.startswith("the agent raised: RuntimeError: EEEE")
    assert len(rec.error) < 70_000 and "more characters not kept" in rec.error


def test_environment_secrets_never_reach_the_agent_or_the_record(monkeypatch, mode):
    monkeypatch.setenv("ICMLGYM_ARENA_API_KEY", "sk-live-evaluator-key-123")
    monkeypatch.setenv("DATABASE_PASSWORD", "hunter2-database-pw")
    rec = isolated("SecretReader", mode=mode, agent_kwargs={"api_key": "sk-agent-kwarg-456"})
    assert rec.status == "failed"
    for text in (rec.error, rec.log, str(rec.to_dict())):
        assert "sk-live-evaluator-key-123" not in text and "hunter2-database-pw" not in text
        assert "sk-agent-kwarg-456" not in text
    assert rec.agent_kwargs == {"api_key": "<redacted>"}
    assert "ICMLGYM_ARENA_API_KEY" not in rec.error  # scrubbed: the agent never had it


@pytest.mark.parametrize("agent,reason", [("Garbler", "malformed frame header"), ("Oversized", "oversized message"), ("Late", "late"),
                                          ("LateMidway", "late: no the agent's answer to 'act_next' within its deadline")])
def test_malformed_oversized_and_late_messages_are_failed_runs(agent, reason):
    t0 = time.monotonic()
    # the frames of Garbler and Oversized must arrive before the deadline; Late's never does
    rec = isolated(agent, call_timeout=1.0 if agent.startswith("Late") else 2.0)
    assert rec.status == "failed" and rec.error.startswith("protocol:") and reason in rec.error
    assert time.monotonic() - t0 < 20


def test_sleeping_at_import_is_late_and_never_runs_here(tmp_path):
    agent = tmp_path / "sleepy.py"
    agent.write_text("import time\ntime.sleep(3600)\nfrom icmlgym.baselines.generic import RandomAgent\nclass Sleepy(RandomAgent):\n    pass\n")
    t0 = time.monotonic()
    rec = isolated(f"{agent}:Sleepy", load_timeout=1.0)
    assert rec.status == "failed" and "late" in rec.error
    assert time.monotonic() - t0 < 15
    assert not any("sleepy" in m for m in __import__("sys").modules)


def test_honest_agents_score_bit_for_bit_as_a_local_run(mode):
    agents = ("ucb1", "Trainer") if mode == "bwrap" else ("random",)
    isolated_runs = side_by_side(*[lambda a=a: isolated(a, mode=mode, seed=3, episodes=2) for a in agents])
    for agent, there in zip(agents, isolated_runs):
        here = local(agent, seed=3, episodes=2)
        assert there.status == "ok", there.error
        assert there.isolation["seeds"] == "public"
        assert [(e.ret, e.length, e.metrics, e.cost) for e in there.episodes] == [(e.ret, e.length, e.metrics, e.cost) for e in here.episodes]
