"""The same store and scoring against PostgreSQL, when a server URL is given.

Set ``ICMLGYM_TEST_POSTGRES_URL`` (for example
``postgresql+psycopg://postgres@127.0.0.1:5432/icmlgym_test``, an empty database
the tests may fill) to run these; issue 10's CI starts such a server. Without it
they are skipped, and say why.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pandas as pd
import pytest

from icmlgym.leaderboard import Leaderboard

from .conftest import make_record

URL = os.environ.get("ICMLGYM_TEST_POSTGRES_URL", "")
pytestmark = pytest.mark.skipif(not URL, reason="ICMLGYM_TEST_POSTGRES_URL is not set: no PostgreSQL server to test against")


@pytest.fixture
def pg():
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'icmlgym[postgres]')")
    board = Leaderboard(URL)
    yield board
    board.close()


def test_round_trip_and_same_tables_as_sqlite(pg, tmp_path, real_records):
    tag = uuid.uuid4().hex[:8]  # the database may hold other runs: select ours by agent
    recs = [make_record(f"pg-{tag}-{a}", s, [float(s) + i, 2.0], run_id=f"{tag}-{a}-{s}") for i, a in enumerate("ab") for s in range(3)]
    recs.append(make_record(f"pg-{tag}-a", 9, [], status="failed", run_id=f"{tag}-fail"))
    assert pg.add(recs + real_records) >= len(recs)
    back = {r.run_id: r.to_dict() for r in pg.records(agent=[r.agent_name for r in recs])}
    assert all(back[r.run_id] == r.to_dict() for r in recs)
    with Leaderboard(tmp_path / "twin.db") as lite:
        lite.add(recs)
        agents = sorted({r.agent_name for r in recs})
        pd.testing.assert_frame_equal(pg.table(agent=agents), lite.table(agent=agents), check_dtype=False)


def test_concurrent_writers_on_postgres(pg):
    tag = uuid.uuid4().hex[:8]
    script = (
        "import sys; sys.path.insert(0, sys.argv[3])\n"
        "from conftest import make_record\n"
        "from icmlgym.leaderboard import Leaderboard\n"
        "b = Leaderboard(sys.argv[1]); w = sys.argv[2]\n"
        "for i in range(0, 20, 5):\n"
        "    b.add([make_record('pg-' + w, s, [1.0], run_id=w + '-' + str(s)) for s in range(i, i + 5)])\n"
        "b.close()\n"
    )
    here = str(Path(__file__).parent)
    procs = [subprocess.Popen([sys.executable, "-c", script, URL, f"{tag}{w}", here]) for w in range(8)]
    assert [p.wait(timeout=300) for p in procs] == [0] * 8
    runs = pg.runs(agent=[f"pg-{tag}{w}" for w in range(8)])
    assert len(runs) == 160
