"""The campaign report: one self-contained HTML file, its PNGs and a CSV.

Figures follow White et al. (2011): per upstream rate, grouped bars over buffer
size with one bar per added RTT, for TCP throughput (Figs. 4-5), latency under
load (Figs. 7-8) and VoIP MOS (Fig. 9). Where a campaign measured (emu, modem)
and simulated, the simulator's prediction is drawn over the measured bars and a
scatter compares the two. Repetitions are summarised by their median.

The recommended buffer per tier is the smallest one that keeps the queueing
delay under load within a budget while losing little throughput; the report
says which rule picked it and the figures behind it.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from hfcprov.fileio import atomic_write
from hfcprov.lab.schema import CSV_COLUMNS, VARIANT_AXES, variant_label
from hfcprov.lab.store import Store
from hfcprov.units import format_bytes, format_duration, format_rate

LATENCY_BUDGET = 0.100  # s of queueing delay under load: below G.114's 150 ms one-way with room for the rest of the path
THROUGHPUT_SHARE = 0.90  # of the best goodput any tested buffer reached, at every RTT

@dataclass
class Cell:
    """The median over repetitions of one (source, point without rep)."""

    source: str
    tier: str
    upstream_rate: float
    variant: str  # flows / cc / loss, when the grid varies them
    rtt: float
    buffer: int
    goodput_bps: float
    queue_delay: float | None  # loaded minus idle latency (or minus the added RTT), seconds
    latency_loaded: float | None
    mos: float | None
    reps: int


@dataclass
class Recommendation:
    tier: str
    variant: str
    buffer: int | None
    reason: str


def write_report(store: Store, out: str | Path, title: str | None = None) -> list[Path]:
    """Write ``out`` (HTML), ``<stem>-<figure>.png`` and ``<stem>.csv``; returns the paths written."""
    out = Path(out)
    spec = store.spec()
    rows = store.rows()
    primary = spec["target"]["kind"]
    cells = summarize(rows)
    figures = _figures(cells, primary)
    recs = recommend([c for c in cells if c.source == primary])
    over_time = _over_time(store, rows, primary)
    if over_time is not None:
        figures.append(("over-time", over_time))
    written = []
    pngs = {}
    for name, fig in figures:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        pngs[name] = buf.getvalue()
        written.append(atomic_write(out.with_name(f"{out.stem}-{name}.png"), pngs[name]))
    written.append(atomic_write(out.with_suffix(".csv"), csv_text(rows)))
    page = _html(title or f"Campaign {spec['name']}", spec, store.progress(), store.environment(), rows,
                 pngs, recs, primary)
    written.append(atomic_write(out, page))
    return written


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r[k]) for k in CSV_COLUMNS})
    return buf.getvalue()


def summarize(rows: list[dict]) -> list[Cell]:
    done = [r for r in rows if r["source"] is not None]
    varying = {k for k in VARIANT_AXES if len({r[k] for r in rows}) > 1}
    groups: dict[tuple, list[dict]] = {}
    for r in done:
        key = (r["source"], r["upstream_rate"], variant_label(r, varying), r["rtt"], r["buffer"])
        groups.setdefault(key, []).append(r)
    cells = []
    for (source, rate, variant, rtt, buffer), rs in sorted(groups.items(), key=lambda kv: kv[0]):
        def med(values):
            values = [v for v in values if v is not None]
            return statistics.median(values) if values else None

        queue = []
        for r in rs:
            if r["latency_loaded_p50"] is None:
                continue
            base = r["latency_idle_p50"] if r["latency_idle_p50"] is not None else r["rtt"]
            queue.append(max(0.0, r["latency_loaded_p50"] - base))
        cells.append(Cell(source=source, tier=rs[0]["tier"], upstream_rate=rate, variant=variant, rtt=rtt,
                          buffer=buffer, goodput_bps=med([r["goodput_bps"] for r in rs]), queue_delay=med(queue),
                          latency_loaded=med([r["latency_loaded_p50"] for r in rs]),
                          mos=med([r["mos"] for r in rs]), reps=len(rs)))
    return cells


def recommend(cells: list[Cell], budget: float = LATENCY_BUDGET, share: float = THROUGHPUT_SHARE) -> list[Recommendation]:
    """Per tier (and variant): the smallest buffer within the delay budget that keeps ``share`` of the best goodput."""
    out = []
    tiers: dict[tuple, list[Cell]] = {}
    for c in cells:
        tiers.setdefault((c.upstream_rate, c.tier, c.variant), []).append(c)
    for (rate, tier, variant), cs in sorted(tiers.items()):
        rtts = sorted({c.rtt for c in cs})
        buffers = sorted({c.buffer for c in cs})
        best = {rtt: max(c.goodput_bps for c in cs if c.rtt == rtt) for rtt in rtts}
        by = {(c.rtt, c.buffer): c for c in cs}
        rows = []
        for b in buffers:
            if not all((rtt, b) in by for rtt in rtts):
                continue  # not measured at every RTT yet: cannot vouch for it
            worst_share = min(by[(rtt, b)].goodput_bps / best[rtt] if best[rtt] else 1.0 for rtt in rtts)
            delays = [by[(rtt, b)].queue_delay for rtt in rtts if by[(rtt, b)].queue_delay is not None]
            worst_delay = max(delays) if delays else None
            rows.append((b, worst_share, worst_delay))
        moses = {b: min((by[(rtt, b)].mos for rtt in rtts if (rtt, b) in by and by[(rtt, b)].mos is not None),
                        default=None) for b in buffers}
        if not rows:
            out.append(Recommendation(tier, variant, None, "no buffer size has results at every RTT yet"))
            continue
        within = [r for r in rows if r[2] is None or r[2] <= budget]
        good = [r for r in within if r[1] >= share]
        rtt_text = " and ".join(format_duration(r) for r in rtts)
        if good:
            b, s, d = good[0]
            reason = (f"smallest buffer keeping ≥{share:.0%} of the best throughput at RTT {rtt_text} "
                      f"(worst {s:.0%}) with queueing delay under load {_ms(d)} (budget {_ms(budget)})")
        elif within:
            b, s, d = max(within, key=lambda r: (r[1], -r[0]))
            reason = (f"no size within the {_ms(budget)} delay budget keeps {share:.0%} of the best throughput; "
                      f"this one keeps the most ({s:.0%} worst case) at {_ms(d)} queueing delay — "
                      f"more buffer buys throughput only with more delay")
        else:
            b, s, d = rows[0]
            reason = (f"every size exceeds the {_ms(budget)} delay budget under load; the smallest tested "
                      f"adds {_ms(d)} and keeps {s:.0%} of the best throughput")
        if moses.get(b) is not None:
            reason += f"; VoIP MOS {moses[b]:.2f} at worst"
        out.append(Recommendation(tier, variant, b, reason))
    return out


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.0f} ms"


# -- figures ------------------------------------------------------------------------


def _figures(cells: list[Cell], primary: str) -> list[tuple[str, object]]:
    # Figure, not pyplot: no global state, no GUI backend
    from matplotlib.figure import Figure

    main = [c for c in cells if c.source == primary]
    sim = [c for c in cells if c.source == "sim"] if primary != "sim" else []
    if not main:
        return []
    figs = [("throughput", _bars(Figure, main, sim, "goodput_bps", 1e-6, "TCP throughput (Mb/s)",
                                 "Upstream TCP throughput vs buffer size", rate_line=True))]
    if any(c.latency_loaded is not None for c in main):
        figs.append(("latency", _bars(Figure, main, sim, "latency_loaded", 1e3, "median RTT under load (ms)",
                                      "Latency under load vs buffer size", log=True, predicted_delay=True,
                                      fmt="%.0f")))
    if any(c.mos is not None for c in main):
        figs.append(("mos", _bars(Figure, main, sim, "mos", 1.0, "VoIP MOS", "VoIP MOS vs buffer size",
                                  ylim=(1, 5), fmt="%.2f")))
    if sim:
        figs.append(("measured-vs-simulated", _scatter(Figure, main, sim, primary)))
    return figs


def _panels(cells):
    keys = sorted({(c.variant, c.upstream_rate) for c in cells})
    return keys


def _bars(Figure, cells, sim, attr, scale, ylabel, title, log=False, rate_line=False, predicted_delay=False, ylim=None,
          fmt="%.3g"):
    panels = _panels(cells)
    ncols = min(len(panels), 2)
    nrows = (len(panels) + ncols - 1) // ncols
    fig = Figure(figsize=(6.2 * ncols, 3.9 * nrows), layout="constrained")
    fig.suptitle(title, fontsize=13, fontweight="bold")
    rtts = sorted({c.rtt for c in cells})
    colours = ["#1f4e9c", "#d9822b", "#2e8b57", "#9c1f4e", "#6a5acd", "#808000"]
    for n, (variant, rate) in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, n + 1)
        mine = [c for c in cells if c.variant == variant and c.upstream_rate == rate]
        buffers = sorted({c.buffer for c in mine})
        width = 0.8 / len(rtts)
        for i, rtt in enumerate(rtts):
            xs, ys, pxs, pys = [], [], [], []
            for j, b in enumerate(buffers):
                x = j - 0.4 + width * (i + 0.5)
                c = next((c for c in mine if c.rtt == rtt and c.buffer == b), None)
                v = getattr(c, attr) if c else None
                if v is not None:
                    xs.append(x)
                    ys.append(v * scale)
                s = next((s for s in sim if s.variant == variant and s.upstream_rate == rate and s.rtt == rtt
                          and s.buffer == b), None)
                sv = getattr(s, attr) if s else None
                if sv is not None:
                    pxs.append(x)
                    pys.append(sv * scale)
            bars = ax.bar(xs, ys, width * 0.92, color=colours[i % len(colours)], label=f"{format_duration(rtt)} RTT")
            if len(buffers) <= 8:
                ax.bar_label(bars, fmt=fmt, fontsize=7, padding=1)
            if pxs:
                ax.plot(pxs, pys, linestyle="none", marker="D", markersize=5, color="black",
                        label="simulated" if i == 0 else None)
        ax.set_xticks(range(len(buffers)), [format_bytes(b).replace(" ", "") for b in buffers])
        ax.set_xlabel("upstream buffer (TargetBuffer)")
        ax.set_ylabel(ylabel)
        name = f"{format_rate(rate)} upstream" + (f" — {variant}" if variant else "")
        ax.set_title(name, fontsize=11)
        if rate_line:
            ax.axhline(rate * scale, color="grey", linestyle="--", linewidth=1, label="configured rate")
            ax.set_ylim(0, rate * scale * 1.3)  # headroom for the legend above the bars
        if predicted_delay:
            # White et al.: the latency a full buffer adds is its size divided by the rate.
            pred = [(b * 8 / rate + min(rtts)) * scale for b in buffers]
            ax.plot(range(len(buffers)), pred, color="grey", linestyle=":", marker="_",
                    label="buffer ÷ rate + RTT")
        if log:
            from matplotlib.ticker import FuncFormatter

            ax.set_yscale("log")
            plain = FuncFormatter(lambda v, _: f"{v:g}")  # 200, not 2×10²: read like the paper's axes
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(plain)
            ax.tick_params(axis="y", which="minor", labelsize=7)
        if ylim:
            ax.set_ylim(*ylim)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", ncol=2)
    return fig


def _over_time(store: Store, rows: list[dict], primary: str):
    """Delay a packet meets over time, smallest vs largest buffer per tier (first repetition, smallest RTT).

    The simulator records the queue in bytes (shown as its delay at the tier's rate); a probe records
    each probe's RTT. Shows what the bars summarise: a full buffer standing, or a sawtooth draining it.
    """
    from matplotlib.figure import Figure

    runs = [r for r in rows if r["source"] == primary and r["rep"] == 0]
    if not runs:
        return None
    rtt0 = min(r["rtt"] for r in runs)
    rates = sorted({r["upstream_rate"] for r in runs})
    ncols = min(len(rates), 2)
    nrows = (len(rates) + ncols - 1) // ncols
    fig = Figure(figsize=(6.2 * ncols, 3.4 * nrows), layout="constrained")
    fig.suptitle(f"Delay over time, smallest vs largest buffer ({format_duration(rtt0)} RTT)",
                 fontsize=13, fontweight="bold")
    drawn = False
    for n, rate in enumerate(rates):
        ax = fig.add_subplot(nrows, ncols, n + 1)
        mine = [r for r in runs if r["upstream_rate"] == rate and r["rtt"] == rtt0
                and r["flows"] == runs[0]["flows"] and r["congestion_control"] == runs[0]["congestion_control"]
                and r["loss"] == runs[0]["loss"]]
        picks = sorted({r["buffer"] for r in mine})
        for b, colour in zip(sorted({picks[0], picks[-1]}), ("#1f4e9c", "#d9822b")):
            row = next(r for r in mine if r["buffer"] == b)
            series = store.result(row["run_id"]).series
            if "queue_bytes" in series:
                pts = [(t, v * 8 / rate * 1e3) for t, v in series["queue_bytes"]]
                label = f"{format_bytes(b)}: queueing delay"
            elif "rtt" in series:
                pts = [(t, v * 1e3) for t, v in series["rtt"]]
                label = f"{format_bytes(b)}: probe RTT"
            else:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour, linewidth=0.9, label=label)
            drawn = True
        ax.set_title(f"{format_rate(rate)} upstream", fontsize=11)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("ms")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    return fig if drawn else None


def _scatter(Figure, main, sim, primary):
    fig = Figure(figsize=(11, 4.4), layout="constrained")
    fig.suptitle(f"Measured ({primary}) vs simulated, per point", fontsize=13, fontweight="bold")
    by = {(c.variant, c.upstream_rate, c.rtt, c.buffer): c for c in sim}
    pairs = [(c, by[k]) for c in main if (k := (c.variant, c.upstream_rate, c.rtt, c.buffer)) in by]
    for n, (attr, scale, label) in enumerate((("goodput_bps", 1e-6, "throughput (Mb/s)"),
                                              ("latency_loaded", 1e3, "median RTT under load (ms)"))):
        ax = fig.add_subplot(1, 2, n + 1)
        xy = [(getattr(s, attr) * scale, getattr(m, attr) * scale) for m, s in pairs
              if getattr(s, attr) is not None and getattr(m, attr) is not None]
        if xy:
            ax.scatter([p[0] for p in xy], [p[1] for p in xy], s=18, color="#1f4e9c")
            hi = max(max(p) for p in xy) * 1.1
            ax.plot([0, hi], [0, hi], color="grey", linestyle="--", linewidth=1, label="measured = simulated")
            ax.legend(fontsize=8)
        ax.set_xlabel(f"simulated {label}")
        ax.set_ylabel(f"measured {label}")
        ax.grid(alpha=0.3)
    return fig


# -- HTML ---------------------------------------------------------------------------

_CAPTIONS = {
    "throughput": "TCP goodput (warm-up excluded) per buffer size; one panel per upstream rate, one bar per added "
                  "RTT; the dashed line is the configured rate (cf. White et al. Figs. 4–5).",
    "latency": "Median round-trip time of probe packets while the upstream is loaded, log scale; the dotted line "
               "is the delay a full buffer adds, buffer ÷ rate, plus the smallest RTT (cf. Figs. 7–8).",
    "mos": "VoIP E-model MOS of a G.711 stream beside the bulk TCP traffic (cf. Fig. 9).",
    "over-time": "What the bars summarise, for the first repetition at the smallest RTT: with a small buffer "
                 "TCP's sawtooth keeps draining it; with a large one a standing queue adds its full delay.",
    "measured-vs-simulated": "Each dot is one grid point: the simulator's prediction against the measurement; "
                             "on the dashed line they agree.",
}


def _html(title, spec, progress, env, rows, pngs, recs, primary) -> str:
    e = html.escape
    parts = [f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }}
td, th {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }}
th {{ background: #eef; }} figure {{ margin: 2em 0; }} img {{ max-width: 100%; }}
figcaption {{ color: #555; font-size: 0.9em; }} .failed {{ color: #a00; }}
</style></head><body>
<h1>{e(title)}</h1>
<p>{e(spec.get('description') or '')}</p>
<p id="summary">Target: <b>{e(primary)}</b>. Points: {progress.done} done, {progress.failed} failed,
{progress.pending + progress.running} not run, of {progress.total}.
Each figure is the median of {spec.get('repetitions', 1)} repetition(s).</p>
<h2>Recommended buffer per tier</h2>
<table id="recommendations"><tr><th>tier</th>{'<th>traffic</th>' if any(r.variant for r in recs) else ''}
<th>recommended TargetBuffer</th><th>why</th></tr>"""]
    for r in recs:
        buf = format_bytes(r.buffer) if r.buffer is not None else "—"
        variant = f"<td>{e(r.variant)}</td>" if any(x.variant for x in recs) else ""
        parts.append(f"<tr><td>{e(r.tier)}</td>{variant}<td><b>{e(buf)}</b></td><td>{e(r.reason)}</td></tr>")
    parts.append("</table>")
    for name, data in pngs.items():
        b64 = base64.b64encode(data).decode()
        parts.append(f'<figure id="fig-{name}"><img class="plot" alt="{e(name)} plot" '
                     f'src="data:image/png;base64,{b64}"><figcaption>{e(_CAPTIONS.get(name, ""))}</figcaption></figure>')
    failed = [r for r in rows if r["state"] == "failed"]
    if failed:
        parts.append("<h2>Failed points</h2><table id=\"failures\"><tr><th>point</th><th>reason</th></tr>")
        for r in failed:
            parts.append(f"<tr class=\"failed\"><td>{e(r['key'])}</td><td>{e(r['error'] or '')}</td></tr>")
        parts.append("</table>")
    parts.append("<h2>Environment</h2><table id=\"environment\">")
    for k, v in env.items():
        parts.append(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>")
    parts.append("</table>")
    parts.append("<details><summary>Campaign specification</summary><pre>"
                 f"{e(json.dumps(spec, indent=2, default=str))}</pre></details>")
    # Lets a headless browser (and a curious reader's console) confirm every plot decoded.
    parts.append("<script>window.addEventListener('load', function () {"
                 "var imgs = document.querySelectorAll('img.plot'); var ok = 0;"
                 "imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });"
                 "document.body.setAttribute('data-plots-loaded', ok + '/' + imgs.length); });</script>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
