"""The six tasks' trial structure against NeuroGym's definitions.

NEUROGYM below is written from NeuroGym's documentation of each env (period order and
default durations in ms, dt, observation channels, actions, and which action is the
ground truth in which period); the tests check our generator against it, noiseless
(sigma = 0) so that the stimulus means can be compared exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.envs.cognitive.tasks import SPLITS, TASKS, make_task, sample_duration

# task -> NeuroGym id, dt (ms), periods in order with their fixed default durations (ms; None = drawn),
# number of observation channels, number of actions, the response period
NEUROGYM = {
    "perceptual_decision": ("PerceptualDecisionMaking-v0", 100, {"fixation": 100, "stimulus": 2000, "delay": 0, "decision": 100}, 3, 3, "decision"),
    "context_integration": ("ContextDecisionMaking-v0", 100, {"fixation": 300, "stimulus": 750, "delay": None, "decision": 100}, 7, 3, "decision"),
    "delayed_match": ("DelayMatchSample-v0", 100, {"fixation": 300, "sample": 500, "delay": 1000, "test": 500, "decision": 900}, 3, 3, "decision"),
    "go_nogo": ("GoNogo-v0", 100, {"fixation": 0, "stimulus": 500, "delay": 500, "decision": 500}, 3, 2, "decision"),
    "delayed_comparison": ("DelayComparison-v0", 100, {"fixation": 500, "stimulus1": 500, "delay": 1000, "stimulus2": 500, "decision": 100}, 2, 3, "decision"),
    "interval_timing": ("ReadySetGo-v0", 80, {"fixation": 100, "ready": 83, "measure": None, "set": 83, "production": None}, 3, 2, "production"),
}


def _noiseless(name: str, n: int = 64, seed: int = 0, **kw):
    task = make_task(name, sigma=0.0, **kw)
    return task, task.batch(n, seed)


@pytest.mark.parametrize("name", sorted(NEUROGYM))
def test_periods_channels_and_actions_match_neurogym(name):
    ng_id, dt, periods, n_obs, n_act, response = NEUROGYM[name]
    task, b = _noiseless(name)
    assert task.neurogym_id == ng_id and task.dt == dt
    assert list(b.periods) == list(periods), "period order"
    assert task.n_input == n_obs and task.n_actions == n_act and task.response_period == response
    for p, ms in periods.items():
        if ms is not None:
            steps = b.periods[p][:, 1] - b.periods[p][:, 0]
            assert np.all(steps == round(ms / dt)), (p, steps[:3])
    # periods tile each trial without gaps
    bounds = np.stack([b.periods[p] for p in periods], axis=1)  # (n, P, 2)
    assert np.all(bounds[:, 1:, 0] == bounds[:, :-1, 1]) and np.all(bounds[:, 0, 0] == 0)
    assert np.all(bounds[:, -1, 1] == b.lengths)


@pytest.mark.parametrize("name", sorted(NEUROGYM))
def test_fixation_cue_and_fixate_ground_truth_before_the_response(name):
    task, b = _noiseless(name)
    t = np.arange(b.targets.shape[1])[None, :]
    start = b.periods[task.response_period][:, 0:1]
    alive = t < b.lengths[:, None]
    before = alive & (t < start)
    assert np.all(b.inputs[..., 0][before] == 1) and np.all(b.inputs[..., 0][alive & ~before] == 0)
    assert np.all(b.targets[before] == 0), "ground truth is fixate before the response period"
    assert np.all(b.targets[~alive] == -1) and np.all(b.inputs[~alive] == 0)


def test_perceptual_decision_stimulus_and_ground_truth():
    task, b = _noiseless("perceptual_decision", n=200)
    gt, coh = b.conditions["ground_truth"], b.conditions["coh"]
    assert set(np.unique(coh)) <= {0, 6.4, 12.8, 25.6, 51.2} and set(np.unique(gt)) == {0, 1}
    s = b.periods["stimulus"][:, 0]
    stim = b.inputs[np.arange(b.n), s, 1:]
    theta = np.array([0.0, np.pi])
    want = np.cos(theta[None, :] - theta[gt][:, None]) * coh[:, None] / 200 + 0.5
    np.testing.assert_allclose(stim, want, atol=1e-6)
    d = b.periods["decision"][:, 0]
    assert np.all(b.targets[np.arange(b.n), d] == gt + 1)


def test_input_noise_has_neurogyms_scale():
    task = make_task("perceptual_decision", sigma=1.0)
    b = task.batch(2000, 3)
    stim = b.inputs[:, 5, 1:]  # a stimulus step
    mean = np.cos(np.array([0.0, np.pi])[None, :] - np.array([0.0, np.pi])[b.conditions["ground_truth"]][:, None]) * b.conditions["coh"][:, None] / 200 + 0.5
    assert abs((stim - mean).std() - 1.0 / np.sqrt(100)) < 0.005


def test_context_integration_reports_the_cued_modality():
    task, b = _noiseless("context_integration", n=400)
    c = b.conditions
    s = b.periods["stimulus"][:, 0]
    x = b.inputs[np.arange(b.n), s]
    # the modality the context cue names points to the ground truth (channel 1 + choice)
    relevant = np.where(c["context"] == 0, x[:, 1:3].argmax(1), x[:, 3:5].argmax(1))
    assert np.all(relevant == c["ground_truth"])
    assert np.all(x[:, 5] == (c["context"] == 0)) and np.all(x[:, 6] == (c["context"] == 1))
    assert np.all(b.targets[np.arange(b.n), b.periods["decision"][:, 0]] == c["ground_truth"] + 1)
    delays = (b.periods["delay"][:, 1] - b.periods["delay"][:, 0]) * 100
    assert delays.min() >= 300 and delays.max() <= 3000 and len(np.unique(delays)) > 5


def test_truncated_exponential_is_neurogyms():
    x = sample_duration(("truncexp", 600, 300, 3000), np.random.default_rng(0), 20000)
    assert x.min() >= 300 and x.max() < 3000
    # exponential(600) conditioned on [300, 3000): mean = 300 + 600 - (2700 e^{-4.5}) / (1 - e^{-4.5})
    want = 900 - 2700 * np.exp(-4.5) / (1 - np.exp(-4.5))
    assert abs(x.mean() - want) < 15


def test_delayed_match_ground_truth_is_match_or_non_match():
    task, b = _noiseless("delayed_match", n=200)
    rows = np.arange(b.n)
    sample = b.inputs[rows, b.periods["sample"][:, 0], 1:]
    test = b.inputs[rows, b.periods["test"][:, 0], 1:]
    match = np.all(np.isclose(sample, test), axis=1)
    assert np.all(np.where(match, 1, 2) == b.conditions["ground_truth"])
    # delay: nothing but the fixation cue
    d0 = b.periods["delay"][:, 0]
    assert np.all(b.inputs[rows, d0, 1:] == 0)
    assert np.all(b.targets[rows, b.periods["decision"][:, 0]] == b.conditions["ground_truth"])


def test_go_nogo_cues_and_ground_truth():
    task, b = _noiseless("go_nogo", n=100)
    rows = np.arange(b.n)
    go = b.conditions["ground_truth"] == 1
    x = b.inputs[rows, b.periods["stimulus"][:, 0]]
    assert np.all(x[:, 2] == go) and np.all(x[:, 1] == ~go)
    dec = b.response_mask
    assert np.all(b.targets[dec] == np.repeat(go.astype(int), dec.sum(1)))


def test_delayed_comparison_encoding_and_ground_truth():
    task, b = _noiseless("delayed_comparison", n=200)
    rows = np.arange(b.n)
    f1 = b.inputs[rows, b.periods["stimulus1"][:, 0], 1]
    f2 = b.inputs[rows, b.periods["stimulus2"][:, 0], 1]
    enc = lambda f: (1 + (f - 10) / (34 - 10)) / 2  # noqa: E731 - NeuroGym's represent() over its default pairs
    np.testing.assert_allclose(f1, enc(b.conditions["f1"]), atol=1e-6)
    np.testing.assert_allclose(f2, enc(b.conditions["f2"]), atol=1e-6)
    pairs = {(18, 10), (22, 14), (26, 18), (30, 22), (34, 26)}
    assert {tuple(sorted((a, c), reverse=True)) for a, c in zip(b.conditions["f1"], b.conditions["f2"])} <= pairs
    assert np.all(np.where(f1 > f2, 1, 2) == b.targets[rows, b.periods["decision"][:, 0]])


def test_interval_timing_go_time():
    task, b = _noiseless("interval_timing", n=200)
    measure = b.conditions["measure"]
    assert measure.min() >= 800 and measure.max() < 1500
    prod_steps = b.periods["production"][:, 1] - b.periods["production"][:, 0]
    assert np.all(prod_steps == np.rint(2 * measure / 80))
    # exactly one go step, int(production / dt) steps into the production period
    assert np.all((b.targets == 1).sum(1) == 1)
    go = np.argmax(b.targets == 1, axis=1) - b.periods["production"][:, 0]
    assert np.all(go == (measure // 80).astype(int))
    rows = np.arange(b.n)
    assert np.all(b.inputs[rows, b.periods["ready"][:, 0], 1] == 1) and np.all(b.inputs[rows, b.periods["set"][:, 0], 2] == 1)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_score_rule(name):
    task, b = _noiseless(name, n=100)
    perfect = np.where(b.targets < 0, 0, b.targets)
    correct, aborted = task.score(perfect, b)
    assert correct.all() and not aborted.any()
    fixate = np.zeros_like(b.targets)
    correct, _ = task.score(fixate, b)
    if name == "go_nogo":  # fixating is the right answer to no-go trials only
        assert np.array_equal(correct, b.conditions["ground_truth"] == 0)
    else:
        assert not correct.any()
    impulsive = np.ones_like(b.targets)
    _, aborted = task.score(impulsive, b)
    has_fix = (b.periods["fixation"][:, 1] - b.periods["fixation"][:, 0]) > 0
    assert np.array_equal(aborted, has_fix)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_splits_build_and_differ(name):
    train_kw, held_kw = SPLITS[name]
    a, b = make_task(name, **train_kw).batch(50, 0), make_task(name, **held_kw).batch(50, 0)
    assert a.inputs.shape[2] == b.inputs.shape[2]
    assert not (a.inputs.shape == b.inputs.shape and np.allclose(a.inputs, b.inputs))


def test_batch_is_deterministic_and_fixes_variables():
    t = make_task("perceptual_decision")
    a, b = t.batch(30, 7), t.batch(30, 7)
    assert np.array_equal(a.inputs, b.inputs) and np.array_equal(a.targets, b.targets)
    c = t.batch(30, 7, ground_truth=1, coh=51.2)
    assert np.all(c.conditions["ground_truth"] == 1) and np.all(c.conditions["coh"] == 51.2)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown cognitive task 'perceptual_decison'.*did you mean 'perceptual_decision'"):
        make_task("perceptual_decison")
    with pytest.raises(ValueError, match="unknown periods"):
        make_task("delayed_match", timing={"delai": 100})
    with pytest.raises(ValueError, match="unknown trial variable"):
        make_task("go_nogo").batch(3, 0, coh=1)
    with pytest.raises(ValueError, match="n must be >= 1"):
        make_task("go_nogo").batch(0, 0)


def test_uniform_choice_is_generator_choice():
    """The tasks' uniform draws from a list (coherences, duration choices): Generator.choice's values and stream."""
    from icmlgym.envs.cognitive.tasks import uniform_choice

    for seed in range(50):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        for values, n in (((5.0, 15.0, 50.0), 20), ((0.0, 3.2, 6.4, 12.8, 25.6, 51.2), 7), ((400, 600), 1)):
            got, want = uniform_choice(a, values, n), b.choice(np.asarray(values, dtype=float), size=n)
            assert got.dtype == want.dtype and np.array_equal(got, want)
        assert a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("dim_ring,cohs", [(2, (5.0, 15.0, 50.0)), (3, (1.0, 2.0)), (5, (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0))])
def test_context_integration_draws_one_call_per_range(dim_ring, cohs):
    """Its trial variables of one range come from one integers call: the values and the generator's state of one
    call per variable (each value takes its own 32-bit draws, also after an odd count or a buffered half)."""
    from icmlgym.envs.cognitive.tasks import uniform_choice

    task = make_task("context_integration", dim_ring=dim_ring, cohs=cohs)
    for seed in range(40):
        for n in (1, 2, 7, 20):
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            if seed % 2:  # a buffered 32-bit half before the draws
                a.integers(0, 2), b.integers(0, 2)
            got = task._conditions(a, n)
            want = {"ground_truth": b.integers(0, dim_ring, size=n), "other_choice": b.integers(0, dim_ring, size=n),
                    "context": b.integers(0, 2, size=n), "coh_1": uniform_choice(b, cohs, n), "coh_2": uniform_choice(b, cohs, n)}
            assert set(got) == set(want) and all(got[k].dtype == v.dtype and np.array_equal(got[k], v) for k, v in want.items())
            assert a.bit_generator.state == b.bit_generator.state


def test_add_channels_is_the_broadcast_sum():
    from icmlgym.envs.cognitive.tasks import add_channels

    rng = np.random.default_rng(0)
    inputs = rng.standard_normal((30, 11, 6)).astype(np.float32)
    mask, values = rng.random((30, 11)) < 0.4, rng.standard_normal((30, 3)).astype(np.float32)
    want = inputs.copy()
    want[:, :, 2:5] += mask[:, :, None] * values[:, None, :]
    add_channels(inputs, 2, mask, values)
    assert np.array_equal(inputs.view(np.uint32), want.view(np.uint32))  # bit for bit, signed zeros included


def _same_draw_state(a: np.random.Generator, b: np.random.Generator) -> bool:
    """Whether later draws of ``a`` and ``b`` agree by their states: equal but for the stale half a draw consumed
    (``uinteger`` while ``has_uint32`` is 0)."""
    sa, sb = a.bit_generator.state, b.bit_generator.state
    if "has_uint32" not in sa:  # MT19937: its key array and position
        return sa["state"]["pos"] == sb["state"]["pos"] and np.array_equal(sa["state"]["key"], sb["state"]["key"])
    return sa["state"] == sb["state"] and sa["has_uint32"] == sb["has_uint32"] and (not sa["has_uint32"] or sa["uinteger"] == sb["uinteger"])


@pytest.mark.parametrize("draws", [[(2, 60), (3, 40)], [(2, 7), (3, 5)], [(5, 3), (2, 1), (7, 2)], [(2**31 - 1, 9), (3, 4)], [(2, 0), (3, 1)]])
def test_integers_many_is_each_generators_own_calls(draws):
    """The values and the state after of every generator's integers calls; the (2**31 - 1) range redraws often
    (the calls themselves, from the state before), the MT19937 and buffered-half generators make the calls."""
    from icmlgym.envs.cognitive.tasks import integers_many

    for seed in range(30):
        def gens():
            out = [np.random.default_rng(seed * 10 + i) for i in range(5)] + [np.random.Generator(np.random.MT19937(seed))]
            out[1].integers(0, 2)  # a buffered half
            return out

        got_rngs, want_rngs = gens(), gens()
        got = integers_many(got_rngs, draws)
        for g, rng in enumerate(want_rngs):
            for (r, m), values in zip(draws, got):
                want = rng.integers(0, r, size=m)
                assert values.dtype == want.dtype and np.array_equal(values[g], want)
        for a, b in zip(got_rngs, want_rngs):
            assert _same_draw_state(a, b) and a.integers(0, 2**40) == b.integers(0, 2**40) and a.random() == b.random()
