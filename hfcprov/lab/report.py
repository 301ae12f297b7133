"""The campaign report: one self-contained HTML file, its PNGs and a CSV.

Figures follow White et al. (2011): per upstream rate, a line per added RTT over
buffer size (log axis), for TCP throughput (Figs. 4-5), latency under load
(Figs. 7-8, log axis with plain ticks) and VoIP MOS (Fig. 9). Repetitions are
summarised by their median with min-max error bars. Where a campaign measured
(emu, modem) and simulated, the simulator's prediction is drawn dashed and a
scatter compares the two; every panel and row names the model behind it.

The recommended buffer per tier and RTT is the sizing policy of docs/sizing.md
(``hfcprov.queue.sizing.choose``) applied to the campaign's results, in bytes
and in ms of queue at the tier's rate, beside ``buffer advise``'s answer (``size_buffer``).
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
from hfcprov.queue.inputs import G114_ONE_WAY_BUDGET, SizingInputs, aqm_latency_target
from hfcprov.queue.sizing import THROUGHPUT_SHARE, choose, queue_budget, queue_delay, size_buffer
from hfcprov.units import format_bytes, format_duration, format_rate


@dataclass
class Cell:
    """One (source, point without rep): the median over repetitions, and their spread (min, max)."""

    source: str
    tier: str
    upstream_rate: float
    variant: str  # flows / cc / loss / mac, when the grid varies them
    rtt: float
    buffer: int
    goodput_bps: float
    queue_delay: float | None  # loaded minus idle latency (or minus the added RTT), seconds
    latency_loaded: float | None
    mos: float | None
    reps: int
    model: str = ""  # what produced the figures (run.model)
    flows: int = 1
    congestion_control: str = "reno"
    # the upstream model the sizing rule uses for these figures: the point's mac on the simulator, the
    # emulated modem's token bucket (htb), a real modem's request-grant MAC
    mac: str = "docsis"
    aqm: str = "none"  # the upstream queue (issue 20): the advice follows the AQM target when one is on
    goodput_range: tuple | None = None  # (min, max) over repetitions
    latency_range: tuple | None = None


@dataclass
class Recommendation:
    tier: str
    variant: str
    rtt: float
    upstream_rate: float
    buffer: int | None
    reason: str
    model: str = ""  # the model behind the figures it was chosen from
    advised: int | None = None  # what `hfcprov buffer advise` says for the same tier (the same policy's rule)
    paper: str | None = None  # how it relates to White et al., when they state a need for this tier

    @property
    def queue_ms(self) -> float | None:
        """The delay a full buffer of this size adds at the tier's rate, ms."""
        return None if self.buffer is None else self.buffer * 8 / self.upstream_rate * 1e3


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
        queue = [queue_delay(r["latency_loaded_p50"], r["latency_idle_p50"], r["rtt"]) for r in rs]
        models = sorted({r.get("model") or source for r in rs})
        cells.append(Cell(source=source, tier=rs[0]["tier"], upstream_rate=rate, variant=variant, rtt=rtt,
                          buffer=buffer, goodput_bps=_median([r["goodput_bps"] for r in rs]),
                          queue_delay=_median(queue), latency_loaded=_median([r["latency_loaded_p50"] for r in rs]),
                          mos=_median([r["mos"] for r in rs]), reps=len(rs), model=", ".join(models),
                          flows=rs[0]["flows"], congestion_control=rs[0]["congestion_control"],
                          mac=_upstream_model(source, rs[0].get("mac")),
                          aqm=rs[0].get("aqm") or "none", goodput_range=_spread([r["goodput_bps"] for r in rs]),
                          latency_range=_spread([r["latency_loaded_p50"] for r in rs])))
    return cells


def _upstream_model(source: str, mac: str | None) -> str:
    if source == "sim":
        return mac or "tokenbucket"
    return "tokenbucket" if source == "emu" else "docsis"


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _spread(values):
    values = [v for v in values if v is not None]
    return (min(values), max(values)) if values else None


def recommend(cells: list[Cell], one_way_budget: float = G114_ONE_WAY_BUDGET,
              share: float = THROUGHPUT_SHARE) -> list[Recommendation]:
    """Per tier, traffic variant and RTT: the sizing policy (``hfcprov.queue.sizing.choose``, docs/sizing.md)
    applied to the campaign's own results, beside what ``buffer advise`` says for the same inputs
    (``size_buffer``: the points' rate, RTT, flows, TCP, upstream model and AQM)."""
    out = []
    groups: dict[tuple, list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.upstream_rate, c.tier, c.variant, c.rtt), []).append(c)
    for (rate, tier, variant, rtt), cs in sorted(groups.items()):
        budget = queue_budget(rtt, one_way_budget)
        rows = [(c.buffer, c.goodput_bps, c.queue_delay if c.queue_delay is not None else c.buffer * 8 / rate)
                for c in cs]
        pick = choose(rows, budget, share)
        chosen = next((c for c in cs if c.buffer == pick.buffer), None)
        reason = pick.reason
        if chosen is not None and chosen.mos is not None:
            reason += f"; VoIP MOS {chosen.mos:.2f}"
        first = cs[0]  # docsis-pie and lld (its classic queue): DOCSIS-PIE at its 10 ms default
        advice = size_buffer(SizingInputs(rate, rtt, first.flows, first.congestion_control, first.mac,
                                          aqm_latency_target(first.aqm), one_way_budget))
        out.append(Recommendation(tier, variant, rtt, rate, pick.buffer, reason,
                                  model=", ".join(sorted({c.model for c in cs if c.model})), advised=advice.target,
                                  paper=advice.paper if first.flows == 1 else None))
    return out


# -- figures ------------------------------------------------------------------------


def _figures(cells: list[Cell], primary: str) -> list[tuple[str, object]]:
    # Figure, not pyplot: no global state, no GUI backend
    from matplotlib.figure import Figure

    main = [c for c in cells if c.source == primary]
    sim = [c for c in cells if c.source == "sim"] if primary != "sim" else []
    if not main:
        return []
    figs = [("throughput", _lines(Figure, main, sim, "goodput_bps", 1e-6, "TCP goodput (Mb/s)",
                                  "Upstream TCP goodput vs buffer size", rate_line=True))]
    if any(c.latency_loaded is not None for c in main):
        figs.append(("latency", _lines(Figure, main, sim, "latency_loaded", 1e3, "median RTT under load (ms)",
                                       "Latency under load vs buffer size", log=True, predicted_delay=True)))
    if any(c.mos is not None for c in main):
        figs.append(("mos", _lines(Figure, main, sim, "mos", 1.0, "VoIP MOS", "VoIP MOS vs buffer size",
                                   ylim=(1, 5))))
    if sim:
        figs.append(("measured-vs-simulated", _scatter(Figure, main, sim, primary)))
    return figs


def _panels(cells):
    return sorted({(c.variant, c.upstream_rate) for c in cells})


_COLOURS = ["#1f4e9c", "#d9822b", "#2e8b57", "#9c1f4e", "#6a5acd", "#808000"]
_RANGES = {"goodput_bps": "goodput_range", "latency_loaded": "latency_range"}


def _lines(Figure, cells, sim, attr, scale, ylabel, title, log=False, rate_line=False, predicted_delay=False,
           ylim=None):
    """One panel per (traffic variant, rate): a line per RTT over buffer size (log2 axis), the median of
    the repetitions with error bars from their min to max; the simulator's prediction dashed."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    panels = _panels(cells)
    ncols = min(len(panels), 2)
    nrows = (len(panels) + ncols - 1) // ncols
    fig = Figure(figsize=(6.2 * ncols, 3.9 * nrows), layout="constrained")
    fig.suptitle(title, fontsize=13, fontweight="bold")
    rtts = sorted({c.rtt for c in cells})
    for n, (variant, rate) in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, n + 1)
        mine = [c for c in cells if c.variant == variant and c.upstream_rate == rate]
        buffers = sorted({c.buffer for c in mine})
        models = sorted({c.model for c in mine if c.model})
        for i, rtt in enumerate(rtts):
            colour = _COLOURS[i % len(_COLOURS)]
            for source_cells, style, label in ((mine, "-", f"{format_duration(rtt)} RTT"),
                                               ([s for s in sim if s.variant == variant and s.upstream_rate == rate],
                                                "--", f"{format_duration(rtt)} RTT, simulated")):
                pts = sorted((c.buffer, c) for c in source_cells if c.rtt == rtt and getattr(c, attr) is not None)
                if not pts:
                    continue
                xs = [b for b, _ in pts]
                ys = [getattr(c, attr) * scale for _, c in pts]
                spread = [getattr(c, _RANGES[attr]) if attr in _RANGES else None for _, c in pts]
                err = None
                if any(r is not None and r[1] > r[0] for r in spread):
                    err = [[y - (r[0] * scale if r else y) for y, r in zip(ys, spread)],
                           [(r[1] * scale if r else y) - y for y, r in zip(ys, spread)]]
                ax.errorbar(xs, ys, yerr=err, color=colour, linestyle=style, marker="o" if style == "-" else "D",
                            markersize=4, capsize=3, linewidth=1.4, label=label)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(buffers))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v).replace(" ", "")))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("upstream buffer (TargetBuffer)")
        ax.set_ylabel(ylabel)
        name = f"{format_rate(rate)} upstream" + (f" — {variant}" if variant else "")
        ax.set_title(name + (f"\n{'; '.join(models)}" if models else ""), fontsize=10)
        if rate_line:
            ax.axhline(rate * scale, color="grey", linestyle=":", linewidth=1, label="configured rate")
            ax.set_ylim(0, rate * scale * 1.15)
        if predicted_delay:
            # White et al.: the latency a full buffer adds is its size divided by the rate.
            ax.plot(buffers, [(b * 8 / rate + min(rtts)) * scale for b in buffers], color="grey", linestyle=":",
                    label="buffer ÷ rate + RTT")
        if log:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 20, 50, 100, 200: not 2×10¹
            ax.yaxis.set_minor_formatter(NullFormatter())
        if ylim:
            ax.set_ylim(*ylim)
        ax.grid(alpha=0.3, which="major")
        ax.legend(fontsize=7, loc="best", ncol=2)
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
    "throughput": "TCP goodput (warm-up excluded) per buffer size; one panel per upstream rate, one line per added "
                  "RTT (dashed: the simulator's prediction), error bars over repetitions; the dotted line is the "
                  "configured rate (cf. White et al. Figs. 4–5). Each panel names the model behind its figures.",
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
Each point is the median of {spec.get('repetitions', 1)} repetition(s); error bars span their minimum to
maximum. Models behind the figures: {e(", ".join(sorted({r.get("model") or r["source"] for r in rows if r["source"]})))}.</p>
<h2>Recommended buffer per tier</h2>
<p>The sizing policy of docs/sizing.md applied to this campaign's results: the smallest buffer keeping
{THROUGHPUT_SHARE:.0%} of the best goodput whose queueing delay stays within the queue budget (ITU-T G.114's
150 ms one way less the path's own rtt/2). Beside it, what <code>hfcprov buffer advise</code> says for the
same tier, and White et al.'s finding where they state one.</p>
<table id="recommendations"><tr><th>tier</th>{'<th>traffic</th>' if any(r.variant for r in recs) else ''}
<th>RTT</th><th>recommended TargetBuffer</th><th>queue at the tier's rate</th><th>model</th>
<th><code>buffer advise</code></th><th>why</th></tr>"""]
    for r in recs:
        buf = f"{r.buffer} bytes ({format_bytes(r.buffer)})" if r.buffer is not None else "—"
        queue = f"{r.queue_ms:.0f} ms" if r.queue_ms is not None else "—"
        advised = f"{r.advised} bytes ({format_bytes(r.advised)})" if r.advised is not None else "—"
        why = r.reason + (f". {r.paper}" if r.paper else "")
        variant = f"<td>{e(r.variant)}</td>" if any(x.variant for x in recs) else ""
        parts.append(f"<tr><td>{e(r.tier)}</td>{variant}<td>{e(format_duration(r.rtt))}</td><td><b>{e(buf)}</b></td>"
                     f"<td>{e(queue)}</td><td>{e(r.model)}</td><td>{e(advised)}</td><td>{e(why)}</td></tr>")
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
