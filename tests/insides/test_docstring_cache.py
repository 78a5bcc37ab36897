"""The docstring corpus of LayerOOD-v0 is read in a fresh interpreter once, then from the cache.

Each run is a process of its own, so the fresh interpreter (about half a CPU-second) used to start
in every LayerOOD run; the texts are now cached by everything they depend on (interpreter, the
topic modules' sources, the reading code), and a cached corpus is the same corpus.
"""

from __future__ import annotations

import pytest

from icmlgym.envs.insides import states

TOPICS = states.IN_TOPICS + states.OUT_TOPICS


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ICMLGYM_HOME", str(tmp_path))
    return tmp_path


def test_cached_corpus_is_the_fresh_corpus_and_no_interpreter_starts_again(home, monkeypatch):
    fresh = states._read_docstrings_fresh(TOPICS)
    first = states._read_docstrings(TOPICS)  # a miss: reads in a fresh interpreter, stores
    assert first == fresh and len(first) > 800
    assert set(first.values()) == set(TOPICS)
    stored = list((home / "cache" / "insides-docstrings").glob("*.json"))
    assert [p.stem for p in stored] == [states.docstrings_key(TOPICS)]

    def no_interpreter(topics):
        raise AssertionError("the cached corpus should have been read")

    monkeypatch.setattr(states, "_read_docstrings_fresh", no_interpreter)
    assert states._read_docstrings(TOPICS) == fresh
    # the runs' order and splits come from the same texts
    assert sorted(states._read_docstrings(TOPICS).items()) == sorted(fresh.items())


def test_a_corrupt_entry_is_read_again(home):
    key = states.docstrings_key(TOPICS)
    path = home / "cache" / "insides-docstrings" / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert len(states._read_docstrings(TOPICS)) > 800
    assert path.read_text().startswith("{")


def test_the_key_follows_the_topics_and_the_sources(monkeypatch):
    key = states.docstrings_key(TOPICS)
    assert key == states.docstrings_key(TOPICS)
    assert key != states.docstrings_key(states.IN_TOPICS)
    import icmlgym.cache

    real = icmlgym.cache.file_hash
    monkeypatch.setattr(icmlgym.cache, "file_hash", lambda *p, n=16: "0" * n if str(p[0]).endswith("socket.py") else real(*p, n=n))
    assert states.docstrings_key(TOPICS) != key  # an edited standard-library module is a new corpus


def test_standard_library_files_are_found_without_importing_them():
    import sys

    was_imported = "smtplib" in sys.modules
    assert states._stdlib_file("smtplib").endswith("smtplib.py")
    assert ("smtplib" in sys.modules) == was_imported  # the lookup imports nothing
    path = states._stdlib_file("http.client")
    assert path is not None and path.endswith("http/client.py")
    assert states._stdlib_file("os.path").endswith("os.py")  # not a file of its own: its parent's
    assert states._stdlib_file("no_such_module_xyz") is None


def test_corpus_states_are_stacked_once_then_read_as_one_array(home, monkeypatch):
    import numpy as np

    from icmlgym.corpora.embeddings import SentenceEncoder

    calls = []

    def fake_encode(self, texts, layers=False):  # the per-text path (model or its 867 cache entries)
        calls.append(len(texts))
        rows = np.arange(len(texts), dtype=np.float32)[:, None, None]
        return np.broadcast_to(rows, (len(texts), 7, 384)).copy() / 7.0

    monkeypatch.setattr(SentenceEncoder, "encode", fake_encode)
    states.corpus_states.cache_clear()
    try:
        first = states.corpus_states(states.IN_TOPICS, states.OUT_TOPICS)
        states.corpus_states.cache_clear()  # a new run: a process of its own
        again = states.corpus_states(states.IN_TOPICS, states.OUT_TOPICS)
    finally:
        states.corpus_states.cache_clear()
    assert calls == [len(states.sorted_texts(states.IN_TOPICS, states.OUT_TOPICS))]  # encoded once, not per run
    for split in ("train", "val", "test"):
        for a, b in zip(first[split], again[split]):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    assert sum(len(first[s][0]) for s in first) == calls[0]


def test_corpus_states_key_follows_every_text_and_the_length():
    key = states.corpus_states_key(["a", "b"], 128)
    assert key == states.corpus_states_key(["a", "b"], 128)
    assert len({key, states.corpus_states_key(["b", "a"], 128), states.corpus_states_key(["a", "b"], 64),
                states.corpus_states_key(["ab"], 128), states.corpus_states_key(["a", "b", ""], 128)}) == 5
