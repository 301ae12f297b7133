"""``hfcprov sim run`` and ``hfcprov sim sweep``: load a scenario or sweep, call hfcprov.sim, print."""

from __future__ import annotations

import json
import sys

import click

from hfcprov.cli.options import JOBS, JSON, MKDIR, OLD_DOCSIS_VERSION

@click.group()
def sim():
    """Simulate a service flow carrying TCP and probe traffic (virtual time)."""


@sim.command("run")
@click.argument("scenario_file", required=False, type=click.Path(dir_okay=False))
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Take the service flow from a config file (.cm, text, YAML or JSON) instead.")
@click.option("--flow", "flow_ref", type=int, help="With --config: the service flow reference (default: first upstream).")
@click.option("--profile", default=None, metavar="PROFILE",
              help="With --config: the modem profile (default docsis3.1): its request-grant MAC carries the upstream "
              "flow and its DOCSIS version decides the AQM (3.1 runs DOCSIS-PIE unless 24.40.1 / TLV 76 disable "
              "it; 3.0 and 2.0 are drop-tail unless the file's 24.40 asks), as `emu up --profile`.")
@OLD_DOCSIS_VERSION
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE",
              help="Override a scenario key, e.g. --set rtt=100ms --set tcp.variant=reno (repeatable).")
@click.option("--compare", "compare_file", type=click.Path(dir_okay=False),
              help="With --config A: simulate this second config file the same way (same --set, same seed) and "
                   "print A and B side by side (before / after).")
@JSON("the tables (the same names and units)")
@click.option("--out", type=click.Path(dir_okay=False), help="Write the full result (with series) as JSON here.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write a PNG of queue occupancy and cwnd here.")
@MKDIR
def run_cmd(scenario_file, config_file, flow_ref, profile, docsis_version, assignments, compare_file, as_json, out,
            plot, mkdir):
    """Simulate one scenario: SCENARIO.yaml, or --config modem.cm [--compare other.cm] [--set key=value ...]."""
    from hfcprov.fileio import atomic_write, output_folder
    from hfcprov.sim import run
    from hfcprov.sim.sweep import format_table, load_scenario

    if bool(scenario_file) == bool(config_file):
        raise click.UsageError("give either SCENARIO.yaml or --config FILE")
    if compare_file and not config_file:
        raise click.UsageError("--compare B needs --config A: the two files are simulated the same way")
    if compare_file and (out or plot):
        raise click.UsageError("--out and --plot write one run; drop them with --compare")
    for path in (out, plot):
        output_folder(path, mkdir)
    if scenario_file:
        sc = load_scenario(scenario_file, assignments)
        for line in sc.upstream_findings():
            click.echo(f"note: {scenario_file}: {line}", err=True)
    else:
        from hfcprov.sim.fromconfig import scenario_from_config

        def note(text):
            click.echo(f"note: {text}", err=True)

        sc = scenario_from_config(config_file, flow_ref, assignments, profile or docsis_version, on_note=note)
    if compare_file:
        other = scenario_from_config(compare_file, flow_ref, assignments, profile or docsis_version, on_note=note)
        from hfcprov.sim import run_many

        table = compare_runs([config_file, compare_file], [sc, other], run_many([sc, other]))
        click.echo(table.json() if as_json else table.text())
        return
    result = run(sc)
    if out:
        atomic_write(out, json.dumps(result.to_dict(), indent=1) + "\n")
    if plot:
        from hfcprov.sim.plot import plot_run

        plot_run(result, plot, title=sc.name)
    flows, summary = result_tables(result)
    if as_json:  # the tables' own rows: the same names and units (full result: --out)
        click.echo(json.dumps({"flows": flows, "summary": summary}, indent=1))
        return
    click.echo(format_table(flows))
    click.echo("")
    click.echo(format_table([summary]))


def result_tables(result) -> tuple[list[dict], dict]:
    """What `sim run` prints, as rows: one per TCP flow, and the run's summary (units in the names)."""
    from hfcprov.sim.sweep import summary_row

    flows = [{"flow": i, "goodput_mbps": f.goodput_bps / 1e6, "bytes": f.bytes_delivered,
              "completion_s": f.completion_time, "retx": f.retransmissions, "timeouts": f.timeouts}
             for i, f in enumerate(result.flows)]
    return flows, summary_row(result)


def compare_runs(labels, scenarios, results):
    """Two simulated files side by side: what each provisions, then the run's summary figures."""
    from hfcprov.cli.compare import SideBySide

    table = SideBySide([str(label) for label in labels])
    table.add("rate_mbps", [sc.rate / 1e6 for sc in scenarios])
    table.add("buffer_bytes", [sc.buffer for sc in scenarios])
    table.add("aqm", [sc.aqm for sc in scenarios])
    summaries = [result_tables(r)[1] for r in results]
    for key in dict.fromkeys(k for s in summaries for k in s):
        table.add(key, [s.get(key) for s in summaries])
    table.notes.append(f"both simulated with the same workload and seed ({scenarios[0].seed}); --set applies to both")
    return table


@sim.command("sweep")
@click.argument("sweep_file", type=click.Path(dir_okay=False))
@JOBS
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help="Override a base key (repeatable).")
@click.option("--csv", "csv_out", type=click.Path(dir_okay=False), help="Write the table as CSV here.")
@MKDIR
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
def sweep_cmd(sweep_file, jobs, assignments, csv_out, mkdir, progress):
    """Run every point of a grid (rate x buffer x RTT x flows x loss x TCP x seed) in parallel."""
    from hfcprov.fileio import atomic_write, output_folder
    from hfcprov.sim import run_many
    from hfcprov.sim.sweep import format_table, load_sweep, rows_to_csv, summary_row

    output_folder(csv_out, mkdir)
    points = load_sweep(sweep_file, assignments)
    show = sys.stderr.isatty() if progress is None else progress
    if show:
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("simulating", total=len(points))
            results = run_many([sc for _, sc in points], jobs=jobs,
                               progress=lambda done, total: bar.update(task, completed=done))
    else:
        results = run_many([sc for _, sc in points], jobs=jobs)
    rows = [{**{k: v for k, v in point.items()}, **summary_row(r)} for (point, _), r in zip(points, results)]
    if csv_out:
        atomic_write(csv_out, rows_to_csv(rows))
    click.echo(format_table(rows))

