"""The sweep's order (icmlgym/runner/schedule.py): longest first from earlier run times; records unchanged."""

from __future__ import annotations

from icmlgym.cache import Cache
from icmlgym.runner.api import make_tasks, run_tasks
from icmlgym.runner.schedule import load_times, longest_first, record_times, task_entry

BANDIT = "icmlgym/Bandit-v0"


def test_longest_first_puts_unknown_entries_first_and_keeps_seeds_in_order() -> None:
    short = make_tasks(BANDIT, "random", seeds=2)
    long = make_tasks(BANDIT, "ucb1", seeds=2)
    unknown = make_tasks(BANDIT, "epsilon-greedy", seeds=2)
    times = {task_entry(short[0]): 0.1, task_entry(long[0]): 5.0}
    ordered = longest_first(short + long + unknown, times)
    assert [(t.agent, t.seed) for t in ordered] == [
        ("epsilon-greedy", 0), ("epsilon-greedy", 1), ("ucb1", 0), ("ucb1", 1), ("random", 0), ("random", 1)]
    assert longest_first(short + long, {}) == short + long  # nothing known: the given order


def test_run_times_round_trip_and_merge(tmp_path) -> None:
    cache = Cache("runtimes", tmp_path / "rt")
    assert load_times(cache) == {}
    tasks = make_tasks(BANDIT, "random", seeds=2, env_kwargs={"horizon": 20}) + make_tasks(BANDIT, "ucb1", seeds=1, env_kwargs={"horizon": 20})
    records = run_tasks(tasks)
    assert record_times(records[:2], cache) == 1 and record_times(records[2:], cache) == 1  # a second sweep adds, never drops
    times = load_times(cache)
    mean = (records[0].wall_time + records[1].wall_time) / 2
    assert times == {task_entry(tasks[0]): mean, task_entry(tasks[2]): records[2].wall_time}
    records[0].status = "failed"
    record_times(records[:2], cache)  # only ok runs count
    assert load_times(cache)[task_entry(tasks[0])] == records[1].wall_time
    cache.write_bytes("history", b"{not json", ".json")
    assert load_times(cache) == {}  # a damaged file is a miss


def test_ordered_sweep_gives_the_same_records() -> None:
    tasks = make_tasks(BANDIT, "random", seeds=2, env_kwargs={"horizon": 30}) + make_tasks(BANDIT, "ucb1", seeds=2, env_kwargs={"horizon": 30})
    times = {task_entry(tasks[0]): 0.0, task_entry(tasks[2]): 1.0}
    own = {"run_id", "timestamp", "wall_time", "train_wall_time"}

    def strip(recs):
        out = []
        for r in recs:
            d = {k: v for k, v in r.to_dict().items() if k not in own}
            d["episodes"] = [{k: v for k, v in e.items() if k != "wall_time"} for e in d["episodes"]]
            out.append(d)
        return out

    assert strip(run_tasks(longest_first(tasks, times))) == strip(run_tasks(tasks))
