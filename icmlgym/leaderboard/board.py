"""``Leaderboard``: the pandas API over a store (add, runs, episodes, table, compare, export, import)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from icmlgym.catalog import MissingExtraError, canonical_json, card, task_label
from icmlgym.catalog import suite as catalog_suite
from icmlgym.leaderboard import scoring
from icmlgym.leaderboard.store import PutResult, Store, StoreError, as_records
from icmlgym.runner.record import RunRecord

EXPORT_FORMAT = "icmlgym-runs/1"
# the columns of an export besides the run record's own fields
PROVENANCE_COLUMNS = ("source", "exported_from", "exported_at", "export_format", "icmlgym_version")
_NESTED = ("env_kwargs", "env_spec", "agent_kwargs", "episodes", "cost", "hardware", "device", "versions", "isolation")


def _mark_isolation(scored: pd.DataFrame) -> None:
    """Entries say how they were run: ``[sandbox: none]`` for the fallback sandbox, and when
    one selection holds runs on hidden (submissions) and public seeds, which kind each entry is,
    so that the two are never ranked as one entry."""
    if scored.empty:
        return
    fallback = scored["sandbox"] == "none"
    scored.loc[fallback, "entry"] = scored.loc[fallback, "entry"] + " [sandbox: none]"
    hidden = scored["seeds"] == "hidden"
    if hidden.any() and not hidden.all():
        scored["entry"] = scored["entry"] + np.where(hidden, " [hidden seeds]", " [public seeds]")


class Leaderboard:
    """Run records in an SQL store, scored with confidence intervals.

    Args:
        store: an SQLAlchemy URL (``sqlite:///...``, ``postgresql+psycopg://...``) or a file path;
            None means :func:`icmlgym.leaderboard.default_store_url` (``$ICMLGYM_HOME/leaderboard.db``
            or ``./icmlgym-results/leaderboard.db``).
        read_only: open without writing anything (SQLite's read-only mode: no schema change, no
            checkpoint); a missing or empty file, an older schema, or a damaged write-ahead log is
            an error instead of being created, adopted or migrated.

    Raises:
        StoreError: the store is not a leaderboard, is corrupt, or has a newer schema (the file is
            left untouched).

    Example::

        board = Leaderboard("results.db")
        board.add(icmlgym.run("icmlgym/Bandit-v0", "ucb1", seeds=3))
        board.table(env="icmlgym/Bandit-v0")      # per-entry mean, s.e., 95% CI, rank interval, cost
        board.table(suite="bandit", tier="smoke")  # IQM / mean / median of normalised scores
    """

    def __init__(self, store: str | os.PathLike | None = None, read_only: bool = False) -> None:
        self._store = Store(store, read_only=read_only)

    # -- basics --------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The store's URL (password hidden)."""
        return self._store.display_url

    @property
    def schema_version(self) -> int:
        return self._store.schema_version

    @property
    def store_id(self) -> str:
        """A random id given to the store when it was created (provenance of exported records)."""
        return self._store.store_id

    def __repr__(self) -> str:
        return f"Leaderboard({self.url!r})"

    def __enter__(self) -> "Leaderboard":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the store's connections."""
        self._store.close()

    def seed_secret(self) -> bytes:
        """The board's secret from which submissions' hidden evaluation seeds are derived (never exported)."""
        return self._store.seed_secret()

    def damaged(self, **filters: Any) -> dict[str, str]:
        """``{run_id: reason}`` for stored runs whose values no longer match their content hash
        (same filters as :meth:`runs`); the tables report such runs as ``damaged`` and never score them."""
        return self._store.damaged(**filters)

    # -- writing -------------------------------------------------------------------------------

    def add(self, records: RunRecord | Mapping[str, Any] | Any, on_conflict: str = "replace") -> int:
        """Store run records in one transaction. Returns the number of runs stored.

        ``records`` is a RunRecord, a dict from ``RunRecord.to_dict()``, or an iterable of them.
        The store keeps one current run per run key (entry, env, kwargs, tier, seed, code): a rerun
        of a stored key replaces it (``on_conflict="replace"``) or is dropped (``"skip"``). Adding a
        run whose ``run_id`` is already stored does nothing, so this can be passed as ``on_record``
        to the runner and re-run safely. :meth:`put` says which of these happened.
        """
        return self._store.add(records, on_conflict=on_conflict)

    def put(self, records: RunRecord | Mapping[str, Any] | Any, on_conflict: str = "replace") -> PutResult:
        """As :meth:`add`, returning a :class:`PutResult` (added, replaced, skipped, unchanged)."""
        return self._store.put(records, on_conflict=on_conflict)

    def delete(
        self,
        entry: str | Sequence[str] | None = None,
        *,
        agent: str | Sequence[str] | None = None,
        env: str | Sequence[str] | None = None,
        suite: str | None = None,
        tier: str | None = None,
        status: str | Sequence[str] | None = None,
        run_id: str | Sequence[str] | None = None,
        dry_run: bool = False,
    ) -> int:
        """Delete stored runs (episodes included): an entry's runs, as the tables label it
        (``name``, ``name{k=v}``, ``name@hash``), or any runs matching the filters. At least one
        selection is needed. With ``dry_run`` nothing is deleted. Returns the number of runs
        deleted (or that would be).

        Example::

            board.delete("ucb1", env="icmlgym/Bandit-v0")   # ucb1's runs on one env
            board.delete(agent="my-agent")                    # every run of an agent name
        """
        filters = {"agent": agent, "env": env, "suite": suite, "tier": tier, "status": status, "run_id": run_id}
        if entry is None and not any(v is not None for v in filters.values()):
            raise ValueError("delete needs an entry or a filter (agent, env, suite, tier, status, run_id)")
        if entry is not None:
            entries = [entry] if isinstance(entry, str) else list(entry)
            runs = self._store.runs_frame(columns=["run_id", "agent_name", "agent_kwargs", "agent_source_hash", "code_hash"], parse_json=False, **filters)
            labels = scoring.entry_labels(runs.rename(columns={"agent_kwargs": "agent_kwargs_json"})) if len(runs) else pd.Series(dtype=object)
            unknown = [e for e in entries if e not in set(labels)]
            if unknown:
                import difflib

                close = sorted({m for e in unknown for m in difflib.get_close_matches(e, sorted(set(labels)), n=3, cutoff=0.5)})
                raise ValueError(f"no entry {', '.join(map(repr, unknown))} in the selected runs" + (f"; did you mean {', '.join(close)}?" if close else ""))
            filters = {"run_id": list(runs.loc[labels.isin(entries).to_numpy(), "run_id"])}
        if dry_run:
            return len(self._store.runs_frame(columns=["run_id"], parse_json=False, **filters))
        return self._store.delete(**filters)

    # -- reading -------------------------------------------------------------------------------

    def runs(self, **filters: Any) -> pd.DataFrame:
        """Stored runs, one row each (JSON fields parsed). Filters: env, agent, tier, status, suite,
        task, run_id, source (each a value or a list)."""
        return self._store.runs_frame(**filters)

    def episodes(self, **filters: Any) -> pd.DataFrame:
        """Stored episodes, one row each: run fields, ``return``, ``length``, ``wall_time``, one column
        per metric and ``cost.<name>`` per cost counter. Same filters as :meth:`runs`."""
        return self._store.episodes_frame(**filters)

    def records(self, **filters: Any) -> list[RunRecord]:
        """Stored runs as RunRecords, episodes included (same filters as :meth:`runs`)."""
        return list(self._store.iter_records(**filters))

    def run_keys(self, status: str | Sequence[str] | None = "ok") -> set[str]:
        """``RunRecord.run_key`` of the stored runs with this status (None: any), to resume sweeps."""
        df = self._store.runs_frame(columns=["run_key"], parse_json=False, status=status)
        return set(df["run_key"])

    def stored_names(self) -> dict[str, set[str]]:
        """The env ids, agent names and suite names that stored runs carry (for checking a selection)."""
        df = self._store.runs_frame(columns=["env_id", "agent_name", "suite"], parse_json=False)
        return {"env": set(df["env_id"]), "agent": set(df["agent_name"]), "suite": set(df["suite"])}

    def __len__(self) -> int:
        """The number of stored runs."""
        return len(self._store.runs_frame(columns=["run_id"], parse_json=False))

    def __bool__(self) -> bool:
        # an open board is true even when empty (``board.add if board else None`` must store)
        return True

    # -- scoring -------------------------------------------------------------------------------

    def run_scores(
        self,
        metric: str | None = None,
        direction: str | None = None,
        refs: Mapping[str, tuple[float, float]] | None = None,
        by_device: bool = False,
        **filters: Any,
    ) -> pd.DataFrame:
        """One row per stored run with its ``score`` (the metric averaged over its stored episodes;
        NaN unless every episode reports it),
        normalised score ``norm``, entry label, status, and cost counters summed over its episodes.

        Args:
            metric: the metric to score (default: each env's primary metric from the catalog).
            direction: ``max`` or ``min`` for a non-primary ``metric`` (default ``max``).
            refs: ``{env id or task label: (random score, reference score)}`` overriding the
                catalog's normalisation references.
            by_device: split each entry by the device its runs used (``name [cuda: NVIDIA H100]``).
            **filters: as for :meth:`runs` (``device="cuda"`` keeps GPU runs only).
        """
        if direction not in (None, "max", "min"):
            raise ValueError(f"direction must be 'max' or 'min', got {direction!r}")
        cols = ["run_id", "env_id", "task", "tier", "agent_name", "agent_source_hash", "code_hash", "added_at", "agent_kwargs", "seed", "status", "error",
                "wall_time", "train_wall_time", "primary_metric", "direction", "suite", "source", "device_type", "device_name", "n_episodes",
                "sandbox", "seeds"]
        runs = self._store.runs_frame(columns=cols, parse_json=False, **filters).rename(columns={"agent_kwargs": "agent_kwargs_json"})
        runs["metric"] = ""
        runs["score"] = np.nan
        if runs.empty:
            return scoring.attach_scores(runs.assign(norm=np.nan), refs)
        infos = {}
        for env_id, tier, pm, d in runs[["env_id", "tier", "primary_metric", "direction"]].drop_duplicates().itertuples(index=False):
            info = scoring.card_info(env_id, tier, pm, d)
            if metric is not None and metric != info["metric"]:
                info = {**info, "metric": metric, "direction": direction or "max", "refs": None}
            elif direction is not None:
                info = {**info, "direction": direction}
            infos[(env_id, tier)] = info
        runs["metric"] = [infos[(e, t)]["metric"] for e, t in zip(runs["env_id"], runs["tier"])]
        runs["direction"] = [infos[(e, t)]["direction"] for e, t in zip(runs["env_id"], runs["tier"])]
        parts = []
        for m, envs in runs.groupby("metric")["env_id"].unique().items():
            parts.append(self._store.run_metric(m, list(envs), **filters).assign(metric=m))
        sc = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["run_id", "score", "n_scored", "metric"])
        runs = runs.drop(columns="score").merge(sc, on=["run_id", "metric"], how="left")
        runs["score"] = runs["score"].astype(float)
        runs["n_scored"] = runs["n_scored"].fillna(0).astype(int)
        # a run is scored only when every stored episode reports the metric (a NaN or a missing
        # value would otherwise drop out of the run's mean unseen); others count as missing_metric
        runs.loc[runs["n_scored"] < runs["n_episodes"], "score"] = np.nan
        costs = self._store.run_costs(**filters)
        runs = runs.merge(costs, on="run_id", how="left")
        scored = scoring.attach_scores(runs, refs)
        if by_device:
            scored["entry"] = scored["entry"] + " [" + scored["device_type"] + ": " + scored["device_name"] + "]"
        _mark_isolation(scored)
        scored = scoring.current_runs(scored).reset_index(drop=True)
        damaged = self._store.damaged(**filters)
        if damaged:  # a run whose stored values changed is reported, never scored
            hit = scored["run_id"].isin(list(damaged))
            scored.loc[hit, ["score", "norm"]] = np.nan
            scored.loc[hit, "status"] = "damaged"
            scored.loc[hit, "error"] = [damaged[r] for r in scored.loc[hit, "run_id"]]
        if metric is not None:
            # the catalog's refs are for the primary metric only
            non_primary = [scoring.card_info(e, t)["metric"] != metric for e, t in zip(scored["env_id"], scored["tier"])]
            if refs is None:
                scored.loc[non_primary, "norm"] = np.nan
                scored.loc[non_primary, "refs"] = None
        return scored

    def table(
        self,
        env: str | Sequence[str] | None = None,
        suite: str | Sequence[tuple[str, dict]] | None = None,
        tier: str | None = None,
        metric: str | None = None,
        *,
        agent: str | Sequence[str] | None = None,
        level: str | None = None,
        direction: str | None = None,
        refs: Mapping[str, tuple[float, float]] | None = None,
        n_boot: int = 2000,
        ci: float = 0.95,
        seed: int = 0,
        cost_unit: str | None = None,
        by_device: bool = False,
        device: str | Sequence[str] | None = None,
        seeds: str | None = None,
    ) -> pd.DataFrame:
        """The leaderboard as a DataFrame.

        Per task (``level="task"``, the default unless ``suite`` is given): one row per
        (task, tier, entry) with seeds, failed / timeout counts, mean, standard error, percentile
        bootstrap CI, normalised score, rank interval, mean cost counters per run, and whether the
        entry is on the task's score-versus-cost Pareto front. ``few_seeds`` flags entries with fewer
        successful seeds than the tier asks.

        Per suite (``level="suite"``, the default when ``suite`` is given): one row per entry with
        IQM, mean and median of normalised scores and their stratified bootstrap CIs, a rank interval
        from the IQM intervals, and failure counts. Caveats are in ``df.attrs["notes"]``.

        Args:
            env: env id(s) to include.
            suite: a suite name from the catalog (or the suite runs were submitted under), or a list
                of ``(env_id, env_kwargs)``.
            tier: budget tier to include (a suite aggregate needs exactly one).
            metric: score this metric instead of each env's primary metric.
            agent: only these agent names.
            level: ``"task"`` or ``"suite"``.
            direction: ``max``/``min`` for a non-primary ``metric``.
            refs: normalisation references overriding the catalog (env id or task label -> (random, reference)).
            n_boot: bootstrap resamples; ci: confidence level; seed: resampling seed.
            cost_unit: the cost counter for the Pareto front (default: the env's first cost unit).
            by_device: split entries by the device their runs used; device: keep runs on this
                device type or name only.
            seeds: ``"hidden"`` keeps submissions evaluated on the board's hidden seeds only.
        """
        level = level or ("suite" if suite is not None else "task")
        if level not in ("task", "suite"):
            raise ValueError(f"level must be 'task' or 'suite', got {level!r}")
        filters = {"env": env, "suite": suite, "tier": tier, "agent": agent, "device": device, "seeds": seeds}
        runs = self.run_scores(metric=metric, direction=direction, refs=refs, by_device=by_device, **filters)
        if level == "task":
            return self._task_level(runs, n_boot, ci, seed, cost_unit)
        return self._suite_level(runs, suite, tier, n_boot, ci, seed)

    def tables(
        self,
        env: str | Sequence[str] | None = None,
        suite: str | Sequence[tuple[str, dict]] | None = None,
        tier: str | None = None,
        metric: str | None = None,
        *,
        agent: str | Sequence[str] | None = None,
        direction: str | None = None,
        refs: Mapping[str, tuple[float, float]] | None = None,
        n_boot: int = 2000,
        ci: float = 0.95,
        seed: int = 0,
        cost_unit: str | None = None,
        by_device: bool = False,
        device: str | Sequence[str] | None = None,
        seeds: str | None = None,
    ) -> tuple[pd.DataFrame, pd.DataFrame | None]:
        """``(per-task table, suite table)`` from one pass over the store (the suite table is None
        without ``suite``); the same as two :meth:`table` calls, with half the reading."""
        filters = {"env": env, "suite": suite, "tier": tier, "agent": agent, "device": device, "seeds": seeds}
        runs = self.run_scores(metric=metric, direction=direction, refs=refs, by_device=by_device, **filters)
        task = self._task_level(runs, n_boot, ci, seed, cost_unit)
        refusal = self.aggregate_refusal(suite)
        if refusal:
            task.attrs.setdefault("notes", []).append(refusal)
            return task, None
        return task, (self._suite_level(runs, suite, tier, n_boot, ci, seed) if suite is not None else None)

    @staticmethod
    def aggregate_refusal(suite: Any) -> str | None:
        """Why a named suite gets no aggregate (its envs span families and no reason is declared
        in ``icmlgym.catalog.SUITE_REASONS``), or None when it may be aggregated."""
        from icmlgym.catalog import SUITE_REASONS, suite_families

        if not isinstance(suite, str) or suite in SUITE_REASONS:
            return None
        try:
            fams = suite_families(catalog_suite(suite))
        except KeyError:
            return None
        if len(fams) <= 1:
            return None
        return (
            f"suite {suite!r} spans families {', '.join(fams)}, whose tasks ask different questions: no aggregate "
            f"or overall rank (use a family suite such as {fams[0]!r}, or declare the suite's reason with "
            "icmlgym.catalog.declare_suite_reason)"
        )

    @staticmethod
    def _task_level(runs: pd.DataFrame, n_boot: int, ci: float, seed: int, cost_unit: str | None) -> pd.DataFrame:
        df = scoring.task_table(runs, n_boot, ci, seed, cost_unit)
        df.attrs["level"] = "task"
        return df

    def _suite_level(self, runs: pd.DataFrame, suite: Any, tier: str | None, n_boot: int, ci: float, seed: int) -> pd.DataFrame:
        refusal = self.aggregate_refusal(suite)
        if refusal:
            raise ValueError(refusal)
        if tier is None and runs["tier"].nunique() > 1:
            raise ValueError(f"the runs span tiers {sorted(runs['tier'].unique())}; pass tier=... for a suite aggregate")
        tasks = self._suite_tasks(suite) if suite is not None else None
        df = scoring.suite_table(runs, tasks, n_boot, ci, seed)
        df.attrs["level"] = "suite"
        df.attrs["suite"] = suite if isinstance(suite, str) else ""
        return df

    @staticmethod
    def _suite_tasks(suite: Any) -> list[str] | None:
        if isinstance(suite, str):
            try:
                return [task_label(e, k) for e, k in catalog_suite(suite)]
            except KeyError:
                return None
        return [task_label(card(e).id, k) for e, k in suite]

    def compare(
        self,
        a: str,
        b: str,
        env: str | Sequence[str] | None = None,
        suite: str | Sequence[tuple[str, dict]] | None = None,
        tier: str | None = None,
        metric: str | None = None,
        refs: Mapping[str, tuple[float, float]] | None = None,
        n_boot: int = 2000,
        ci: float = 0.95,
        seed: int = 0,
    ) -> pd.DataFrame:
        """Entry ``a`` against entry ``b``: per task the difference of means (A - B) with a bootstrap
        CI and the probability that A improves on B; a last row ``ALL`` with the probability averaged
        over tasks and the IQM difference of normalised scores (stratified bootstrap CIs)."""
        runs = self.run_scores(metric=metric, refs=refs, env=env, suite=suite, tier=tier)
        if tier is None and runs["tier"].nunique() > 1:
            raise ValueError(f"the runs span tiers {sorted(runs['tier'].unique())}; pass tier=...")
        return scoring.compare_entries(runs, a, b, n_boot, ci, seed)

    def failures(self, **filters: Any) -> pd.DataFrame:
        """Failed and timed-out runs with the first line of their error."""
        df = self._store.runs_frame(columns=["run_id", "task", "tier", "agent_name", "seed", "status", "error", "wall_time"], parse_json=False, **filters)
        df = df[df["status"] != "ok"].copy()
        df["error"] = [e.strip().splitlines()[0] if e.strip() else "" for e in df["error"]]
        return df.reset_index(drop=True)

    # -- export / import -----------------------------------------------------------------------

    def export(self, path: str | os.PathLike, **filters: Any) -> int:
        """Write the stored runs (episodes included) to ``.csv`` or ``.parquet``, one row per run with
        nested fields as JSON text and provenance columns (source, exported_from, exported_at,
        export_format, icmlgym_version). Returns the number of runs written."""
        path = Path(path)
        fmt = _file_format(path)
        from icmlgym.runner.provenance import icmlgym_version

        rows = []
        recs = list(self._store.iter_records(**filters))
        sources = self._store.sources([r.run_id for r in recs])
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        origin = f"store:{self.store_id} ({self.url})"
        for r in recs:
            d = r.to_dict()
            for k in _NESTED:
                d[k] = canonical_json(d[k])
            d.update(source=sources.get(r.run_id) or origin, exported_from=origin, exported_at=now, export_format=EXPORT_FORMAT, icmlgym_version=icmlgym_version())
            rows.append(d)
        columns = list(RunRecord.__dataclass_fields__) + ["env_spec_hash", "run_key", *PROVENANCE_COLUMNS]
        df = pd.DataFrame(rows, columns=columns)
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "csv":
            df.to_csv(path, index=False)
        else:
            _require_pyarrow()
            df.to_parquet(path, index=False)
        return len(df)

    def import_(self, path: str | os.PathLike) -> int:
        """Add the runs of an export (``.csv`` / ``.parquet``), of a spill file (``.jsonl``, see
        :mod:`icmlgym.leaderboard.spill`) or of another store (a URL or an SQLite file): merging two
        teams' results. Runs already here (same run_id) are skipped; each
        imported run keeps where it came from in its ``source``. Returns the number of runs added."""
        text = os.fspath(path)
        if "://" in text or Path(text).suffix.lower() in (".db", ".sqlite", ".sqlite3"):
            other = Leaderboard(text)
            try:
                recs = other.records()
                origin = f"store:{other.store_id} ({other.url})"
                srcs = other._store.sources([r.run_id for r in recs])
            finally:
                other.close()
            return self._add_with_sources(recs, [srcs.get(r.run_id) or origin for r in recs])
        p = Path(text)
        if p.name.endswith(".jsonl"):  # records spilled by a sweep whose store could not be written
            from icmlgym.leaderboard.spill import read_spill

            if not p.is_file():
                raise FileNotFoundError(f"no spill file at {p}")
            recs = read_spill(p)
            return self._add_with_sources(recs, [f"spill:{p.name}"] * len(recs))
        fmt = _file_format(p)
        if not p.is_file():
            raise FileNotFoundError(f"no export file at {p}")
        if fmt == "csv":
            df = pd.read_csv(p, dtype=str, keep_default_na=False)
        else:
            _require_pyarrow()
            df = pd.read_parquet(p)
        needed = {"run_id", "env_id", "agent_name", "seed", "tier", "episodes", "export_format"}
        missing = needed - set(df.columns)
        if missing:
            raise ValueError(f"{p} is not an icmlgym export: missing columns {sorted(missing)}")
        formats = set(df["export_format"].astype(str))
        if formats - {EXPORT_FORMAT}:
            raise ValueError(f"{p} has export format(s) {sorted(formats)}; this icmlgym reads {EXPORT_FORMAT}")
        recs, srcs = [], []
        fields = RunRecord.__dataclass_fields__
        for i, row in enumerate(df.to_dict("records")):
            d: dict[str, Any] = {}
            try:
                for k in fields:
                    if k not in row:
                        continue
                    v = row[k]
                    if k in _NESTED:
                        v = json.loads(v)
                    elif k in ("seed", "attempts", "record_version"):
                        v = int(v)
                    elif k in ("wall_time", "train_wall_time"):
                        v = float(v)
                    elif v is None:
                        v = ""
                    d[k] = v
                recs.append(RunRecord.from_dict(d))
            except (ValueError, TypeError, json.JSONDecodeError) as err:
                raise ValueError(f"{p}, row {i + 2}: not a valid run record: {err}") from None
            srcs.append(str(row.get("source") or row.get("exported_from") or f"file:{p.name}"))
        return self._add_with_sources(recs, srcs)

    def _add_with_sources(self, recs: list[RunRecord], sources: list[str]) -> int:
        # one transaction for the whole import; a key stored here already keeps its run
        return self._store.add(recs, source=sources, on_conflict="skip")


def _file_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise ValueError(f"{path}: export and import take a .csv or .parquet file, got {suffix or 'no suffix'!r}")


def _require_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise MissingExtraError("report", "Parquet export and import", "pyarrow") from None


__all__ = ["Leaderboard", "StoreError", "as_records"]
