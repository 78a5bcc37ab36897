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
