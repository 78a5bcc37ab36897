"""LanguageToVisualKD's rendered splits are kept on disk: a run (a process of its own) reads what an earlier run rendered."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from icmlgym.corpora.product_images import product_images  # noqa: E402
from icmlgym.envs.vision import lavid  # noqa: E402

KW = {"spurious": 0.95}


def test_a_split_is_rendered_once_and_read_back_bit_for_bit(tmp_path, monkeypatch):
    monkeypatch.setenv("ICMLGYM_HOME", str(tmp_path))
    monkeypatch.setattr(lavid, "_DATA_CACHE", type(lavid._DATA_CACHE)())
    x, y, groups = lavid._split("train", 3, 5, KW)
    ref = product_images("train", per_class=3, seed=5, **KW)
    assert x.numpy().tobytes() == ref.x.tobytes() and x.dtype.is_floating_point and tuple(x.shape) == ref.x.shape
    assert y.dtype == ref.y.dtype and np.array_equal(y, ref.y)
    assert groups.dtype == ref.groups.dtype and np.array_equal(groups, ref.groups)
    assert len(list((tmp_path / "cache" / "vision-images").glob("*.npz"))) == 1

    def no_render(*a, **k):
        raise AssertionError("the stored split should have been read")

    monkeypatch.setattr(lavid, "product_images", no_render)
    lavid._DATA_CACHE.clear()  # a new run
    x2, y2, g2 = lavid._split("train", 3, 5, KW)
    assert x2.numpy().tobytes() == ref.x.tobytes() and np.array_equal(y2, ref.y) and np.array_equal(g2, ref.groups)
    with pytest.raises(AssertionError, match="stored split"):  # other arguments are another entry
        lavid._split("train", 3, 6, KW)
