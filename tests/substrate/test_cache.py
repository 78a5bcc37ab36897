"""The shared cache (icmlgym.cache): layout, atomic writes, build-once locking, report and clear."""

import json
import multiprocessing as mp
import os

import numpy as np
import pytest

from icmlgym import cache
from icmlgym.cache import Cache, atomic_write_bytes, content_key


def test_layout_follows_icmlgym_home(tmp_path):
    assert cache.home() == tmp_path / "home"
    assert Cache("zoo").dir == tmp_path / "home" / "cache" / "zoo"
    assert Cache("screening").dir == tmp_path / "home" / "screening"  # the family's historical folder
    assert Cache("x", tmp_path / "elsewhere").dir == tmp_path / "elsewhere"


def test_content_key_ignores_dict_order_and_sees_every_part():
    assert content_key("m", {"a": 1, "b": 2}) == content_key("m", {"b": 2, "a": 1})
    assert content_key("m", {"a": 1}) != content_key("m", {"a": 2}) != content_key("n", {"a": 2})


@pytest.mark.parametrize("bad", ["", "../up", ".hidden", "a/b", "sp ace"])
def test_bad_names_are_refused(bad):
    with pytest.raises(ValueError, match="letters, digits"):
        Cache("zoo").path(bad)


def test_round_trips_and_corrupt_entries_are_misses():
    c = Cache("unit")
    assert c.read_json("k") is None and c.read_arrays("k") is None and c.read_bytes("k") is None
    c.write_json("k", {"a": [1, 2]})
    c.write_arrays("k", {"x": np.arange(3)})
    assert c.read_json("k") == {"a": [1, 2]}
    assert c.read_arrays("k")["x"].tolist() == [0, 1, 2]
    c.path("k", ".json").write_text("{not json")
    c.path("k", ".npz").write_bytes(b"garbage")
    assert c.read_json("k") is None and c.read_arrays("k") is None
    assert c.keys() == ["k.json", "k.npz"]


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    atomic_write_bytes(tmp_path / "a" / "f.bin", b"123")
    assert (tmp_path / "a" / "f.bin").read_bytes() == b"123"
    assert os.listdir(tmp_path / "a") == ["f.bin"]


def _build(home: str, key: str, log: str) -> None:
    os.environ["ICMLGYM_HOME"] = home
    c = Cache("race")
    with c.lock(key):
        if c.read_json(key) is None:  # re-check under the lock: only one process builds
            with open(log, "a") as fh:
                fh.write(f"{os.getpid()}\n")
            c.write_json(key, {"payload": "x" * 200_000, "by": os.getpid()})


def test_two_processes_building_one_entry_build_it_once(tmp_path):
    home, log = str(tmp_path / "home"), str(tmp_path / "builds.log")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_build, args=(home, "entry", log)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(open(log).read().split()) == 1
    entry = json.loads((tmp_path / "home" / "cache" / "race" / "entry.json").read_text())
    assert len(entry["payload"]) == 200_000
    assert [p.name for p in (tmp_path / "home" / "cache" / "race").iterdir() if p.name.endswith(".tmp")] == []


def test_report_and_clear():
    Cache("a").write_bytes("one", b"x" * 10)
    Cache("a").write_bytes("two", b"x" * 5)
    Cache("b").write_json("k", [1])
    rows = {u.namespace: u for u in cache.report()}
    assert (rows["a"].files, rows["a"].bytes) == (2, 15) and rows["b"].files == 1
    with pytest.raises(KeyError, match="no cache namespace 'zzz'"):
        cache.clear("zzz")
    files, nbytes = cache.clear("a")
    assert files == 2 and nbytes == 15
    assert [u.namespace for u in cache.report()] == ["b"]
    cache.clear()
    assert cache.report() == []
