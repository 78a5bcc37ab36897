"""Property tests (hypothesis) for every resettable-stream sketch and the Binary Tree Mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icmlgym.envs.sketch.sketches import (
    DEFENDERS,
    BernoulliSketch,
    BinaryTreeMechanism,
    BottomKSketch,
    DPMedianSketch,
    DPTreeSketch,
    ExactSketch,
    LinearStableSketch,
    SampleHoldSketch,
    SwitchingSketch,
    ThetaReference,
    hash_unit,
    hash_unit_array,
    make_defender,
    stat_fn,
)

# a stream: ("inc", key, delta) or ("reset", key)
op = st.one_of(
    st.tuples(st.just("inc"), st.integers(0, 30), st.integers(1, 5)),
    st.tuples(st.just("reset"), st.integers(0, 30), st.just(0)),
)
streams = st.lists(op, min_size=1, max_size=60)
stats = st.sampled_from([("cardinality", 0.5), ("sum", 0.5), ("lp", 0.5), ("lp", 0.3)])
FAST = settings(derandomize=True, max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def truth_of(stream, statistic, q):
    v: dict[int, int] = {}
    for kind, key, d in stream:
        if kind == "inc":
            v[key] = v.get(key, 0) + d
        else:
            v.pop(key, None)
    f = stat_fn(statistic, q)
    return float(sum(f(x) for x in v.values())), v


def feed(sk, stream, values=None):
    vals: dict[int, int] = {}
    for kind, key, d in stream:
        if kind == "inc":
            sk.update(key, d)
            vals[key] = vals.get(key, 0) + d
        else:
            sk.reset(key, value=vals.pop(key, 0))
    return sk


@FAST
@given(streams, stats)
def test_exact_matches_brute_force(stream, stat):
    statistic, q = stat
    sk = feed(ExactSketch(statistic, q), stream)
    true, v = truth_of(stream, statistic, q)
    assert sk.estimate() == pytest.approx(true, abs=1e-9)
    assert sk.exact_total() == pytest.approx(true, abs=1e-9)
    assert sk.space_words() == 2 * len(v)


@FAST
@given(streams, stats, st.integers(0, 2**31), st.floats(0.05, 1.0))
def test_bernoulli_holds_exactly_the_sampled_nonzero_keys(stream, stat, seed, p):
    statistic, q = stat
    sk = feed(BernoulliSketch(statistic, q, p=p, seed=seed), stream)
    _, v = truth_of(stream, statistic, q)
    held = {k: x for k, x in v.items() if hash_unit(k, seed) < p}
    assert sk.held == held  # reset semantics: a reset key is gone, a re-inserted one starts at 0
    f = stat_fn(statistic, q)
    assert sk.estimate() == pytest.approx(sum(f(x) for x in held.values()) / p, rel=1e-9, abs=1e-9)
    assert sk.space_words() == 2 * len(held)


@FAST
@given(streams, st.integers(0, 2**31))
def test_reset_makes_the_key_count_as_zero(stream, seed):
    """After reset(k) the sketch is in the state it would be in had k never been touched
    (deterministic sketches) or holds nothing of k (sketches with fresh coins)."""
    key = stream[0][1]
    with_key = stream + [("reset", key, 0)]
    without = [o for o in stream if o[1] != key]
    for cls, kw in ((BernoulliSketch, {"p": 0.4}), (ExactSketch, {})):
        a = feed(cls("sum", **kw, **({"seed": seed} if kw else {})), with_key)
        b = feed(cls("sum", **kw, **({"seed": seed} if kw else {})), without)
        assert a.estimate() == pytest.approx(b.estimate(), abs=1e-9)
    lin_a = feed(LinearStableSketch("sum", m=16, seed=seed), with_key)
    lin_b = feed(LinearStableSketch("sum", m=16, seed=seed), without)
    np.testing.assert_allclose(lin_a.y, lin_b.y, atol=1e-6 * (1 + np.abs(lin_b.y).max()))
    for sk in (SampleHoldSketch("sum", p=0.3, seed=seed), BottomKSketch("sum", k=5, seed=seed)):
        feed(sk, with_key)
        assert key not in sk.held
    tree = feed(DPTreeSketch("cardinality", p=0.3, seed=seed, horizon=128), with_key)
    assert key not in tree.sampler.held
    for sk in (SwitchingSketch("sum", r=3, p=0.5, seed=seed), DPMedianSketch("sum", r=3, p=0.5, seed=seed)):
        feed(sk, with_key)
        assert all(key not in c.held for c in sk.copies)
    rounded = feed(make_defender("bernoulli", "sum", space=40, n_keys=31, seed=seed, rounding=0.1), with_key)
    assert key not in rounded.inner.held


@settings(derandomize=True, max_examples=3, deadline=None)
@given(st.integers(0, 2**31))
def test_every_defender_is_within_its_stated_error_on_an_oblivious_stream(seed):
    """The final estimate after a random oblivious stream (4000 updates over 2000 keys, 20% resets
    except for theta, which cannot reset) is within the defender's stated error: 5 standard
    errors of key sampling sqrt((1-p)/(p F)) per copy (the median / switching band added), 6/sqrt(m)
    for the linear sketch's median estimator, 5/sqrt(k) for Theta, plus 5 tree standard deviations
    for dp-tree, plus the grid step for rounded output."""
    rng = np.random.default_rng(seed)
    ops = [("reset", int(rng.integers(2000)), 0) if rng.random() < 0.2 else ("inc", int(rng.integers(2000)), int(rng.integers(1, 4))) for _ in range(4000)]
    insert_only = [o for o in ops if o[0] == "inc"]
    for name in DEFENDERS:
        statistic = "sum" if name == "linear" else "cardinality"
        stream = insert_only if name == "theta" else ops
        true, _ = truth_of(stream, statistic, 0.5)
        extra = {"m": 400} if name == "linear" else {}
        sk = feed(make_defender(name, statistic, n_keys=2000, space=1600, horizon=4000, max_delta=3, seed=seed, **extra), stream)
        est = sk.estimate()
        if name == "exact":
            assert est == pytest.approx(true)
            continue
        if name == "linear":
            bound = 6 / math.sqrt(sk.m)
        elif name == "theta":
            bound = 5 / math.sqrt(2**sk.lg_k)
        elif name == "bottomk":
            bound = 5 / math.sqrt(sk.k)
        else:
            p = sk.p
            bound = 5 * math.sqrt((1 - p) / (p * true))
            if name == "switching":
                bound += sk.alpha
            if name == "dp-median":
                bound = bound / 2 + sk.gamma  # the median of 15 copies
            if name == "dp-tree":
                bound += 5 * sk.tree.error_std() / true
        assert abs(est / true - 1) <= bound, (name, est, true, bound)
    rounded = feed(make_defender("bernoulli", n_keys=2000, space=1600, seed=seed, rounding=0.05), ops)
    true, _ = truth_of(ops, "cardinality", 0.5)
    assert abs(rounded.estimate() / true - 1) <= 5 * math.sqrt((1 - rounded.inner.p) / (rounded.inner.p * true)) + 0.05


def test_sample_hold_estimator_is_unbiased_exactly():
    """E[g(c)] = f(v) for a key with v units, summed over the geometric law of the holding unit."""
    for statistic, q in (("cardinality", 0.5), ("sum", 0.5), ("lp", 0.3)):
        for p in (0.05, 0.3, 1.0):
            sk = SampleHoldSketch(statistic, q, p=p)
            f = stat_fn(statistic, q)
            for v in (1, 2, 3, 7, 20):
                mean = sum(p * (1 - p) ** (j - 1) * sk.g(v - j + 1) for j in range(1, v + 1))
                assert mean == pytest.approx(f(v), rel=1e-9)


@settings(derandomize=True, max_examples=8, deadline=None)
@given(streams, stats)
def test_sampling_sketches_are_unbiased_on_oblivious_streams(stream, stat):
    """Over 400 independent seeds the mean estimate is within 4.5 standard errors of the truth."""
    statistic, q = stat
    true, _ = truth_of(stream, statistic, q)
    for name, p in (("bernoulli", 0.3), ("sample-hold", 0.3)):
        ests = np.array([feed(DEFENDERS[name](statistic, q, p=p, seed=s), stream).estimate() for s in range(400)])
        se = ests.std(ddof=1) / math.sqrt(len(ests))
        assert abs(ests.mean() - true) <= 4.5 * se + 1e-9, (name, ests.mean(), true, se)


@settings(derandomize=True, max_examples=5, deadline=None)
@given(st.integers(0, 2**31))
def test_sketches_within_stated_error_on_an_oblivious_stream(seed):
    """On a random oblivious stream of 3000 updates over 1500 keys, the final relative error of each
    sampling sketch is within 5 of its standard errors (sqrt((1-p)/(p F)) for key sampling)."""
    rng = np.random.default_rng(seed)
    ops = [("reset", int(rng.integers(1500)), 0) if rng.random() < 0.2 else ("inc", int(rng.integers(1500)), 1) for _ in range(3000)]
    true, _ = truth_of(ops, "cardinality", 0.5)
    p = 0.3
    bound = 5 * math.sqrt((1 - p) / (p * true))
    for sk in (BernoulliSketch(p=p, seed=seed), SampleHoldSketch(p=p, seed=seed), BottomKSketch(k=int(p * 1500) // 2, seed=seed)):
        assert abs(feed(sk, ops).estimate() / true - 1) <= bound, sk
    tree = feed(DPTreeSketch(p=p, seed=seed, horizon=3000, epsilon_dp=8.0), ops)
    bound_tree = bound + 5 * tree.tree.error_std() / true
    assert abs(tree.estimate() / true - 1) <= bound_tree


@FAST
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=300), st.integers(0, 2**31))
def test_batched_path_matches_sequential_updates(keys, seed):
    arr = np.array(keys, dtype=np.int64)
    deltas = (arr % 3 + 1).astype(np.int64)
    a, b = BernoulliSketch("sum", p=0.3, seed=seed), BernoulliSketch("sum", p=0.3, seed=seed)
    a.update_many(arr, deltas)
    for k, d in zip(keys, deltas.tolist()):
        b.update(k, d)
    assert a.held == b.held and a.estimate() == pytest.approx(b.estimate())
    la, lb = LinearStableSketch("lp", q=0.5, m=8, seed=seed), LinearStableSketch("lp", q=0.5, m=8, seed=seed)
    la.update_many(arr, deltas)
    for k, d in zip(keys, deltas.tolist()):
        lb.update(k, d)
    np.testing.assert_allclose(la.y, lb.y, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(hash_unit_array(arr, seed), [hash_unit(k, seed) for k in keys])
    for cls, kw in ((ExactSketch, {}), (BottomKSketch, {"k": 7, "seed": seed})):
        x, y = cls("lp", 0.5, **kw), cls("lp", 0.5, **kw)
        x.update_many(arr, deltas)
        for k, d in zip(keys, deltas.tolist()):
            y.update(k, d)
        assert x.estimate() == pytest.approx(y.estimate(), rel=1e-9, abs=1e-9)
        held_x = x.values if cls is ExactSketch else x.held
        held_y = y.values if cls is ExactSketch else y.held
        assert held_x == held_y


def test_sample_hold_batched_path_has_the_sequential_law():
    """Batched and sequential sample-and-hold agree in mean and spread over many seeds."""
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 200, 1000)
    deltas = rng.integers(1, 4, 1000)
    seq, bat = [], []
    for s in range(150):
        a, b = SampleHoldSketch("sum", p=0.05, seed=s), SampleHoldSketch("sum", p=0.05, seed=10_000 + s)
        a.update_many(keys, deltas)
        for k, d in zip(keys.tolist(), deltas.tolist()):
            b.update(k, d)
        bat.append(a.estimate())
        seq.append(b.estimate())
    true = float(deltas.sum())
    for xs in (bat, seq):
        assert abs(np.mean(xs) - true) < 4.5 * np.std(xs) / math.sqrt(len(xs))
    assert np.std(bat) == pytest.approx(np.std(seq), rel=0.25)


@FAST
@given(st.integers(1, 3000), st.floats(0.5, 50.0), st.integers(0, 2**31))
def test_binary_tree_mechanism_space_and_exactness(horizon, eps, seed):
    btm = BinaryTreeMechanism(horizon, eps, 1.0, np.random.default_rng(seed))
    L = btm.levels
    assert L == max(1, math.ceil(math.log2(horizon + 1)))
    assert btm.scale == pytest.approx(L / eps)
    xs = np.random.default_rng(seed).integers(-3, 4, size=min(horizon, 200))
    # with the noise switched off the released prefix sums are exact
    exact = BinaryTreeMechanism(horizon, eps, 1.0, np.random.default_rng(seed))
    exact.scale = 0.0
    for t, x in enumerate(xs, 1):
        assert exact.add(x) == pytest.approx(xs[:t].sum())
    assert exact.space_words() <= 2 * (L + 1)


def test_binary_tree_mechanism_noise_matches_its_stated_scale():
    """The noise of prefix t is the sum of popcount(t) Laplace(b) draws: its variance is 2 b^2 popcount(t)."""
    horizon, t = 255, 255  # 8 levels set
    errs = []
    for s in range(2000):
        btm = BinaryTreeMechanism(horizon, 2.0, 1.0, np.random.default_rng(s))
        for _ in range(t):
            out = btm.add(1.0)
        errs.append(out - t)
    errs = np.array(errs)
    assert abs(errs.mean()) < 4 * errs.std() / math.sqrt(len(errs))
    assert errs.std() == pytest.approx(math.sqrt(2 * 8) * btm.scale, rel=0.08)
    assert btm.error_std() == pytest.approx(math.sqrt(2 * btm.levels) * btm.scale)


def test_space_is_as_documented():
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 5000, 4000)
    for name in DEFENDERS:
        statistic = "sum" if name == "linear" else "cardinality"
        sk = make_defender(name, statistic, n_keys=5000, space=800, horizon=4000, seed=3)
        sk.update_many(keys)
        words = sk.space_words()
        if name == "exact":
            assert words == 2 * len(np.unique(keys))
        elif name in ("bernoulli", "sample-hold"):
            assert words == 2 * len(sk.held)
        elif name == "bottomk":
            assert len(sk.held) <= 2 * sk.k and words == 3 * len(sk.held) + 1
        elif name in ("switching", "dp-median"):
            assert words == sum(c.space_words() for c in sk.copies)
        elif name == "dp-tree":
            assert words == sk.sampler.space_words() + 2 * len(sk.tree.alpha)
            assert len(sk.tree.alpha) <= sk.tree.levels + 1
        elif name == "linear":
            assert words == 800
        elif name == "theta":
            assert words == sk.sk.num_retained + 1
        if name != "exact":
            # matched space: expected words of every sampling defender are about the budget
            assert words <= 1.6 * 800, (name, words)


def test_theta_reference_on_an_insert_only_stream_and_its_ignored_resets():
    sk = ThetaReference(lg_k=10)
    keys = np.arange(50_000)
    sk.update_many(keys)
    # Theta's relative standard error is about 1/sqrt(k)
    assert abs(sk.estimate() / 50_000 - 1) < 4 / math.sqrt(1024)
    sk.reset(3)
    assert sk.ignored_resets == 1 and not ThetaReference.supports_reset


def test_switching_and_dp_median_track_the_truth_obliviously():
    rng = np.random.default_rng(5)
    keys = rng.permutation(20_000)[:6000]
    for sk in (SwitchingSketch(r=4, p=0.2, alpha=0.1, seed=2), DPMedianSketch(r=15, p=0.1, value_bound=20_000, seed=2)):
        for chunk in np.array_split(keys, 30):
            sk.update_many(chunk)
            sk.estimate()
        assert abs(sk.estimate() / 6000 - 1) < 0.2, sk


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: ExactSketch("median"), "statistic must be one of"),
        (lambda: ExactSketch("lp", q=1.5), "q in"),
        (lambda: BernoulliSketch(p=0.0), "sampling rate p"),
        (lambda: ExactSketch().update(1, 0), "positive integer"),
        (lambda: ExactSketch().update(1, 1.5), "positive integer"),
        (lambda: LinearStableSketch("cardinality"), "not cardinality"),
        (lambda: LinearStableSketch("sum").reset(3), "needs the key's value"),
        (lambda: make_defender("countmin"), "unknown defender"),
        (lambda: make_defender("bernoulli", space=2), "at least 4 words"),
        (lambda: BinaryTreeMechanism(0, 1.0, 1.0, np.random.default_rng()), "horizon"),
        (lambda: BernoulliSketch().update_many(np.array([1.5])), "integer array"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@FAST
@given(st.lists(st.floats(-50, 50), min_size=0, max_size=300), st.integers(0, 60), st.integers(0, 2**31))
def test_btm_batched_path_releases_what_sequential_adds_release(xs, pre, seed):
    """Same seed, same noise draws: add_many(xs) leaves the tree exactly where add() in a loop does."""
    a = BinaryTreeMechanism(4096, 2.0, 1.0, np.random.default_rng(seed))
    b = BinaryTreeMechanism(4096, 2.0, 1.0, np.random.default_rng(seed))
    head = np.random.default_rng(seed).normal(size=pre)
    for x in head:
        a.add(x)
        b.add(x)
    a.add_many(np.array(xs))
    for x in xs:
        b.add(x)
    assert a.value == pytest.approx(b.value, abs=1e-6) and a.t == b.t
    for x in (1.0, -2.0, 3.5):
        assert a.add(x) == pytest.approx(b.add(x), abs=1e-6)


def test_dp_tree_batched_path_is_consistent_and_has_the_sequential_law():
    """With the noise off the tree releases exactly the sampler's estimate; over seeds, batched and
    sequential ingestion give the same mean (the truth) and spread."""
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 300, 1500)
    deltas = rng.integers(1, 4, 1500)
    sk = DPTreeSketch("sum", p=0.2, horizon=4096, seed=1)
    sk.tree.scale = 0.0
    sk.update_many(keys[:700], deltas[:700])
    sk.reset(int(keys[0]))
    sk.update_many(keys[700:], deltas[700:])
    assert sk.tree.value == pytest.approx(sk.sampler.estimate(), rel=1e-9)
    assert sk.space_words() == 2 * len(sk.sampler.held) + 2 * len(sk.tree.alpha)
    true = float(deltas.sum())
    bat, seq = [], []
    for s in range(150):
        a, b = DPTreeSketch("sum", p=0.05, horizon=2048, seed=s), DPTreeSketch("sum", p=0.05, horizon=2048, seed=5000 + s)
        a.tree.scale = b.tree.scale = 0.0
        a.update_many(keys, deltas)
        for k, d in zip(keys.tolist(), deltas.tolist()):
            b.update(k, d)
        bat.append(a.estimate())
        seq.append(b.estimate())
    for xs in (bat, seq):
        assert abs(np.mean(xs) - true) < 4.5 * np.std(xs) / math.sqrt(len(xs))
    assert np.std(bat) == pytest.approx(np.std(seq), rel=0.25)
