"""The two leaderboard tracks of SketchAttack-v0, computed from plain DataFrames of run records.

- Attackers by success rate against each defender: the ordinary leaderboard
  table of a suite ``sketch-vs-<defender>`` (primary metric ``success``);
  :func:`attacker_table` gives the same from a DataFrame.
- Defenders by their worst error over every attacker at matched space:
  :func:`defender_table`.

Both take a DataFrame with one row per episode (or per run), as the
leaderboard's ``episodes()`` returns, and need only: an ``agent_name`` column;
the task's kwargs, either as an ``env_kwargs`` column (dict or JSON) or in a
``task`` label such as ``icmlgym/SketchAttack-v0[defender=dp-tree,space=600]``;
and the metrics, as columns (``prefix_max_error``, or ``metric.prefix_max_error``)
or as a ``metrics`` column of dicts. Nothing here imports the leaderboard.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

import numpy as np
import pandas as pd

from icmlgym.envs.sketch import ATTACKERS, ENV_ID

# the env's defaults, used when a run's kwargs do not set them
_DEFAULTS = {"defender": "bernoulli", "statistic": "cardinality", "space": 3000}
_LABEL = re.compile(r"^(?P<id>[^\[]+)(\[(?P<kw>.*)\])?$")


def _parse_scalar(text: str) -> Any:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _kwargs_of(row: pd.Series) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    if "env_kwargs" in row.index and row["env_kwargs"] is not None and not (isinstance(row["env_kwargs"], float) and np.isnan(row["env_kwargs"])):
        v = row["env_kwargs"]
        kw = dict(json.loads(v) if isinstance(v, str) else v)
    elif "task" in row.index and isinstance(row["task"], str):
        m = _LABEL.match(row["task"])
        if m and m.group("kw"):
            for part in m.group("kw").split(","):
                if "=" not in part:
                    raise ValueError(f"cannot parse the task label {row['task']!r}")
                k, v = part.split("=", 1)
                kw[k.strip()] = _parse_scalar(v.strip())
    return kw


def _metric(df: pd.DataFrame, name: str) -> pd.Series:
    for col in (name, f"metric.{name}", f"metrics.{name}"):
        if col in df.columns:
            return pd.to_numeric(df[col], errors="coerce")
    if "metrics" in df.columns:
        return pd.to_numeric(df["metrics"].map(lambda m: (json.loads(m) if isinstance(m, str) else (m or {})).get(name)), errors="coerce")
    raise KeyError(f"the frame has no metric {name!r} (looked for columns {name!r}, 'metric.{name}' and a 'metrics' column)")


def _prepare(frame: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame of run or episode records, got {type(frame).__name__}")
    if "agent_name" not in frame.columns:
        raise KeyError("the frame needs an 'agent_name' column")
    df = frame
    if "env_id" in df.columns:
        df = df[df["env_id"] == ENV_ID]
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    df = df.copy()
    kws = [_kwargs_of(r) for _, r in df.iterrows()]
    for key, default in _DEFAULTS.items():
        df[key] = [kw.get(key, default) for kw in kws]
    df["prefix_max_error"] = _metric(df, "prefix_max_error")
    df["success"] = _metric(df, "success")
    try:
        df["defender_space"] = _metric(df, "defender_space")
    except KeyError:
        df["defender_space"] = np.nan
    return df


def attacker_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Attackers ranked by success rate within each (defender, statistic, space).

    Returns columns ``defender, statistic, space, agent_name, success_rate,
    mean_error, episodes, rank`` (rank 1 = highest success rate, ties broken by
    mean error).
    """
    df = _prepare(frame)
    if df.empty:
        return pd.DataFrame(columns=["defender", "statistic", "space", "agent_name", "success_rate", "mean_error", "episodes", "rank"])
    g = df.groupby(["defender", "statistic", "space", "agent_name"], as_index=False).agg(
        success_rate=("success", "mean"), mean_error=("prefix_max_error", "mean"), episodes=("success", "size")
    )
    g = g.sort_values(["defender", "statistic", "space", "success_rate", "mean_error"], ascending=[True, True, True, False, False])
    g["rank"] = g.groupby(["defender", "statistic", "space"]).cumcount() + 1
    return g.reset_index(drop=True)


def defender_table(frame: pd.DataFrame, attackers: Iterable[str] | None = None) -> pd.DataFrame:
    """Defenders ranked by their worst error over the attackers, at matched space.

    For every (defender, statistic, space budget) the error of an attacker is
    its mean ``prefix_max_error`` over episodes; a defender's score is the
    largest of these over the attackers it met (lower is better). Defenders are
    ranked within each (statistic, space) group, which is what "matched space"
    means: every defender was built for the same word budget (its measured
    ``defender_space`` is reported beside it).

    Args:
        frame: episodes or runs of ``icmlgym/SketchAttack-v0`` (see the module docstring).
        attackers: the attackers that should have met every defender (default:
            every registered sketch attacker); the ones a defender has not met
            are listed in ``missing_attackers``, and its row is ``complete=False``.

    Returns:
        columns ``statistic, space, rank, defender, worst_error, worst_attacker,
        worst_success_rate, mean_space_words, n_attackers, complete, missing_attackers``.
    """
    expected = tuple(ATTACKERS if attackers is None else attackers)
    cols = ["statistic", "space", "rank", "defender", "worst_error", "worst_attacker", "worst_success_rate", "mean_space_words", "n_attackers", "complete", "missing_attackers"]
    df = _prepare(frame)
    if df.empty:
        return pd.DataFrame(columns=cols)
    per = df.groupby(["statistic", "space", "defender", "agent_name"], as_index=False).agg(
        error=("prefix_max_error", "mean"), success_rate=("success", "mean"), space_words=("defender_space", "mean")
    )
    rows = []
    for (stat, space, defender), g in per.groupby(["statistic", "space", "defender"]):
        worst = g.loc[g["error"].idxmax()]
        met = set(g["agent_name"])
        missing = [a for a in expected if a not in met]
        rows.append(
            {
                "statistic": stat,
                "space": space,
                "defender": defender,
                "worst_error": float(worst["error"]),
                "worst_attacker": worst["agent_name"],
                "worst_success_rate": float(worst["success_rate"]),
                "mean_space_words": float(g["space_words"].mean()),
                "n_attackers": len(met),
                "complete": not missing,
                "missing_attackers": ", ".join(missing),
            }
        )
    out = pd.DataFrame(rows).sort_values(["statistic", "space", "worst_error", "defender"])
    out["rank"] = out.groupby(["statistic", "space"]).cumcount() + 1
    return out[cols].reset_index(drop=True)
