"""The real browser: Debian's Chromium driven through Playwright, offline and with JavaScript off.

:class:`ChromiumRenderer` loads a page with ``set_content`` into a context whose every
request is refused (``context.route`` aborts it and records its URL) and which runs no
page scripts (``java_script_enabled=False``), takes a screenshot at device scale 1 and
reads each element's box, computed background colour and own text from the DOM.
Playwright's own browser download does not work here: the renderer needs the system
Chromium (``apt-get install chromium``), at ``/usr/bin/chromium`` by default.
"""

from __future__ import annotations

import atexit
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


# Playwright's sync API allows one running instance per thread, and a browser takes seconds to
# start: renderers share one browser (each has its own context), closed when the interpreter exits
_SHARED: dict[str, Any] = {"playwright": None, "browser": None, "executable": None}


def _shared_browser(executable: Path) -> Any:
    if _SHARED["browser"] is not None and _SHARED["executable"] == executable and _SHARED["browser"].is_connected():
        return _SHARED["browser"]
    shutdown_browser()
    from playwright.sync_api import sync_playwright

    _SHARED["playwright"] = sync_playwright().start()
    try:
        _SHARED["browser"] = _SHARED["playwright"].chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
    except Exception:
        shutdown_browser()
        raise
    _SHARED["executable"] = executable
    return _SHARED["browser"]


def shutdown_browser() -> None:
    """Close the shared browser and Playwright (also done at interpreter exit)."""
    browser, pw = _SHARED["browser"], _SHARED["playwright"]
    _SHARED.update(playwright=None, browser=None, executable=None)
    for obj, meth in ((browser, "close"), (pw, "stop")):
        if obj is not None:
            try:
                getattr(obj, meth)()
            except Exception:  # noqa: BLE001 - a browser that already died
                pass


atexit.register(shutdown_browser)


class ChromiumRenderer:
    """Render HTML in headless Chromium, never touching the network.

    Args:
        width, height: the viewport (the screenshot's size) in CSS pixels.
        executable: the Chromium binary (default ``/usr/bin/chromium`` or ``$ICMLGYM_CHROMIUM``).

    The first :meth:`render` opens a context in a browser shared by every renderer of the
    process (started then, closed at exit or by :func:`shutdown_browser`); :meth:`close`
    (also a context manager) closes the context. One renderer serves one thread.
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
        self._browser: Any = None
        self._context: Any = None
        self._page: Any = None
        self._blocked: list[str] = []
        self.renders = 0

    def _start(self) -> None:
        self._browser = _shared_browser(self.executable)
        self._context = self._browser.new_context(
            viewport={"width": self.width, "height": self.height},
            device_scale_factor=1,
            java_script_enabled=False,
            offline=True,
            service_workers="block",
        )
        try:
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
        """Close this renderer's context (the shared browser stays up for the next renderer)."""
        if self._context is not None:
            try:
                self._context.close()
            except Exception:  # noqa: BLE001 - a browser that already died
                pass
        self._browser = self._context = self._page = None

    def __enter__(self) -> "ChromiumRenderer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_context", None) is not None:  # also when __init__ raised before setting it
            self.close()
