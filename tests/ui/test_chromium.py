"""The Chromium renderer against the fast renderer, and the browser's isolation (no network, no scripts).

Tolerance (stated in docs/ui.md): every element's box equal within 1 px, every background
colour equal within 1 level per channel, and at least 99.5% of the pixels outside text boxes
within 2 levels per channel. Text is compared by the DOM's text, not by glyph pixels (the fast
renderer draws greeked bars where Chromium draws glyphs).
"""

from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest

from icmlgym.envs.ui.layout import generate_page, to_html
from icmlgym.envs.ui.render import fast_render, text_mask
from icmlgym.envs.ui.ui_refine import UIRefineEnv

chromium = pytest.importorskip("icmlgym.envs.ui.chromium", reason="playwright is not installed")
if not chromium.CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with chromium.ChromiumRenderer(192, 144) as r:
        yield r


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_chromium_matches_fast_renderer(browser, seed):
    page = generate_page(np.random.default_rng(seed), 192, 144)
    fast, real = fast_render(page), browser.render(to_html(page))
    assert real.blocked == () and real.warnings == ()
    assert [e.type for e in real.elements] == [e.type for e in fast.elements]
    assert [e.text for e in real.elements] == [e.text for e in fast.elements]
    for f, c in zip(fast.elements, real.elements):
        assert np.abs(np.subtract(f.box, c.box)).max() <= 1, (f, c)
        assert np.abs(np.subtract(f.colour, c.colour)).max() <= 1, (f, c)
    outside = ~text_mask(fast)
    close = np.abs(fast.image.astype(int) - real.image.astype(int)).max(-1) <= 2
    assert close[outside].mean() >= 0.995
    assert not close[~outside].all()  # glyphs differ from the greeked bars: the comparison looks at real pixels


class _Listener:
    """A local TCP listener that records every connection made to it (a request or a bare preconnect)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(0.5)
            try:
                self.connections.append(conn.recv(200))
            except OSError:
                self.connections.append(b"")
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def test_browser_never_reaches_the_network_and_runs_no_script(browser):
    listener = _Listener()
    url = f"http://127.0.0.1:{listener.port}"
    page = to_html(generate_page(np.random.default_rng(0), 192, 144))
    evil = page.replace("<head>", f"<head><link rel='stylesheet' href='{url}/a.css'><style>@import url('{url}/b.css');</style>").replace(
        "</body>",
        f"<img src='{url}/c.png'><iframe src='{url}/d.html'></iframe>"
        f"<div style=\"width:5px;height:5px;background-image:url('{url}/e.png')\"></div>"
        "<script>document.body.setAttribute('data-ran', 'yes'); document.body.style.background = 'red';</script></body>",
    )
    try:
        r = browser.render(evil)
        ran = browser._page.evaluate("() => document.body.getAttribute('data-ran')")
        time.sleep(1.0)  # give a late preconnect the chance to show up
    finally:
        listener.close()
    assert listener.connections == []
    assert ran is None
    assert len(r.blocked) >= 3 and all(u.startswith(url) for u in r.blocked)
    notes = "\n".join(r.warnings)
    assert "<script> ignored (scripts are disabled" in notes and f"{url}/c.png" in notes
    fast = fast_render(generate_page(np.random.default_rng(0), 192, 144))
    assert tuple(r.image[2, 100]) == tuple(fast.image[2, 100])  # the script did not paint the page red


def test_conformance_with_the_chromium_renderer():
    """The catalog's conformance checks (``icmlgym check``) at the smoke tier, on Chromium instead of
    the fast renderer (the recorded rollout is the fast renderer's, so it is not compared)."""
    from icmlgym.envs.checking import check, failures

    results = check("icmlgym/UIRefine-v0", renderer="chromium")
    assert {r.check for r in results if r.passed} >= {"check_env", "card contract", "seed determinism", "invalid action", "step after end"}
    assert not failures(results), failures(results)


def test_env_with_chromium_renderer():
    """HTML mode on the real browser accepts any HTML and says what it refused."""
    env = UIRefineEnv(renderer="chromium", action_mode="html", rounds=3)
    try:
        obs, info = env.reset(seed=0)
        fast = UIRefineEnv(rounds=3, action_mode="html")
        fobs, _ = fast.reset(seed=0)
        assert np.abs(obs["target"].astype(int) - fobs["target"].astype(int)).max(-1)[~text_mask(fast._target)].max() <= 2
        obs, r, *_, info = env.step(info["html"].replace("</body>", "<img src='https://example.com/x.png'></body>"))
        assert info["html_error"] is None and any("example.com" in w for w in info["html_warnings"])
        obs, r, *_, info = env.step("<p>unclosed <b>tag</p>")
        assert "does not parse" in info["html_error"] and r < 0
        obs, r, *_, info = env.step("<p style='float:left'>free-form HTML</p>")
        assert info["html_error"] is None and info["cost"]["renders"] == 4
        assert obs["layout"][:, 0].sum() == 0  # not the layout language: no layout table
    finally:
        env.close()
