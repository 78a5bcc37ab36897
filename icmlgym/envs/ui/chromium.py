"""The real browser: Debian's Chromium driven through Playwright, offline and with JavaScript off.

:class:`ChromiumRenderer` loads a page with ``set_content`` into a context whose every
request is refused (``context.route`` aborts it and records its URL) and which runs no
page scripts (``java_script_enabled=False``), takes a screenshot at device scale 1 and
reads each element's box, computed background colour and own text from the DOM.
Playwright's own browser download does not work here: the renderer needs the system
Chromium (``apt-get install chromium``), at ``/usr/bin/chromium`` by default.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from icmlgym.catalog import require_extra
from icmlgym.envs.ui.html_input import check_html
from icmlgym.envs.ui.render import Element, Render

CHROMIUM = Path(os.environ.get("ICMLGYM_CHROMIUM", "/usr/bin/chromium"))
# the same flags the HTML report test launches Chromium with, plus no network side channels
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-domain-reliability",
    "--no-first-run", "--font-render-hinting=none",
    # Playwright's route refuses requests, but Chromium also opens bare TCP connections
    # (preconnects) that no route sees: send every connection, loopback included, to a closed
    # local port, and resolve no host name
    "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND", "--dns-prefetch-disable",
]
_DOM_JS = """() => {
  const skip = new Set(['SCRIPT', 'STYLE', 'LINK', 'META', 'TITLE', 'NOSCRIPT', 'HEAD']);
  const out = [];
  for (const e of document.body ? document.body.querySelectorAll('*') : []) {
    if (skip.has(e.tagName)) continue;
    const cs = getComputedStyle(e);
    if (cs.display === 'none' || cs.visibility === 'hidden') continue;
    const r = e.getBoundingClientRect();
    let t = '';
    for (const n of e.childNodes) if (n.nodeType === 3) t += n.textContent;
    out.push([e.dataset.type || e.tagName.toLowerCase(), r.x, r.y, r.width, r.height, cs.backgroundColor, t.replace(/\\s+/g, ' ').trim()]);
  }
  return out;
}"""
_RGBA = re.compile(r"rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+))?\s*\)")


class ChromiumUnavailableError(RuntimeError):
    """Chromium is not installed where the renderer looks for it."""


def _css_colour(value: str) -> tuple[int, int, int] | None:
    m = _RGBA.match(value or "")
    if not m:
        return None
    if m.group(4) is not None and float(m.group(4)) == 0.0:
        return None  # transparent
    return tuple(int(round(float(g))) for g in m.groups()[:3])  # type: ignore[return-value]


# Playwright's sync API allows one running instance per thread: renderers share it (reference counted)
_PW: dict[str, Any] = {"instance": None, "users": 0}


def _acquire_playwright() -> Any:
    if _PW["instance"] is None:
        from playwright.sync_api import sync_playwright

        _PW["instance"] = sync_playwright().start()
    _PW["users"] += 1
    return _PW["instance"]


def _release_playwright() -> None:
    _PW["users"] -= 1
    if _PW["users"] <= 0 and _PW["instance"] is not None:
        try:
            _PW["instance"].stop()
        finally:
            _PW["instance"], _PW["users"] = None, 0


class ChromiumRenderer:
    """Render HTML in headless Chromium, never touching the network.

    Args:
        width, height: the viewport (the screenshot's size) in CSS pixels.
        executable: the Chromium binary (default ``/usr/bin/chromium`` or ``$ICMLGYM_CHROMIUM``).

    The browser starts on the first :meth:`render` and stops on :meth:`close` (also a
    context manager). One renderer serves one thread.
    """

    def __init__(self, width: int, height: int, executable: str | Path | None = None) -> None:
        require_extra("ui", what="the Chromium renderer")
        self.width, self.height = int(width), int(height)
        self.executable = Path(executable) if executable else CHROMIUM
        if not self.executable.exists():
            raise ChromiumUnavailableError(
                f"Chromium not found at {self.executable}: install Debian's package (apt-get install chromium) "
                "or set ICMLGYM_CHROMIUM; Playwright's own browser download is not used"
            )
        self._pw: Any = None
        self._browser: Any = None
        self._context: Any = None
        self._page: Any = None
        self._blocked: list[str] = []
        self.renders = 0

    def _start(self) -> None:
        self._pw = _acquire_playwright()
        try:
            self._browser = self._pw.chromium.launch(executable_path=str(self.executable), args=CHROMIUM_ARGS)
            self._context = self._browser.new_context(
                viewport={"width": self.width, "height": self.height},
                device_scale_factor=1,
                java_script_enabled=False,
                offline=True,
                service_workers="block",
            )
            self._context.route("**/*", self._refuse)
            self._page = self._context.new_page()
        except Exception:
            self.close()
            raise

    def _refuse(self, route: Any) -> None:
        self._blocked.append(route.request.url)
        route.abort("blockedbyclient")

    def render(self, html: str) -> Render:
        """Screenshot and DOM elements of ``html``; ``blocked`` lists the refused requests and
        ``warnings`` what was neutralised (scripts, external URLs).

        Raises:
            HTMLInputError: the HTML does not parse (checked before the browser sees it).
        """
        warnings = check_html(html)
        if self._page is None:
            self._start()
        from PIL import Image

        self._blocked = []
        self._page.set_content(html, wait_until="load")
        png = self._page.screenshot(type="png", animations="disabled", caret="hide")
        rows = self._page.evaluate(_DOM_JS)
        self.renders += 1
        image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.uint8)
        elements = [Element(t, (float(x), float(y), float(w), float(h)), _css_colour(bg), text) for t, x, y, w, h, bg, text in rows]
        return Render(image, elements, blocked=tuple(self._blocked), warnings=tuple(warnings))

    def close(self) -> None:
        for obj in (self._context, self._browser):
            if obj is not None:
                try:
                    obj.close()
                except Exception:  # noqa: BLE001 - closing a browser that already died
                    pass
        if self._pw is not None:
            _release_playwright()
        self._pw = self._browser = self._context = self._page = None

    def __enter__(self) -> "ChromiumRenderer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()
