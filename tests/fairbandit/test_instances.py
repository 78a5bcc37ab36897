"""Instances: synthetic generator, scikit-learn's bundled datasets, the LTR loader."""

import numpy as np
import pytest

from icmlgym.envs.fairbandit.instances import (
    LinearInstance,
    ltr_instance,
    positive_normalise,
    read_ltr_file,
    sklearn_instance,
    synthetic_instance,
)

LTR_TEXT = """\
2 qid:10 1:0.5 2:1.0 3:0.2 4:0.1 # doc a
0 qid:10 1:0.1 2:0.3 3:0.9 4:0.0
1 qid:10 1:0.4 2:0.8 4:0.3
0 qid:11 1:0.0 2:0.1 3:0.7 4:0.9

3 qid:11 1:0.9 2:0.9 3:0.1 4:0.2
1 qid:11 1:0.3 2:0.6 3:0.5 4:0.5
2 qid:12 1:0.7 2:0.5 3:0.3 4:0.4
0 qid:12 1:0.2 2:0.0 3:0.8 4:0.6
4 qid:12 1:1.0 2:1.0 3:0.0 4:0.1
"""


def test_synthetic_instance_is_positive_deterministic_and_linear():
    a = synthetic_instance(200, 8, seed=3)
    b = synthetic_instance(200, 8, seed=3)
    c = synthetic_instance(200, 8, seed=4)
    assert a.arms.shape == (200, 8) and a.theta.shape == (8,)
    np.testing.assert_array_equal(a.arms, b.arms)
    assert not np.array_equal(a.arms, c.arms)
    assert a.means.min() == pytest.approx(0.05) and a.means.max() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="n_arms"):
        synthetic_instance(1, 3)
    with pytest.raises(ValueError, match="dim"):
        synthetic_instance(10, 0)


def test_positive_normalise_is_an_affine_map_of_the_rewards():
    rng = np.random.default_rng(0)
    X, theta = rng.normal(size=(40, 5)), rng.normal(size=5)
    Y = positive_normalise(X, theta, 0.1)
    before, after = X @ theta, Y @ theta
    assert np.all(np.argsort(before) == np.argsort(after))
    slope = np.polyfit(before, after, 1)
    np.testing.assert_allclose(np.polyval(slope, before), after, atol=1e-10)
    assert after.min() == pytest.approx(0.1) and after.max() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="degenerate"):
        positive_normalise(X, np.zeros(5))
    with pytest.raises(ValueError, match="min_reward"):
        positive_normalise(X, theta, 1.5)


@pytest.mark.parametrize("name,rows", [("diabetes", 442), ("wine", 178), ("breast_cancer", 569)])
def test_sklearn_instances_follow_the_svd_lasso_construction(name, rows):
    inst = sklearn_instance(name, dim=5)
    assert inst.arms.shape == (rows, 5)
    assert inst.means.min() == pytest.approx(0.05) and inst.means.max() == pytest.approx(1.0)
    # the Lasso fit on the SVD features explains a real part of the labels (no random theta)
    assert inst.meta["lasso_r2"] > 0.3
    sub = sklearn_instance(name, dim=4, n_arms=50, seed=1)
    assert sub.arms.shape == (50, 4)


def test_sklearn_instance_errors():
    with pytest.raises(ValueError, match="bundled datasets"):
        sklearn_instance("california_housing")
    with pytest.raises(ValueError, match="dim"):
        sklearn_instance("wine", dim=14)
    with pytest.raises(ValueError, match="n_arms"):
        sklearn_instance("wine", n_arms=1000)


def test_read_ltr_file(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(LTR_TEXT)
    rel, qid, F = read_ltr_file(path)
    assert rel.tolist() == [2, 0, 1, 0, 3, 1, 2, 0, 4]
    assert qid.tolist() == ["10"] * 3 + ["11"] * 3 + ["12"] * 3
    assert F.shape == (9, 4)
    assert F[2].tolist() == [0.4, 0.8, 0.0, 0.3]  # missing feature 3 is 0
    rel2, _, _ = read_ltr_file(path, max_rows=4)
    assert len(rel2) == 4


def test_ltr_instance(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(LTR_TEXT)
    inst = ltr_instance(path, dim=3, lasso_alpha=0.001)
    assert inst.arms.shape == (9, 3) and np.all(inst.means > 0)
    # documents with higher relevance get higher mean reward on this clean toy file
    rel, _, _ = read_ltr_file(path)
    assert np.corrcoef(rel, inst.means)[0, 1] > 0.5
    one = ltr_instance(path, dim=2, qid="12", lasso_alpha=0.001)
    assert one.arms.shape == (3, 2)
    with pytest.raises(ValueError, match="query '99'"):
        ltr_instance(path, qid="99")


@pytest.mark.parametrize(
    "line,match",
    [
        ("x qid:1 1:0.5", "relevance label"),
        ("1 1:0.5 2:0.3", "qid"),
        ("1 qid:1 0:0.5", "bad feature"),
        ("1 qid:1 1:abc", "bad feature"),
        ("1 qid:1 1", "bad feature"),
    ],
)
def test_ltr_malformed_lines_name_the_line(tmp_path, line, match):
    path = tmp_path / "bad.txt"
    path.write_text("1 qid:1 1:0.2 2:0.3\n" + line + "\n")
    with pytest.raises(ValueError, match=match) as err:
        read_ltr_file(path)
    assert "bad.txt:2" in str(err.value)


def test_ltr_missing_or_empty_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_ltr_file(tmp_path / "nope.txt")
    (tmp_path / "empty.txt").write_text("# only a comment\n")
    with pytest.raises(ValueError, match="no data"):
        read_ltr_file(tmp_path / "empty.txt")


def test_linear_instance_validates_shapes():
    with pytest.raises(ValueError, match="theta must have shape"):
        LinearInstance(np.ones((3, 2)), np.ones(3))
    with pytest.raises(ValueError, match="K >= 2"):
        LinearInstance(np.ones((1, 2)), np.ones(2))
