"""Suite-level metrics for the Craft family.

Input is one row per episode (a pandas DataFrame) with at least ``agent``,
``task``, ``seed`` and the scalar ``info["metrics"]`` of Craft-v0 (``success``,
``steps``, ``skill_calls``, ``grounding_calls``, ``motor_calls``,
``primitive_steps_*``). Build it with :func:`from_records` from ``icmlgym.run``
records (episodes played by the runner's one rollout, seeded as every run is).

- :func:`success_by_task`, :func:`success_by_category`: success rates;
- :func:`crafter_score`: Crafter's score, the geometric mean of success rates
  (Hafner 2021: ``exp(mean(ln(1 + s_i))) - 1`` with ``s_i`` in percent);
- :func:`steps_to_success`: mean primitive steps of successful episodes;
- :func:`level_usage`: skill calls against primitive actions, and each level's share;
- :func:`seen_heldout_gap`: success on training-split tasks minus held-out ones;
- :func:`by_action_level`: success split by the action levels an episode used.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from icmlgym.envs.craft.tasks import get_task

LEVEL_COLUMNS = ("skill_calls", "grounding_calls", "motor_calls")


def _annotate(df: pd.DataFrame) -> pd.DataFrame:
    if df.empty:
        raise ValueError("no episodes to score")
    missing = [c for c in ("agent", "task", "success") if c not in df.columns]
    if missing:
        raise ValueError(f"episode table lacks columns {missing}; it has {list(df.columns)}")
    out = df.copy()
    specs = {name: get_task(name) for name in out["task"].unique()}
    out["category"] = out["task"].map(lambda n: specs[n].category)
    out["split"] = out["task"].map(lambda n: specs[n].split)
    out["difficulty"] = out["task"].map(lambda n: specs[n].difficulty)
    out["multi_step_task"] = out["task"].map(lambda n: specs[n].multi_step)
    out["depth"] = out["task"].map(lambda n: specs[n].depth)
    return out


def success_by_task(df: pd.DataFrame) -> pd.DataFrame:
    """Success rate per (agent, task): rows = tasks, columns = agents."""
    return _annotate(df).pivot_table(index="task", columns="agent", values="success", aggfunc="mean")


def success_by_category(df: pd.DataFrame) -> pd.DataFrame:
    """Success rate per (agent, category), averaging tasks equally."""
    d = _annotate(df)
    per_task = d.groupby(["agent", "category", "task"])["success"].mean().reset_index()
    return per_task.pivot_table(index="category", columns="agent", values="success", aggfunc="mean")


def crafter_score(success_rates: Sequence[float] | pd.Series) -> float:
    """Crafter's geometric-mean score (in percent) of per-task success rates in [0, 1]."""
    s = np.asarray(success_rates, dtype=float)
    if s.size == 0:
        raise ValueError("crafter_score needs at least one success rate")
    if np.any((s < 0) | (s > 1)) or not np.all(np.isfinite(s)):
        raise ValueError(f"success rates must lie in [0, 1], got {s}")
    return float(np.exp(np.mean(np.log(1.0 + 100.0 * s))) - 1.0)


def suite_scores(df: pd.DataFrame) -> pd.Series:
    """Crafter score per agent over the suite's tasks."""
    per_task = success_by_task(df)
    return per_task.apply(lambda col: crafter_score(col.dropna()), axis=0).rename("crafter_score")


def steps_to_success(df: pd.DataFrame) -> pd.Series:
    """Mean primitive steps of the successful episodes, per agent."""
    d = _annotate(df)
    ok = d[d["success"] > 0]
    return ok.groupby("agent")["steps"].mean().rename("steps_to_success")


def level_usage(df: pd.DataFrame) -> pd.DataFrame:
    """Per agent: calls at each level, primitive steps, primitives per call, and each level's share of steps."""
    d = _annotate(df)
    g = d.groupby("agent")
    out = pd.DataFrame(
        {
            "skill_calls": g["skill_calls"].sum(),
            "grounding_calls": g["grounding_calls"].sum(),
            "motor_calls": g["motor_calls"].sum(),
            "primitive_steps": g["steps"].sum(),
        }
    )
    calls = out[["skill_calls", "grounding_calls", "motor_calls"]].sum(axis=1)
    out["primitive_per_call"] = out["primitive_steps"] / calls.where(calls > 0)
    out["skill_calls_per_primitive"] = out["skill_calls"] / out["primitive_steps"].where(out["primitive_steps"] > 0)
    for lvl in ("skill", "grounding", "motor"):
        col = f"primitive_steps_{lvl}"
        if col in d.columns:
            out[f"share_{lvl}"] = g[col].sum() / out["primitive_steps"].where(out["primitive_steps"] > 0)
    return out


def seen_heldout_gap(df: pd.DataFrame) -> pd.DataFrame:
    """Per agent: success on training-split tasks, on held-out tasks, and the gap (seen - held-out)."""
    d = _annotate(df)
    per_task = d.groupby(["agent", "split", "task"])["success"].mean().reset_index()
    t = per_task.pivot_table(index="agent", columns="split", values="success", aggfunc="mean")
    for col in ("train", "heldout"):
        if col not in t.columns:
            t[col] = np.nan
    t["gap"] = t["train"] - t["heldout"]
    return t[["train", "heldout", "gap"]]


def levels_used(row: pd.Series) -> str:
    """The set of levels an episode executed, e.g. ``"skill+grounding+motor"``."""
    used = [lvl for lvl, c in zip(("skill", "grounding", "motor"), LEVEL_COLUMNS) if row.get(c, 0) > 0]
    return "+".join(used) if used else "none"


def by_action_level(df: pd.DataFrame) -> pd.DataFrame:
    """Success rate and episode count per (agent, levels used)."""
    d = _annotate(df)
    d["levels_used"] = d.apply(levels_used, axis=1)
    return d.groupby(["agent", "levels_used"]).agg(success=("success", "mean"), episodes=("success", "size"))


def multi_step_split(df: pd.DataFrame) -> pd.DataFrame:
    """Success per agent on single-step versus multi-step tasks (tasks weighted equally)."""
    d = _annotate(df)
    per_task = d.groupby(["agent", "multi_step_task", "task"])["success"].mean().reset_index()
    t = per_task.pivot_table(index="agent", columns="multi_step_task", values="success", aggfunc="mean")
    return t.rename(columns={False: "single_step", True: "multi_step"})


def from_records(records: Iterable[Any]) -> pd.DataFrame:
    """Episode rows from ``icmlgym.run`` records of icmlgym/Craft-v0 (the task is read from the env kwargs)."""
    rows = []
    for rec in records:
        if rec.status != "ok":
            raise ValueError(f"run {rec.agent_name} seed {rec.seed} failed: {rec.error.splitlines()[0] if rec.error else ''}")
        task = rec.env_spec.get("kwargs", {}).get("task", "collect_wood/hard")
        for ep in rec.episodes:
            rows.append({"agent": rec.agent_name, "task": get_task(task).name, "seed": rec.seed, "episode": ep.episode, **ep.metrics})
    return pd.DataFrame(rows)
