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

pytestmark = pytest.mark.slow  # a headless browser, and three reports written first (~9 s)

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def _campaign(tmp, name, text):
    spec = tmp / f"{name}.yaml"
    spec.write_text(text)
    store = Store(tmp / f"{name}.db")
    store.begin(load_campaign(spec), resume=False)
    for p in store.pending():
        store.finish(p, [textbook_result(p)])
    return store


WHITE = "name: browser\ngrid: {upstream_rate: [1M, 10M], buffer: [16K, 64K, 256K], rtt: [40ms, 100ms]}\n"
AQM = "name: aqm\ngrid: {upstream_rate: [10M, 50M], buffer: 256KiB, flows: 2, aqm: [none, docsis-pie, lld]}\n"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The White et al. grid, a drop-tail / DOCSIS-PIE / LLD comparison, and an overlay of two campaigns."""
    tmp = tmp_path_factory.mktemp("browser")
    white, aqm = _campaign(tmp, "white", WHITE), _campaign(tmp, "aqm", AQM)
    other = _campaign(tmp, "other", WHITE.replace("name: browser", "name: other").replace("}", ", mac: docsis}"))
    with white, aqm, other:
        write_report(white, tmp / "report.html")
        write_report(aqm, tmp / "aqm.html")
        write_report([white, other], tmp / "overlay.html")
    return {"white": tmp / "report.html", "aqm": tmp / "aqm.html", "overlay": tmp / "overlay.html"}


@pytest.fixture(scope="module")
def report(reports):
    return reports["white"]


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
    assert m.group(1) == m.group(2) == "4"
    for name in ("throughput", "latency", "latency-cdf", "over-time"):
        assert f'id="fig-{name}"' in dom
    assert 'id="recommendations"' in dom and 'id="columns"' in dom


@pytest.mark.parametrize("which", ["white", "aqm", "overlay"])
def test_no_panel_the_browser_shows_is_empty_or_a_lone_dot(reports, which, tmp_path):
    """Every figure the browser decoded has panels of two points or more: the grids have more than one
    point per panel's worth (issue 27: the AQM report drew 12 panels of one dot each)."""
    res = _chromium(["--virtual-time-budget=5000", "--dump-dom", reports[which].as_uri()], tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    m = re.search(r'data-plots-loaded="(\d+)/(\d+)"', res.stdout)
    assert m and m.group(1) == m.group(2) and int(m.group(1)) >= 3, res.stdout[:300]
    panels = re.findall(r'<figure id="fig-([\w-]+)" data-panel-points="([\d,]*)"', res.stdout)
    assert len(panels) == int(m.group(2))
    for name, counts in panels:
        points = [int(n) for n in counts.split(",") if n]
        assert points and min(points) >= 2, (which, name, points)


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
