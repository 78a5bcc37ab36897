import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test caches (zoo models, embeddings, corpora) under its own temporary ICMLGYM_HOME."""
    monkeypatch.setenv("ICMLGYM_HOME", str(tmp_path / "home"))
    yield


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """One torch thread, as the zoo's recorded builds use (and as the runner gives a 1-CPU card):
    on shared cores, torch's spinning OpenMP threads make small models far slower."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
