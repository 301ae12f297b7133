"""Optional PNG plots of a run's series (queue occupancy, cwnd) with matplotlib (imported only here)."""

from __future__ import annotations

import io

from hfcprov.fileio import atomic_write


def plot_run(result, path, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_q, ax_w) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    q = result.series.get("queue_bytes", [])
    if q:
        ax_q.plot([t for t, _ in q], [v / 1024 for _, v in q], lw=1)
    ax_q.set_ylabel("queue (KiB)")
    for name, pts in sorted(result.series.items()):
        if name.startswith("cwnd."):
            ax_w.plot([t for t, _ in pts], [v / 1024 for _, v in pts], lw=1, label=f"flow {name[5:]}")
    ax_w.set_ylabel("cwnd (KiB)")
    ax_w.set_xlabel("time (s)")
    if len(ax_w.lines) > 1:
        ax_w.legend(loc="upper right", fontsize="small")
    if title:
        fig.suptitle(title)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    atomic_write(path, buf.getvalue())
