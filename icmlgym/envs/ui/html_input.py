"""Submitted HTML: a strict well-formedness check, what is neutralised, and the way back to a layout.

A VLM agent submits a whole page as HTML text. Before anything renders it:

- :func:`check_html` parses it strictly (every element closed, end tags matching) and
  raises :class:`HTMLInputError` naming the line and the tag when it does not parse;
  it lists what will be neutralised: ``<script>`` elements and ``on*`` handlers
  (JavaScript is disabled in the browser and never runs) and external URLs (the page
  is rendered offline; the browser refuses every request).
- :func:`parse_layout` converts HTML in the layout language's subset (``<div
  data-type=...>`` with the inline properties :func:`icmlgym.envs.ui.layout.to_html`
  writes) back to a :class:`~icmlgym.envs.ui.layout.Block` tree for the fast renderer,
  with a clear error for anything outside the subset. Chromium renders any HTML.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from icmlgym.envs.ui.layout import BLOCK_TYPES, CONTAINERS, Block

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
STRUCTURAL = frozenset({"html", "head", "body", "meta", "title", "style"})
FAST_PROPERTIES = ("width", "height", "background-color", "background", "flex-direction", "gap", "padding", "color")
URL_ATTRS = frozenset({"src", "href", "srcset", "action", "poster", "data", "formaction", "background"})
_EXTERNAL = re.compile(r"^\s*(https?:|ftp:|wss?:)?//", re.I)
_CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]*)", re.I)
_IMPORT = re.compile(r"@import\s+(?:url\()?\s*['\"]?([^'\");\s]+)", re.I)

SCRIPT_NOTE = "scripts are disabled: the page is rendered with JavaScript off, so it never runs"
URL_NOTE = "the page is rendered offline with every network request blocked"


class HTMLInputError(ValueError):
    """Submitted HTML that does not parse, or that the fast renderer cannot draw."""


class _Node:
    __slots__ = ("tag", "attrs", "children", "text", "line")

    def __init__(self, tag: str, attrs: dict[str, str], line: int) -> None:
        self.tag, self.attrs, self.line = tag, attrs, line
        self.children: list[_Node] = []
        self.text: list[str] = []


class _StrictParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#document", {}, 1)
        self.stack: list[_Node] = [self.root]
        self.warnings: list[str] = []
        self._in_script = False

    def _note_urls(self, tag: str, attrs: dict[str, str], line: int) -> None:
        for k, v in attrs.items():
            if k.startswith("on"):
                self.warnings.append(f"line {line}: <{tag} {k}=...> handler ignored ({SCRIPT_NOTE})")
            elif k in URL_ATTRS and v and (_EXTERNAL.match(v) or ":" in v.split("/")[0]):
                self.warnings.append(f"line {line}: <{tag} {k}={v!r}> not fetched ({URL_NOTE})")
            elif k == "style":
                for url in _CSS_URL.findall(v):
                    self.warnings.append(f"line {line}: url({url!r}) in <{tag} style> not fetched ({URL_NOTE})")

    def handle_starttag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        attrs = {k.lower(): (v or "") for k, v in attrs_list}
        self._note_urls(tag, attrs, line)
        if tag == "script":
            self.warnings.append(f"line {line}: <script> ignored ({SCRIPT_NOTE})")
        node = _Node(tag, attrs, line)
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        attrs = {k.lower(): (v or "") for k, v in attrs_list}
        self._note_urls(tag, attrs, line)
        self.stack[-1].children.append(_Node(tag, attrs, line))

    def handle_endtag(self, tag: str) -> None:
        line, col = self.getpos()
        if tag in VOID:
            return
        top = self.stack[-1]
        if len(self.stack) == 1:
            raise HTMLInputError(f"HTML does not parse: </{tag}> at line {line}, column {col + 1} closes nothing")
        if top.tag != tag:
            raise HTMLInputError(
                f"HTML does not parse: </{tag}> at line {line}, column {col + 1} but <{top.tag}> opened at line {top.line} is still open"
            )
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        top = self.stack[-1]
        top.text.append(data)
        if top.tag == "style":
            for url in _IMPORT.findall(data) + _CSS_URL.findall(data):
                if _EXTERNAL.match(url) or ":" in url.split("/")[0]:
                    self.warnings.append(f"line {self.getpos()[0]}: {url!r} in <style> not fetched ({URL_NOTE})")


def _parse(text: str) -> _StrictParser:
    if not isinstance(text, str):
        raise HTMLInputError(f"HTML must be a str, got {type(text).__name__}")
    p = _StrictParser()
    p.feed(text)
    p.close()
    if len(p.stack) > 1:
        top = p.stack[-1]
        raise HTMLInputError(f"HTML does not parse: <{top.tag}> opened at line {top.line} is never closed")
    return p


def check_html(text: str) -> list[str]:
    """Parse strictly; return the warnings (scripts and external URLs neutralised).

    Raises:
        HTMLInputError: the HTML does not parse (an unclosed or mismatched element).
    """
    return _parse(text).warnings


def _colour(value: str, where: str) -> tuple[int, int, int]:
    v = value.strip().lower()
    m = re.fullmatch(r"#([0-9a-f]{6})", v)
    if m:
        return tuple(int(m.group(1)[i:i + 2], 16) for i in (0, 2, 4))  # type: ignore[return-value]
    m = re.fullmatch(r"#([0-9a-f]{3})", v)
    if m:
        return tuple(int(c * 2, 16) for c in m.group(1))  # type: ignore[return-value]
    m = re.fullmatch(r"rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)", v)
    if m and all(int(g) <= 255 for g in m.groups()):
        return tuple(int(g) for g in m.groups())  # type: ignore[return-value]
    raise HTMLInputError(f"{where}: colour {value!r} is not #rrggbb, #rgb or rgb(r, g, b)")


def _px(value: str, where: str, prop: str) -> int:
    m = re.fullmatch(r"\s*(\d{1,5})(px)?\s*", value)
    if not m:
        raise HTMLInputError(f"{where}: {prop}: {value!r} is not a whole number of px")
    return int(m.group(1))


def _block(node: _Node) -> Block:
    kind = node.attrs.get("data-type", "")
    where = f"<div data-type={kind!r}> at line {node.line}"
    if kind not in BLOCK_TYPES:
        raise HTMLInputError(f"<div> at line {node.line} needs data-type in {list(BLOCK_TYPES)} for the fast renderer, got {kind!r}")
    props: dict[str, str] = {}
    for decl in node.attrs.get("style", "").split(";"):
        if not decl.strip():
            continue
        if ":" not in decl:
            raise HTMLInputError(f"{where}: style declaration {decl.strip()!r} has no ':'")
        k, v = decl.split(":", 1)
        k = k.strip().lower()
        if k not in FAST_PROPERTIES:
            raise HTMLInputError(
                f"{where}: CSS property {k!r} is outside the layout language the fast renderer draws "
                f"(supported: {', '.join(FAST_PROPERTIES)}); use renderer='chromium' for arbitrary HTML"
            )
        props[k] = v.strip()
    for need in ("width", "height"):
        if need not in props:
            raise HTMLInputError(f"{where}: style needs {need} (every block has a fixed size)")
    bg = props.get("background-color", props.get("background", "#ffffff"))
    direction = props.get("flex-direction", "column").strip()
    if direction not in ("row", "column"):
        raise HTMLInputError(f"{where}: flex-direction must be row or column, got {direction!r}")
    children: list[Block] = []
    for c in node.children:
        if c.tag == "script":
            continue
        if c.tag != "div":
            raise HTMLInputError(f"<{c.tag}> at line {c.line} is outside the layout language (only <div data-type=...> blocks)")
        children.append(_block(c))
    text = " ".join("".join(node.text).split())
    if children and text:
        raise HTMLInputError(f"{where}: a block has either child blocks or text, not both (text {text!r})")
    if children and kind not in CONTAINERS:
        raise HTMLInputError(f"{where}: a {kind} block cannot have children (containers: {sorted(CONTAINERS)})")
    try:
        return Block(
            kind,
            _px(props["width"], where, "width"),
            _px(props["height"], where, "height"),
            _colour(bg, where),
            text=text,
            direction=direction,
            gap=_px(props.get("gap", "0"), where, "gap"),
            padding=_px(props.get("padding", "0"), where, "padding"),
            children=children,
        )
    except HTMLInputError:
        raise
    except ValueError as err:
        raise HTMLInputError(f"{where}: {err}") from None


def parse_layout(text: str) -> tuple[Block, list[str]]:
    """The layout written in ``text`` (the subset :func:`~icmlgym.envs.ui.layout.to_html` emits) and the warnings.

    Raises:
        HTMLInputError: the HTML does not parse, has no ``<div data-type="page">`` root, or uses
            tags or CSS outside the layout language.
    """
    p = _parse(text)
    divs: list[_Node] = []

    def find(n: _Node) -> None:
        for c in n.children:
            if c.tag == "div":
                divs.append(c)
            elif c.tag in STRUCTURAL or c.tag in ("#document", "script", "link"):
                find(c)
            else:
                raise HTMLInputError(f"<{c.tag}> at line {c.line} is outside the layout language (only <div data-type=...> blocks)")

    find(p.root)
    if len(divs) != 1 or divs[0].attrs.get("data-type") != "page":
        raise HTMLInputError(
            f'the page needs exactly one top-level <div data-type="page"> in <body>, found {len(divs)} top-level <div>(s)'
        )
    return _block(divs[0]), p.warnings
