"""One CPU per isolated run (runner/affinity.py) and the pipe transport of the sandbox's channel."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from icmlgym.runner.affinity import ENV_SWITCH, CpuClaim, current_cpu, pin_self, pinning_enabled, unpin_self
from icmlgym.runner.channel import STEP, Channel, ProtocolError, expect

needs_two_cpus = pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                                    reason="pinning needs at least two CPUs in the affinity mask")


def test_current_cpu_is_in_the_mask() -> None:
    assert current_cpu() in os.sched_getaffinity(0)


def test_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_SWITCH, raising=False)
    assert pinning_enabled() and not pinning_enabled(False)
    for off in ("0", "false", "no", "OFF"):
        monkeypatch.setenv(ENV_SWITCH, off)
        assert not pinning_enabled()
    monkeypatch.setenv(ENV_SWITCH, "1")
    assert pinning_enabled()


def test_a_disabled_claim_pins_nothing() -> None:
    before = os.sched_getaffinity(0)
    claim = CpuClaim.take(enabled=False)
    assert claim.cpu is None and os.sched_getaffinity(0) == before
    claim.release()


@needs_two_cpus
def test_parallel_claims_get_distinct_cpus_and_release_restores_the_mask() -> None:
    """Two evaluator threads (as `side_by_side` runs them) each keep a core of their own; a third
    claim while every core is held pins nothing; release restores each thread's mask."""
    allowed = os.sched_getaffinity(0)
    n = len(allowed)
    got: list[int | None] = [None] * n
    masks: list[set[int]] = [set()] * n
    after: list[set[int]] = [set()] * n
    held = threading.Barrier(n + 1)
    done = threading.Event()

    def worker(i: int) -> None:
        claim = CpuClaim.take()
        got[i] = claim.cpu
        masks[i] = os.sched_getaffinity(0)
        held.wait()
        done.wait(30)
        claim.release()
        after[i] = os.sched_getaffinity(0)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    held.wait()
    extra = CpuClaim.take()  # every allowed CPU is claimed by this process's threads (or by others')
    extra_cpu = extra.cpu
    extra.release()
    done.set()
    for t in threads:
        t.join()
    pinned = [c for c in got if c is not None]
    assert len(pinned) == len(set(pinned))  # never two runs on one claimed core
    assert all(masks[i] == {got[i]} for i in range(n) if got[i] is not None)
    assert extra_cpu is None or extra_cpu not in pinned
    assert all(m == allowed for m in after)
    assert pinned  # at least one claim succeeded (another process may hold the rest)


@needs_two_cpus
def test_pin_self_and_back() -> None:
    def run() -> None:
        cpu = current_cpu()
        old = pin_self(cpu)
        assert old is not None and os.sched_getaffinity(0) == {cpu}
        unpin_self(old)
        assert os.sched_getaffinity(0) == old
        assert pin_self(10_000) is None  # a CPU outside the mask: not pinned

    t = threading.Thread(target=run)  # in a thread: the test process's own mask is not touched
    t.start()
    t.join()


def _cpus_allowed(pid: int) -> str:
    with open(f"/proc/{pid}/status") as fh:
        return next(line.split(":", 1)[1].strip() for line in fh if line.startswith("Cpus_allowed_list"))


@needs_two_cpus
@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_sandboxed_run_plays_on_one_cpu_with_its_agent(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluator's thread and the agent host's main thread share the claimed CPU during the run;
    the evaluator's thread gets its mask back at the end; ICMLGYM_SANDBOX_PIN=0 turns it off."""
    import icmlgym
    from icmlgym.catalog import card
    from icmlgym.runner.evaluator import RemoteAgent, _public_spec
    from icmlgym.runner.limits import process_tree
    from icmlgym.runner.loop import RunTask
    from icmlgym.runner.rollout import rollout
    from icmlgym.runner.sandbox import Sandbox, SandboxOptions, bwrap_path

    if mode == "bwrap" and bwrap_path() is None:
        pytest.skip("bubblewrap is not available here")
    monkeypatch.delenv(ENV_SWITCH, raising=False)
    c = card("icmlgym/Bandit-v0")
    env = icmlgym.make(c.id, horizon=50)
    task = RunTask(c.id, "ucb1", 0, "smoke", {"horizon": 50})
    result: dict[str, object] = {}

    def run(pin: bool) -> dict[str, object]:
        out: dict[str, object] = {"before": os.sched_getaffinity(0)}
        sandbox = Sandbox(SandboxOptions(mode=mode, pin_cpu=pin))
        ch = sandbox.start()
        try:
            agent = RemoteAgent(ch, 30.0, multi_agent=False)
            agent.hello("ucb1", {}, _public_spec(c, env, {"horizon": 50}, task), 30.0, cpu=sandbox.cpu)
            ep = rollout(env, agent, 0, None)
            out["cpu"], out["mine"] = sandbox.cpu, os.sched_getaffinity(0)
            # the agent host is the tree's python process whose main thread runs the episodes
            out["hosts"] = [_cpus_allowed(p) for p in process_tree(sandbox.proc.pid)]
            out["return"] = (ep.ret, ep.metrics)
            agent.close(10.0)
        finally:
            sandbox.stop()
        out["after"] = os.sched_getaffinity(0)
        return out

    t = threading.Thread(target=lambda: result.update(pinned=run(True), free=run(False)))
    t.start()
    t.join()
    pinned, free = result["pinned"], result["free"]
    cpu = pinned["cpu"]
    if cpu is not None:  # None only if every CPU was claimed by other runs at that moment
        assert pinned["mine"] == {cpu}
        assert str(cpu) in pinned["hosts"]  # the host's main thread, and nothing else changed
    assert pinned["after"] == pinned["before"]
    assert free["cpu"] is None and free["mine"] == free["before"]
    assert str(cpu) not in free["hosts"] or cpu is None
    assert pinned["return"] == free["return"]  # a scheduling hint: the same episode either way


def test_the_pipe_channel_round_trip_and_its_deadline() -> None:
    """A pipe pair carries the same frames as the socket pair, and a missing answer is late on time."""
    ev, (r, w) = Channel.pipes()
    ag = Channel(r, w, allow_pickle=True)
    try:
        assert ev.transport == "pipe" and ag.transport == "pipe"
        obs = np.arange(3, dtype=np.float32)
        ev.send([["act", obs, {"k": 1}]], pickle_ok=True)
        calls = ag.recv(5.0)
        assert calls[0][0] == "act" and np.array_equal(calls[0][1], obs) and calls[0][2] == {"k": 1}
        ag.send_action(2)
        assert expect(ev.recv(5.0), "action") == 2
        ev.send_step(["update", 0.5, obs, False, False, {}])
        assert ag.recv_frame(5.0)[0] == STEP
        ag.send_action(np.int64(7))
        assert expect(ev.recv(5.0), "action") == 7
        with pytest.raises(ProtocolError, match="late"):
            ev.recv(0.05, what="the agent's answer")
        ag.send_action(1)
        assert expect(ev.recv(5.0), "action") == 1
        os.write(ag.wfd, b"IG\x01\x01\x00\x00\x00\x01N")  # a pickle frame from the agent's side
        with pytest.raises(ProtocolError, match="refused"):
            ev.recv(5.0)
    finally:
        ev.close()
        ag.close()
