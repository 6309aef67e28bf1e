"""Issue 26's utilities on a CUDA device: the default device, empty_strided, pin_memory
and anomaly mode (tiny, for the simulator)."""
import pytest

import dynagrad as dg


def test_default_device_sends_factories_to_the_gpu(cuda):
    dg.set_default_device(cuda)
    try:
        assert dg.get_default_device() == cuda
        for t in (dg.zeros(2), dg.ones(2), dg.full((2,), 3.0), dg.empty(2), dg.arange(3),
                  dg.tensor([1.0]), dg.rand(2), dg.randn(2), dg.eye(2), dg.linspace(0, 1, 3),
                  dg.empty_strided((2, 2), (1, 2))):
            assert t.device == cuda
        assert dg.zeros(2, device="cpu").device == dg.device("cpu")
        assert dg.zeros_like(dg.zeros(1, device="cpu")).device == dg.device("cpu")
    finally:
        dg.set_default_device(None)
    assert dg.zeros(1).device == dg.device("cpu")


def test_empty_strided_on_the_gpu(cuda):
    t = dg.empty_strided((2, 3), (1, 2), device=cuda)
    assert t.stride() == (1, 2) and t.is_cuda
    t.copy_(dg.arange(6.0, device=cuda).reshape(2, 3))
    assert t.cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_pin_memory_copies_to_page_locked_memory(cuda):
    x = dg.arange(4.0)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.tolist() == x.tolist()
    assert p.pin_memory() is p and p[1:].is_pinned()
    assert p.to(cuda).cpu().tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="only dense CPU tensors"):
        x.to(cuda).pin_memory()


def test_anomaly_mode_on_the_gpu(cuda):
    x = dg.tensor([0.0, 1.0], device=cuda, requires_grad=True)
    with dg.autograd.set_detect_anomaly(True), pytest.raises(RuntimeError,
                                                               match="SqrtBackward0"):
        (dg.sqrt(x) * 0).sum().backward()
