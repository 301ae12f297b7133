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
        lab = topology.up(prefix=prefix, **kw)
        labs.append(lab)
        return lab

    make.prefix = prefix
    yield make
    for lab in labs:
        lab.down()
    topology.down_all(prefix)
