"""The layout language: generator, geometry, HTML round trip, edits, submitted-HTML checks, score."""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.envs.ui.edits import OPS, EditError, apply_edit, describe_edit, random_valid_edit
from icmlgym.envs.ui.html_input import HTMLInputError, check_html, parse_layout
from icmlgym.envs.ui.layout import PALETTE, Block, empty_page, generate_page, layout, to_html
from icmlgym.envs.ui.render import fast_render
from icmlgym.envs.ui.score import PARTS, score_parts


def test_generator_is_seeded_and_fits():
    a = to_html(generate_page(np.random.default_rng(5), 192, 144))
    assert a == to_html(generate_page(np.random.default_rng(5), 192, 144))
    assert a != to_html(generate_page(np.random.default_rng(6), 192, 144))
    for seed in range(20):
        page = generate_page(np.random.default_rng(seed), 192, 144)
        for box in layout(page)[1:]:  # nothing a generated page holds is clipped
            x0, y0, x1, y1 = box.clip
            assert (x1 - x0, y1 - y0) == (box.w, box.h), (seed, box)
    with pytest.raises(ValueError, match="width and height >= 96"):
        generate_page(np.random.default_rng(0), 80, 144)


def test_layout_is_flexbox_geometry():
    page = Block("page", 100, 60, PALETTE[0], direction="row", gap=3, padding=5, children=[
        Block("image", 20, 10, PALETTE[4]),
        Block("card", 30, 80, PALETTE[1], direction="column", gap=2, padding=1, children=[Block("text", 10, 12, PALETTE[1], text="Buy")]),
        Block("button", 60, 12, PALETTE[5], text="Go"),
    ])
    boxes = layout(page)
    assert [(b.x, b.y, b.w, b.h) for b in boxes] == [(0, 0, 100, 60), (5, 5, 20, 10), (28, 5, 30, 80), (29, 6, 10, 12), (61, 5, 60, 12)]
    assert boxes[2].clip == (28, 5, 58, 60)  # the card overflows the page: clipped at its bottom
    assert boxes[4].clip == (61, 5, 100, 17)
    img = fast_render(page).image
    assert tuple(img[59, 40]) == PALETTE[1] and tuple(img[30, 70]) == PALETTE[0] and tuple(img[8, 99]) == PALETTE[5]


def test_html_round_trip_and_blocks_in_preorder():
    page = generate_page(np.random.default_rng(1), 192, 144)
    html = to_html(page)
    back, warnings = parse_layout(html)
    assert warnings == [] and to_html(back) == html
    assert [int(x) for x in __import__("re").findall(r'data-id="(\d+)"', html)] == list(range(len(page)))


@pytest.mark.parametrize(
    "html, message",
    [
        ("<div data-type='page' style='width:10px;height:10px'>", "does not parse: <div> opened at line 1 is never closed"),
        ("<div data-type='page' style='width:10px;height:10px'></span>", "does not parse: </span> at line 1"),
        ("</div>", "closes nothing"),
        ("hello", "exactly one top-level <div data-type=\"page\">"),
        ("<div data-type='page' style='width:10px;height:10px;float:left'></div>", "CSS property 'float' is outside the layout language"),
        ("<div data-type='page' style='width:10px'></div>", "style needs height"),
        ("<div data-type='page' style='width:10px;height:1em'></div>", "height: '1em' is not a whole number of px"),
        ("<div data-type='page' style='width:9px;height:9px;background:red'></div>", "colour 'red' is not"),
        ("<div data-type='page' style='width:9px;height:9px'><div data-type='widget' style='width:9px;height:9px'></div></div>", "needs data-type in"),
        ("<div data-type='page' style='width:9px;height:9px'><img src='a.png'></div>", "<img> at line 1 is outside the layout language"),
        ("<div data-type='page' style='width:9px;height:9px'><div data-type='image' style='width:1px;height:1px'><div data-type='text' style='width:1px;height:1px'></div></div></div>",
         "a image block cannot have children"),
    ],
)
def test_bad_html_is_a_clear_error(html, message):
    with pytest.raises(HTMLInputError, match=__import__("re").escape(message)):
        parse_layout(html)


def test_scripts_and_external_urls_are_reported_not_run():
    page = to_html(generate_page(np.random.default_rng(2), 192, 144))
    evil = page.replace("</body>", "<script>fetch('http://example.com')</script></body>").replace(
        "<head>", "<head><link rel='stylesheet' href='https://cdn.example.com/x.css'><style>@import url('http://e.com/y.css');</style>")
    evil = evil.replace('data-type="image"', 'onclick="alert(1)" data-type="image"', 1)
    warnings = check_html(evil)
    text = "\n".join(warnings)
    assert "<script> ignored (scripts are disabled" in text
    assert "onclick" in text and "https://cdn.example.com/x.css" in text and "http://e.com/y.css" in text
    assert "rendered offline with every network request blocked" in text
    back, w2 = parse_layout(evil)  # the fast renderer draws the blocks and drops the script
    assert w2 == warnings and len(back) == len(parse_layout(page)[0])


def test_edits_apply_and_refuse_clearly():
    page = generate_page(np.random.default_rng(3), 192, 144)
    n = len(page)
    assert to_html(apply_edit(page, (0, OPS.index("noop"), 0))) == to_html(page)
    recoloured = apply_edit(page, (1, OPS.index("colour"), 7))
    assert recoloured.children[0].colour == PALETTE[7] and page.children[0].colour != recoloured.children[0].colour or page.children[0].colour == PALETTE[7]
    assert len(apply_edit(page, (1, OPS.index("delete"), 0))) < n
    assert len(apply_edit(page, (0, OPS.index("add"), 6))) == n + 1
    with pytest.raises(EditError, match=f"no block {n}: the page has {n} blocks"):
        apply_edit(page, (n, OPS.index("colour"), 0))
    with pytest.raises(EditError, match="the page \\(block 0\\) cannot be deleted"):
        apply_edit(page, (0, OPS.index("delete"), 0))
    with pytest.raises(EditError, match="holds no text"):
        apply_edit(page, (0, OPS.index("text"), 0))
    with pytest.raises(EditError, match="most this env allows \\(5\\)"):
        apply_edit(page, (0, OPS.index("add"), 0), max_blocks=5)
    rng = np.random.default_rng(0)
    for _ in range(30):
        e = random_valid_edit(rng, page, ("colour", "width", "text", "delete", "add"))
        assert to_html(apply_edit(page, e)) != to_html(page)
        assert describe_edit(page, e).startswith(("set", "make", "change", "remove", "add"))


def test_score_parts():
    target = fast_render(generate_page(np.random.default_rng(4), 192, 144))
    same = score_parts(target, target)
    assert all(same[k] == pytest.approx(1.0) for k in (*PARTS, "score"))
    empty = score_parts(target, fast_render(empty_page(192, 144)))
    assert empty["text"] == 0.0 and empty["score"] < 0.3
    page = generate_page(np.random.default_rng(4), 192, 144)
    worse = [score_parts(target, fast_render(apply_edit(page, (1, OPS.index("colour"), c))))["colour"] for c in range(12)]
    assert max(worse) == pytest.approx(1.0) and min(worse) < 1.0
