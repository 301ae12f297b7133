"""The campaign report: one self-contained HTML file, its PNGs and a CSV; or several campaigns overlaid.

Figures follow White et al. (2011) and flent (``hfcprov.lab.plots``): per upstream rate, TCP goodput
(Figs. 4-5), latency under load as percentiles (p50/p90/p99, Figs. 7-8) and as the distribution of every
probe's RTT (CDF), and VoIP MOS (Fig. 9). What is compared shares one axis: drop-tail, DOCSIS-PIE and
LLD on the same axes per rate; in an overlay (``write_report`` of several stores), each campaign. Repetitions
are summarised by their median with min-max error bars. Where a campaign measured (emu, modem) and
simulated, the simulator's prediction is drawn hollow and a scatter compares the two; every panel and row
names the model behind it. Captions say what the figure draws, and only that.

The recommended buffer per tier and RTT is the sizing policy of docs/sizing.md
(``hfcprov.queue.sizing.choose``) applied to the campaign's results, with its confidence: the share of
the best goodput it keeps, the next size down and its share, the spread across seeds, and whether the
choice is within that noise; beside it ``buffer advise``'s answer (``size_buffer``). A size the reason
rules out (every size over the queue budget) is never shown as the recommendation.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from hfcprov.fileio import atomic_write
from hfcprov.lab.schema import AXES, CSV_COLUMNS, VARIANT_AXES, variant_label
from hfcprov.lab.store import Store
from hfcprov.queue.inputs import (
    DEFAULT_CONGESTION_CONTROL,
    DEFAULT_PROFILE,
    DEFAULT_UPSTREAM_MODEL,
    G114_ONE_WAY_BUDGET,
    SizingError,
    SizingInputs,
    aqm_latency_target,
)
from hfcprov.queue.sizing import THROUGHPUT_SHARE, choose, queue_budget, queue_delay, size_buffer
from hfcprov.units import format_bytes, format_duration, format_rate

COMPARED_AXIS = "aqm"  # drawn as series on shared axes (drop-tail vs DOCSIS-PIE vs LLD), not as panels


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
    latency_loaded: float | None  # p50 of the probes' RTT under load
    mos: float | None
    reps: int
    model: str = ""  # what produced the figures (run.model)
    flows: int = 1
    congestion_control: str = DEFAULT_CONGESTION_CONTROL
    # the upstream model the sizing rule uses for these figures: the point's mac on the simulator, the
    # emulated modem's token bucket (htb), a real modem's request-grant MAC
    mac: str = DEFAULT_UPSTREAM_MODEL
    aqm: str = "file"  # the upstream queue (issue 20): the advice follows the AQM target when one is on
    goodput_range: tuple | None = None  # (min, max) over repetitions
    latency_range: tuple | None = None
    latency_p90: float | None = None
    latency_p99: float | None = None
    goodputs: tuple = ()  # each repetition's goodput
    compare: str = ""  # the queue's label when the grid compares queues (drop-tail, docsis-pie, lld)
    campaign: str = ""  # the campaign's label when several are overlaid
    run_ids: tuple = ()
    profile: str = DEFAULT_PROFILE  # the points' modem profile (issue 28)
    burst: int | None = None  # the upstream flow's Max Traffic Burst and Peak Rate as provisioned (None: the
    peak: float | None = None  # profile's tier defaults); a burst that caps the rate is warned about


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
    campaign: str = ""
    status: str = "fits"  # fits | best within budget | none within budget (then nothing is recommended)
    share: float | None = None  # the chosen size's median goodput over the best median goodput
    delay: float | None = None  # its queueing delay under load, s
    below: int | None = None  # the next size down in the grid
    below_share: float | None = None
    spread: tuple | None = None  # (min, max) share of the best goodput across the chosen size's repetitions
    reps: int = 1
    noise: str | None = None  # why the choice is within the seeds' noise (None: it is not)
    warnings: tuple = ()  # what no buffer fixes: a Max Traffic Burst that caps the rate (issue 28)
    advised_by: str = ""  # the rule and the profile behind ``advised``

    @property
    def queue_ms(self) -> float | None:
        """The delay a full buffer of this size adds at the tier's rate, ms."""
        return None if self.buffer is None else self.buffer * 8 / self.upstream_rate * 1e3

    @property
    def recommended(self) -> int | None:
        """The size the table recommends: none when the reason rules every size out."""
        return None if self.status == "none within budget" else self.buffer


@dataclass
class Campaign:
    """One store in a report: its label, spec and rows."""

    label: str
    spec: dict
    rows: list[dict]
    store: Store
    primary: str = field(init=False)

    def __post_init__(self):
        self.primary = self.spec["target"]["kind"]


def write_report(stores, out: str | Path, title: str | None = None) -> list[Path]:
    """Write ``out`` (HTML), ``<stem>-<figure>.png`` and ``<stem>.csv``; returns the paths written.

    ``stores``: one campaign ``Store``, or several to overlay (labelled by their campaign names, or by
    their files when the names are the same; their spec differences are listed)."""
    stores = [stores] if isinstance(stores, Store) else list(stores)
    out = Path(out)
    camps = [Campaign(label, st.spec(), st.rows(), st) for label, st in zip(_labels(stores), stores)]
    overlay = len(camps) > 1
    cells, sim = [], []
    for camp in camps:
        mine = summarize(camp.rows, campaign=camp.label if overlay else "")
        _provisioned(camp.spec, camp.rows, mine)
        cells += [c for c in mine if c.source == camp.primary]
        if not overlay and camp.primary != "sim":
            sim += [c for c in mine if c.source == "sim"]
    recs = recommend(cells)
    by_run = {(camp.label if overlay else ""): camp.store for camp in camps}

    def samples(cell):
        return [v for run in cell.run_ids for v in by_run[cell.campaign].series_values(run, "rtt_loaded")]

    from hfcprov.lab.plots import figures

    drawn = figures(cells, sim, camps[0].primary, samples)
    if not overlay:
        over = _over_time(camps[0].store, camps[0].rows, camps[0].primary)
        if over is not None:
            drawn.append(over)
    written, pngs = [], {}
    for d in drawn:
        buf = io.BytesIO()
        d.figure.savefig(buf, format="png", dpi=110)
        pngs[d.name] = buf.getvalue()
        written.append(atomic_write(out.with_name(f"{out.stem}-{d.name}.png"), pngs[d.name]))
    written.append(atomic_write(out.with_suffix(".csv"), csv_text(
        [dict(r, campaign=camp.label) for camp in camps for r in camp.rows], campaign=overlay)))
    page = _html(title or (f"Campaign {camps[0].spec['name']}" if not overlay else
                           "Campaigns " + " vs ".join(c.label for c in camps)), camps, recs, drawn, pngs)
    written.append(atomic_write(out, page))
    return written


def _labels(stores) -> list[str]:
    """Each campaign's name from its spec; the file's name when two campaigns share one."""
    names = [st.spec().get("name") or st.path.stem for st in stores]
    if len(set(names)) == len(names):
        return names
    stems = [st.path.stem for st in stores]
    return stems if len(set(stems)) == len(stems) else [str(st.path) for st in stores]


def spec_differences(camps) -> list[tuple[str, list]]:
    """(dotted key, one value per campaign) for every spec key whose value is not the same in all."""
    flat = [_flatten(c.spec) for c in camps]
    keys = sorted({k for f in flat for k in f} - {"source"})
    return [(k, [f.get(k) for f in flat]) for k in keys if len({json.dumps(f.get(k), default=str) for f in flat}) > 1]


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def csv_text(rows: list[dict], campaign: bool = False) -> str:
    columns = (["campaign"] if campaign else []) + CSV_COLUMNS
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r[k]) for k in columns})
    return buf.getvalue()


def summarize(rows: list[dict], campaign: str = "") -> list[Cell]:
    done = [r for r in rows if r["source"] is not None]
    varying = {k for k in VARIANT_AXES if len({r[k] for r in rows}) > 1}
    compared = COMPARED_AXIS in varying
    groups: dict[tuple, list[dict]] = {}
    for r in done:
        key = (r["source"], r["upstream_rate"], variant_label(r, varying - {COMPARED_AXIS}),
               AXES[COMPARED_AXIS].variant(r[COMPARED_AXIS]) if compared else "", r["rtt"], r["buffer"])
        groups.setdefault(key, []).append(r)
    cells = []
    for (source, rate, variant, compare, rtt, buffer), rs in sorted(groups.items(), key=lambda kv: kv[0]):
        queue = [queue_delay(r["latency_loaded_p50"], r["latency_idle_p50"], r["rtt"]) for r in rs]
        models = sorted({r.get("model") or source for r in rs})
        cells.append(Cell(source=source, tier=rs[0]["tier"], upstream_rate=rate, variant=variant, rtt=rtt,
                          buffer=buffer, goodput_bps=_median([r["goodput_bps"] for r in rs]),
                          queue_delay=_median(queue), latency_loaded=_median([r["latency_loaded_p50"] for r in rs]),
                          mos=_median([r["mos"] for r in rs]), reps=len(rs), model=", ".join(models),
                          flows=rs[0]["flows"], congestion_control=rs[0]["congestion_control"],
                          mac=_upstream_model(source, rs[0].get("mac")),
                          aqm=rs[0].get("aqm") or "none", goodput_range=_spread([r["goodput_bps"] for r in rs]),
                          latency_range=_spread([r["latency_loaded_p50"] for r in rs]),
                          latency_p90=_median([r.get("latency_loaded_p90") for r in rs]),
                          latency_p99=_median([r.get("latency_loaded_p99") for r in rs]),
                          goodputs=tuple(r["goodput_bps"] for r in rs), compare=compare, campaign=campaign,
                          run_ids=tuple(r["run_id"] for r in rs), profile=rs[0].get("profile") or DEFAULT_PROFILE))
    return cells


def _provisioned(spec: dict, rows: list[dict], cells: list[Cell]) -> None:
    """Each cell's upstream Max Traffic Burst and Peak Rate as its points provision them: the tier template's
    (rendered with a point's values); a grid without a template has the profile's tier defaults (None)."""
    template = spec.get("template")
    if not template:
        return
    from hfcprov.lab.schema import point_from_row
    from hfcprov.model import service_flows
    from hfcprov.tiers import render_tree

    first, seen = {}, {}
    for r in rows:
        first.setdefault((r["upstream_rate"], r["rtt"], r["buffer"]), r)
    for c in cells:
        key = (c.upstream_rate, c.rtt, c.buffer)
        if key not in seen and key in first:
            try:
                ups = [f for f in service_flows(render_tree(template, point_from_row(first[key]).template_vars()))
                       if f.direction == "upstream"]
                seen[key] = (ups[0].burst, ups[0].peak_rate) if ups else (None, None)
            except Exception:  # noqa: BLE001 (a template that no longer renders: no warning, the report stands)
                seen[key] = (None, None)
        c.burst, c.peak = seen.get(key, (None, None))


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
    """Per campaign, tier, traffic variant, queue and RTT: the sizing policy (``hfcprov.queue.sizing.choose``,
    docs/sizing.md) applied to the campaign's own results, with its confidence, beside what ``buffer advise``
    says for the same inputs (``size_buffer``: the points' rate, RTT, flows, TCP, upstream model and AQM)."""
    out = []
    groups: dict[tuple, list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.campaign, c.upstream_rate, c.tier, c.variant, c.compare, c.rtt), []).append(c)
    given = list(dict.fromkeys(c.campaign for c in cells))  # an overlay's campaigns in the order given
    for (campaign, rate, tier, variant, compare, rtt), cs in sorted(groups.items(),
                                                                    key=lambda kv: _rank(kv[0], given)):
        budget = queue_budget(rtt, one_way_budget)
        rows = [(c.buffer, c.goodput_bps, c.queue_delay if c.queue_delay is not None else c.buffer * 8 / rate)
                for c in cs]
        pick = choose(rows, budget, share)
        chosen = next((c for c in cs if c.buffer == pick.buffer), None)
        reason = pick.reason
        if chosen is not None and chosen.mos is not None:
            reason += f"; VoIP MOS {chosen.mos:.2f}"
        first = cs[0]  # docsis-pie and lld (its classic queue): DOCSIS-PIE at its 10 ms default
        inputs = SizingInputs(rate, rtt, first.flows, first.congestion_control, first.mac,
                              aqm_latency_target(first.aqm), one_way_budget, first.profile, first.burst, first.peak)
        models = ", ".join(sorted({c.model for c in cs if c.model}))
        try:
            advice = size_buffer(inputs)
        except SizingError as err:  # the upstream cannot carry the tier: the report says so, and sizes nothing
            rec = Recommendation(tier, " · ".join(p for p in (variant, compare) if p), rtt, rate, pick.buffer,
                                 reason, model=models, campaign=campaign, warnings=(str(err),))
        else:
            rec = Recommendation(tier, " · ".join(p for p in (variant, compare) if p), rtt, rate, pick.buffer,
                                 reason, model=models, advised=advice.target,
                                 paper=advice.paper if first.flows == 1 else None, campaign=campaign,
                                 warnings=tuple(advice.warnings), advised_by=advice.model)
        _confidence(rec, pick, chosen, cs, budget, share)
        out.append(rec)
    return out


def _rank(key: tuple, campaigns: list[str]) -> tuple:
    """Recommendations in the grid's order: drop-tail, DOCSIS-PIE, LLD as the aqm axis declares them."""
    from hfcprov.lab.schema import AQMS

    campaign, rate, tier, variant, compare, rtt = key
    labels = [AXES[COMPARED_AXIS].variant(a) for a in AQMS]
    # an overlay's campaigns side by side, tier by tier
    return (rate, tier, variant, labels.index(compare) if compare in labels else -1, compare, rtt,
            campaigns.index(campaign))


def _confidence(rec: Recommendation, pick, chosen: Cell | None, cells: list[Cell], budget: float,
                share: float) -> None:
    """What the choice rests on: the share it keeps, the next size down's share, the seeds' spread, and
    whether another seed could have chosen another size (the threshold inside the spread)."""
    rec.share, rec.delay = pick.share, pick.delay
    if chosen is None:
        return
    if not pick.fills:
        rec.status = "best within budget" if pick.delay is not None and pick.delay <= budget + 1e-9 \
            else "none within budget"
    best = max(c.goodput_bps for c in cells) or 1.0
    threshold = share * best
    below = max((c for c in cells if c.buffer < chosen.buffer), key=lambda c: c.buffer, default=None)
    if below is not None:
        rec.below, rec.below_share = below.buffer, below.goodput_bps / best
    rec.reps = chosen.reps
    if chosen.goodputs:
        rec.spread = (min(chosen.goodputs) / best, max(chosen.goodputs) / best)
    if rec.status != "fits" or chosen.reps < 2:
        return
    notes = []
    if below is not None and below.goodputs and max(below.goodputs) >= threshold:
        notes.append(f"one seed at {format_bytes(below.buffer)} kept {max(below.goodputs) / best:.0%}")
    if min(chosen.goodputs) < threshold:
        notes.append(f"one seed at {format_bytes(chosen.buffer)} kept only {min(chosen.goodputs) / best:.0%}")
    rec.noise = "; ".join(notes) or None


# -- delay over time ------------------------------------------------------------------------------------------


def _over_time(store: Store, rows: list[dict], primary: str):
    """Delay a packet meets over time, smallest vs largest buffer per tier (first repetition, smallest RTT).

    The simulator records the queue in bytes (shown as its delay at the tier's rate); a probe records
    each probe's RTT. Shows what the bars summarise: a full buffer standing, or a sawtooth draining it.
    """
    from matplotlib.figure import Figure

    from hfcprov.lab.plots import Drawn

    runs = [r for r in rows if r["source"] == primary and r["rep"] == 0]
    if not runs or len({r["buffer"] for r in runs}) < 2:
        return None  # one buffer: nothing to set against each other
    rtt0 = min(r["rtt"] for r in runs)
    rates = sorted({r["upstream_rate"] for r in runs})
    ncols = min(len(rates), 2)
    nrows = (len(rates) + ncols - 1) // ncols
    fig = Figure(figsize=(6.4 * ncols, 3.4 * nrows), layout="constrained")
    fig.suptitle(f"Delay over time, smallest vs largest buffer ({format_duration(rtt0)} RTT)",
                 fontsize=13, fontweight="bold")
    drawn = Drawn("over-time", fig)
    kinds: set[str] = set()
    for n, rate in enumerate(rates):
        ax = fig.add_subplot(nrows, ncols, n + 1)
        mine = [r for r in runs if r["upstream_rate"] == rate and r["rtt"] == rtt0
                and all(r[k] == runs[0][k] for k in VARIANT_AXES)]
        picks = sorted({r["buffer"] for r in mine})
        count = 0
        for b, colour in zip(sorted({picks[0], picks[-1]}) if picks else [], ("#1f4e9c", "#d9822b")):
            row = next(r for r in mine if r["buffer"] == b)
            series = store.result(row["run_id"]).series
            if "queue_bytes" in series:
                pts = [(t, v * 8 / rate * 1e3) for t, v in series["queue_bytes"]]
                label = f"{format_bytes(b)}: queueing delay"
                kinds.add("the queueing delay (the queue's bytes at the tier's rate)")
            elif "rtt" in series:
                pts = [(t, v * 1e3) for t, v in series["rtt"]]
                label = f"{format_bytes(b)}: probe RTT"
                kinds.add("each probe's RTT")
            else:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour, linewidth=0.9, label=label)
            count += len(pts)
        ax.set_title(f"{format_rate(rate)} upstream", fontsize=11)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("ms")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
        drawn.panels.append((ax.get_title(), count))
    if not any(n for _, n in drawn.panels):
        return None
    drawn.caption = (f"What the medians summarise, for the first repetition at the smallest RTT: "
                     f"{' and '.join(sorted(kinds))} over time, smallest against largest buffer. With a small buffer "
                     "TCP's sawtooth keeps draining it; with a large one a standing queue adds its full delay.")
    return drawn


# -- HTML -----------------------------------------------------------------------------------------------------

# Each column of the recommendation table, defined once (shown under the table).
COLUMNS = (
    ("campaign", "the campaign (overlay of several): its name, or its database file when names repeat"),
    ("tier", "the service tier: its upstream rate"),
    ("traffic", "the grid's other varying axes (flows, TCP, loss, MAC) and the upstream queue: drop-tail, "
                "DOCSIS-PIE or LLD"),
    ("RTT", "round-trip time added beyond the modem"),
    ("recommended TargetBuffer", "the smallest buffer in the grid keeping "
                                 f"{THROUGHPUT_SHARE:.0%} of the best goodput within the queue budget; in bold when "
                                 "the policy recommends it, none when every size exceeds the budget"),
    ("full-buffer delay", "what this buffer adds when full: buffer ÷ rate"),
    ("queueing delay", "what the queue added under load, measured: median RTT under load less the idle median "
                       "(an AQM keeps it below the full-buffer delay)"),
    ("share of best", "this size's goodput (median over the seeds) over the best goodput of any size at this tier"),
    ("next size down", "the next smaller buffer in the grid and its share of the best goodput: how close it came"),
    ("spread across seeds", "the lowest and highest share of the best goodput among this size's repetitions"),
    ("within noise?", f"yes when the {THROUGHPUT_SHARE:.0%} threshold lies inside the seeds' spread: a repetition "
                      "of the next size down reached it, or one of this size missed it, so other seeds could "
                      "choose another size"),
    ("model", "what produced the figures the choice is made from"),
    ("buffer advise", "what `hfcprov buffer advise` (the same policy's closed-form rule) says for the tier"),
    ("why", "the policy's reason, in words, with the figures above; and White et al.'s finding where they "
            "state one"),
)

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1280px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #eef; } figure { margin: 2em 0; } img { max-width: 100%; }
figcaption { color: #555; font-size: 0.9em; } .failed { color: #a00; } .noise { color: #a05a00; }
.none { color: #a00; } dl.columns { font-size: 0.85em; color: #444; columns: 2; }
dl.columns div { break-inside: avoid; } dl.columns dt { font-weight: bold; } dl.columns dd { margin: 0 0 0.4em 1em; }
"""


def _html(title, camps, recs, drawn, pngs) -> str:
    e = html.escape
    overlay = len(camps) > 1
    parts = [f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>
<style>{_CSS}</style></head><body>
<h1>{e(title)}</h1>"""]
    for camp in camps:
        progress = camp.store.progress()
        head = f"<b>{e(camp.label)}</b>: " if overlay else ""
        parts.append(f"<p>{head}{e(camp.spec.get('description') or '')}</p>")
        parts.append(f"""<p class="summary">{head}Target: <b>{e(camp.primary)}</b>.
Points: {progress.done} done, {progress.failed} failed, {progress.pending + progress.running} not run, of {progress.total}.
Each point is the median of {camp.spec.get('repetitions', 1)} repetition(s); error bars span their minimum to
maximum. Models behind the figures: {e(", ".join(sorted({r.get("model") or r["source"] for r in camp.rows
                                                         if r["source"]})))}.</p>""")
    if overlay:
        parts.append(_differences(camps))
    parts.append(_recommendations(recs, overlay))
    for d in drawn:
        b64 = base64.b64encode(pngs[d.name]).decode()
        counts = ",".join(str(n) for _, n in d.panels)
        parts.append(f'<figure id="fig-{d.name}" data-panel-points="{counts}"><img class="plot" '
                     f'alt="{e(d.name)} plot" src="data:image/png;base64,{b64}"><figcaption>{e(d.caption)}'
                     f'</figcaption></figure>')
    for camp in camps:
        failed = [r for r in camp.rows if r["state"] == "failed"]
        if failed:
            parts.append(f"<h2>Failed points{' of ' + e(camp.label) if overlay else ''}</h2>"
                         "<table class=\"failures\"><tr><th>point</th><th>reason</th></tr>")
            for r in failed:
                parts.append(f"<tr class=\"failed\"><td>{e(r['key'])}</td><td>{e(r['error'] or '')}</td></tr>")
            parts.append("</table>")
    for camp in camps:
        suffix = f" of {e(camp.label)}" if overlay else ""
        parts.append(f"<h2>Environment{suffix}</h2><table class=\"environment\">")
        for k, v in camp.store.environment().items():
            parts.append(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>")
        parts.append("</table>")
        parts.append(f"<details><summary>Campaign specification{suffix}</summary><pre>"
                     f"{e(json.dumps(camp.spec, indent=2, default=str))}</pre></details>")
    # Lets a headless browser (and a curious reader's console) confirm every plot decoded.
    parts.append("<script>window.addEventListener('load', function () {"
                 "var imgs = document.querySelectorAll('img.plot'); var ok = 0;"
                 "imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });"
                 "document.body.setAttribute('data-plots-loaded', ok + '/' + imgs.length); });</script>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _differences(camps) -> str:
    e = html.escape
    rows = spec_differences(camps)
    out = ["<h2>How the campaigns differ</h2><table id=\"differences\"><tr><th>spec key</th>"
           + "".join(f"<th>{e(c.label)}</th>" for c in camps) + "</tr>"]
    for key, values in rows:
        out.append(f"<tr><td><code>{e(key)}</code></td>"
                   + "".join(f"<td>{e(json.dumps(v, default=str))}</td>" for v in values) + "</tr>")
    if not rows:
        out.append(f"<tr><td colspan=\"{len(camps) + 1}\">the same specification</td></tr>")
    out.append("</table>")
    return "\n".join(out)


def _pct(x) -> str:
    return "—" if x is None else f"{x:.0%}"


def _recommendations(recs, overlay: bool) -> str:
    e = html.escape
    traffic = any(r.variant for r in recs)
    names = [name for name, _ in COLUMNS if (name != "campaign" or overlay) and (name != "traffic" or traffic)]
    out = [f"""<h2>Recommended buffer per tier</h2>
<p>The sizing policy of docs/sizing.md applied to this campaign's results: the smallest buffer keeping
{THROUGHPUT_SHARE:.0%} of the best goodput whose queueing delay stays within the queue budget (ITU-T G.114's
150 ms one way less the path's own RTT/2), with how far that choice can be trusted. Beside it, what
<code>hfcprov buffer advise</code> says for the same tier, and White et al.'s finding where they state one.</p>
<table id="recommendations"><tr>{''.join(f'<th>{e(n)}</th>' for n in names)}</tr>"""]
    for r in recs:
        if r.recommended is not None:
            pick = f"<b>{r.buffer} bytes ({e(format_bytes(r.buffer))})</b>"
        elif r.buffer is not None:
            pick = (f"<span class=\"none\">none: every size exceeds the budget</span> (the smallest, "
                    f"{e(format_bytes(r.buffer))}, is closest)")
        else:
            pick = "—"
        below = f"{e(format_bytes(r.below))}: {_pct(r.below_share)}" if r.below is not None else "— (smallest size)"
        if r.spread is None or r.reps < 2:
            spread = f"{r.reps} seed: unknown" if r.reps < 2 else "—"
        else:
            spread = f"{r.spread[0]:.0%}–{r.spread[1]:.0%} ({r.reps} seeds)"
        if r.status != "fits":
            noise = "—"
        elif r.reps < 2:
            noise = "unknown (one seed)"
        else:
            noise = f"<span class=\"noise\">yes: {e(r.noise)}</span>" if r.noise else "no"
        cells = {
            "campaign": e(r.campaign), "tier": e(r.tier), "traffic": e(r.variant), "RTT": e(format_duration(r.rtt)),
            "recommended TargetBuffer": pick,
            "full-buffer delay": f"{r.queue_ms:.0f} ms" if r.queue_ms is not None else "—",
            "queueing delay": f"{r.delay * 1e3:.0f} ms" if r.delay is not None else "—",
            "share of best": _pct(r.share), "next size down": below, "spread across seeds": spread,
            "within noise?": noise, "model": e(r.model),
            "buffer advise": (f"{r.advised} bytes ({e(format_bytes(r.advised))}; {e(r.advised_by)})"
                              if r.advised is not None else "—"),
            "why": e(r.reason + (f". {r.paper}" if r.paper else "") + "".join(f". Warning: {w}" for w in r.warnings)),
        }
        out.append("<tr>" + "".join(f"<td>{cells[n]}</td>" for n in names) + "</tr>")
    out.append("</table>")
    out.append("<dl class=\"columns\" id=\"columns\">" + "".join(
        f"<div><dt>{e(name)}</dt><dd>{e(text)}</dd></div>" for name, text in COLUMNS if name in names) + "</dl>")
    return "\n".join(out)
