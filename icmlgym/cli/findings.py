"""``icmlgym findings``: run the papers' declared claims through the runner and print the verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from icmlgym.cli.common import STORE_HELP, app, console, emit, fail, open_board


def _units(seeds: Optional[int], seed_list: Optional[str]) -> Optional[list[int]]:
    if seeds is not None and seed_list is not None:
        fail("give --seeds or --seed-list, not both")
    if seed_list is not None:
        try:
            return [int(s) for s in seed_list.replace(",", " ").split()]
        except ValueError:
            fail(f"--seed-list takes integers separated by commas or spaces, got {seed_list!r}")
    if seeds is not None:
        return list(range(seeds))
    return None


@app.command()
def findings(
    family: Optional[str] = typer.Argument(None, help="A family with declared findings (see --list)."),
    all_: bool = typer.Option(False, "--all", help="Every family's findings."),
    seeds: Optional[int] = typer.Option(None, help="Units 0..N-1 (N >= 10); default: each finding's test units."),
    seed_list: Optional[str] = typer.Option(None, "--seed-list", help="Explicit units, e.g. 1000,1001,...,1009 (at least 10)."),
    tier: str = typer.Option("smoke", help="Budget tier of every run (smoke, standard, full)."),
    store: Optional[str] = typer.Option(None, help=STORE_HELP),
    no_store: bool = typer.Option(False, "--no-store", help="Do not store the runs."),
    executor: str = typer.Option("process", help="inprocess or process (a worker per run)."),
    workers: Optional[int] = typer.Option(None, help="Concurrent workers (default: cores)."),
    fmt: str = typer.Option("table", "--format", help="table (terminal), markdown or csv."),
    output: Optional[Path] = typer.Option(None, help="Write the table to this file instead of stdout."),
    list_: bool = typer.Option(False, "--list", help="List the declared findings and exit."),
) -> None:
    """Evaluate declared findings: per claim the effect with its 95% interval (paired over
    independent units), the one-sided p-value and the verdict (holds / does not hold / not at
    our scale). Exits 1 when a claim declared as holding does not hold, or a run fails."""
    from icmlgym.findings import all_findings, evaluate, family_findings, families
    from icmlgym.findings.table import frame, markdown

    if fmt not in ("table", "markdown", "csv"):
        fail(f"unknown --format {fmt!r}; choose table, markdown or csv")
    if executor not in ("inprocess", "process"):
        fail(f"--executor must be inprocess or process, got {executor!r}")
    if all_ and family:
        fail("give a FAMILY or --all, not both")
    try:
        chosen = all_findings() if (all_ or (family is None and list_)) else family_findings(family) if family else None
    except ValueError as err:
        fail(str(err))
    if chosen is None:
        fail(f"name a FAMILY ({', '.join(families())}) or pass --all")
    if list_:
        for f in chosen:
            console.print(f"[bold]{f.id}[/] ({f.family}, unit: {f.unit}, declared: {f.expected}): {f.comparison} on {f.measure.describe()}")
        return
    units = _units(seeds, seed_list)
    elsewhere = [f.id for f in chosen if tier not in f.tiers]
    if elsewhere:
        console.print(f"not declared at the {tier} tier (skipped): {', '.join(elsewhere)}")
    import icmlgym

    try:
        icmlgym.card("icmlgym/Bandit-v0").tier(tier)
    except ValueError as err:
        fail(str(err))
    board = None if no_store else open_board(store)
    try:
        results = evaluate(chosen, units=units, tier=tier, executor=executor, workers=workers,
                           on_record=board.add if board is not None else None, progress=True)
    except ValueError as err:
        fail(str(err))
    finally:
        if board is not None:
            board.close()
    if fmt == "markdown":
        emit(markdown(results) + "\n", output)
    elif fmt == "csv":
        emit(frame(results).to_csv(index=False), output)
    else:
        from rich.table import Table

        table = Table(title=f"icmlgym findings ({tier} tier)")
        for col in ("finding", "claim", "metric", "units", "treatment", "control", "effect [95% CI]", "p", "verdict"):
            table.add_column(col)
        for r in results:
            row = r.row()
            colour = {"holds": "green", "does not hold": "red"}.get(r.verdict, "yellow")
            declared = "" if r.matches_declaration else f" (declared: {r.finding.expected})"
            table.add_row(row["finding"], row["claim"], row["metric"], row["unit"], f"{row['treatment']:.3g}", f"{row['control']:.3g}",
                          f"{row['effect']:.3g} [{row['ci_low']:.3g}, {row['ci_high']:.3g}]", f"{row['p_value']:.2g}",
                          f"[{colour}]{r.verdict}[/]{declared}")
        if output is not None:
            emit(markdown(results) + "\n", output)
        else:
            console.print(table)
    broken = [r for r in results if r.finding.expected == "holds" and r.verdict != "holds"]
    failed = [m for r in results for m in r.failed_runs]
    for r in broken:
        console.print(f"[red]declared as holding, observed {r.verdict}: {r.finding.id}")
    for m in failed[:10]:
        console.print(f"[red]failed run: {m}")
    if broken or failed:
        raise typer.Exit(1)
