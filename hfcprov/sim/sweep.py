"""Scenario files and sweep grids: YAML in, Scenarios out, results as rows.

A scenario file is one mapping (see ``examples/sim-*.yaml``). A sweep file is::

    base: {rate: 2M, buffer: 64KiB, rtt: 40ms, duration: 30s}   # or base: scenario.yaml
    grid:                       # every combination (cartesian product), in this key order
      rate: [2M, 5M, 10M]
      buffer: [16KiB, 64KiB, 256KiB]
      tcp.variant: [newreno, sack]
      data_loss: [0, 0.01]
      seed: [1, 2, 3]

Dotted keys reach nested options (``tcp.mss``, ``data_loss.burst``).
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

from hfcprov.sim.run import check
from hfcprov.sim.scenario import Scenario, ScenarioError, apply_overrides, set_path


def load_yaml(path: str | Path):
    import yaml

    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise ScenarioError(f"{path}: cannot read: {err.strerror}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise ScenarioError(f"{where}: not valid YAML: {getattr(err, 'problem', None) or err}") from None


def load_scenario(path: str | Path, overrides: list[str] = ()) -> Scenario:
    d = load_yaml(path)
    if not isinstance(d, dict):
        raise ScenarioError(f"{path}: a scenario file is a mapping (rate:, buffer:, rtt:, ...)")
    d = apply_overrides(d, list(overrides))
    sc = Scenario.from_dict(d, source=str(path), written=True)
    check(sc, str(path))
    return sc


def load_sweep(path: str | Path, overrides: list[str] = ()) -> list[tuple[dict, Scenario]]:
    """The grid's points as ``(point, scenario)``; ``point`` maps each grid key to its raw value."""
    path = Path(path)
    d = load_yaml(path)
    if not isinstance(d, dict) or "grid" not in d:
        raise ScenarioError(f"{path}: a sweep file has 'base:' (a scenario) and 'grid:' (key: [values])")
    base = d.get("base") or {}
    if isinstance(base, str):
        base_path = (path.parent / base)
        base = load_yaml(base_path)
        if not isinstance(base, dict):
            raise ScenarioError(f"{base_path}: a scenario file is a mapping")
    if not isinstance(base, dict):
        raise ScenarioError(f"{path}: base: expected a mapping or a scenario file name")
    base = apply_overrides(base, list(overrides))
    grid = d["grid"]
    if not isinstance(grid, dict) or not grid:
        raise ScenarioError(f"{path}: grid: expected a mapping of key: [values]")
    keys = list(grid)
    values = []
    for key in keys:
        v = grid[key]
        if not isinstance(v, list) or not v:
            raise ScenarioError(f"{path}: grid.{key}: expected a non-empty list of values")
        values.append(v)
    points = []
    for combo in itertools.product(*values):
        point = dict(zip(keys, combo))
        sd = copy.deepcopy(base)
        for key, value in point.items():
            set_path(sd, key, value, f"{path}: grid")
        source = f"{path} [{', '.join(f'{k}={v}' for k, v in point.items())}]"
        sc = Scenario.from_dict(sd, source=source, written=True)
        check(sc, source)  # every point before the first runs
        points.append((point, sc))
    return points


COLUMNS = ("goodput_mbps", "utilization", "rtt_loaded_p50_ms", "rtt_loaded_p99_ms", "loss", "timeouts",
           "retransmissions")


def summary_row(result) -> dict:
    """The compact per-run figures shown in tables and CSV (units in the column names)."""
    lat = result.latency_loaded
    row = {
        "goodput_mbps": result.goodput_bps / 1e6,
        "utilization": result.utilization,
        "rtt_idle_p50_ms": _ms(result.latency_idle.p50),
        "rtt_loaded_p50_ms": _ms(lat.p50),
        "rtt_loaded_p99_ms": _ms(lat.p99),
        "queue_delay_ms": result.extra.get("queue_delay_mean", 0.0) * 1e3,
        "loss": result.packet_loss,
        "timeouts": result.extra.get("timeouts"),
        "retransmissions": result.extra.get("retransmissions"),
    }
    if result.mos is not None:  # Scenario.voice ran a call
        row["mos"] = result.mos
    return row


def _ms(v):
    return None if v is None else v * 1e3


def rows_to_csv(rows: list[dict]) -> str:
    import csv
    import io

    if not rows:
        return ""
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _fmt(v) for k, v in r.items()})
    return out.getvalue()


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else v


def format_table(rows: list[dict]) -> str:
    if not rows:
        return "(no rows)"
    cols = list(rows[0])
    cells = [[str(_fmt(r.get(c))) if not isinstance(r.get(c), float) else f"{r[c]:.4g}" for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)
