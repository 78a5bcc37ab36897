"""Views: terminal, Markdown, CSV and the HTML report (opened in headless Chromium through Playwright)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest

from icmlgym.catalog import task_label
from icmlgym.leaderboard import Leaderboard, render, write_report

from .conftest import BANDIT, make_record

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def board(store_path, real_records):
    b = Leaderboard(store_path)
    b.add(real_records)
    b.add([make_record("crashy", s, [], status="failed") for s in range(2)] + [make_record("crashy", 2, [200.0])])
    yield b
    b.close()


def test_render_formats(board):
    df = board.table(env=BANDIT)
    text = render(df, "table")
    assert "bandit-thompson" in text and "pseudo_regret ↓" in text and "1/3 ⚠" in text
    md = render(df, "markdown").splitlines()
    assert md[0].startswith("| task | tier | entry | rank |") and set(md[1]) <= set("|-")
    assert len([line for line in md if line.startswith("| icmlgym/")]) == len(df)
    back = pd.read_csv(io.StringIO(render(df, "csv")))
    assert list(back.columns) == list(df.columns) and back["mean"].tolist() == pytest.approx(df["mean"].tolist())
    page = render(df, "html")
    assert page.startswith("<!DOCTYPE html>") and "<table class=\"sortable\"" in page
    with pytest.raises(ValueError, match="unknown format 'xlsx'"):
        render(df, "xlsx")


def test_report_is_self_contained(board, tmp_path):
    path = write_report(board, tmp_path / "r.html", env=BANDIT)
    text = path.read_text()
    assert text.count("data:image/png;base64,") >= 2  # score plot and score-vs-cost plot
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)  # nothing fetched from a network
    assert "Failed and timed-out runs (2)" in text and "crashy crashed on seed 0" in text


def _open_report(path: Path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    return sync_api


def test_html_report_in_headless_chromium(tmp_path, store_path):
    """The report opens from file:// without console errors; the table's rows read back; clicking a
    header sorts the rows through the page's own JavaScript (ascending, then descending)."""
    tasks = [(BANDIT, {"horizon": h}) for h in (100, 200)]
    refs = {task_label(e, k): (100.0, 0.0) for e, k in tasks}
    with Leaderboard(store_path) as b:
        for name, centre in (("alpha", 30.0), ("beta", 10.0), ("gamma", 50.0)):
            for _e, k in tasks:
                b.add([make_record(name, s, [centre + s], env_kwargs=k) for s in range(3)])
        b.add(make_record("gamma", 9, [], status="timeout", env_kwargs=tasks[0][1]))
        path = write_report(b, tmp_path / "report.html", suite=tasks, tier="smoke", refs=refs)
    sync_api = _open_report(path)
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.resolve().as_uri())
            page.wait_for_load_state("load")
            headers = page.locator("#leaderboard thead th").all_inner_texts()
            assert headers[:4] == ["task", "tier", "entry", "rank"]
            rows = page.locator("#leaderboard tbody tr")
            assert rows.count() == 6
            entry_col = headers.index("entry")
            mean_col = headers.index("mean")

            def column(i: int) -> list[str]:
                return page.eval_on_selector_all("#leaderboard tbody tr", f"rs => rs.map(r => r.cells[{i}].innerText)")

            assert sorted(set(column(entry_col))) == ["alpha", "beta", "gamma"]
            page.locator("#leaderboard thead th").nth(mean_col).click()
            means = [float(v) for v in column(mean_col)]
            assert means == sorted(means) and means[0] == pytest.approx(11.0)
            assert page.locator("#leaderboard thead th").nth(mean_col).get_attribute("aria-sort") == "ascending"
            page.locator("#leaderboard thead th").nth(mean_col).click()
            means_desc = [float(v) for v in column(mean_col)]
            assert means_desc == sorted(means, reverse=True)
            page.locator("#leaderboard thead th").nth(entry_col).click()
            assert column(entry_col) == sorted(column(entry_col))
            # the aggregate table: beta (lowest regret) is first by IQM
            agg_rows = page.eval_on_selector_all("#aggregate tbody tr", "rs => rs.map(r => r.cells[0].innerText)")
            assert agg_rows[0] == "beta" and len(agg_rows) == 3
            imgs = page.locator("img").count()
            # aggregate and per-task scores; every entry has the same cost here, so no score-vs-cost plot
            assert imgs == 1 + 2 and "no trade-off to draw" in page.content()
            broken = page.eval_on_selector_all("img", "is => is.filter(i => !(i.complete && i.naturalWidth > 0)).length")
            assert broken == 0
            assert page.locator("#failures tbody tr").count() == 1
        finally:
            browser.close()
    assert errors == []


def test_report_of_a_board_with_a_deterministic_entry_a_failed_entry_and_two_families(tmp_path, store_path):
    """The first hour's board: real runs on two families, an entry that scores the same on every
    seed (a zero-width interval, which used to crash the plot), and an entry whose every run
    failed. The report renders, opens in Chromium without errors, and shows each of them."""
    import icmlgym

    fair = "icmlgym/FairLinearBandit-v0"
    with Leaderboard(store_path) as b:
        b.add(icmlgym.run(BANDIT, "ucb1", seeds=3) + icmlgym.run(BANDIT, "random", seeds=3))
        b.add(icmlgym.run(fair, "random", seeds=2) + icmlgym.run(fair, "fairbandit-fairlin-ucb", seeds=2))
        b.add([make_record("always-arm-0", s, [123.456789] * 3, cost=1000.0) for s in range(3)])  # deterministic
        b.add([make_record("crashy", s, [], status="failed") for s in range(3)])
        t = b.table(env=BANDIT).set_index("entry")
        det = t.loc["always-arm-0"]
        assert det["ci_high"] - det["ci_low"] < 1e-9 and det["seeds"] == 3
        assert t.loc["crashy", "failed"] == 3 and t.loc["crashy", "seeds"] == 0
        path = write_report(b, tmp_path / "report.html")
    text = path.read_text()
    assert "Failed and timed-out runs (3)" in text and fair in text and BANDIT in text
    sync_api = _open_report(path)
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.resolve().as_uri())
            page.wait_for_load_state("load")
            headers = page.locator("#leaderboard thead th").all_inner_texts()
            entries = page.eval_on_selector_all("#leaderboard tbody tr", f"rs => rs.map(r => r.cells[{headers.index('entry')}].innerText)")
            tasks = page.eval_on_selector_all("#leaderboard tbody tr", f"rs => rs.map(r => r.cells[{headers.index('task')}].innerText)")
            assert {"always-arm-0", "crashy", "ucb1", "random", "fairbandit-fairlin-ucb"} <= set(entries)
            assert set(tasks) == {BANDIT, fair}
            row = entries.index("always-arm-0")
            ci = page.eval_on_selector_all("#leaderboard tbody tr", f"rs => rs[{row}].cells[{headers.index('95% CI')}].innerText")
            assert ci == "[123.5, 123.5]"
            # a score plot per task; score-vs-cost only where the costs differ (the Bandit entries
            # all take 1000 steps, the fair-bandit ones differ in inference cost or not: either way no crash)
            assert page.locator("img[alt=scores]").count() == 2
            broken = page.eval_on_selector_all("img", "is => is.filter(i => !(i.complete && i.naturalWidth > 0)).length")
            assert broken == 0
            assert page.locator("#failures tbody tr").count() == 3
        finally:
            browser.close()
    assert errors == []
