"""``hfcprov campaign run|status|report``: thin shell over ``hfcprov.lab``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from hfcprov.units import format_duration, format_rate


@click.group()
def campaign():
    """Run, resume and report lab campaigns (buffer sweeps on the simulator, emulated or real modems)."""


def _default_db(spec_path: str, name: str) -> Path:
    return Path(f"{name}.db")


@campaign.command()
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("-d", "--db", type=click.Path(dir_okay=False), help="Results database (default: <campaign name>.db).")
@click.option("--resume", is_flag=True, help="Finish an interrupted campaign in DB (finished points are kept).")
@click.option("--retry-failed", is_flag=True, help="With --resume: run failed points again.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Simulator processes (default: the file's jobs, else one per CPU).")
@click.option("--scheduler", metavar="URL", help="Run simulator points on a Dask cluster, e.g. tcp://host:8786.")
@click.option("-o", "--report", "report_path", type=click.Path(dir_okay=False),
              help="Also write the report (HTML, PNGs, CSV) when the run ends.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def run(spec, db, resume, retry_failed, jobs, scheduler, report_path, quiet):
    """Run the campaign described in SPEC (YAML); exit status 3 when some points failed."""
    from hfcprov.lab.runner import run_campaign
    from hfcprov.lab.spec import load_campaign
    from hfcprov.lab.store import Store

    camp = load_campaign(spec)
    db_path = Path(db) if db else _default_db(spec, camp.name)
    with Store(db_path) as store:
        hook, bar = (None, None) if quiet else _progress(store)
        try:
            summary = run_campaign(camp, store, resume=resume, retry_failed=retry_failed, jobs=jobs,
                                   scheduler=scheduler, on_event=hook)
        finally:
            if bar is not None:
                bar.stop()
        p = store.progress()
        click.echo(f"{camp.name}: ran {summary.ran} point(s) in {format_duration(summary.seconds)}; "
                   f"{p.done}/{p.total} done, {p.failed} failed -> {db_path}", err=True)
        for key, reason in list(summary.errors.items())[:10]:
            click.echo(f"  failed: {key}: {reason}", err=True)
        if report_path:
            _write_report(store, report_path)
    if p.failed:
        sys.exit(3)


def _progress(store):
    """A live bar: point count, ETA and the last result; its state also lives in the store for `status`."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    total_left = None
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   TextColumn("{task.fields[last]}"), console=Console(stderr=True))
    task = None

    def hook(kind, point, detail):
        nonlocal task, total_left
        if task is None:
            left = store.progress()
            total_left = left.pending + left.running
            task = bar.add_task("points", total=total_left, last="")
            bar.start()
        if kind == "done":
            r = detail[0]
            lat = r.latency_loaded.p50
            last = (f"{point.key}: {format_rate(r.goodput_bps)}"
                    + (f", {lat * 1e3:.0f} ms loaded" if lat is not None else ""))
            bar.update(task, advance=1, last=last)
        elif kind == "failed":
            bar.update(task, advance=1, last=f"{point.key}: FAILED {detail}"[:120])

    return hook, bar


def _write_report(store, out):
    from hfcprov.lab.report import write_report

    paths = write_report(store, out)
    for p in paths:
        click.echo(f"wrote {p}", err=True)


@campaign.command()
@click.argument("db", type=click.Path(dir_okay=False))
def status(db):
    """Where the campaign in DB stands (safe while it runs)."""
    from hfcprov.lab.store import Store

    with Store(db, create=False) as store:
        p = store.progress()
    click.echo(f"campaign {p.name}: {p.done}/{p.total} done, {p.failed} failed, {p.running} running, "
               f"{p.pending} pending")
    if p.eta_seconds is not None and p.remaining:
        click.echo(f"{format_duration(p.seconds_per_point)} per point so far; about "
                   f"{format_duration(p.eta_seconds)} left")
    for key in p.running_keys:
        click.echo(f"running: {key}")
    if p.last:
        if p.last["state"] == "failed":
            click.echo(f"last: {p.last['key']}: FAILED {p.last['error']}")
        else:
            lat = p.last["latency_loaded_p50"]
            click.echo(f"last: {p.last['key']}: {format_rate(p.last['goodput_bps'])}"
                       + (f", {lat * 1e3:.0f} ms loaded" if lat is not None else ""))
    if p.started:
        click.echo(f"started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(p.started))}")


@campaign.command()
@click.argument("db", type=click.Path(dir_okay=False))
@click.option("-o", "--output", default="report.html", show_default=True, type=click.Path(dir_okay=False),
              help="HTML file; the PNGs and the CSV go beside it (<stem>-*.png, <stem>.csv).")
def report(db, output):
    """Write the report of the campaign in DB: HTML with embedded plots, PNGs, CSV."""
    from hfcprov.lab.store import Store

    with Store(db, create=False) as store:
        _write_report(store, output)
