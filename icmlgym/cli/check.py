"""``icmlgym check``: the conformance checks of registered envs."""

from __future__ import annotations

from typing import List, Optional

import typer
from rich.table import Table

from icmlgym.cli.common import app, console, fail


@app.command()
def check(
    env_ids: Optional[List[str]] = typer.Argument(None, help="Env ids to check (default: every registered env)."),
    tier: str = typer.Option("smoke", help="Make the envs with this tier's kwargs."),
    record: bool = typer.Option(False, "--record", help="Record each env's rollout hash in its family's rollouts.json (only for a new env or version)."),
    record_platform: bool = typer.Option(
        False, "--record-platform",
        help="Keep each env's recorded rollout and add this machine's hash beside it (only when the code is unchanged and the "
             "hash differs because torch's kernels round differently on this CPU model).",
    ),
) -> None:
    """Check envs as tests/core/test_all_envs.py does: Gymnasium's check_env (or PettingZoo's
    parallel_api_test and parallel_seed_test) with warnings as errors, the card contract (metrics,
    cost units, observations in their space), seed determinism, invalid actions, step after the
    end, and the recorded rollout of the env's version. Prints a pass/fail table and every failure."""
    import icmlgym
    from icmlgym.catalog import UnknownEnvError
    from icmlgym.envs.checking import check as check_env_id
    from icmlgym.envs.checking import failures, record_rollout

    try:
        ids = [icmlgym.card(i).id for i in env_ids] if env_ids else [c.id for c in icmlgym.catalog.cards()]
    except UnknownEnvError as err:
        fail(str(err))
    if record and record_platform:
        fail("--record replaces an env's recorded rollout, --record-platform adds to it: give one of them")
    if record or record_platform:
        for env_id in ids:
            console.print(f"recorded {env_id}: {record_rollout(env_id, platform_only=record_platform)}")
    table = Table(title="icmlgym check")
    for col in ("env", "check", "result", "seconds", "detail"):
        table.add_column(col)
    failed = 0
    problems = []
    for env_id in ids:
        with console.status(f"checking {env_id}"):
            results = check_env_id(env_id, tier=tier)
        if failures(results):
            problems.append(failures(results))
        for r in results:
            mark = "[green]pass" if r.passed else "[yellow]skip" if r.passed is None else "[red]FAIL"
            failed += r.passed is False
            table.add_row(r.env_id, r.check, mark, f"{r.seconds:.2f}", r.detail.splitlines()[0][:120] if r.detail else "")
    console.print(table)
    if failed:
        console.print(f"[red]{failed} check(s) failed:")
        console.print("\n".join(problems), markup=False, highlight=False)
        raise typer.Exit(1)

