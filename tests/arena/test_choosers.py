"""Synthetic, replay and local-model choosers and the query log."""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.envs.arena.choosers import (
    DEFAULT_WEIGHTS,
    ChooserError,
    LocalModelChooser,
    MalformedAnswerError,
    QueryRecord,
    ReplayChooser,
    ReplayMissError,
    SyntheticChooser,
    load_log,
    make_chooser,
    parse_choice,
)
from icmlgym.envs.arena.editors import apply_edits, edit_vector
from icmlgym.envs.arena.features import FEATURES
from icmlgym.envs.arena.images import ProductCatalog, image_id


@pytest.fixture(scope="module")
def pair():
    cat = ProductCatalog()
    img = cat.render(8, 64)
    return [apply_edits(img, edit_vector({"lighting": -0.6})), apply_edits(img, edit_vector({"lighting": 0.6}))]


def test_synthetic_exact_probabilities_are_the_logit_of_the_known_utility(pair):
    ch = SyntheticChooser(position_bias=(0.3,), temperature=0.8)
    p = ch.exact_probabilities(pair)
    u = ch.utilities(pair) + np.array([0.3, 0.0])
    expected = np.exp(u / 0.8) / np.exp(u / 0.8).sum()
    assert np.allclose(p, expected)
    assert p[1] > p[0]  # the default chooser likes brighter photos
    w = np.array([DEFAULT_WEIGHTS[f] for f in FEATURES])
    assert np.isclose(ch.utilities(pair[:1])[0], ch.features(pair[0]) @ w)


def test_sampled_choices_follow_the_exact_probabilities(pair):
    ch = SyntheticChooser(seed=3)
    p = ch.exact_probabilities(pair)
    n = 4000
    picks = np.array([ch.choose(pair) for _ in range(n)])
    assert set(np.unique(picks)) <= {0.0, 1.0}
    freq = picks.mean(axis=0)
    se = np.sqrt(p[1] * (1 - p[1]) / n)
    assert abs(freq[1] - p[1]) < 4 * se
    # every query is recorded, with the shown images and the decision
    assert len(ch.log) == n
    rec = ch.log[0]
    assert rec.image_ids == [image_id(pair[0]), image_id(pair[1])]
    assert rec.choice in (0, 1) and rec.probabilities[rec.choice] == 1.0 and rec.error is None


def test_synthetic_seeding_is_reproducible(pair):
    a = [SyntheticChooser(seed=5).choose(pair)[0] for _ in range(1)]
    ch1, ch2 = SyntheticChooser(seed=5), SyntheticChooser(seed=5)
    seq1 = [ch1.choose(pair)[0] for _ in range(50)]
    seq2 = [ch2.choose(pair)[0] for _ in range(50)]
    assert seq1 == seq2 and a[0] == seq1[0]


def test_chooser_input_validation(pair):
    ch = SyntheticChooser()
    with pytest.raises(ValueError, match="at least 2"):
        ch.choose(pair[:1])
    with pytest.raises(ValueError, match="uint8"):
        ch.choose([pair[0], pair[1].astype(np.float32)])
    with pytest.raises(ValueError, match="do not fit"):
        ch.choose(pair + pair, layout=(1, 3))
    with pytest.raises(ValueError, match="unknown features"):
        SyntheticChooser(weights={"beauty": 1.0})
    with pytest.raises(ValueError, match="temperature"):
        SyntheticChooser(temperature=0)
    with pytest.raises(ValueError, match="unknown chooser type"):
        make_chooser({"type": "oracle"})


def test_parse_choice():
    assert parse_choice("2", 3) == 1
    assert parse_choice("Option 3.", 3) == 2
    assert parse_choice(" I would buy option 1 ", 2) == 0
    for bad in ("", "the blue one", "1 or 2", "4", "0"):
        with pytest.raises(MalformedAnswerError):
            parse_choice(bad, 3)


def test_replay_reproduces_a_recorded_log(pair, tmp_path):
    ch = SyntheticChooser(seed=1)
    shown = [pair, pair[::-1]] * 20
    original = [ch.choose(s).tolist() for s in shown]
    ch.log.append(QueryRecord(len(ch.log), "synthetic", [image_id(pair[0]), image_id(pair[0])], "p", (1, 2), error="ChooserError: boom"))
    path = tmp_path / "log.jsonl"
    ch.save_log(path)
    recs = load_log(path)
    assert len(recs) == 41 and recs[3].choice == ch.log[3].choice
    rep = ReplayChooser(path)
    assert [rep.choose(s).tolist() for s in shown] == original
    assert all(r.cached for r in rep.log)
    with pytest.raises(ReplayMissError, match="used up"):
        rep.choose(pair)
    assert rep.log[-1].error is not None and rep.log[-1].choice is None
    # a recorded error replays as an error
    with pytest.raises(ChooserError, match="boom"):
        rep.choose([pair[0], pair[0]], prompt="p")
    cyc = ReplayChooser(recs, cycle=True)
    for _ in range(25):
        cyc.choose(pair)
    with pytest.raises(ReplayMissError, match="no recorded decision"):
        cyc.choose([pair[1], pair[1]])


def test_load_log_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_log(tmp_path / "none.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": 0}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_log(bad)


class _BrightnessModel:
    """A stand-in local model: scores = 5 x mean brightness."""

    def scores(self, images, prompt, layout):
        return np.array([im.mean() / 255.0 * 5 for im in images])


class _BrokenModel:
    def scores(self, images, prompt, layout):
        return np.array([np.nan] * len(images))


def test_local_model_slot(pair):
    ch = LocalModelChooser(_BrightnessModel())
    p = ch.choose(pair)
    s = _BrightnessModel().scores(pair, "", None)
    assert np.allclose(p, np.exp(s) / np.exp(s).sum())
    sampled = LocalModelChooser(_BrightnessModel(), mode="sample", seed=0)
    assert sampled.choose(pair).sum() == 1.0 and sampled.log[0].choice in (0, 1)
    broken = LocalModelChooser(_BrokenModel())
    with pytest.raises(MalformedAnswerError):
        broken.choose(pair)
    assert broken.log[0].error and broken.log[0].choice is None
    with pytest.raises(TypeError, match="scores"):
        LocalModelChooser(object())  # type: ignore[arg-type]
