"""Scale-out: a simulator sweep on a Dask cluster gives the same results as a local run."""

from __future__ import annotations

import pytest

from hfcprov.lab.runner import results_of, run_campaign
from hfcprov.lab.spec import CampaignError, load_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import write
from tests.lab.test_runner_sim import comparable

distributed = pytest.importorskip("distributed", reason="needs dask distributed: pip install 'hfcprov[dask]'")

SPEC = """
    name: dask
    grid:
      upstream_rate: [2M, 10M]
      buffer: [16KiB, 128KiB]
      rtt: [40ms, 100ms]
    traffic: {duration: 20s, warmup: 2s}
    repetitions: 2
"""


@pytest.mark.slow
def test_dask_cluster_matches_a_local_run(tmp_path):
    camp = load_campaign(write(tmp_path, SPEC))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        with Store(tmp_path / "dask.db") as store:
            summary = run_campaign(camp, store, scheduler=cluster.scheduler_address)
            assert (summary.done, summary.failed) == (16, 0)
            assert store.environment()["executor"].startswith(f"dask {cluster.scheduler_address}")
            remote = {i: comparable(r["sim"]) for i, r in results_of(store).items()}
    with Store(tmp_path / "local.db") as store:
        run_campaign(camp, store, jobs=1)
        local = {i: comparable(r["sim"]) for i, r in results_of(store).items()}
    assert remote == local
    # repetitions are separate runs with their own seeds, not one cached task
    assert remote[0] != remote[1]


def test_unreachable_scheduler_is_one_clear_error(tmp_path):
    from tests.support import free_tcp_port

    camp = load_campaign(write(tmp_path, SPEC))
    with Store(tmp_path / "x.db") as store:
        with pytest.raises(CampaignError, match="cannot reach the Dask scheduler at tcp://127.0.0.1"):
            run_campaign(camp, store, scheduler=f"tcp://127.0.0.1:{free_tcp_port()}", scheduler_timeout=2)
