"""The report opens in a real headless browser (Debian chromium) and shows its plots."""

from __future__ import annotations

import re
import subprocess

import pytest

from hfcprov.lab.report import write_report
from hfcprov.lab.spec import load_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import textbook_result
from tests.support import require_tool

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def report(tmp_path_factory, request):
    tmp = tmp_path_factory.mktemp("browser")
    spec = tmp / "c.yaml"
    spec.write_text("name: browser\ngrid: {upstream_rate: [1M, 10M], buffer: [16K, 64K, 256K], rtt: [40ms, 100ms]}\n")
    with Store(tmp / "c.db") as store:
        store.begin(load_campaign(spec), resume=False)
        for p in store.pending():
            store.finish(p, [textbook_result(p)])
        write_report(store, tmp / "report.html")
    return tmp / "report.html"


def _chromium(args, tmp_path, timeout=90):
    exe = require_tool("chromium", "chromium")
    return subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_report_dom_has_every_plot_decoded(report, tmp_path):
    res = _chromium(["--virtual-time-budget=5000", "--dump-dom", report.as_uri()], tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    dom = res.stdout
    # The page's own load handler counts images the browser decoded (naturalWidth > 0).
    m = re.search(r'data-plots-loaded="(\d+)/(\d+)"', dom)
    assert m, dom[:500]
    assert m.group(1) == m.group(2) == "3"
    assert 'id="fig-throughput"' in dom and 'id="fig-latency"' in dom and 'id="fig-over-time"' in dom
    assert 'id="recommendations"' in dom


@pytest.mark.slow
def test_report_screenshot_shows_plots(report, tmp_path):
    import matplotlib.image as mpimg
    import numpy as np

    shot = tmp_path / "shot.png"
    res = _chromium(["--window-size=1280,2400", "--hide-scrollbars", f"--screenshot={shot}", report.as_uri()],
                    tmp_path)
    assert res.returncode == 0 and shot.exists(), res.stderr[-2000:]
    img = mpimg.imread(shot)[..., :3]
    assert img.shape[0] == 2400 and img.shape[1] == 1280
    # The plots' line colours (the 40 ms blue #1f4e9c and the 100 ms orange #d9822b) are on screen.
    blue = np.all(np.abs(img - np.array([0x1f, 0x4e, 0x9c]) / 255) < 0.04, axis=-1).sum()
    orange = np.all(np.abs(img - np.array([0xd9, 0x82, 0x2b]) / 255) < 0.04, axis=-1).sum()
    assert blue > 500 and orange > 500, (blue, orange)
