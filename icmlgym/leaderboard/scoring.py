"""Scoring: per-task tables, suite aggregates and pairwise comparisons from per-run scores.

Input is a per-run frame (one row per stored run) with the run's ``score``
(the primary metric averaged over its stored episodes), its status, and its
cost counters summed over episodes. Nothing here reads a score a submitter
wrote: the store recomputes ``score`` from the episodes.

Orientation: a task's ``direction`` says whether higher (``max``) or lower
(``min``) raw scores are better. Normalised scores, ranks, the Pareto front and
the probability of improvement are always oriented so that higher is better.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from icmlgym.catalog import UnknownEnvError, card
from icmlgym.leaderboard import stats

# an entry is an agent: its name, constructor kwargs, and (when one name has several) its code version
ENTRY_KEYS = ("agent_name", "agent_kwargs_json", "agent_source_hash", "code_hash")


def entry_labels(df: pd.DataFrame) -> pd.Series:
    """A readable entry label per run: ``name``, ``name{k=v}`` for non-default kwargs, ``@hash`` when
    one label covers several versions of the agent's code (the first half of the run key's code hash:
    the agent's source and the icmlgym modules it imports; the agent's source hash for older
    records). Runs whose agent never loaded (no hash) join the label's entry without splitting it."""
    base = df["agent_name"].astype(str) + np.where(df["agent_kwargs_json"].isin(["{}", ""]), "", "{" + df["agent_kwargs_json"].str.strip("{}").str.replace('"', "") + "}")
    src = df["agent_source_hash"].astype(str)
    version = df["code_hash"].astype(str).str[:8].where(df["code_hash"].astype(str) != "", src) if "code_hash" in df else src
    versions = version.where(version != "").groupby(base).transform("nunique")
    split = (versions > 1) & (version != "")
    return pd.Series(np.where(split, base + "@" + version.str[:8], base), index=df.index)


def card_info(env_id: str, tier: str, snapshot_metric: str = "", snapshot_direction: str = "") -> dict[str, Any]:
    """Primary metric, direction, required seeds and normalisation refs of an env at a tier.

    Envs missing from this catalog (records merged from an installation with more
    families) fall back to the metric and direction stored with the run."""
    try:
        c = card(env_id)
    except UnknownEnvError:
        return {"metric": snapshot_metric or "return", "direction": snapshot_direction or "max", "seeds_required": np.nan, "refs": None, "cost_unit": "env_steps"}
    t = c.tiers.get(tier)
    refs = c.score_refs.get(tier)
    return {
        "metric": c.primary_metric,
        "direction": c.direction,
        "seeds_required": float(t.seeds) if t is not None else np.nan,
        "refs": tuple(refs) if refs is not None and refs[0] != refs[1] else None,
        "cost_unit": c.cost_units[0] if c.cost_units else "env_steps",
    }


def normalise(values: np.ndarray, refs: tuple[float, float] | None) -> np.ndarray:
    """(value - random) / (reference - random): 0 is the random baseline, 1 the reference, higher better."""
    if refs is None:
        return np.full(np.shape(values), np.nan)
    lo, hi = refs
    return (np.asarray(values, dtype=float) - lo) / (hi - lo)


def _oriented(x: np.ndarray, direction: np.ndarray | str) -> np.ndarray:
    return np.where(np.asarray(direction) == "min", -np.asarray(x, dtype=float), np.asarray(x, dtype=float))


def task_table(runs: pd.DataFrame, n_boot: int = 2000, ci: float = 0.95, seed: int = 0, cost_unit: str | None = None) -> pd.DataFrame:
    """One row per (task, tier, entry): seeds, failures, mean, s.e., bootstrap CI, normalised score,
    rank interval within the task, mean cost counters per run, and the score-versus-cost Pareto flag.

    Args:
        runs: per-run frame with columns task, env_id, tier, entry, status, score, norm, direction,
            metric, seeds_required, wall_time and ``cost.*``.
        n_boot: bootstrap resamples (runs resampled with replacement within each row's group).
        ci: confidence level of the percentile intervals.
        seed: seed of the resampling (results are reproducible).
        cost_unit: the cost counter for the Pareto front (default: each env's first cost unit).
    """
    keys = ["task", "tier", "entry"]
    if runs.empty:
        return pd.DataFrame(columns=keys + ["metric", "direction", "seeds", "mean", "se", "ci_low", "ci_high"])
    cost_cols = sorted(c for c in runs.columns if c.startswith("cost."))
    g = runs.assign(_failed=(runs["status"] == "failed").astype(int), _timeout=(runs["status"] == "timeout").astype(int)).groupby(keys, sort=True)
    out = g.agg(
        env_id=("env_id", "first"),
        agent=("agent_name", "first"),
        source_hash=("agent_source_hash", "first"),
        metric=("metric", "first"),
        direction=("direction", "first"),
        seeds_required=("seeds_required", "first"),
        runs=("status", "size"),
        failed=("_failed", "sum"),
        timeout=("_timeout", "sum"),
    ).reset_index()
    ok = runs[(runs["status"] == "ok") & runs["score"].notna()]
    unscored = runs[(runs["status"] == "ok") & runs["score"].isna()].groupby(keys).size()
    out["missing_metric"] = out.set_index(keys).index.map(unscored).fillna(0).astype(int).to_numpy()
    codes = pd.MultiIndex.from_frame(ok[keys]).map({k: i for i, k in enumerate(pd.MultiIndex.from_frame(out[keys]))}).to_numpy(dtype=np.int64)
    n = len(out)
    scores = ok["score"].to_numpy(dtype=float)
    counts = np.bincount(codes, minlength=n)
    sums = np.bincount(codes, weights=scores, minlength=n)
    sq = np.bincount(codes, weights=scores**2, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / counts
        var = (sq - counts * mean**2) / (counts - 1)
        se = np.sqrt(np.maximum(var, 0) / counts)
    se[counts < 2] = np.nan
    boot = stats.grouped_bootstrap_means(scores, codes, n, n_boot, seed)
    lo, hi = stats.percentile_interval(boot, ci, axis=1)
    # one run says nothing about spread: no interval (and so no rank interval) rather than a
    # zero-width one
    lo[counts < 2] = np.nan
    hi[counts < 2] = np.nan
    out["seeds"] = counts
    out["mean"], out["se"], out["ci_low"], out["ci_high"] = mean, se, lo, hi
    out["few_seeds"] = out["seeds"] < out["seeds_required"].fillna(0)
    refs = runs.groupby(keys)["refs"].first().reindex(pd.MultiIndex.from_frame(out[keys])).to_numpy()
    norm = np.full((n, 3), np.nan)
    for i, r in enumerate(refs):
        if r is not None and not (isinstance(r, float) and np.isnan(r)):
            vals = normalise(np.array([mean[i], lo[i], hi[i]]), r)
            norm[i] = [vals[0], min(vals[1], vals[2]), max(vals[1], vals[2])]
    out["norm"], out["norm_low"], out["norm_high"] = norm[:, 0], norm[:, 1], norm[:, 2]
    # rank intervals within each (task, tier), oriented so higher is better
    olo = np.where(out["direction"] == "min", -hi, lo)
    ohi = np.where(out["direction"] == "min", -lo, hi)
    out["rank"] = np.nan
    out["rank_worst"] = np.nan
    for _, idx in out.groupby(["task", "tier"]).indices.items():
        best, worst = stats.rank_intervals(olo[idx], ohi[idx])
        out.loc[out.index[idx], "rank"] = best
        out.loc[out.index[idx], "rank_worst"] = worst
    # costs: mean per successful run
    if cost_cols or "wall_time" in ok:
        per = ok.groupby(keys)[cost_cols + ["wall_time"]].mean()
        per = per.reindex(pd.MultiIndex.from_frame(out[keys]))
        for c in cost_cols + ["wall_time"]:
            out[c] = per[c].to_numpy()
    out["pareto_cost"] = ""
    out["pareto"] = False
    for _, idx in out.groupby(["task", "tier"]).indices.items():
        env_id = out["env_id"].iloc[idx[0]]
        unit = cost_unit or card_info(env_id, out["tier"].iloc[idx[0]])["cost_unit"]
        col = unit if unit in out.columns else f"cost.{unit}"
        if col not in out.columns:
            col = "wall_time"
        mask = stats.pareto_front(out["mean"].to_numpy()[idx], out[col].to_numpy(dtype=float)[idx], out["direction"].iloc[idx[0]])
        out.loc[out.index[idx], "pareto"] = mask
        out.loc[out.index[idx], "pareto_cost"] = col
    order = ["task", "tier", "entry", "rank", "rank_worst", "metric", "direction", "mean", "se", "ci_low", "ci_high",
             "norm", "norm_low", "norm_high", "seeds", "seeds_required", "few_seeds", "runs", "failed", "timeout",
             "missing_metric", "wall_time", *cost_cols, "pareto", "pareto_cost", "env_id", "agent", "source_hash"]
    out = out[[c for c in order if c in out.columns]]
    out = out.assign(_o=_oriented(out["mean"].to_numpy(), out["direction"].to_numpy()))
    out = out.sort_values(["task", "tier", "rank", "_o"], ascending=[True, True, True, False], na_position="last").drop(columns="_o")
    return out.reset_index(drop=True)


def suite_table(runs: pd.DataFrame, tasks: Sequence[str] | None = None, n_boot: int = 2000, ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """One row per entry: IQM, mean and median of normalised scores over the suite's tasks with
    stratified bootstrap intervals, a rank interval (from the IQM intervals), and run counts.

    Only tasks with normalisation references count towards aggregates; tasks without them are
    listed in ``df.attrs["unnormalised_tasks"]``. Only entries that ran every normalised task
    are aggregated and ranked: an entry that lacks some keeps its row (counts, ``tasks_missing``)
    with no aggregate, after the complete ones, since an average over other tasks is not
    comparable. ``df.attrs["notes"]`` lists such caveats in words.
    """
    notes: list[str] = []
    cols = ["entry", "rank", "rank_worst", "iqm", "iqm_low", "iqm_high", "mean", "mean_low", "mean_high", "median",
            "median_low", "median_high", "tasks", "tasks_missing", "runs", "failed", "timeout", "few_seeds_tasks", "wall_time"]
    if runs.empty:
        df = pd.DataFrame(columns=cols)
        df.attrs.update(notes=["no runs"], unnormalised_tasks=[], tasks=[])
        return df
    if runs["tier"].nunique() > 1:
        raise ValueError(f"a suite aggregate needs one tier; the runs span {sorted(runs['tier'].unique())}: pass tier=...")
    all_tasks = sorted(tasks) if tasks is not None else sorted(runs["task"].unique())
    has_refs = runs.groupby("task")["refs"].first().map(lambda r: r is not None and not (isinstance(r, float) and np.isnan(r)))
    unnormalised = [t for t in all_tasks if not bool(has_refs.get(t, False))]
    if unnormalised:
        notes.append(
            f"{len(unnormalised)} task(s) have no normalisation references and are not aggregated "
            f"(the catalog's references cover an env at its tier's defaults; give refs= for others): {', '.join(unnormalised)}"
        )
    norm_tasks = [t for t in all_tasks if t not in unnormalised]
    rng = np.random.default_rng(seed)
    rows = []
    boots: dict[str, np.ndarray] = {}
    per_task_seeds = runs[runs["status"] == "ok"].groupby(["entry", "task"]).size()
    for entry, er in runs.groupby("entry", sort=True):
        ok = er[(er["status"] == "ok") & er["norm"].notna() & er["task"].isin(norm_tasks)]
        by_task = {t: grp["norm"].to_numpy(dtype=float) for t, grp in ok.groupby("task")}
        row: dict[str, Any] = {
            "entry": entry,
            "tasks": len(by_task),
            "tasks_missing": len(norm_tasks) - len(by_task),
            "runs": len(er),
            "failed": int((er["status"] == "failed").sum()),
            "timeout": int((er["status"] == "timeout").sum()),
            "wall_time": float(er["wall_time"].sum()),
        }
        req = er.groupby("task")["seeds_required"].first()
        row["few_seeds_tasks"] = int(sum(per_task_seeds.get((entry, t), 0) < (req.get(t) if pd.notna(req.get(t)) else 0) for t in all_tasks if t in req.index))
        if by_task:
            agg = stats.aggregate_bootstrap(list(by_task.values()), n_boot, rng)
            single = all(v.size < 2 for v in by_task.values())  # nothing to resample: no interval
            for name, (point, boot) in agg.items():
                lo, hi = (np.nan, np.nan) if single else stats.percentile_interval(boot, ci)
                row[name], row[f"{name}_low"], row[f"{name}_high"] = point, float(lo), float(hi)
            boots[entry] = agg["iqm"][1]
        else:
            for name in ("iqm", "mean", "median"):
                row[name] = row[f"{name}_low"] = row[f"{name}_high"] = np.nan
        rows.append(row)
    df = pd.DataFrame(rows)
    # only entries that ran every normalised task are aggregated and ranked
    complete = (df["tasks_missing"] == 0).to_numpy()
    agg_cols = [f"{m}{s}" for m in ("iqm", "mean", "median") for s in ("", "_low", "_high")]
    df.loc[~complete, agg_cols] = np.nan
    best, worst = stats.rank_intervals(np.where(complete, df["iqm_low"], np.nan), np.where(complete, df["iqm_high"], np.nan))
    df["rank"], df["rank_worst"] = best, worst
    incomplete = df.loc[~complete, "entry"].tolist()
    if incomplete:
        notes.append(f"entries missing some tasks (not aggregated, not ranked: an average over other tasks is not comparable): {', '.join(incomplete)}")
    df = df[cols].assign(_c=~complete).sort_values(["_c", "rank", "iqm", "entry"], ascending=[True, True, False, True], na_position="last")
    df = df.drop(columns="_c").reset_index(drop=True)
    df.attrs.update(notes=notes, unnormalised_tasks=unnormalised, tasks=norm_tasks)
    return df


def compare_entries(runs: pd.DataFrame, a: str, b: str, n_boot: int = 2000, ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per task: mean of A and B, the difference A - B with a bootstrap interval (runs of A and B
    resampled independently), and the probability that A improves on B (Mann-Whitney, oriented by
    the task's direction) with its interval. A last row ``ALL`` averages the probability over the
    tasks both entries ran (stratified bootstrap) and, where every such task is normalised, gives the
    IQM difference of normalised scores."""
    entries = set(runs["entry"])
    for e in (a, b):
        if e not in entries:
            raise ValueError(f"no entry {e!r} in the selected runs; entries: {sorted(entries)}")
    if runs["tier"].nunique() > 1:
        raise ValueError(f"compare needs one tier; the runs span {sorted(runs['tier'].unique())}: pass tier=...")
    rng = np.random.default_rng(seed)
    ok = runs[(runs["status"] == "ok") & runs["score"].notna()]
    rows = []
    xs, ys, xn, yn = [], [], [], []
    for task, tr in ok.groupby("task", sort=True):
        x = tr.loc[tr["entry"] == a, "score"].to_numpy(dtype=float)
        y = tr.loc[tr["entry"] == b, "score"].to_numpy(dtype=float)
        direction = tr["direction"].iloc[0]
        row: dict[str, Any] = {"task": task, "metric": tr["metric"].iloc[0], "direction": direction, f"seeds_{a}": x.size, f"seeds_{b}": y.size}
        if x.size == 0 or y.size == 0:
            row.update(mean_a=x.mean() if x.size else np.nan, mean_b=y.mean() if y.size else np.nan, diff=np.nan, diff_low=np.nan, diff_high=np.nan, p_improve=np.nan, p_low=np.nan, p_high=np.nan)
            rows.append(row)
            continue
        bx = stats.grouped_bootstrap_means(x, np.zeros(x.size, dtype=np.int64), 1, n_boot, rng)[0]
        by = stats.grouped_bootstrap_means(y, np.zeros(y.size, dtype=np.int64), 1, n_boot, rng)[0]
        dlo, dhi = stats.percentile_interval(bx - by, ci)
        xo, yo = _oriented(x, direction), _oriented(y, direction)
        p, _, pboot = stats.probability_of_improvement([xo], [yo], n_boot, rng)
        plo, phi = stats.percentile_interval(pboot, ci)
        row.update(mean_a=x.mean(), mean_b=y.mean(), diff=x.mean() - y.mean(), diff_low=float(dlo), diff_high=float(dhi), p_improve=p, p_low=float(plo), p_high=float(phi))
        rows.append(row)
        xs.append(xo)
        ys.append(yo)
        nx = tr.loc[tr["entry"] == a, "norm"].to_numpy(dtype=float)
        ny = tr.loc[tr["entry"] == b, "norm"].to_numpy(dtype=float)
        xn.append(nx)
        yn.append(ny)
    total: dict[str, Any] = {"task": "ALL", "metric": "P(A > B) averaged over tasks", "direction": "max"}
    if xs:
        p, _, pboot = stats.probability_of_improvement(xs, ys, n_boot, rng)
        plo, phi = stats.percentile_interval(pboot, ci)
        total.update(p_improve=p, p_low=float(plo), p_high=float(phi))
        if all(np.isfinite(v).all() for v in xn + yn):
            ax = stats.aggregate_bootstrap(xn, n_boot, rng)["iqm"]
            ay = stats.aggregate_bootstrap(yn, n_boot, rng)["iqm"]
            dlo, dhi = stats.percentile_interval(ax[1] - ay[1], ci)
            total.update(mean_a=ax[0], mean_b=ay[0], diff=ax[0] - ay[0], diff_low=float(dlo), diff_high=float(dhi), metric="IQM of normalised scores; P(A > B) averaged over tasks")
    rows.append(total)
    df = pd.DataFrame(rows)
    df.attrs.update(a=a, b=b)
    return df


def current_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One run per (task, tier, entry, seed): the newest stored. The store already keeps one run per
    run key; two runs of one entry's seed remain only when the env's code changed between them (a
    new key under the same agent version), and then the newest is the seed's current sample."""
    if runs.empty or "seed" not in runs:
        return runs
    order = [c for c in ("added_at", "run_id") if c in runs]
    ranked = runs.sort_values(order, kind="stable") if order else runs
    keep = ~ranked.duplicated(["task", "tier", "entry", "seed"], keep="last")
    return runs.loc[ranked.index[keep.to_numpy()]].sort_index()


def attach_scores(runs: pd.DataFrame, refs: Mapping[str, tuple[float, float]] | None = None) -> pd.DataFrame:
    """Add entry labels, card info (metric, direction, seeds required, refs) and normalised scores.

    ``refs`` overrides the catalog's normalisation references per env id or task label."""
    runs = runs.copy()
    runs["entry"] = entry_labels(runs) if len(runs) else pd.Series(dtype=object)
    infos = {}
    for key in runs[["env_id", "tier", "primary_metric", "direction"]].drop_duplicates().itertuples(index=False):
        infos[(key.env_id, key.tier)] = card_info(key.env_id, key.tier, key.primary_metric, key.direction)
    info_rows = [infos[(e, t)] for e, t in zip(runs["env_id"], runs["tier"])]
    runs["seeds_required"] = [i["seeds_required"] for i in info_rows]
    task_refs = []
    for task, env_id, info in zip(runs["task"], runs["env_id"], info_rows):
        # the catalog's references are for the env as its tier makes it; a task with the user's
        # own kwargs (another horizon, another sub-task) is a different problem and needs its own
        r = info["refs"] if task == env_id else None
        if refs is not None:
            r = refs.get(task, refs.get(env_id, r))
            if r is not None:
                r = (float(r[0]), float(r[1]))
                if r[0] == r[1]:
                    raise ValueError(f"normalisation refs for {task} are equal ({r[0]}); random and reference must differ")
        task_refs.append(r)
    runs["refs"] = task_refs
    lo = np.array([r[0] if r else np.nan for r in task_refs], dtype=float)
    hi = np.array([r[1] if r else np.nan for r in task_refs], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        runs["norm"] = (runs["score"].to_numpy(dtype=float) - lo) / (hi - lo)
    return runs
