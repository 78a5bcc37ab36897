"""MoEQuantAlloc-v0: the quantiser, the allocators, the env's measurements and its bad-input errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("hardware"), reason="needs the [hardware] extra (torch, scipy)")

ENV_ID = "icmlgym/MoEQuantAlloc-v0"


@pytest.fixture(scope="module")
def env():
    import icmlgym

    e = icmlgym.make(ENV_ID, avg_bits=2.5, n_calib=16, n_eval=16).unwrapped
    yield e
    e.close()


# ----------------------------------------------------------------------------- quantiser
def test_rtn_error_falls_with_bits_and_codes_stay_in_range():
    import torch

    from icmlgym.envs.hardware.quant import fake_quantize, quantize

    w = torch.randn(24, 50, generator=torch.Generator().manual_seed(0))
    errs = [float(((fake_quantize(w, b, 16) - w) ** 2).mean()) for b in (1, 2, 3, 4, 8)]
    assert all(a > b for a, b in zip(errs, errs[1:])), errs
    q, scale, lo = quantize(w, 3, 16)
    assert q.shape == (24, 4, 16) and int(q.max()) <= 7 and scale.dtype == torch.float16
    # every weight within half a step of its group's grid (scale and minimum are float16)
    deq = fake_quantize(w, 3, 16)
    step = scale.float().repeat_interleave(16, dim=2).reshape(24, -1)[:, :50]
    assert float(((deq - w).abs() - step / 2).max()) < 1e-2


def test_group_minimum_and_maximum_are_on_the_grid():
    import torch

    from icmlgym.envs.hardware.quant import fake_quantize

    w = torch.tensor([[0.0, 1.0, 0.25, 0.5]])
    assert torch.allclose(fake_quantize(w, 2, 4), torch.tensor([[0.0, 1.0, 1 / 3, 2 / 3]]), atol=1e-3)


def test_memory_formula_and_quantized_linear():
    import torch

    from icmlgym.envs.hardware.quant import QuantizedLinear, fake_quantize, linear_bytes

    assert linear_bytes(192, 48, 3, 32) == 192 * 48 * 3 / 8 + 192 * 2 * 4 + 192 * 2
    assert linear_bytes(192, 48, None) == 192 * 48 * 2 + 192 * 2
    lin = torch.nn.Linear(48, 192)
    ql = QuantizedLinear(lin, 4, 32)
    x = torch.randn(5, 48)
    ref = torch.nn.functional.linear(x, fake_quantize(lin.weight, 4, 32), lin.bias.detach().half().float())
    assert torch.allclose(ql(x), ref, atol=1e-6)
    assert ql.nbytes() == linear_bytes(192, 48, 4, 32)


@pytest.mark.parametrize("bits", [0, 9, 2.5, True, "3"])
def test_bit_width_outside_1_to_8_is_refused(bits):
    import torch

    from icmlgym.envs.hardware.quant import fake_quantize

    with pytest.raises(ValueError, match=f"got {bits!r}".replace("(", r"\(")):
        fake_quantize(torch.zeros(2, 4), bits)


# ----------------------------------------------------------------------------- allocators
def test_milp_matches_brute_force():
    from icmlgym.agents.hardware import allocate_milp

    rng = np.random.default_rng(3)
    widths = [2, 3, 4, 8]
    for _ in range(5):
        cost = np.sort(rng.random((5, 4)) * rng.random((5, 1)), axis=1)[:, ::-1]
        sizes = rng.integers(1, 4, 5).astype(float)
        budget = 3.0 * sizes.sum()
        best = min(
            (sum(cost[e, widths.index(b)] for e, b in enumerate(bits)), bits)
            for bits in itertools.product(widths, repeat=5) if np.dot(sizes, bits) <= budget
        )
        got = allocate_milp(cost, sizes, widths, budget)
        assert np.dot(sizes, got) <= budget
        assert sum(cost[e, widths.index(b)] for e, b in enumerate(got)) == pytest.approx(best[0])


def test_milp_refuses_a_budget_below_the_lowest_width():
    from icmlgym.agents.hardware import allocate_milp

    with pytest.raises(ValueError, match="below the lowest width"):
        allocate_milp(np.ones((2, 2)), [1, 1], [2, 4], 3.0)


def test_layerwise_keeps_each_layers_budget_and_gemq_may_move_bits_across_layers(env):
    from icmlgym.agents.hardware import GEMQAgent
    from icmlgym.baselines.hardware import LayerwiseAgent, UniformBitsAgent
    from icmlgym.envs.hardware.moe_env import expert_table

    obs, _ = env.reset(seed=0)
    layer = expert_table(obs, "experts")[:, 0]
    size = expert_table(obs, "experts")[:, 1]
    lw = np.array(LayerwiseAgent().allocate(obs))
    for li in np.unique(layer):
        m = layer == li
        assert np.dot(size[m], lw[m]) <= 2.5 * size[m].sum() + 1e-9
    g = np.array(GEMQAgent().allocate(obs))
    assert np.dot(size, g) <= 2.5 * size.sum() + 1e-9
    # GEMQ's program minimises the summed Fisher estimate: never above the layer-wise allocation's
    fisher = expert_table(obs, "fisher")
    widths = list(env.bit_widths)
    total = lambda bits: sum(fisher[e, widths.index(b)] for e, b in enumerate(bits))  # noqa: E731
    assert total(g) <= total(lw) + 1e-12
    act = UniformBitsAgent().act(obs, {})
    assert [widths[i] for i in act[:-1]] == [2] * env.n_experts and act[-1] == 0


# ----------------------------------------------------------------------------- env behaviour
def test_estimates_track_measured_single_expert_sensitivity(env):
    """The Fisher estimate at 2 bits ranks experts like the measured calibration-loss increase of
    quantising that expert alone (rank correlation, calibration set of the episode)."""
    from scipy.stats import spearmanr

    from icmlgym.envs.hardware.moe_env import expert_table

    obs, _ = env.reset(seed=1)
    qm = env.qm
    measured = []
    for e in range(env.n_experts):
        bits = [-1] * env.n_experts
        bits[e] = 2
        qm.apply(bits)
        measured.append(qm.lm_metrics(env.calib)[0])
    qm.apply([-1] * env.n_experts)
    base = qm.lm_metrics(env.calib)[0]
    # estimates in the reset state are taken with every other expert at 2 bits: re-estimate at full precision
    est = qm.estimates(env.calib)
    rho = spearmanr(est.fisher[:, 0], np.array(measured) - base).statistic
    assert rho > 0.5, (est.fisher[:, 0], np.array(measured) - base)
    assert expert_table(obs, "fisher").shape == (env.n_experts, 4)


def test_episode_metrics_and_router_finetuning(env):
    from icmlgym.envs.hardware.moe_env import bits_to_action

    env.reset(seed=2)
    router_before = [m.router.weight.clone() for m in env.qm.moes]
    experts_before = [ex.fc.weight.clone() for _, _, ex in env.qm.experts]
    bits = [3] * 4 + [2] * 4
    _, reward, term, trunc, info = env.step(bits_to_action(bits, env.bit_widths, router_ft=True))
    assert term and not trunc and "refused" not in info
    m = info["metrics"]
    assert m["avg_bits"] == pytest.approx(2.5)
    assert m["memory_bytes"] <= m["cap_bytes"] + 1e-6 and 0 < m["memory_ratio"] < 0.25
    assert m["router_ft_rounds"] == 1 and info["cost"]["router_ft_steps"] == env.router_ft_steps
    assert m["router_shift"] > 0 and 0 < m["routing_agreement"] <= 1
    assert any(not np.allclose(a, m_.router.weight) for a, m_ in zip(router_before, env.qm.moes))
    # fine-tuning touches the routers only; the first four experts were re-quantised to 3 bits
    for e, (_, _, ex) in enumerate(env.qm.experts):
        fc3 = env.qm.table[(e, bits[e])][0]
        assert np.array_equal(ex.fc.weight.numpy(), fc3.numpy())
        assert (e < 4) != np.array_equal(ex.fc.weight.numpy(), experts_before[e].numpy())
    assert np.isfinite(reward)


def test_reset_restores_routers_and_lowest_widths(env):
    from icmlgym.envs.hardware.moe_env import expert_table

    obs, _ = env.reset(seed=2)
    assert np.all(expert_table(obs, "experts")[:, 3] == 2)
    for m, w in zip(env.qm.moes, env.qm.router_fp):
        assert np.array_equal(m.router.weight.numpy(), w.numpy())


# ----------------------------------------------------------------------------- bad input
def test_over_the_cap_is_refused_with_the_bytes_and_the_cap(env):
    from icmlgym.envs.hardware.moe_env import bits_to_action

    env.reset(seed=0)
    over = [8] * env.n_experts
    _, reward, term, _, info = env.step(bits_to_action(over, env.bit_widths))
    assert reward == -env.refusal_penalty and term
    assert "over the memory cap" in info["refused"] and "8.000 average bits" in info["refused"]
    assert info["metrics"]["refusals"] == 1 and info["metrics"]["avg_bits"] == 2.0
    with pytest.raises(ValueError, match=r"allocation \[8, 8, 8, 8, 8, 8, 8, 8\] needs \d+ bytes .* over the memory cap of \d+ bytes \(2.5 average bits\)"):
        env.check_allocation(over)


def test_strict_env_raises_on_an_allocation_over_the_cap():
    import icmlgym
    from icmlgym.envs.hardware.moe_env import bits_to_action

    e = icmlgym.make(ENV_ID, avg_bits=3, strict=True, n_calib=8, n_eval=8).unwrapped
    e.reset(seed=0)
    with pytest.raises(ValueError, match="over the memory cap"):
        e.step(bits_to_action([4] * e.n_experts, e.bit_widths))


def test_a_bit_width_not_offered_is_named(env):
    from icmlgym.envs.hardware.moe_env import bits_to_action

    with pytest.raises(ValueError, match=r"bit-width 5 of expert 1 is not offered \(offered bit-widths: \[2, 3, 4, 8\]\)"):
        bits_to_action([2, 5, 2, 2, 2, 2, 2, 2], env.bit_widths)
    with pytest.raises(ValueError, match="bit-width 6 of expert 0 is not offered"):
        env.check_allocation([6] + [2] * 7)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"avg_bits": 1.5}, "avg_bits must be a finite number >= the lowest offered bit-width 2, got 1.5"),
    ({"avg_bits": float("nan")}, "avg_bits must be a finite number"),
    ({"bit_widths": (2, 2, 4)}, "bit_widths must be distinct"),
    ({"bit_widths": (2, 16)}, "a bit-width must be an integer in 1..8, got 16"),
    ({"rounds": 0}, "rounds must be an integer >= 1, got 0"),
    ({"router_ft_lr": -1.0}, "router_ft_lr must be a finite number > 0, got -1.0"),
])
def test_bad_constructor_arguments_are_named(kwargs, message):
    from icmlgym.envs.hardware.moe_env import MoEQuantAllocEnv

    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        MoEQuantAllocEnv(**kwargs)


def test_invalid_action_names_the_space(env):
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be in MultiDiscrete"):
        env.step(np.array([4] * 9))


def test_progressive_rounds_reestimate_on_the_quantised_model():
    """With ``rounds=2`` the second observation is measured on the model the first allocation left
    (estimates change), GEMQ allocates twice and fine-tunes the routers twice."""
    import icmlgym
    from icmlgym.agents.hardware import GEMQAgent
    from icmlgym.agents.protocol import AgentSpec

    env = icmlgym.make(ENV_ID, avg_bits=3.0, rounds=2, n_calib=8, n_eval=8, router_ft_steps=2).unwrapped
    agent = GEMQAgent()
    agent.reset(0, AgentSpec(env_id=ENV_ID, observation_space=env.observation_space, action_space=env.action_space))
    obs0, _ = env.reset(seed=4)
    obs1, _, term, _, info = env.step(agent.act(obs0, {}))
    assert not term and obs1["budget"][3] == 1.0
    assert not np.allclose(obs0["fisher"], obs1["fisher"])
    _, _, term, _, info = env.step(agent.act(obs1, {}))
    assert term and info["metrics"]["router_ft_rounds"] == 2 and info["cost"]["quantisations"] == 2
    assert info["metrics"]["avg_bits"] <= 3.0 + 1e-9


def test_hqq_backend_quantises_with_the_same_groups_and_lower_error():
    """HQQ (extra [quant]) on the shipped experts: same shapes and groups as RTN, lower weight error
    at 2 and 3 bits (its zero-point optimisation), and the env runs on it."""
    pytest.importorskip("hqq", reason="needs the [quant] extra: pip install icmlgym[quant]")
    import icmlgym
    from icmlgym.envs.hardware.hqq_backend import fake_quantize_hqq
    from icmlgym.envs.hardware.quant import fake_quantize
    from icmlgym.zoo.registry import load

    fc = load("reasoner-moe", "smoke").model.blocks[0].mlp.experts[0].fc.weight.detach()
    for b in (2, 3):
        h, r = fake_quantize_hqq(fc, b), fake_quantize(fc, b)
        assert h.shape == fc.shape
        assert float(((h - fc) ** 2).sum()) < float(((r - fc) ** 2).sum())
    env = icmlgym.make(ENV_ID, backend="hqq", n_calib=8, n_eval=8).unwrapped
    env.reset(seed=0)
    assert np.array_equal(env.qm.experts[0][2].fc.weight.numpy(), env.qm.table[(0, 2)][0].numpy())


def test_unknown_backend_is_named():
    from icmlgym.envs.hardware.moe_env import MoEQuantAllocEnv

    with pytest.raises(ValueError, match="backend must be 'rtn' .* or 'hqq' .*, got 'gptq'"):
        MoEQuantAllocEnv(backend="gptq")


# ----------------------------------------------------------------------------- group mode (progressive "next group")
@pytest.fixture(scope="module")
def genv():
    import icmlgym

    e = icmlgym.make(ENV_ID, avg_bits=2.5, mode="group", n_calib=8, n_eval=8, router_ft_steps=2).unwrapped
    yield e
    e.close()


def test_group_mode_passes_the_gymnasium_and_sb3_checkers(genv):
    from gymnasium.utils.env_checker import check_env

    assert genv.action_space.shape == (5,) and genv.n_groups == 2
    check_env(genv, skip_render_check=True)
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker", reason="needs the [rl] extra (stable-baselines3)")
    sb3.check_env(genv)


def test_group_mode_sets_one_group_per_step_and_gemq_resolves_on_reestimates(genv):
    """GEMQ group by group: the first step sets layer 0's experts only (layer 1 stays at the lowest
    width), from the global program's solution over all experts; the second observation is
    re-estimated on the model the first group left, and the program is solved again over the
    experts not yet set with the budget the set ones leave."""
    from icmlgym.agents.hardware import GEMQAgent, allocate_milp
    from icmlgym.envs.hardware.moe_env import expert_table

    agent = GEMQAgent()
    obs0, info = genv.reset(seed=5)
    assert list(obs0["group_status"]) == [1] * 4 + [2] * 4 and obs0["budget"][3] == 2
    assert info["width_mask"].shape == (4, 4)
    sizes = expert_table(obs0, "experts")[:, 1]
    whole = allocate_milp(expert_table(obs0, "fisher"), sizes, genv.bit_widths, 2.5 * sizes.sum())
    act = agent.act(obs0, info)
    assert [genv.bit_widths[i] for i in act[:4]] == whole[:4] and act[-1] == 1
    obs1, _, term, _, info = genv.step(act)
    assert not term and list(obs1["group_status"]) == [0] * 4 + [1] * 4
    assert list(expert_table(obs1, "experts")[:, 3]) == whole[:4] + [2] * 4
    assert not np.allclose(obs0["fisher"], obs1["fisher"])
    # second step: the program over layer 1 alone, with layer 0's widths fixed
    fixed_bits = float(np.dot(sizes[:4], whole[:4]))
    second = allocate_milp(expert_table(obs1, "fisher")[4:], sizes[4:], genv.bit_widths, 2.5 * sizes.sum() - fixed_bits)
    act = agent.act(obs1, info)
    assert [genv.bit_widths[i] for i in act[:4]] == second
    _, _, term, _, info = genv.step(act)
    m = info["metrics"]
    assert term and m["router_ft_rounds"] == 2 and info["cost"]["quantisations"] == 2
    assert m["avg_bits"] <= 2.5 + 1e-9 and m["refusals"] == 0


def test_group_mode_refuses_an_over_cap_group_and_moves_on(genv):
    """A group that puts the model over the cap is refused (penalty, widths unchanged, the
    episode goes on to the next group); the width mask marks exactly the widths that fit."""
    obs, info = genv.reset(seed=0)
    mask = info["width_mask"]
    assert mask[:, :3].all() and not mask[:, 3].any()  # one expert at 8 bits alone is over 2.5 average bits
    _, reward, term, _, info = genv.step(np.array([3, 0, 0, 0, 1]))
    assert reward == -genv.refusal_penalty and not term
    assert info["refused"].startswith("group 0 (experts 0-3): allocation [8, 2, 2, 2, 2, 2, 2, 2] needs")
    assert "over the memory cap" in info["refused"]
    assert list(genv.qm.bits) == [2] * 8 and genv.ft_rounds == 0
    # a width the mask allows is accepted
    _, reward, term, _, info = genv.step(np.array([2, 0, 0, 0, 0]))
    assert term and "refused" not in info and list(genv.qm.bits) == [2] * 4 + [4, 2, 2, 2]
    assert info["metrics"]["refusals"] == 1


def test_group_mode_accepts_every_sampled_action_and_runs_every_agent():
    import icmlgym
    from icmlgym.agents.hardware import GEMQAgent
    from icmlgym.baselines.hardware import LayerwiseAgent, UniformBitsAgent

    env = icmlgym.make(ENV_ID, avg_bits=3.0, mode="group", experts_per_group=2, rounds=2, n_calib=8, n_eval=8,
                       router_ft_steps=1).unwrapped
    assert env.action_space.shape == (3,) and env.n_groups == 4
    env.action_space.seed(0)
    env.reset(seed=1)
    for t in range(8):
        _, reward, term, _, info = env.step(env.action_space.sample())
        assert np.isfinite(reward) and term == (t == 7)
    assert env.qm.memory_bytes() <= env.cap_bytes + 1e-6
    # GEMQ's global program with set experts fixed, the layer-wise one per layer, uniform: all within the cap
    for agent in (GEMQAgent(router_ft=False), LayerwiseAgent(), UniformBitsAgent()):
        obs, info = env.reset(seed=1)
        term = False
        while not term:
            obs, _, term, _, info = env.step(agent.act(obs, info))
        assert info["metrics"]["refusals"] == 0 and info["metrics"]["avg_bits"] <= 3.0 + 1e-9, type(agent).__name__


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"mode": "layer"}, "mode must be 'full' (a width per expert each step) or 'group' (the next group's widths), got 'layer'"),
    ({"mode": "group", "experts_per_group": 3}, "experts_per_group must divide the 8 experts, got 3"),
    ({"mode": "group", "experts_per_group": 0}, "experts_per_group must be an integer >= 1 or None (one layer's experts), got 0"),
])
def test_bad_group_mode_arguments_are_named(kwargs, message):
    from icmlgym.envs.hardware.moe_env import MoEQuantAllocEnv

    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        MoEQuantAllocEnv(**kwargs)
