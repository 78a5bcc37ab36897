"""Generated catalogue, folder loader, edits and features."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from icmlgym.envs.arena.editors import EDITS, GenerativeEdit, apply_edits, edit_vector
from icmlgym.envs.arena.features import FEATURES, extract_features
from icmlgym.envs.arena.images import CATEGORIES, ProductCatalog, image_id, layers_from_rgb, load_image_folder


def test_catalogue_is_deterministic_and_has_hundreds_of_distinct_products():
    cat = ProductCatalog(400, seed=0)
    ids = {image_id(cat.render(i, 32).composite()) for i in range(400)}
    assert len(ids) == 400
    again = ProductCatalog(400, seed=0).product(123).params
    assert again == cat.product(123).params
    assert ProductCatalog(400, seed=1).product(123).params != again
    assert {cat.product(i).category for i in range(16)} == set(CATEGORIES)
    assert all(cat.product(i).category == "mug" for i in cat.ids_in("mug"))


def test_render_layers_and_sizes():
    cat = ProductCatalog()
    for size in (32, 64, 224):
        img = cat.render(5, size)
        rgb = img.composite()
        assert rgb.shape == (size, size, 3) and rgb.dtype == np.uint8
        alpha = img.obj[..., 3]
        assert 0.05 < (alpha > 128).mean() < 0.8  # an object, not the whole frame


def test_catalogue_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n_products"):
        ProductCatalog(3)
    with pytest.raises(IndexError, match="outside the catalogue"):
        ProductCatalog(16).product(16)
    with pytest.raises(ValueError, match="size"):
        ProductCatalog().render(0, 8)
    with pytest.raises(ValueError, match="unknown category"):
        ProductCatalog().ids_in("car")


def test_zero_edit_is_identity_and_every_edit_changes_pixels():
    img = ProductCatalog().render(3, 64)
    base = img.composite()
    assert np.array_equal(apply_edits(img, np.zeros(len(EDITS))), base)
    for e in EDITS:
        for m in (-0.7, 0.7):
            out = apply_edits(img, edit_vector({e: m}))
            assert out.shape == base.shape
            assert np.abs(out.astype(int) - base).mean() > 0.5, (e, m)
    # the same theta always renders the same pixels
    th = np.linspace(-0.9, 0.9, len(EDITS))
    assert np.array_equal(apply_edits(img, th), apply_edits(img, th))


def test_edits_move_the_features_they_name():
    img = ProductCatalog().render(11, 64)

    def f(edits):
        return dict(zip(FEATURES, extract_features(apply_edits(img, edit_vector(edits)))))

    assert f({"lighting": 0.8})["brightness"] > f({})["brightness"] > f({"lighting": -0.8})["brightness"]
    assert f({"saturation": 0.8})["colourfulness"] > f({"saturation": -0.8})["colourfulness"]
    assert f({"contrast": 0.8})["contrast"] > f({"contrast": -0.8})["contrast"]
    assert f({"background": 1.0})["bg_uniformity"] > f({"background": -1.0})["bg_uniformity"]
    assert f({"background": -1.0})["clutter"] > f({"background": 1.0})["clutter"]
    assert f({"zoom": 1.0})["object_scale"] > f({"zoom": -1.0})["object_scale"]


def test_bad_edit_vectors_are_rejected():
    img = ProductCatalog().render(0, 32)
    with pytest.raises(ValueError, match="7 magnitudes"):
        apply_edits(img, [0.1, 0.2])
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        apply_edits(img, np.full(len(EDITS), 1.5))
    with pytest.raises(ValueError, match="unknown edit"):
        edit_vector({"blur": 0.3})


def test_features_are_resolution_robust_and_validate_input():
    cat = ProductCatalog()
    small = extract_features(cat.render(7, 64).composite())
    big = extract_features(cat.render(7, 224).composite())
    assert small.shape == (len(FEATURES),)
    assert np.abs(small - big).max() < 0.15
    with pytest.raises(ValueError, match="uint8"):
        extract_features(np.zeros((8, 8, 3), dtype=np.float32))


def _write_photo(path, colour, bg=(240, 240, 240), size=(80, 60)):
    im = Image.new("RGB", size, bg)
    from PIL import ImageDraw

    ImageDraw.Draw(im).ellipse([25, 15, 55, 45], fill=colour)
    im.save(path)


def test_load_image_folder(tmp_path):
    (tmp_path / "mug").mkdir()
    (tmp_path / "lamp").mkdir()
    _write_photo(tmp_path / "mug" / "a.png", (200, 30, 30))
    _write_photo(tmp_path / "mug" / "b.jpg", (30, 30, 200))
    _write_photo(tmp_path / "lamp" / "c.png", (30, 160, 30))
    (tmp_path / "notes.txt").write_text("not an image")
    imgs = load_image_folder(tmp_path, size=48)
    assert [i.category for i in imgs] == ["lamp", "mug", "mug"]
    for im in imgs:
        assert im.composite().shape == (48, 48, 3)
        alpha = im.obj[..., 3] > 128
        assert 0.1 < alpha.mean() < 0.6  # the disc, not the backdrop
        assert alpha[24, 24] and not alpha[1, 1]
    # edits apply to user photos too
    assert not np.array_equal(apply_edits(imgs[0], edit_vector({"placement": -1.0})), imgs[0].composite())


def test_load_image_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_image_folder(tmp_path / "missing")
    with pytest.raises(ValueError, match="no images"):
        load_image_folder(tmp_path)
    (tmp_path / "broken.png").write_bytes(b"not a png")
    with pytest.raises(ValueError, match="broken.png"):
        load_image_folder(tmp_path)
    with pytest.raises(ValueError, match="uint8"):
        layers_from_rgb(np.zeros((4, 4)))


class _Tint:
    def edit(self, image, instruction, strength, seed):
        out = image.astype(np.float32)
        out[..., 2] = out[..., 2] * (1 - strength) + 255 * strength
        return out.astype(np.uint8)


class _Bad:
    def edit(self, image, instruction, strength, seed):
        return image[:10]


def test_generative_editor_slot():
    rgb = ProductCatalog().render(1, 32).composite()
    g = GenerativeEdit(_Tint(), "bathe the scene in blue light")
    assert g(rgb, 0.0) is rgb
    out = g(rgb, -0.5)
    assert out[..., 2].mean() > rgb[..., 2].mean()
    with pytest.raises(ValueError, match="returned shape"):
        GenerativeEdit(_Bad(), "x")(rgb, 0.5)
    with pytest.raises(TypeError, match="edit"):
        GenerativeEdit(object(), "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="instruction"):
        GenerativeEdit(_Tint(), "  ")


def test_stored_feature_reference_stats_match_a_fresh_computation():
    from icmlgym.envs.arena.features import compute_reference_stats, reference_stats

    mu, sd = reference_stats()
    mu2, sd2 = compute_reference_stats()
    assert np.allclose(mu, mu2, rtol=1e-6, atol=1e-9) and np.allclose(sd, sd2, rtol=1e-6, atol=1e-9)
    assert np.all(sd > 0)
