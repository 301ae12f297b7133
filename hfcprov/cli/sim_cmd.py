"""``hfcprov sim run`` and ``hfcprov sim sweep``: load a scenario or sweep, call hfcprov.sim, print."""

from __future__ import annotations

import json
import sys

import click


@click.group()
def sim():
    """Simulate a service flow carrying TCP and probe traffic (virtual time)."""


@sim.command("run")
@click.argument("scenario_file", required=False, type=click.Path(dir_okay=False))
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Take the service flow from a config file (.cm, text, YAML or JSON) instead.")
@click.option("--flow", "flow_ref", type=int, help="With --config: the service flow reference (default: first upstream).")
# hfcprov.model.DOCSIS_VERSIONS, written out so the CLI loads without the model
@click.option("--docsis-version", type=click.Choice(["3.0", "3.1"]), default="3.1", show_default=True,
              help="With --config: the modem's DOCSIS version. 3.1 runs DOCSIS-PIE on upstream flows unless 24.40.1 "
              "/ TLV 76 disable it; 3.0 is drop-tail unless the file's 24.40 asks for AQM (as `emu up`).")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE",
              help="Override a scenario key, e.g. --set rtt=100ms --set tcp.variant=reno (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (without time series).")
@click.option("--out", type=click.Path(dir_okay=False), help="Write the full result (with series) as JSON here.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write a PNG of queue occupancy and cwnd here.")
def run_cmd(scenario_file, config_file, flow_ref, docsis_version, assignments, as_json, out, plot):
    """Simulate one scenario: SCENARIO.yaml, or --config modem.cm [--set key=value ...]."""
    from hfcprov.fileio import atomic_write
    from hfcprov.sim import run
    from hfcprov.sim.sweep import format_table, load_scenario, summary_row

    if bool(scenario_file) == bool(config_file):
        raise click.UsageError("give either SCENARIO.yaml or --config FILE")
    if scenario_file:
        sc = load_scenario(scenario_file, assignments)
    else:
        from hfcprov.sim.fromconfig import scenario_from_config

        sc = scenario_from_config(config_file, flow_ref, assignments, docsis_version,
                                  on_note=lambda text: click.echo(f"note: {text}", err=True))
    result = run(sc)
    if out:
        atomic_write(out, json.dumps(result.to_dict(), indent=1) + "\n")
    if plot:
        from hfcprov.sim.plot import plot_run

        plot_run(result, plot, title=sc.name)
    if as_json:
        click.echo(json.dumps(result.to_dict(series=False), indent=1))
        return
    rows = []
    for i, f in enumerate(result.flows):
        rows.append({"flow": i, "goodput_mbps": f.goodput_bps / 1e6, "bytes": f.bytes_delivered,
                     "completion_s": f.completion_time, "retx": f.retransmissions, "timeouts": f.timeouts})
    click.echo(format_table(rows))
    s = summary_row(result)
    click.echo("")
    click.echo(format_table([{k: v for k, v in s.items()}]))


@sim.command("sweep")
@click.argument("sweep_file", type=click.Path(dir_okay=False))
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None, help="Processes (default: CPU count).")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help="Override a base key (repeatable).")
@click.option("--csv", "csv_out", type=click.Path(dir_okay=False), help="Write the table as CSV here.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
def sweep_cmd(sweep_file, jobs, assignments, csv_out, progress):
    """Run every point of a grid (rate x buffer x RTT x flows x loss x TCP x seed) in parallel."""
    from hfcprov.fileio import atomic_write
    from hfcprov.sim import run_many
    from hfcprov.sim.sweep import format_table, load_sweep, rows_to_csv, summary_row

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

