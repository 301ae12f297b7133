"""``hfcprov campaign run|status|report``: thin shell over ``hfcprov.lab``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from hfcprov.cli import EXIT_ERROR, EXIT_FAILED, EXIT_INTERRUPTED
from hfcprov.cli.options import JOBS, JSON, MKDIR
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
@JOBS
@click.option("--scheduler", metavar="URL", help="Run simulator points on a Dask cluster, e.g. tcp://host:8786.")
@click.option("-o", "--report", "report_path", type=click.Path(dir_okay=False),
              help="Also write the report (HTML, PNGs, CSV) when the run ends.")
@MKDIR
@click.option("-q", "--quiet", is_flag=True, help="No progress (same as hfcprov -q).")
@click.option("--dry-run", is_flag=True, help="Print the plan (roles, files, resets, checks, time) and run nothing.")
def run(spec, db, resume, retry_failed, jobs, scheduler, report_path, mkdir, quiet, dry_run):
    """Run the campaign described in SPEC (YAML).

    Progress with the time left goes to stderr: a bar on a terminal, a plain line every 10 s
    otherwise. Exit status 3 when some points failed (the others are stored), 130 on Ctrl-C;
    either way the line to finish the campaign is printed. --jobs defaults to the file's
    `jobs:`, else one per CPU. The folder of -d and of -o is created when the folder holding
    it exists (`-d out/sweep.db` on a fresh checkout); --mkdir creates a whole path.
    """
    from hfcprov.cli import verbosity
    from hfcprov.fileio import check_writable, output_folder
    from hfcprov.lab.runner import run_campaign
    from hfcprov.lab.spec import load_campaign

    camp = load_campaign(spec)
    if dry_run:
        from hfcprov.lab.plan import plan_lines

        click.echo("\n".join(plan_lines(camp)))
        return
    db_path = Path(db) if db else _default_db(spec, camp.name)
    # an unwritable -d or -o fails now, naming the path, not after the run (or as "not a campaign database")
    for path in (db_path, report_path):
        output_folder(path, mkdir, creates=1)
    check_writable(db_path)
    if report_path:
        check_writable(report_path)
    again = resume_command(spec, db_path, report_path, jobs, scheduler)
    with _open_store(db_path) as store:
        progress = _progress(store, mode="off" if quiet or verbosity() < 0 else None)
        try:
            summary = run_campaign(camp, store, resume=resume, retry_failed=retry_failed, jobs=jobs,
                                   scheduler=scheduler, on_event=progress.hook, command=_argv_line())
        except KeyboardInterrupt:
            progress.close()
            click.echo(f"finished points are kept; finish with:\n  {again}\nhfcprov: interrupted", err=True)
            store.close()  # every finished point is committed
            _exit_now(EXIT_INTERRUPTED)
        except Exception as err:
            progress.close()
            import sqlite3

            from hfcprov.cli import error_line
            from hfcprov.lab.lock import LockHeld

            if (isinstance(err, (LockHeld, sqlite3.DatabaseError)) or error_line(err) is None
                    or not progress.events):
                raise  # another run's / a damaged file (one line) / a bug / before any point: one line
            click.echo(f"hfcprov: error: {error_line(err)}\nfinished points are kept; after fixing it, "
                       f"finish with:\n  {again}", err=True)
            sys.exit(EXIT_ERROR)
        progress.close()
        p = store.progress()
        click.echo(f"{camp.name}: ran {summary.ran} point(s) in {format_duration(summary.seconds)}; "
                   f"{p.done}/{p.total} done, {p.failed} failed -> {db_path}", err=True)
        for key, reason in list(summary.errors.items())[:10]:
            click.echo(f"  failed: {key}: {reason}", err=True)
        if summary.stopped:
            click.echo(f"{camp.name}: {summary.stopped}; once the modem answers, finish with:\n  {again}", err=True)
        if p.failed:
            click.echo(f"run the failed points again with:\n  {again} --retry-failed", err=True)
        if report_path:
            _write_report(store, report_path)
    if p.failed or summary.stopped:
        sys.exit(EXIT_FAILED)


def _exit_now(status: int) -> None:
    """Exit without the interpreter's exit handlers. CPython's process-pool handler joins the pool's
    feeder thread, which can wait for ever on a pipe to workers the runner has already stopped
    (a loaded machine, a point in flight: seen as a Ctrl-C that did not end in 30 s)."""
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def resume_command(spec, db, report=None, jobs=None, scheduler=None) -> str:
    """The exact command that finishes this campaign: the same files, --resume."""
    import shlex

    words = ["hfcprov", "campaign", "run", str(spec), "--resume", "-d", str(db)]
    if report:
        words += ["-o", str(report)]
    if jobs:
        words += ["-j", str(jobs)]
    if scheduler:
        words += ["--scheduler", scheduler]
    return shlex.join(words)


def _argv_line() -> str:
    import shlex

    return shlex.join(["hfcprov", *sys.argv[1:]])


class _open_store:
    """A campaign Store whose SQLite errors (a damaged file) become one line naming the file."""

    def __init__(self, path, create: bool = True):
        self.path = Path(path)
        self.create = create

    def __enter__(self):
        from hfcprov.lab.store import Store

        self.store = Store(self.path, create=self.create)
        return self.store

    def __exit__(self, exc_type, exc, tb):
        import sqlite3

        self.store.close()
        if exc_type is not None and issubclass(exc_type, sqlite3.DatabaseError):
            from hfcprov.lab.spec import CampaignError

            raise CampaignError(f"{self.path}: damaged campaign database ({exc}); "
                                f"results cannot be read from it: restore it or start a new file") from None
        return False


class _progress:
    """Progress of a run: count, time left and the last result (bar or periodic lines)."""

    def __init__(self, store, mode=None):
        from hfcprov.cli.progress import ProgressReport

        self.store = store
        self.report = ProgressReport("points", mode=mode)
        self.started = False
        self.events = 0  # points started or finished by this run

    def hook(self, kind, point, detail):
        self.events += 1
        if self.report.mode == "off":
            return
        if not self.started:
            self.started = True
            left = self.store.progress()
            self.report.start(left.pending + left.running)
        if kind == "done":
            r = detail[0]
            lat = r.latency_loaded.p50
            self.report.advance(f"{point.key}: {format_rate(r.goodput_bps)}"
                                + (f", {lat * 1e3:.0f} ms loaded" if lat is not None else ""))
        elif kind == "failed":
            self.report.advance(f"{point.key}: FAILED {detail}", failed=True)

    def close(self):
        self.report.close()


def _write_report(stores, out):
    from hfcprov.lab.report import write_report

    paths = write_report(stores, out)
    for p in paths:
        click.echo(f"wrote {p}", err=True)


@campaign.command()
@click.argument("db", type=click.Path(dir_okay=False))
@JSON("the state")
def status(db, as_json):
    """Where the campaign in DB stands (safe while it runs): running, interrupted or finished."""
    import json

    from hfcprov.lab.lock import holder

    with _open_store(db, create=False) as store:
        p = store.progress()
        lock = holder(store.db)
        row = store.campaign_row()
        source = row["source"] if row is not None else None
    running = lock is not None and lock.alive
    if running:
        state = "running"
    elif p.total and p.done + p.failed == p.total:
        state = "finished"
    elif p.running or (p.done + p.failed):
        state = "interrupted"  # points were started, nothing runs them now
    else:
        state = "not started"
    again = resume_command(source or "SPEC.yaml", db) if state == "interrupted" else None
    if as_json:
        click.echo(json.dumps({
            "campaign": p.name, "state": state, "total": p.total, "done": p.done, "failed": p.failed,
            "running": p.running if running else 0, "pending": p.pending + (0 if running else p.running),
            "seconds_per_point": p.seconds_per_point, "eta_seconds": p.eta_seconds if running else None,
            "holder": {"pid": lock.pid, "host": lock.host, "started": lock.started, "heartbeat": lock.heartbeat,
                       "command": lock.command} if running else None,
            "last": p.last, "started": p.started, "resume": again}, indent=2))
        return
    if running:
        click.echo(f"campaign {p.name}: running ({lock.describe()}): {p.done}/{p.total} done, {p.failed} failed, "
                   f"{p.running} running, {p.pending} pending")
        if p.eta_seconds is not None and p.remaining:
            click.echo(f"{format_duration(p.seconds_per_point)} per point so far; about "
                       f"{format_duration(p.eta_seconds)} left")
        for key in p.running_keys:
            click.echo(f"running: {key}")
    else:
        left = p.pending + p.running
        click.echo(f"campaign {p.name}: {state}: {p.done}/{p.total} done, {p.failed} failed, {left} not run")
    if p.last:
        if p.last["state"] == "failed":
            click.echo(f"last: {p.last['key']}: FAILED {p.last['error']}")
        else:
            lat = p.last["latency_loaded_p50"]
            click.echo(f"last: {p.last['key']}: {format_rate(p.last['goodput_bps'])}"
                       + (f", {lat * 1e3:.0f} ms loaded" if lat is not None else ""))
    if p.started:
        click.echo(f"started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(p.started))}")
    if again:
        click.echo(f"finish with: {again}")


@campaign.command()
@click.argument("dbs", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="DB...")
@click.option("-o", "--output", default="report.html", show_default=True, type=click.Path(dir_okay=False),
              help="HTML file; the PNGs and the CSV go beside it (<stem>-*.png, <stem>.csv). Its folder is created "
                   "when the folder holding it exists; --mkdir creates a whole path.")
@MKDIR
def report(dbs, output, mkdir):
    """Write the report of the campaign in DB: HTML with embedded plots, PNGs, CSV.

    Several DBs are overlaid, as flent overlays runs: each campaign is a series on the same axes,
    labelled by its name (its file when names repeat), and the report lists where their specs differ."""
    from contextlib import ExitStack

    from hfcprov.fileio import check_writable, output_folder

    output_folder(output, mkdir, creates=1)
    with ExitStack() as stack:
        stores = [stack.enter_context(_open_store(db, create=False)) for db in dbs]
        check_writable(output)
        _write_report(stores, output)
