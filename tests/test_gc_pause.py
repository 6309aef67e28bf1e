"""The collector pauses inside ``collection_paused`` and comes back as it was, also on errors."""
import gc

import pytest

from dynagrad._runtime.gc import collection_paused


def test_pauses_and_restores_the_collector():
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_restores_the_collector_when_the_block_raises():
    with pytest.raises(ValueError):
        with collection_paused():
            raise ValueError("inside")
    assert gc.isenabled()


def test_leaves_a_collector_the_caller_disabled_alone():
    gc.disable()
    try:
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_import_and_kernel_loads_leave_the_collector_on():
    import dynagrad as dg
    assert (dg.arange(3.0) * 2).tolist() == [0.0, 2.0, 4.0]
    assert gc.isenabled()
