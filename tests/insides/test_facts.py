"""The generator behind HallucinationLabeling-v0, pinned before any finding is read from it.

The fact transformer ships its weights (trained once from seed 0, bit-identical on a CPU
rerun); these tests pin what the env's findings rest on: the model knows its facts (greedy
answers right on 860 of 864 prompts), greedy decoding never hallucinates on the prompts kept,
the hallucination rate rises with the temperature, and the default pool's rate is 0.342.
"""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("text"), reason="needs the [text] extra (the shipped encoder, transformers, torch)")


@pytest.fixture(scope="module")
def fm():
    from icmlgym.envs.insides.facts import load_model

    return load_model()


def test_fact_base_is_seeded_and_complete():
    from icmlgym.envs.insides.facts import RELATIONS, FactBase

    a, b = FactBase.generate(48, 0), FactBase.generate(48, 0)
    assert a == b and len(set(a.entities)) == 48
    assert len(a.values) == 48 * len(RELATIONS)
    assert all(v in RELATIONS[r] for (_, r), v in a.values.items())
    assert FactBase.generate(48, 1).values != a.values


def test_shipped_weights_are_the_current_ones(fm):
    """The shipped card's key equals the current key, so the package loads them instead of training."""
    from icmlgym.envs.insides.facts import DEFAULT_MODEL, model_key

    assert fm.card["key"] == model_key(DEFAULT_MODEL)
    assert fm.card["steps"] == 1200 and fm.card["final_loss"] == pytest.approx(0.1693, abs=1e-4)


def test_knowledge_is_present_for_almost_every_prompt():
    from icmlgym.envs.insides.responses import known_prompts

    assert len(known_prompts()) == 860  # of 48 entities x 6 relations x 3 question templates = 864


def test_greedy_answers_of_known_prompts_are_genuine(fm):
    from icmlgym.envs.insides.responses import known_prompts, sample_answers

    kp = list(known_prompts()[::20])
    for (e, r, _), (a,) in zip(kp, sample_answers(fm, kp, 1, 0.0, 0)):
        assert a in fm.facts.genuine_answers(e, r)


def test_hallucination_rate_rises_with_temperature(fm):
    """Measured on 100 known prompts x 8 samples: about 0.06 at T=0.7, 0.13 at T=1.0, 0.34 at T=1.3."""
    from icmlgym.envs.insides.responses import known_prompts, sample_answers

    kp = list(known_prompts()[::8][:100])
    rates = []
    for t in (0.7, 1.0, 1.3):
        ans = sample_answers(fm, kp, 8, t, 1)
        rates.append(np.mean([[a not in fm.facts.genuine_answers(e, r) for a in row] for (e, r, _), row in zip(kp, ans)]))
    assert rates[0] < rates[1] < rates[2]
    assert 0.02 < rates[0] < 0.15 and 0.25 < rates[2] < 0.45


def test_default_pool_is_pinned():
    """The env's default pool: 96 prompts x 8 responses at T=1.3, 34.2% hallucinated; labels agree with the texts."""
    from icmlgym.envs.insides.facts import load_model
    from icmlgym.envs.insides.responses import fact_pool

    pool = fact_pool()
    assert pool.embeddings.shape == (96, 8, 384)
    assert pool.hallucination_rate == pytest.approx(263 / 768)
    np.testing.assert_allclose(np.linalg.norm(pool.embeddings, axis=-1), 1.0, atol=1e-5)
    fb = load_model().facts
    genuine = {fb.question(e, r, q): fb.genuine_answers(e, r) for (e, r) in fb.values for q in range(3)}
    for prompt, texts, labels in zip(pool.prompts, pool.texts, pool.labels):
        assert [int(t not in genuine[prompt]) for t in texts] == labels.tolist()
    # hallucinated answers are more varied than genuine ones (3 answer templates)
    n_gen = np.mean([len({t for t, y in zip(ts, ys) if y == 0}) for ts, ys in zip(pool.texts, pool.labels)])
    assert n_gen <= 3


def test_model_embedding_pool_shares_the_answers():
    from icmlgym.envs.insides.responses import fact_pool

    a, b = fact_pool(), fact_pool(embedding="model")
    assert a.texts == b.texts and b.embeddings.shape == (96, 8, 64)
    np.testing.assert_array_equal(a.labels, b.labels)


def test_bad_generator_settings_are_refused():
    from icmlgym.envs.insides.facts import FactBase, load_model
    from icmlgym.envs.insides.responses import fact_pool

    with pytest.raises(ValueError, match="unknown fact-model settings"):
        load_model(n_layers=3)
    with pytest.raises(ValueError, match="n_entities"):
        FactBase.generate(1, 0)
    with pytest.raises(ValueError, match="embedding must be one of"):
        fact_pool(embedding="tfidf")
    with pytest.raises(ValueError, match="n_responses must be >= 2"):
        fact_pool(n_responses=1)
    with pytest.raises(ValueError, match="pool_prompts must be in 1..860"):
        fact_pool(pool_prompts=900)
