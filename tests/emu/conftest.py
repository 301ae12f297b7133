import os

import pytest

from tests.support import require_root


@pytest.fixture
def lab_factory():
    """Build labs with this test run's own name prefix; every one is removed afterwards."""
    require_root()
    from hfcprov.emu import topology

    prefix = f"hfemu-t{os.urandom(2).hex()}"
    labs = []

    def make(**kw):
        # Drop-tail unless a test asks otherwise: these tests check tc's htb + bfifo figures for files
        # without 24.40, which only a DOCSIS 3.0 modem leaves drop-tail (hfcprov.model.upstream_aqm).
        kw.setdefault("docsis_version", "3.0")
        lab = topology.up(prefix=prefix, **kw)
        labs.append(lab)
        return lab

    make.prefix = prefix
    yield make
    for lab in labs:
        lab.down()
    topology.down_all(prefix)
