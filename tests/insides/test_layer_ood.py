"""LayerOOD-v0 and its detectors: the splits, bad input, and what each agent scores."""

from __future__ import annotations

import numpy as np
import pytest

import icmlgym
from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("text"), reason="needs the [text] extra (the shipped encoder, transformers, torch)")

ID = "icmlgym/LayerOOD-v0"


@pytest.fixture(scope="module")
def states():
    from icmlgym.envs.insides.states import IN_TOPICS, OUT_TOPICS, corpus_states

    return corpus_states(IN_TOPICS, OUT_TOPICS)


def test_splits_are_one_class_and_disjoint(states):
    x, ood, topic = states["train"]
    assert x.shape[1:] == (7, 384) and len(x) > 100
    assert ood.sum() == 0 and topic.min() == 0 and topic.max() == 3  # in-domain only, four topics
    for split in ("val", "test"):
        _, o, t = states[split]
        assert 0 < o.sum() < len(o) and np.all((t == -1) == (o == 1))
    keys = {s: {v.tobytes() for v in states[s][0][:, -1]} for s in states}
    assert not keys["train"] & keys["test"] and not keys["val"] & keys["test"] and not keys["train"] & keys["val"]


def test_episode_is_balanced_and_training_data_is_in_domain_topics():
    env = icmlgym.make(ID)
    x, y = env.unwrapped.training_data()
    assert x.shape[1:] == (7, 384) and set(np.unique(y)) == {0, 1, 2, 3}
    assert 0.45 <= env.unwrapped._y.mean() <= 0.55  # the evaluated split holds ood_fraction OOD texts
    obs, _ = env.reset(seed=0)
    assert obs["inputs"].shape == (16, 7, 384)


@pytest.mark.parametrize("kwargs, match", [
    ({"ood_fraction": 1.0}, "ood_fraction"),
    ({"in_topics": ("network", "nope")}, "unknown topics"),
    ({"in_topics": ("network",), "out_topics": ("network", "time")}, "disjoint"),
    ({"batch_size": 200, "n_batches": 4}, "an episode needs"),
])
def test_bad_arguments_are_refused(kwargs, match):
    from icmlgym.envs.insides.layer_ood import LayerOODEnv

    with pytest.raises(ValueError, match=match):
        LayerOODEnv(**kwargs)


def test_wrong_length_scores_are_refused():
    env = icmlgym.make(ID)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action space"):
        env.step(np.zeros(5, np.float32))


@pytest.mark.parametrize("agent", ["ood-msp", "ood-energy", "ood-mahalanobis-last", "ood-knn-last"])
def test_last_layer_detectors_beat_chance(agent):
    """One seed, two episodes: every last-layer detector separates the near-OOD topics above chance."""
    rec = icmlgym.run(ID, agent, seeds=1)[0]
    assert rec.status == "ok", rec.error
    assert min(rec.metric("auroc")) > 0.55
    assert all(0.0 <= v <= 1.0 for v in rec.metric("fpr95"))


def test_sae_transition_features_and_untrained_use():
    from icmlgym.agents.insides import SAETransitionAgent

    agent = SAETransitionAgent(d_latent=32, k=4)
    with pytest.raises(RuntimeError, match="after train"):
        agent.act({"inputs": np.zeros((2, 7, 384), np.float32)}, {})
    env = icmlgym.make(ID)
    agent.reset(0, None)
    agent.train(env, 20)
    x, _ = env.unwrapped.training_data()
    f = agent.features(x[:10])
    assert f.shape == (10, 6 + 5)  # 6 layers' reconstruction errors, 5 transitions' residuals
    s = agent.act({"inputs": x[:10]}, {})
    assert s.shape == (10,) and np.all((s >= 0) & (s <= 1))
    with pytest.raises(ValueError, match="d_latent"):
        SAETransitionAgent(d_latent=4, k=8)


def test_docstring_corpus_is_the_same_on_every_call():
    """The corpus behind the env is deterministic (it once deduplicated docstrings by id(), which
    Python reuses after a string is freed, and dropped texts at random between calls)."""
    from icmlgym.corpora.text import docstrings

    first = [d.text for d in docstrings(["time", "data"])]
    assert first == [d.text for d in docstrings(["time", "data"])]


def test_labelled_ood_texts_come_from_val_and_never_from_test(states):
    env = icmlgym.make(ID, n_labelled_ood=20)
    x, y = env.unwrapped.training_data()
    assert (y == -1).sum() == 20 and len(y) == len(states["train"][0]) + 20
    labelled = {v.tobytes() for v in x[y == -1][:, -1]}
    val_ood = {v.tobytes() for v, o in zip(states["val"][0][:, -1], states["val"][1]) if o}
    assert labelled <= val_ood and not labelled & {v.tobytes() for v in states["test"][0][:, -1]}
    assert icmlgym.make(ID).unwrapped.training_data()[1].min() == 0  # default: one-class, as in v0


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_labelled_ood": -1}, "n_labelled_ood must be >= 0"),
    ({"n_labelled_ood": 500}, "exceeds the 120 OOD texts of the val split"),
    ({"n_labelled_ood": 5, "split": "val"}, "come from the val split"),
])
def test_bad_labelled_ood_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        icmlgym.make(ID, **kwargs)


def test_one_class_detectors_ignore_labelled_ood_and_the_few_label_ones_need_it():
    from icmlgym.baselines.insides import LastLayerLogisticAgent, MaxSoftmaxAgent

    labelled, plain = icmlgym.make(ID, n_labelled_ood=20), icmlgym.make(ID)
    a, b = MaxSoftmaxAgent(), MaxSoftmaxAgent()
    a.train(labelled, 0)
    b.train(plain, 0)
    np.testing.assert_array_equal(a.w, b.w)  # trained on the in-domain rows only
    with pytest.raises(ValueError, match="needs labelled OOD inputs"):
        LastLayerLogisticAgent().train(plain, 0)
    lr = LastLayerLogisticAgent()
    lr.train(labelled, 0)
    obs, _ = labelled.reset(seed=0)
    assert lr.act(obs, {}).shape == (16,)


def test_single_layer_sae_reads_the_last_layer_only():
    from icmlgym.baselines.insides import SingleLayerSAEAgent

    env = icmlgym.make(ID)
    agent = SingleLayerSAEAgent()
    agent.reset(0, None)
    agent.train(env, 20)
    obs, _ = env.reset(seed=0)
    assert len(agent.saes) == 1 and agent.transitions == []
    assert agent.features(obs["inputs"]).shape == (16, 1)
    s = agent.act(obs, {})
    assert s.shape == (16,) and np.all((s >= 0) & (s <= 1))
    with pytest.raises(ValueError, match="reads layer 3, the last of"):
        SingleLayerSAEAgent(layer=3).train(env, 20)


def test_best_single_layer_is_chosen_on_labelled_training_data_only():
    """With 20 labelled OOD texts the layer whose held-out AUROC is best is chosen: the last one here
    (seed 0: layers 1-6 give 0.61, 0.65, 0.70, 0.71, 0.68, 0.94); one-class it reads the last layer."""
    from icmlgym.baselines.insides import BestSingleLayerKNNAgent

    a = BestSingleLayerKNNAgent()
    a.reset(0, None)
    a.train(icmlgym.make(ID, n_labelled_ood=20), 0)
    assert sorted(a.layer_auroc) == [1, 2, 3, 4, 5, 6] and a.layer == max(a.layer_auroc, key=a.layer_auroc.get) == 6
    b = BestSingleLayerKNNAgent()
    b.reset(0, None)
    b.train(icmlgym.make(ID), 0)
    assert b.layer == 6 and b.layer_auroc == {}


def test_flag_mode_is_the_operating_point_variant_and_score_mode_is_unchanged():
    from gymnasium import spaces
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    assert isinstance(icmlgym.make(ID).action_space, spaces.Box)  # v0's default
    env = icmlgym.make(ID, action_mode="flag")
    assert isinstance(env.action_space, spaces.MultiBinary) and env.action_space.n == 16
    check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(env.unwrapped, warn=False)
    env.reset(seed=0)
    labels = env.unwrapped._y[env.unwrapped._order]
    flags = [np.ones(16, np.int8), np.zeros(16, np.int8), labels[32:48].astype(np.int8), env.action_space.sample()]
    for f in flags:
        *_, info = env.step(f)
    m = info["metrics"]
    assert set(m) == {"auroc", "tpr", "fpr", "flagged"}
    y, f = labels.astype(bool), np.concatenate(flags).astype(bool)
    assert m["tpr"] == f[y].mean() and m["fpr"] == f[~y].mean() and m["flagged"] == f.mean()
    assert m["auroc"] == pytest.approx((m["tpr"] + 1 - m["fpr"]) / 2)  # AUROC of flags = balanced accuracy


@pytest.mark.parametrize("bad", [0.5, 2, np.nan, -1])
def test_non_binary_flags_are_refused(bad):
    env = icmlgym.make(ID, action_mode="flag")
    env.reset(seed=0)
    a = np.zeros(16)
    a[3] = bad
    with pytest.raises(ValueError, match="flags must be 0 or 1"):
        env.step(a)
    with pytest.raises(ValueError, match="action space"):
        env.step(np.zeros(5, np.int8))


def test_bad_action_mode_is_refused():
    with pytest.raises(ValueError, match="action_mode must be 'score' or 'flag'"):
        icmlgym.make(ID, action_mode="threshold")


def test_operating_point_agent_calibrates_fpr_one_class_and_tpr_with_labels():
    """One-class it flags at 5% FPR on held-out in-domain texts; with 40 labelled OOD texts at 95% TPR
    on held-out ones. Seed 0, two episodes (measured: one-class fpr 0.03/0.00, tpr 0.15/0.09;
    labelled tpr 0.88/0.91, fpr 0.84/0.77: Mahalanobis pays a high FPR for 95% TPR on near-OOD)."""
    one = icmlgym.run(ID, "ood-mahalanobis-flag", seeds=1, env_kwargs={"action_mode": "flag"})[0]
    assert one.status == "ok", one.error
    assert np.mean(one.metric("fpr")) < 0.15 and np.mean(one.metric("tpr")) > np.mean(one.metric("fpr"))
    few = icmlgym.run(ID, "ood-mahalanobis-flag", seeds=1, env_kwargs={"action_mode": "flag", "n_labelled_ood": 40})[0]
    assert few.status == "ok", few.error
    assert np.mean(few.metric("tpr")) > 0.8 and np.mean(few.metric("flagged")) > np.mean(one.metric("flagged"))
    score = icmlgym.run(ID, "ood-mahalanobis-flag", seeds=1)[0]  # its 0/1 actions are valid scores too
    assert score.status == "ok", score.error
    assert len(score.metric("fpr95")) == 2 and 0.5 < np.mean(score.metric("auroc")) < 1.0


def test_operating_point_agent_refuses_bad_levels_and_acting_untrained():
    from icmlgym.baselines.insides import OperatingPointAgent

    with pytest.raises(ValueError, match="level and holdout"):
        OperatingPointAgent(level=1.0)
    with pytest.raises(RuntimeError, match="after train"):
        OperatingPointAgent().act({"inputs": np.zeros((2, 7, 384), np.float32)}, {})
    a = OperatingPointAgent()
    a.train(icmlgym.make(ID), 0)
    assert a.calibrated_on == "fpr" and a.act(icmlgym.make(ID).reset(seed=0)[0], {}).dtype == np.int8


def test_token_states_pool_to_the_observation():
    env = icmlgym.make(ID)
    with pytest.raises(RuntimeError, match="call reset"):
        env.unwrapped.token_states(0)
    obs, _ = env.reset(seed=0)
    for i in (0, 15):
        tok = env.unwrapped.token_states(i)
        n = len(tok["tokens"])
        assert tok["tokens"][0] == "[CLS]" and tok["tokens"][-1] == "[SEP]"
        assert tok["states"].shape == (7, n, 384) and tok["states"].dtype == np.float32
        np.testing.assert_allclose(tok["states"].mean(axis=1), obs["inputs"][i], atol=1e-4)
    with pytest.raises(IndexError, match="outside the batch"):
        env.unwrapped.token_states(16)
    for _ in range(4):
        obs, *_ = env.step(np.zeros(16, np.float32))
    with pytest.raises(RuntimeError, match="not after the last step"):
        env.unwrapped.token_states(0)


def test_far_ood_split_over_the_reasoners_task_families():
    """source='reasoner': the zoo reasoner's pooled states; one-class training on arithmetic and lists.
    Measured over seeds 0-2 x 2 episodes: Mahalanobis and kNN on the last layer 1.0 in every episode,
    max softmax probability 0.39-0.65 (a two-family classifier is as confident on strings and code)."""
    from icmlgym.envs.insides.far import reasoner_states

    states = reasoner_states(("arithmetic", "lists"), ("strings", "code"))
    assert states["train"][1].sum() == 0 and set(states["train"][2].tolist()) == {0, 1}
    env = icmlgym.make(ID, source="reasoner")
    obs, _ = env.reset(seed=0)
    assert obs["inputs"].shape == (16, 3, 64)
    with pytest.raises(ValueError, match="token-level access is built for source='docstrings'"):
        env.unwrapped.token_states(0)
    rec = icmlgym.run(ID, "ood-mahalanobis-last", seeds=1, env_kwargs={"source": "reasoner"})[0]
    assert rec.status == "ok", rec.error
    assert min(rec.metric("auroc")) > 0.95
    flags = icmlgym.run(ID, "ood-mahalanobis-flag", seeds=1, env_kwargs={"source": "reasoner", "action_mode": "flag"})[0]
    assert flags.status == "ok", flags.error
    assert min(flags.metric("tpr")) > 0.9 and max(flags.metric("fpr")) < 0.2


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"source": "gemma"}, "source must be 'docstrings', 'reasoner' or 'hf:"),
    ({"source": "reasoner", "in_domains": ("arithmetic", "poetry")}, "unknown task families"),
    ({"source": "reasoner", "in_domains": ("code",)}, "disjoint"),
])
def test_bad_far_ood_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        icmlgym.make(ID, **kwargs)
