"""The campaign report's figures: what is compared shares one axis, and every panel says what it draws.

A figure is a grid of panels. What goes on the x axis follows the campaign's grid: the buffer size
(log2) when the grid has several, else the traffic variants side by side (drop-tail / DOCSIS-PIE /
LLD, flows, TCP...) as categories, else the rates. The axis under comparison (the upstream queue, or
the campaign in an overlay of several) is never split into panels: its values are series on the same
axes, one colour each. Each figure records how many points each panel holds (``Drawn.panels``), so a
test can check that no panel is empty or a lone dot when the grid has more.

Latency is drawn as flent draws it: percentiles (p50, p90, p99) per point, and the distribution
(CDF) of every probe's RTT under load per point.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hfcprov.units import format_bytes, format_duration, format_rate

COLOURS = ["#1f4e9c", "#d9822b", "#2e8b57", "#9c1f4e", "#6a5acd", "#808000", "#008b8b", "#8b4513"]
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*"]
PERCENTILES = (("latency_loaded", "p50", "-"), ("latency_p90", "p90", "--"), ("latency_p99", "p99", ":"))
PERCENTILE_MARKERS = {"p50": "o", "p90": "_", "p99": "x"}


@dataclass
class Drawn:
    """A figure and what it holds: per panel, its title and the number of points drawn in it."""

    name: str
    figure: object
    panels: list[tuple[str, int]] = field(default_factory=list)
    caption: str = ""


@dataclass(frozen=True)
class Layout:
    """How a set of cells maps onto panels, x positions and series.

    x = "buffer" when the grid has several buffers: a panel per (traffic variant, rate), the compared
    queue and campaign as series. Else x = "category": the variants and queues side by side, a panel
    per rate, the campaigns as series; or x = "rate" when there is one category."""

    x: str  # "buffer" | "category" | "rate"
    categories: tuple  # the x positions' values when x is "category" or "rate"
    compared: bool  # several series names (queues or campaigns): they get the colours, RTTs the markers
    queues: bool = False  # the categories are upstream queues only (drop-tail, DOCSIS-PIE, LLD)

    def panel_key(self, c) -> tuple:
        if self.x == "buffer":
            return (c.variant, c.upstream_rate)
        if self.x == "category":
            return ("", c.upstream_rate)
        return ("", 0.0)

    def x_of(self, c):
        if self.x == "buffer":
            return c.buffer
        if self.x == "category":
            return self.categories.index(category(c))
        return self.categories.index(c.upstream_rate)

    def name(self, c) -> str:
        """What a series compares: the campaign (overlay), and the upstream queue when it is not on x."""
        parts = (c.campaign, c.compare) if self.x == "buffer" else (c.campaign,)
        return " · ".join(p for p in parts if p)

    def series_key(self, c) -> tuple:
        return (self.name(c), c.rtt)


def _order(c) -> tuple:
    """Categories in the grid's own order: drop-tail, DOCSIS-PIE, LLD as the aqm axis declares them."""
    from hfcprov.lab.schema import AQMS, AXES

    labels = [AXES["aqm"].variant(a) for a in AQMS]
    return (c.variant, labels.index(c.compare) if c.compare in labels else len(labels), c.compare)


def category(c) -> str:
    """A point's traffic variant and queue, as one x category ("2 flows · docsis-pie")."""
    return " · ".join(p for p in (c.variant, c.compare) if p) or "-"


def layout(cells) -> Layout:
    if len({c.buffer for c in cells}) > 1:
        lay = Layout("buffer", (), False)
    else:
        cats = tuple(dict.fromkeys(category(c) for c in sorted(cells, key=_order)))
        lay = Layout("category", cats, False) if len(cats) > 1 else \
            Layout("rate", tuple(sorted({c.upstream_rate for c in cells})), False)
    return Layout(lay.x, lay.categories, len({lay.name(c) for c in cells}) > 1,
                  queues=all(c.compare and not c.variant for c in cells))


def figures(cells, sim_cells, primary: str, samples=None) -> list[Drawn]:
    """The report's figures from ``cells`` (the campaign's own source) and ``sim_cells`` (the simulator's
    prediction of a measured campaign). ``samples(cell) -> [rtt seconds]`` gives a point's probe RTTs
    under load for its CDF (None: no CDF)."""
    if not cells:
        return []
    lay = layout(cells)
    out = [_lines(cells, sim_cells, lay, "goodput_bps", 1e-6, "TCP goodput (Mb/s)",
                  "Upstream TCP goodput", rate_line=True)]
    if any(c.latency_loaded is not None for c in cells):
        out.append(_percentiles(cells, sim_cells, lay))
    if samples is not None:
        cdf = _cdf(cells, lay, samples)
        if cdf is not None:
            out.append(cdf)
    if any(c.mos is not None for c in cells):
        out.append(_lines(cells, sim_cells, lay, "mos", 1.0, "VoIP MOS", "VoIP MOS beside the upload", ylim=(1, 5)))
    if sim_cells:
        out.append(_scatter(cells, sim_cells, primary))
    return out


# -- shared drawing ------------------------------------------------------------------------------------------


def _grid(n: int, title: str, height: float = 3.9):
    from matplotlib.figure import Figure  # Figure, not pyplot: no global state, no GUI backend

    ncols = min(n, 2)
    nrows = (n + ncols - 1) // ncols
    fig = Figure(figsize=(6.4 * ncols, height * nrows), layout="constrained")
    fig.suptitle(title, fontsize=13, fontweight="bold")
    return fig, nrows, ncols


def _panel_title(lay: Layout, key, cells) -> str:
    variant, rate = key
    if lay.x == "rate":
        name = "every tier"
    else:
        name = f"{format_rate(rate)} upstream" + (f" — {variant}" if variant else "")
    models = sorted({c.model for c in cells if c.model})
    return name + (f"\n{'; '.join(models)}" if models else "")


def _styles(cells, lay: Layout):
    """Series key -> (colour, marker, label). Colours tell the compared values apart when there are
    several (AQM, campaigns), else the RTTs; markers then tell the RTTs apart."""
    names = sorted({lay.name(c) for c in cells})
    rtts = sorted({c.rtt for c in cells})
    styles = {}
    for c in cells:
        key = lay.series_key(c)
        if key in styles:
            continue
        name, rtt = key
        if lay.compared:
            colour = COLOURS[names.index(name) % len(COLOURS)]
            marker = MARKERS[rtts.index(rtt) % len(MARKERS)]
            label = name + (f", {format_duration(rtt)} RTT" if len(rtts) > 1 else "")
        else:
            colour = COLOURS[rtts.index(rtt) % len(COLOURS)]
            marker = "o"
            label = f"{format_duration(rtt)} RTT"
        styles[key] = (colour, marker, label)
    return styles


def _x_axis(ax, lay: Layout, xs):
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    if lay.x == "buffer":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(sorted(xs)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v).replace(" ", "")))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("upstream buffer (TargetBuffer)")
        return
    labels = [format_rate(v) for v in lay.categories] if lay.x == "rate" else list(lay.categories)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8, rotation=0 if max(len(s) for s in labels) < 14 else 15)
    ax.set_xlim(-0.5, len(labels) - 0.5)
    ax.set_xlabel("upstream rate" if lay.x == "rate" else "upstream queue" if not any(
        " · " in t or t == "-" for t in labels) and lay.queues else "traffic")


def _offset(lay: Layout, key, styles) -> float:
    """Side-by-side offsets for categorical x, so series at one category do not hide each other."""
    if lay.x == "buffer":
        return 0.0
    keys = sorted(styles)
    n = len(keys)
    return (keys.index(key) - (n - 1) / 2) * min(0.12, 0.6 / max(n, 1))


def _legend(fig, extra=()) -> None:
    """One legend for the whole figure, under its panels: the panels share their series, and a legend
    inside each panel hides the lines it explains."""
    handles, labels = [], []
    for ax in fig.axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    for h in extra:
        handles.append(h)
        labels.append(h.get_label())
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=min(4, len(handles)), fontsize=8,
                   frameon=False)


def _log_y(ax):
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 20, 50, 100, 200: not 2×10¹
    ax.yaxis.set_minor_formatter(NullFormatter())


# -- figures -------------------------------------------------------------------------------------------------


def _lines(cells, sim, lay: Layout, attr, scale, ylabel, title, rate_line=False, ylim=None) -> Drawn:
    """Median of the repetitions with min-max error bars, per point; the simulator's prediction dashed."""
    panels = sorted({lay.panel_key(c) for c in cells})
    fig, nrows, ncols = _grid(len(panels), title)
    styles = _styles(cells, lay)
    drawn = Drawn(attr, fig)
    predicted = False
    for n, key in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, n + 1)
        mine = [c for c in cells if lay.panel_key(c) == key]
        theirs = [s for s in sim if lay.panel_key(s) == key]
        count = 0
        for skey in sorted(styles):
            colour, marker, label = styles[skey]
            for source, dashed in ((mine, False), (theirs, True)):
                pts = sorted((lay.x_of(c), c) for c in source
                             if lay.series_key(c) == skey and getattr(c, attr) is not None)
                if not pts:
                    continue
                xs = [x + _offset(lay, skey, styles) for x, _ in pts]
                ys = [getattr(c, attr) * scale for _, c in pts]
                spread = [_range(c, attr) for _, c in pts]
                err = None
                if any(r is not None and r[1] > r[0] for r in spread):
                    err = [[y - (r[0] * scale if r else y) for y, r in zip(ys, spread)],
                           [(r[1] * scale if r else y) - y for y, r in zip(ys, spread)]]
                ax.errorbar(xs, ys, yerr=err, color=colour, marker=marker, markersize=5 if not dashed else 4,
                            linestyle=("--" if dashed else "-") if lay.x == "buffer" else "none",
                            mfc="white" if dashed else colour, capsize=3, linewidth=1.4,
                            label=label + (", simulated" if dashed else ""))
                if dashed:
                    predicted = True
                else:
                    count += len(pts)
        _x_axis(ax, lay, {c.buffer for c in mine})
        ax.set_ylabel(ylabel)
        ax.set_title(_panel_title(lay, key, mine), fontsize=10)
        if rate_line and lay.x != "rate":
            rate = key[1]
            ax.axhline(rate * scale, color="grey", linestyle=":", linewidth=1, label="configured rate")
            ax.set_ylim(0, rate * scale * 1.15)
        if ylim:
            ax.set_ylim(*ylim)
        ax.grid(alpha=0.3, which="major")
        drawn.panels.append((ax.get_title().split("\n")[0], count))
    _legend(fig)
    what = "TCP goodput (warm-up excluded)" if attr == "goodput_bps" else "The VoIP E-model MOS of a G.711 call " \
        "beside the bulk TCP traffic (cf. White et al. Fig. 9)"
    drawn.caption = (f"{what} per point: the median of the repetitions, error bars from their minimum to maximum. "
                     + _where(lay) + (" Dashed, hollow markers: the simulator's prediction of the same point."
                                      if predicted else "")
                     + (" The dotted line is the configured rate (cf. White et al. Figs. 4–5)."
                        if rate_line and lay.x != "rate" else ""))
    drawn.name = "throughput" if attr == "goodput_bps" else attr
    return drawn


def _range(c, attr):
    return {"goodput_bps": c.goodput_range, "latency_loaded": c.latency_range}.get(attr)


def _where(lay: Layout) -> str:
    axis = {"buffer": "x: the upstream buffer (TargetBuffer, log scale); one panel per upstream rate and traffic "
                      "variant",
            "category": "x: the upstream queues and traffic variants side by side; one panel per upstream rate",
            "rate": "x: the upstream rate; one panel"}[lay.x]
    series = "one colour per compared queue or campaign (markers: RTT)" if lay.compared else "one colour per RTT"
    return f"{axis}; {series}, all on the same axes."


def _percentiles(cells, sim, lay: Layout) -> Drawn:
    """p50, p90 and p99 of the probes' RTT under load per point (medians over repetitions), log scale."""
    panels = sorted({lay.panel_key(c) for c in cells})
    fig, nrows, ncols = _grid(len(panels), "Latency under load: percentiles of the probes' RTT")
    styles = _styles(cells, lay)
    drawn = Drawn("latency", fig)
    predicted = False
    for n, key in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, n + 1)
        mine = [c for c in cells if lay.panel_key(c) == key]
        count = 0
        for skey in sorted(styles):
            colour, marker, label = styles[skey]
            for attr, name, style in PERCENTILES:
                pts = sorted((lay.x_of(c), getattr(c, attr)) for c in mine
                             if lay.series_key(c) == skey and getattr(c, attr) is not None)
                if not pts:
                    continue
                xs = [x + _offset(lay, skey, styles) for x, _ in pts]
                ax.plot(xs, [v * 1e3 for _, v in pts], color=colour, linestyle=style if lay.x == "buffer" else "none",
                        marker=marker if name == "p50" else PERCENTILE_MARKERS[name],
                        markersize=5 if name == "p50" else 8, linewidth=1.4 if name == "p50" else 1.0,
                        label=label if name == "p50" else "_nolegend_", gid=name)
                if name == "p50":
                    count += len(pts)
                    if lay.x != "buffer":  # a whisker from p50 to p99 at each category, as a box plot's
                        top = {x: v for x, v in sorted((lay.x_of(c), c.latency_p99) for c in mine
                                                        if lay.series_key(c) == skey and c.latency_p99)}
                        for x, v in pts:
                            if x in top:
                                ax.plot([x + _offset(lay, skey, styles)] * 2, [v * 1e3, top[x] * 1e3],
                                        color=colour, linewidth=0.8, alpha=0.7)
            pred = sorted((lay.x_of(c), c.latency_loaded) for c in sim
                          if lay.panel_key(c) == key and lay.series_key(c) == skey and c.latency_loaded is not None)
            if pred:
                predicted = True
                ax.plot([x + _offset(lay, skey, styles) for x, _ in pred], [v * 1e3 for _, v in pred],
                        color=colour, linestyle="-." if lay.x == "buffer" else "none", marker="D", mfc="white",
                        markersize=4, linewidth=1.0, label=f"{label}, simulated p50", gid="p50 simulated")
        if lay.x == "buffer":
            rate = key[1]
            buffers = sorted({c.buffer for c in mine})
            base = min(c.rtt for c in mine)
            ax.plot(buffers, [(b * 8 / rate + base) * 1e3 for b in buffers], color="grey", linestyle=":",
                    linewidth=1, label="full buffer: buffer ÷ rate + RTT")
        _x_axis(ax, lay, {c.buffer for c in mine})
        _log_y(ax)
        ax.set_ylabel("RTT under load (ms)")
        ax.set_title(_panel_title(lay, key, mine), fontsize=10)
        ax.grid(alpha=0.3, which="major")
        drawn.panels.append((ax.get_title().split("\n")[0], count))
    from matplotlib.lines import Line2D

    _legend(fig, [Line2D([], [], color="grey", linestyle=style if lay.x == "buffer" else "none",
                         marker=PERCENTILE_MARKERS[name], label=name) for _, name, style in PERCENTILES])
    full = (" The grey dotted line is the RTT a full buffer gives: buffer ÷ rate plus the smallest RTT "
            "(cf. White et al. Figs. 7–8)." if lay.x == "buffer" else "")
    drawn.caption = ("Round-trip time of the latency probes while the upstream is loaded, log scale: p50 (filled "
                     "marker" + (", solid" if lay.x == "buffer" else "") + "), p90 (bar" + (", dashed" if lay.x ==
                     "buffer" else "") + ") and p99 (cross" + (", dotted" if lay.x == "buffer" else ", joined to "
                     "the p50 by a whisker") + "), each the median over the repetitions. " + _where(lay) + full
                     + (" Dash-dotted hollow diamonds: the simulator's predicted p50." if predicted else ""))
    return drawn


def _cdf(cells, lay: Layout, samples) -> Drawn | None:
    """The distribution of every probe's RTT under load, one curve per point (repetitions pooled), the
    curves of a panel being what the other figures put on their x axis: buffers, queues or rates."""
    def where(c):
        if lay.x == "buffer":
            return (c.variant, c.upstream_rate, c.rtt)
        return ("", c.upstream_rate if lay.x == "category" else 0.0, c.rtt)

    def along(c):  # the curve's place on the colour scale
        if lay.x == "buffer":
            return c.buffer
        return category(c) if lay.x == "category" else c.upstream_rate

    curves = {id(c): sorted(v) for c in cells if (v := samples(c))}
    if not curves:
        return None
    cells = [c for c in cells if id(c) in curves]
    panels = sorted({where(c) for c in cells})
    fig, nrows, ncols = _grid(len(panels), "Latency under load: distribution (CDF) of every probe's RTT",
                              height=3.6)
    drawn = Drawn("latency-cdf", fig)
    steps = list(dict.fromkeys(along(c) for c in sorted(cells, key=lambda c: (along(c) if lay.x != "category"
                                                                              else 0, _order(c)))))
    names = sorted({lay.name(c) for c in cells})
    import matplotlib

    ramp = matplotlib.colormaps["viridis"]
    dashes = ["-", "--", ":", "-."]
    for n, key in enumerate(panels):
        variant, rate, rtt = key
        ax = fig.add_subplot(nrows, ncols, n + 1)
        mine = [c for c in cells if where(c) == key]
        for c in sorted(mine, key=lambda c: (lay.name(c), steps.index(along(c)))):
            values = curves[id(c)]
            ys = [(i + 1) / len(values) for i in range(len(values))]
            i = steps.index(along(c))
            if lay.x == "category":
                colour = COLOURS[i % len(COLOURS)]
                label = category(c)
            else:
                colour = ramp(i / max(len(steps) - 1, 1) * 0.9)
                label = format_bytes(c.buffer) if lay.x == "buffer" else format_rate(c.upstream_rate)
            ax.step([v * 1e3 for v in values], ys, where="post", color=colour,
                    linestyle=dashes[names.index(lay.name(c)) % len(dashes)], linewidth=1.3,
                    label=label + (f", {lay.name(c)}" if lay.compared else ""))
        ax.set_xscale("log")
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 4.0, 5.0, 7.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("RTT under load (ms, log scale)")
        ax.set_ylabel("fraction of probes")
        ax.set_ylim(0, 1.02)
        where_text = "every tier" if lay.x == "rate" else f"{format_rate(rate)} upstream"
        ax.set_title(where_text + (f" — {variant}" if variant else "") + f", {format_duration(rtt)} RTT",
                     fontsize=10)
        ax.grid(alpha=0.3)
        drawn.panels.append((ax.get_title(), len(mine)))
    _legend(fig)
    colour = {"buffer": "Colour: the buffer (dark small, light large)",
              "category": "One colour per upstream queue or traffic variant",
              "rate": "Colour: the upstream rate (dark slow, light fast)"}[lay.x]
    panel = {"buffer": "one panel per upstream rate, traffic variant and RTT",
             "category": "one panel per upstream rate and RTT", "rate": "one panel per RTT"}[lay.x]
    drawn.caption = ("The distribution of the latency probes' RTT under load (repetitions pooled): a curve per point, "
                     f"read as the fraction of probes at or below that RTT; {panel}. {colour}"
                     + ("; line style: the compared queue or campaign." if lay.compared else ", on the same axes."))
    return drawn


def _scatter(main, sim, primary) -> Drawn:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.4), layout="constrained")
    fig.suptitle(f"Measured ({primary}) vs simulated, per point", fontsize=13, fontweight="bold")
    by = {(c.variant, c.compare, c.upstream_rate, c.rtt, c.buffer): c for c in sim}
    pairs = [(c, by[k]) for c in main if (k := (c.variant, c.compare, c.upstream_rate, c.rtt, c.buffer)) in by]
    drawn = Drawn("measured-vs-simulated", fig)
    for n, (attr, scale, label) in enumerate((("goodput_bps", 1e-6, "throughput (Mb/s)"),
                                              ("latency_loaded", 1e3, "median RTT under load (ms)"))):
        ax = fig.add_subplot(1, 2, n + 1)
        xy = [(getattr(s, attr) * scale, getattr(m, attr) * scale) for m, s in pairs
              if getattr(s, attr) is not None and getattr(m, attr) is not None]
        if xy:
            ax.scatter([p[0] for p in xy], [p[1] for p in xy], s=18, color=COLOURS[0])
            hi = max(max(p) for p in xy) * 1.1
            ax.plot([0, hi], [0, hi], color="grey", linestyle="--", linewidth=1, label="measured = simulated")
            ax.legend(fontsize=8)
        ax.set_xlabel(f"simulated {label}")
        ax.set_ylabel(f"measured {label}")
        ax.grid(alpha=0.3)
        drawn.panels.append((label, len(xy)))
    drawn.caption = ("Each dot is one grid point: the simulator's prediction against the measurement; on the dashed "
                     "line they agree.")
    return drawn
