"""The R_c^2 analyses: across training and under a skewed label distribution."""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("split"), reason="needs the [split] extra (torch, scikit-learn)")


def test_training_collapses_the_intra_class_radius_of_the_deep_blocks():
    from icmlgym.envs.split.analysis import rc2_over_training

    c = rc2_over_training("digits", depth=2, width=32, steps=150, every=75, seed=0)
    assert c.steps == [0, 75, 150] and c.ratios.shape == (3, 4)
    assert np.all(c.ratios[:, 0] == c.ratios[0, 0])  # the input's ratio does not train
    assert c.ratios[-1, -1] < c.ratios[0, -1]  # the logits' classes separate as the model learns
    assert c.accuracy[-1] > c.accuracy[0]


def test_skew_thins_the_label_distribution_and_bad_arguments_are_refused():
    from icmlgym.envs.split.analysis import rc2_over_training

    c = rc2_over_training("digits", depth=2, width=16, steps=10, every=10, skew=0.5)
    assert c.class_counts[0] > 5 * c.class_counts[9]
    with pytest.raises(ValueError, match="skew must be"):
        rc2_over_training(skew=-1.0)
    with pytest.raises(ValueError, match="data must be one of"):
        rc2_over_training("cifar")
