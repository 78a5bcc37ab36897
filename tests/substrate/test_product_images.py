"""The generated product images (icmlgym.corpora.product_images): determinism, balance, shapes, groups, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.corpora.product_images import (
    BACKGROUNDS,
    COLOURS,
    MATERIALS,
    OBJECTS,
    class_index,
    product_classes,
    product_images,
    render,
)


def test_same_arguments_give_the_same_arrays_and_the_seed_changes_them():
    a = product_images("train", per_class=3, seed=5)
    b = product_images("train", per_class=3, seed=5)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)
    c = product_images("train", per_class=3, seed=6)
    assert not np.array_equal(a.x, c.x)
    # splits are independent draws of the same classes
    t = product_images("test", per_class=3, seed=5)
    assert sorted(t.y.tolist()) == sorted(a.y.tolist()) and not np.array_equal(np.sort(t.x.ravel()), np.sort(a.x.ravel()))


@pytest.mark.parametrize("counts,size", [((4, 4, 3), 16), ((2, 3, 5), 24), ((8, 8, 1), 8)])
def test_shapes_range_and_exact_class_balance(counts, size):
    n_o, n_c, n_m = counts
    for split in ("train", "val", "test"):
        d = product_images(split, n_objects=n_o, n_colours=n_c, n_materials=n_m, per_class=3, size=size)
        C = n_o * n_c * n_m
        assert d.x.shape == (3 * C, 3, size, size) and d.x.dtype == np.float32 and d.y.dtype == np.int64
        assert 0.0 <= d.x.min() and d.x.max() <= 1.0
        assert np.array_equal(np.bincount(d.y, minlength=C), np.full(C, 3))
        assert d.card["classes"] == C and len(d.card["class_names"]) == C
        # the label is the documented function of the attributes
        assert np.array_equal(d.y, class_index(d.attrs["object"], d.attrs["colour"], d.attrs["material"], n_c, n_m))
        assert d.groups is None and (d.attrs["background"] == 0).all()


def test_class_table_names_and_groups():
    cl = product_classes(4, 2, 3)
    assert len(cl) == 24 and cl.names[0] == f"{COLOURS[0]} {MATERIALS[0]} {OBJECTS[0]}"
    assert cl.names[class_index(3, 1, 2, 2, 3)] == f"{COLOURS[1]} {MATERIALS[2]} {OBJECTS[3]}"
    assert np.array_equal(cl.groups, (cl.attributes[:, 0] >= 2).astype(int))
    by_colour = product_classes(4, 2, 3, group_by="colour")
    assert np.array_equal(by_colour.groups, cl.attributes[:, 1])


def test_every_attribute_is_visible_to_a_nearest_class_mean_reader():
    """The classes are real: nearest class means on raw pixels (seed 0, 6 images per class) read the
    object and the colour, the 48 classes well above chance (measured 0.32, chance 0.02), and the
    material among the three classes that share the true object and colour (measured 0.49, chance 1/3)."""
    tr, te = product_images("train", per_class=6), product_images("test", per_class=6)
    xtr, xte = tr.x.reshape(len(tr.x), -1), te.x.reshape(len(te.x), -1)
    for name, chance in (("object", 1 / 4), ("colour", 1 / 4)):
        a, b = tr.attrs[name], te.attrs[name]
        means = np.stack([xtr[a == k].mean(0) for k in range(int(a.max()) + 1)])
        pred = ((xte[:, None] - means[None]) ** 2).sum(-1).argmin(1)
        assert (pred == b).mean() > chance + 0.1, (name, (pred == b).mean())
    means = np.stack([xtr[tr.y == c].mean(0) for c in range(48)])
    d = ((xte[:, None] - means[None]) ** 2).sum(-1)
    assert (d.argmin(1) == te.y).mean() > 5 / 48
    same_rest = te.y - te.attrs["material"]  # the class index of material 0 with the true object and colour
    dm = np.stack([d[np.arange(len(te.y)), same_rest + m] for m in range(3)], 1)
    assert (dm.argmin(1) == te.attrs["material"]).mean() > 1 / 3 + 0.1


def test_spurious_background_follows_the_group_in_train_and_is_balanced_at_test():
    tr = product_images("train", per_class=20, spurious=0.9)
    own = tr.attrs["background"] - 1 == tr.attrs["group"]
    assert 0.85 < own.mean() < 0.95  # 960 draws with p = 0.9
    assert np.array_equal(tr.groups, 2 * tr.attrs["group"] + tr.attrs["background"] - 1)
    te = product_images("test", per_class=20, spurious=0.9)
    assert np.array_equal(np.bincount(te.groups, minlength=4), np.full(4, len(te) // 4))
    for c in range(48):  # balanced within each class too
        assert np.bincount(te.attrs["background"][te.y == c], minlength=3)[1:].tolist() == [10, 10]
    # backgrounds differ in colour: water is bluer than land
    corner = tr.x[:, :, 0, 0]
    land, water = corner[tr.attrs["background"] == 1], corner[tr.attrs["background"] == 2]
    assert water[:, 2].mean() > land[:, 2].mean() + 0.2
    always = product_images("train", per_class=2, spurious=1.0)
    assert (always.attrs["background"] - 1 == always.attrs["group"]).all()


def test_render_draws_what_it_is_given():
    rng = np.random.default_rng(0)
    x = render([0, 1], [0, 1], [0, 0], [0, 2], rng, size=12)
    assert x.shape == (2, 3, 12, 12)
    centre = x[:, :, 5:7, 4:7].mean((2, 3))
    assert centre[0, 0] > centre[0, 2] and centre[1, 2] > centre[1, 0]  # a red object, a blue object
    with pytest.raises(ValueError, match="background indices"):
        render([0], [0], [0], [len(BACKGROUNDS)], rng)
    with pytest.raises(ValueError, match="one entry per image"):
        render([0, 1], [0], [0], [0], rng)


@pytest.mark.parametrize("kwargs,match", [
    ({"split": "dev"}, "split must be one of"),
    ({"n_objects": 0}, "n_objects must be an integer in 1..8"),
    ({"n_colours": 9}, "n_colours must be an integer in 1..8"),
    ({"n_materials": 6}, "n_materials must be an integer in 1..5"),
    ({"per_class": 0}, "per_class must be an integer >= 1"),
    ({"size": 4}, "size must be an integer in 8..64"),
    ({"spurious": 1.5}, "spurious must be None or a probability"),
    ({"group_by": "shape"}, "group_by must be one of"),
    ({"n_objects": 1, "spurious": 0.9}, "need two class groups"),
])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        product_images(**kwargs)
