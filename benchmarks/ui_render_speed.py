"""Renders per second: headless Chromium against the fast numpy renderer, on the same pages.

Run: ``python benchmarks/ui_render_speed.py [--pages 20] [--size 192x144]``

Generates ``--pages`` pages (seeds 0..N-1), renders each with both renderers (Chromium: one
browser, kept open; set_content + screenshot + DOM read, after one warm-up page; the browser's
start-up is reported separately) and prints renders per second, plus the time of the score
against a target (what a candidate costs on top of its render).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from icmlgym.envs.ui.layout import generate_page, to_html
from icmlgym.envs.ui.render import fast_render
from icmlgym.envs.ui.score import score_parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--size", default="192x144")
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    pages = [generate_page(np.random.default_rng(s), w, h) for s in range(args.pages)]
    html = [to_html(p) for p in pages]
    t0 = time.perf_counter()
    fast = [fast_render(p) for p in pages]
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    for r in fast:
        score_parts(fast[0], r)
    t_score = time.perf_counter() - t0
    print(f"{args.pages} pages of {w}x{h} px")
    print("| renderer | renders/s | ms per render |")
    print("|---|---|---|")
    print(f"| fast (numpy) | {args.pages / t_fast:.0f} | {1000 * t_fast / args.pages:.2f} |")
    try:
        from icmlgym.envs.ui.chromium import ChromiumRenderer
    except ImportError as err:  # the [ui] extra is missing
        print(f"| chromium | not run: {err} | |")
    else:
        with ChromiumRenderer(w, h) as c:
            t0 = time.perf_counter()
            c.render(html[0])
            start = time.perf_counter() - t0
            t0 = time.perf_counter()
            for text in html:
                c.render(text)
            t_c = time.perf_counter() - t0
        print(f"| chromium (Playwright, offline, JS off) | {args.pages / t_c:.1f} | {1000 * t_c / args.pages:.1f} |")
        print(f"\nChromium start-up and first page: {start:.2f} s; fast renderer speed-up: {t_c / t_fast:.0f}x")
    print(f"score against a target (Design2Code-style parts + SSIM): {1000 * t_score / args.pages:.2f} ms per candidate")


if __name__ == "__main__":
    main()
