import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test caches (zoo models, embeddings, corpora) under its own temporary ICMLGYM_HOME."""
    monkeypatch.setenv("ICMLGYM_HOME", str(tmp_path / "home"))
    yield
