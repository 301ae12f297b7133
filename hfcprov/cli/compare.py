"""Before / after side by side: ``sim run --config A --compare B``, ``buffer advise --config A --compare B``.

One ``SideBySide`` prints both the table and ``--json``, so the two carry the same names and units
(the unit is in the name: ``goodput_mbps``, ``latency_under_load_ms``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass
class SideBySide:
    columns: list[str]  # what is compared: file names
    rows: dict[str, list] = field(default_factory=dict)  # name (unit in it) -> one value per column
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, values: list) -> None:
        self.rows[name] = list(values)

    def as_dict(self) -> dict:
        return {"columns": self.columns, "rows": self.rows, "notes": self.notes}

    def json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, default=str)

    def text(self) -> str:
        header = ["", *self.columns] + (["change"] if len(self.columns) == 2 else [])
        lines = [header]
        for name, values in self.rows.items():
            cells = [name, *(_cell(v) for v in values)]
            if len(values) == 2:
                cells.append(_change(*values))
            lines.append(cells)
        widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
        out = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
               for line in lines]
        return "\n".join(out + [f"note: {n}" for n in self.notes])


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _change(a, b) -> str:
    """B against A: the difference, and the ratio where it means something."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
        return "" if a == b else "changed"
    if a == b:
        return "="
    diff = b - a
    text = f"{diff:+d}" if isinstance(diff, int) else f"{diff:+.4g}"
    if a:
        text += f" ({diff / abs(a):+.0%})"
    return text


def upstream_flow(path, tree):
    """The flow a file is judged by: its first upstream flow with a rate (else any flow with one)."""
    from hfcprov.errors import HfcprovError
    from hfcprov.model import service_flows

    flows = [f for f in service_flows(tree) if f.max_sustained_rate]
    chosen = [f for f in flows if f.direction == "upstream"] or flows
    if not chosen:
        raise HfcprovError(f"{path}: no service flow with a Max Sustained Traffic Rate")
    return chosen[0]


def advise_files(paths: list[str], rtt: float, flows: int, latency_budget: float, congestion_control: str,
                 mac: str, profile: str | None) -> SideBySide:
    """Each file's upstream flow against the sizing policy: its TargetBuffer, the queue the modem gives it,
    what that queue predicts (latency under load, TCP utilization) and the advised TargetBuffer, on the modem
    ``profile`` (its DOCSIS version decides the AQM the file's flow runs; None: the default)."""
    from hfcprov.config import read_config
    from hfcprov.model import modem_settings, upstream_aqm
    from hfcprov.model.flow import BufferRejected
    from hfcprov.queue.inputs import SizingInputs
    from hfcprov.queue.predict import analytic
    from hfcprov.queue.profile import parse_profile
    from hfcprov.queue.sizing import size_buffer

    modem = parse_profile(profile)
    table = SideBySide([str(p) for p in paths])
    cols: dict[str, list] = {}
    for path in paths:
        tree = read_config(path)
        sf = upstream_flow(path, tree)
        aqm = upstream_aqm(sf, modem_settings(tree), modem.aqm_rule_version)
        target = aqm.latency_target if aqm is not None else None
        try:
            queue = sf.queue_size()
        except BufferRejected as err:
            raise BufferRejected(f"{path}: {sf.name}: {err}") from None
        rate = float(sf.max_sustained_rate)
        tier = SizingInputs(rate, rtt, flows, congestion_control, mac, target, latency_budget, modem.name, sf.burst,
                            sf.peak_rate)
        advice = size_buffer(tier)
        now, advised = analytic([(tier, queue), (tier, advice.target)])
        table.notes.extend(f"{path}: {w}" for w in advice.warnings)
        for name, value in (
            ("flow", sf.name),
            ("rate_mbps", rate / 1e6),
            ("aqm", f"{aqm.algorithm} {target * 1e3:g} ms" if aqm is not None else "drop-tail"),
            ("target_buffer_bytes", sf.target_buffer),
            ("queue_bytes", queue),
            ("latency_under_load_ms", now.latency_under_load * 1e3),
            ("tcp_utilization_pct", now.utilization * 100),
            ("advised_target_bytes", advice.target),
            ("advised_latency_under_load_ms", advised.latency_under_load * 1e3),
            ("advised_tcp_utilization_pct", advised.utilization * 100),
            ("queue_budget_ms", advice.queue_budget * 1e3),
        ):
            cols.setdefault(name, []).append(value)
    for name, values in cols.items():
        table.add(name, values)
    table.notes.append(f"RTT {rtt * 1e3:g} ms, {flows} flow(s), {congestion_control}, {mac} upstream, "
                       f"{modem.summary()}; queue_bytes is the queue the modem gives TargetBuffer (hfcprov.model); "
                       "latency and utilization are the analytic model's (docs/sizing.md)")
    return table
