"""HallucinationLabeling-v0: annotations, the final prediction, its metrics, bad input, the JSONL loader and the agents' cores."""

from __future__ import annotations

import json

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("text"), reason="needs the [text] extra (the shipped encoder, transformers, torch)")

E = "icmlgym/HallucinationLabeling-v0"


@pytest.fixture()
def env():
    from icmlgym.envs.insides.hallucination import HallucinationLabelingEnv

    e = HallucinationLabelingEnv(n_prompts=10, n_responses=8, budget=5)
    e.reset(seed=3)
    return e


def test_a_query_reveals_one_label_and_spends_one_annotation(env):
    from icmlgym.envs.insides.hallucination import query_action

    obs, reward, term, _, info = env.step(query_action(7, env.total))
    assert not term and reward == 0.0 and info["cost"] == {"annotations": 1.0}
    assert obs["labels"][7] == env._y[7] and (obs["labels"] >= 0).sum() == 1
    assert obs["budget_left"] == 4


def test_a_repeated_query_is_spent_and_reveals_nothing(env):
    from icmlgym.envs.insides.hallucination import query_action

    env.step(query_action(7, env.total))
    obs, _, _, _, info = env.step(query_action(7, env.total))
    assert "annotation index 7 was already used" in info["warning"]
    assert (obs["labels"] >= 0).sum() == 1 and obs["budget_left"] == 3


def test_strict_mode_refuses_a_repeated_query():
    from icmlgym.envs.insides.hallucination import (
        HallucinationLabelingEnv,
        query_action,
    )

    env = HallucinationLabelingEnv(n_prompts=10, budget=5, strict=True)
    env.reset(seed=0)
    env.step(query_action(2, env.total))
    with pytest.raises(ValueError, match="annotation index 2 was already used"):
        env.step(query_action(2, env.total))


def test_bad_actions_are_clear_errors(env):
    from icmlgym.envs.insides.hallucination import predict_action, query_action

    with pytest.raises(ValueError, match=r"annotation index 80 is out of range: the episode holds responses 0..79"):
        query_action(80, env.total)
    with pytest.raises(ValueError, match="out of range"):
        query_action(-1, env.total)
    with pytest.raises(ValueError, match="predictions have length 79; the episode holds 80 responses"):
        predict_action(np.zeros(79), env.total)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        predict_action(np.full(80, 2.0), env.total)
    with pytest.raises(ValueError, match=r"action of shape \(80,\) is not in the action space"):
        env.step(np.zeros(80, np.float32))  # predictions without the predict flag: wrong length


def test_the_final_prediction_is_scored_on_the_responses_left(env):
    from icmlgym.envs.insides.hallucination import predict_action, query_action

    env.step(query_action(0, env.total))
    truth = env._y.astype(float)
    scores = truth.copy()
    scores[0] = 1.0 - scores[0]  # wrong on the annotated response: not scored
    _, reward, term, _, info = env.step(predict_action(scores, env.total))
    assert term and reward == 1.0
    m = info["metrics"]
    assert m["f1"] == 1.0 and m["accuracy"] == 1.0 and m["auroc"] == 1.0 and m["annotations"] == 1.0
    assert 0 < m["hallucination_rate"] < 1
    with pytest.raises(RuntimeError, match="ended"):
        env.step(predict_action(scores, env.total))


def test_after_the_budget_any_action_is_the_final_prediction(env):
    from icmlgym.envs.insides.hallucination import query_action

    for i in range(5):
        _, _, term, _, _ = env.step(query_action(i, env.total))
        assert not term
    _, _, term, _, info = env.step(query_action(9, env.total))  # predict flag 0, but no annotation left
    assert term and info["cost"]["annotations"] == 5.0


def test_spreads_pair_genuine_and_hallucinated_per_prompt():
    from icmlgym.envs.insides.hallucination import spreads

    rng = np.random.default_rng(0)
    centre = rng.normal(size=16)
    gen = centre + 0.01 * rng.normal(size=(4, 16))
    hal = rng.normal(size=(4, 16))
    emb = np.stack([np.r_[gen, hal], np.r_[gen, hal][::-1]])
    labels = np.array([[0] * 4 + [1] * 4, [1] * 4 + [0] * 4])
    g, h = spreads(emb, labels)
    assert len(g) == 2 and all(x < 0.01 for x in g) and all(x > 0.5 for x in h)


def test_bad_env_arguments_are_refused():
    from icmlgym.envs.insides.hallucination import HallucinationLabelingEnv

    with pytest.raises(ValueError, match="budget must be in 0..79"):
        HallucinationLabelingEnv(n_prompts=10, budget=80)
    with pytest.raises(ValueError, match="pool_prompts"):
        HallucinationLabelingEnv(n_prompts=50, pool_prompts=40)
    with pytest.raises(ValueError, match="temperature"):
        HallucinationLabelingEnv(temperature=-1.0)
    with pytest.raises(ValueError, match="n_responses >= 2"):
        HallucinationLabelingEnv(n_responses=1)


# ----------------------------------------------------------------------------- the JSONL loader


def _write(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def _rows():
    rows = []
    for p in range(3):
        for j in range(3):
            rows.append({"prompt": f"question {p}", "response": f"answer {p}.{j}", "label": ["genuine", 1, "false"][j]})
    return rows


def _embed(texts):
    return np.array([[len(t), t.count("1"), 1.0] for t in texts], np.float32)


def test_jsonl_loads_prompts_with_enough_responses(tmp_path):
    from icmlgym.envs.insides.responses import load_jsonl

    rows = _rows() + [{"prompt": "lonely", "response": "only one", "label": 0}]
    with pytest.warns(UserWarning, match="dropped 1 prompt"):
        pool = load_jsonl(_write(tmp_path / "r.jsonl", rows), 3, embed=_embed)
    assert pool.prompts == ("question 0", "question 1", "question 2")
    assert pool.labels.tolist() == [[0, 1, 0]] * 3 and pool.embeddings.shape == (3, 3, 3)


def test_jsonl_malformed_lines_are_skipped_with_file_and_line(tmp_path):
    from icmlgym.envs.insides.responses import load_jsonl

    rows = _rows()
    rows.insert(2, "{not json")
    rows.insert(4, {"prompt": "question 0", "response": "x"})
    rows.insert(6, {"prompt": "question 1", "response": "y", "label": "maybe"})
    path = _write(tmp_path / "bad.jsonl", rows)
    with pytest.warns(UserWarning) as rec:
        pool = load_jsonl(path, 3, embed=_embed)
    messages = [str(w.message) for w in rec]
    assert any(f"{path}:3: not valid JSON" in m for m in messages)
    assert any(f"{path}:5: missing field(s) ['label']" in m for m in messages)
    assert any(f"{path}:7: label 'maybe'" in m for m in messages)
    assert len(pool.prompts) == 3


def test_jsonl_strict_mode_refuses_the_first_malformed_line(tmp_path):
    from icmlgym.envs.insides.responses import JSONLError, load_jsonl

    path = _write(tmp_path / "bad.jsonl", _rows()[:2] + ["[1, 2]"] + _rows()[2:])
    with pytest.raises(JSONLError, match=rf"{path}:3: expected a JSON object"):
        load_jsonl(path, 3, strict=True, embed=_embed)


def test_jsonl_without_usable_prompts_or_file_is_an_error(tmp_path):
    from icmlgym.envs.insides.responses import JSONLError, load_jsonl

    with pytest.raises(FileNotFoundError, match="no responses file"):
        load_jsonl(tmp_path / "missing.jsonl", 3)
    with pytest.raises(JSONLError, match="no prompt has 5 valid responses"):
        load_jsonl(_write(tmp_path / "r.jsonl", _rows()), 5, embed=_embed)


def test_env_on_a_jsonl_file_uses_the_sentence_encoder(tmp_path):
    from icmlgym.envs.insides.hallucination import (
        HallucinationLabelingEnv,
        predict_action,
    )

    env = HallucinationLabelingEnv(n_prompts=2, n_responses=3, budget=1, jsonl_path=_write(tmp_path / "r.jsonl", _rows()))
    obs, _ = env.reset(seed=0)
    assert obs["embeddings"].shape == (6 * 384,) and env.observation_space.contains(obs)
    _, _, term, _, info = env.step(predict_action(np.full(6, 0.4), 6))
    assert term and info["metrics"]["annotations"] == 0.0


# ----------------------------------------------------------------------------- agents' cores


def test_label_spreading_recovers_two_separated_clusters():
    from icmlgym.agents.insides import label_spreading

    rng = np.random.default_rng(0)
    z = np.r_[rng.normal(0, 0.3, (30, 2)), rng.normal(4, 0.3, (30, 2))]
    p = label_spreading(z, np.array([0, 1, 30, 31]), np.array([0.0, 0.0, 1.0, 1.0]))
    assert (p[:30] < 0.5).all() and (p[30:] > 0.5).all()


def test_two_means_threshold_splits_two_groups():
    from icmlgym.agents.insides import two_means_threshold

    s = np.r_[np.full(10, 0.1), np.full(5, 0.9)]
    assert 0.1 < two_means_threshold(s) < 0.9
    assert two_means_threshold(np.ones(4)) > 1.0  # one group: nothing flagged


def test_cluster_shares_counts_near_duplicates_per_prompt():
    from icmlgym.baselines.insides import cluster_shares

    e = np.array([[1, 0], [1, 0], [0.999, 0.04], [0, 1]], float)
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    np.testing.assert_allclose(cluster_shares(e, np.zeros(4, int), 0.1), [0.75, 0.75, 0.75, 0.25])


def test_aporia_and_logreg_get_the_same_labels_and_agents_never_repeat_a_query():
    import icmlgym
    from icmlgym.agents.loading import load_agent

    revealed = {}
    for agent in ("aporia-lp", "hal-logreg", "hal-uncertainty"):
        env = icmlgym.make(E, n_prompts=10, budget=12)
        a = load_agent(agent)()
        obs, info = env.reset(seed=5)
        a.reset(5, None)
        term = False
        while not term:
            obs, _, term, _, info = env.step(a.act(obs, info))
            assert "warning" not in info
        revealed[agent] = obs["labels"]
    np.testing.assert_array_equal(revealed["aporia-lp"], revealed["hal-logreg"])
    assert (revealed["hal-uncertainty"] >= 0).sum() == 12
