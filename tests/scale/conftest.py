"""Fixtures for the scale-out tests: a local Ray instance and a throwaway PostgreSQL server.

The PostgreSQL server is started by ``scripts/postgres.sh`` in a folder of this test session, and
destroyed at the end. The tests install nothing (``ICMLGYM_PG_NO_INSTALL=1``): ``.ci/run`` installs
PostgreSQL from Debian's packages before the tests.
Where no server can be started the PostgreSQL tests are skipped with the script's reason, except
under CI (``CI`` set), where that is an error: CI must run them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENTS_FILE = Path(__file__).resolve().parent / "scale_agents.py"
BANDIT = "icmlgym/Bandit-v0"


def agent(cls_name: str) -> str:
    """A file-path agent spec for a class in scale_agents.py (loadable in any Ray worker)."""
    return f"{AGENTS_FILE}:{cls_name}"


@pytest.fixture(scope="package")
def ray_executor():
    """A RayExecutor owning a local 2-CPU Ray instance for the tests of this package.

    Executors made while it is up (with other timeouts or retries) share its Ray instance."""
    pytest.importorskip("ray", reason="the Ray executor needs the [ray] extra: pip install 'icmlgym[ray]'")
    from icmlgym.runner.ray_executor import RayExecutor

    ex = RayExecutor(workers=2)
    yield ex
    ex.close()


@pytest.fixture(scope="package")
def pg_server():
    """The base URL of a PostgreSQL server on loopback (its default database)."""
    pytest.importorskip("psycopg", reason="the PostgreSQL store needs the [postgres] extra: pip install 'icmlgym[postgres]'")
    # not under pytest's tmp folder: that is private to root, and the server runs as another user
    base = tempfile.mkdtemp(prefix="icmlgym-pg-tests-")
    os.chmod(base, 0o755)
    env = {**os.environ, "ICMLGYM_PG_DIR": os.path.join(base, "server"), "ICMLGYM_PG_NO_INSTALL": "1"}
    script = ROOT / "scripts" / "postgres.sh"
    try:
        out = subprocess.run(["bash", str(script), "start"], env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        out = None
    if out is None or out.returncode != 0:
        why = "timed out after 600 s" if out is None else (out.stderr.strip() or f"exit code {out.returncode}")
        message = f"no PostgreSQL server could be started by scripts/postgres.sh: {why}"
        if os.environ.get("CI"):
            pytest.fail(message + " (under CI the PostgreSQL tests must run)")
        pytest.skip(message)
    url = out.stdout.strip().split("=", 1)[1]
    yield url
    subprocess.run(["bash", str(script), "destroy"], env=env, capture_output=True, text=True, timeout=120)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture()
def pg_url(pg_server):
    """A fresh, empty database on the test server for one test (dropped afterwards)."""
    import sqlalchemy as sa

    name = f"icmlgym_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(pg_server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    base = pg_server.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()
