"""Zero-copy interop: ``__cuda_array_interface__`` out and in, DLPack out and in.

On the simulator (no GPU) "device memory" is host memory, so what runs here is dynagrad's side of
both protocols: the interface dict it exports, wrapping foreign memory without a copy (writes show
through), DLPack capsules it produces and consumes (with the ownership hand-over and the deleter),
and DLPack with PyTorch CPU tensors and NumPy. Exchanging memory with CuPy or a torch CUDA tensor
needs a real GPU; ``test_real_gpu_exchange_with_torch`` does that when torch sees one.
"""
import gc

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import interop

torch = pytest.importorskip("torch")


class Exporter:
    """A stand-in for CuPy/Numba: an object that only has ``__cuda_array_interface__``."""

    def __init__(self, iface):
        self.__cuda_array_interface__ = iface


def test_cuda_array_interface_out(cuda):
    t = dg.arange(6, dtype=dg.float32, device=cuda).view(2, 3)
    iface = t.__cuda_array_interface__
    assert iface["shape"] == (2, 3) and iface["typestr"] == "<f4" and iface["version"] == 3
    assert iface["strides"] is None and iface["data"] == (t.data_ptr(), False)
    assert t.t().__cuda_array_interface__["strides"] == (4, 12)
    assert not hasattr(dg.ones(2), "__cuda_array_interface__")
    with pytest.raises(RuntimeError, match="requires grad"):
        dg.ones(2, device=cuda, requires_grad=True).__cuda_array_interface__


def test_as_tensor_wraps_foreign_device_memory_without_copying(cuda):
    src = dg.arange(6, dtype=dg.float32, device=cuda).view(2, 3)
    view = dg.as_tensor(Exporter(src.t().__cuda_array_interface__))
    assert view.is_cuda and view.shape == (3, 2) and view.data_ptr() == src.data_ptr()
    view[0, 1] = 100.0
    assert src[1, 0].item() == 100.0
    copied = dg.tensor(Exporter(src.__cuda_array_interface__))
    copied[0, 0] = -1.0
    assert src[0, 0].item() == 0.0 and copied.is_cuda


@pytest.mark.parametrize("dt", [dg.float16, dg.float32, dg.float64, dg.int64, dg.int32,
                                dg.uint8, dg.int8, dg.bool], ids=lambda d: d.name)
def test_dlpack_capsule_round_trip_on_the_device(dt, cuda):
    t = dg.tensor(np.arange(-3, 3).reshape(2, 3) % 2 == 0 if dt is dg.bool else
                  np.arange(-3, 3).reshape(2, 3), dtype=dt, device=cuda)
    assert t.__dlpack_device__() == (2, 0)
    back = dg.from_dlpack(t.t().__dlpack__())  # a bare capsule: parsed field by field
    assert back.dtype is dt and back.is_cuda and back.shape == (3, 2)
    np.testing.assert_array_equal(back.cpu().numpy(), t.cpu().numpy().T)


def test_dlpack_consumer_owns_and_releases_the_export(cuda):
    t = dg.zeros(4, device=cuda)
    gc.collect()  # an earlier test's export may wait for the collector: not this test's count
    before = len(interop._exports)
    alias = dg.from_dlpack(t.__dlpack__())
    alias[1] = 5.0
    assert t[1].item() == 5.0 and len(interop._exports) == before + 1
    del alias
    gc.collect()
    assert len(interop._exports) == before, "the consumer ran the deleter when done"
    capsule = t.__dlpack__()
    del capsule  # never consumed: the capsule's destructor runs the deleter
    gc.collect()
    assert len(interop._exports) == before


def test_dlpack_with_torch_and_numpy_on_the_cpu():
    a = dg.arange(4, dtype=dg.float32)
    shared = torch.from_dlpack(a)
    shared[0] = 9.0
    assert a[0].item() == 9.0 and a.__dlpack_device__() == (1, 0)
    b = torch.arange(3, dtype=torch.float64)
    mine = dg.from_dlpack(b)
    mine[2] = 42.0
    assert b[2].item() == 42.0 and mine.dtype is dg.float64
    n = np.ones(3, np.int32)
    dg.from_dlpack(n)[0] = 7
    assert n[0] == 7
    with pytest.raises(RuntimeError, match="requires grad"):
        dg.ones(2, requires_grad=True).__dlpack__()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU that torch can use")
def test_real_gpu_exchange_with_torch(cuda):
    tt = torch.arange(6, dtype=torch.float32, device="cuda").reshape(2, 3)
    mine = dg.as_tensor(tt)
    mine[0, 0] = -1.0
    dg.cuda.synchronize()
    assert tt[0, 0].item() == -1.0
    back = torch.from_dlpack(dg.ones(3, device=cuda) * 2)
    assert back.device.type == "cuda" and back.sum().item() == 6.0
    dl = dg.from_dlpack(tt)
    assert dl.is_cuda and dl.data_ptr() == tt.data_ptr()
