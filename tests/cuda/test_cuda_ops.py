"""Every registered op on CUDA: each OpInfo record's CUDA samples (tests/opinfos/) give the same
values, the same weighted loss and the same gradients on the device as on the CPU. The CPU run is
the reference (its own correctness is tested against float64 NumPy, finite differences and
PyTorch in tests/test_*.py); the records' CUDA samples are tiny, as without a GPU this runs on
Numba's simulator. Then compositions, advanced indexing and index writes with device keys.
"""
import numpy as np
import pytest

import dynagrad as dg
from harness import assert_same_results, check_op, run_with_loss
from opinfo import OPINFOS, Sample, integers, params, signed


def f(*shape, seed=0):
    """float32 values away from 0, both signs."""
    return signed(shape, seed).astype(np.float32)


@pytest.mark.parametrize("info,dtype", params(OPINFOS.values(), "cuda"))
def test_op_on_cuda_matches_cpu(info, dtype, cuda):
    check_op(info, "cuda", dtype)


def test_every_record_has_cuda_samples():
    # a new op cannot skip its CUDA path
    missing = sorted(name for name, info in OPINFOS.items()
                     if not any(info.sampler(dtype, device="cuda")
                                for dtype in info.dtypes.get("cuda", ())))
    assert not missing, f"records without CUDA samples: {missing}"


COMPOSITIONS = {  # what no single record makes: device ops on broadcast views, shared operands
    "broadcast_to_add": (lambda x: dg.broadcast_to(x, (2, 3)) + 0, [(3,)]),
    "expand_add": (lambda x: x.expand(2, 3) + 0, [(1, 3)]),
    "products_sharing_operands": (lambda a, b, v: (a @ b, a @ v, v @ b.transpose(1, 2)[0].t()),
                                  [(2, 3), (2, 3, 4), (3,)]),
}


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_compositions_on_cuda_match_cpu(name, cuda):
    fn, shapes = COMPOSITIONS[name]
    sample = Sample(tuple(signed(s, k) for k, s in enumerate(shapes)))
    assert_same_results(run_with_loss(fn, sample, dg.float32, cuda),
                        run_with_loss(fn, sample, dg.float32, "cpu"))


KEYS = {  # advanced keys: index and mask tensors on the device, as training code writes them
    "rows": lambda t, d: t[dg.tensor([0, 2, -1], device=d)],
    "pairs": lambda t, d: t[dg.tensor([[0, 1], [3, 3]], device=d), dg.tensor([2, 0], device=d)],
    "mask": lambda t, d: t[t > 0],
    "leading_mask": lambda t, d: t[(t > 0).all(2)],
    "mask_ellipsis": lambda t, d: t[dg.tensor([1, 0, 1, 0], device=d).bool(), ...],
    "rows_slice": lambda t, d: t[dg.tensor([1, 2], device=d), :],
    "rows_then_partial_slice": lambda t, d: t[dg.tensor([1], device=d), 1:],
    "inner_dim": lambda t, d: t[:, dg.tensor([0, 2], device=d)],
    "cpu_index": lambda t, d: t[dg.tensor([3, 0])],
}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_advanced_indexing_on_cuda_matches_cpu(name, cuda):
    sample = Sample((signed((4, 3, 2)),))
    assert_same_results(run_with_loss(lambda t: KEYS[name](t, cuda), sample, dg.float32, cuda),
                        run_with_loss(lambda t: KEYS[name](t, "cpu"), sample, dg.float32, "cpu"))


@pytest.mark.parametrize("value", [f(3, 2) > 0, integers((2, 3), 0, 0, 2).astype(np.int64),
                                   np.float32(2.0), np.float32(0.0), np.zeros((2, 0), np.float32)],
                         ids=["mask", "ints", "scalar", "zero", "empty"])
def test_nonzero_on_cuda_matches_cpu(value, cuda, same):
    x = dg.tensor(value)
    same(x.cuda().nonzero(), x.nonzero())
    for got, want in zip(x.cuda().nonzero(as_tuple=True), x.nonzero(as_tuple=True)):
        same(got, want)


def test_out_of_range_device_index_is_refused(cuda):
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 4"):
        dg.zeros(4, 2, device=cuda)[dg.tensor([1, 5], device=cuda)]


WRITES = {  # x[key] = value with device keys, as masking code writes them
    "rows_scalar": lambda t, d: t.__setitem__(dg.tensor([0, 2], device=d), 5.0),
    "mask_zero": lambda t, d: t.__setitem__(t > 0, 0.0),
    "pairs_values": lambda t, d: t.__setitem__(
        (dg.tensor([1, 3], device=d), dg.tensor([2, 0], device=d)), dg.tensor([7.0, 8.0], device=d)),
    "mask_rows": lambda t, d: t.__setitem__(dg.tensor([True, False, True, False], device=d),
                                            dg.tensor([1.0, 2.0, 3.0], device=d)),
    "accumulate": lambda t, d: t.copy_(dg.index_put(t, (dg.tensor([0, 0, 2], device=d),),
                                                    dg.tensor([1.0, 2.0, 3.0], device=d),
                                                    accumulate=True)),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_index_writes_on_cuda_match_cpu(name, cuda, same):
    x = f(4, 3)
    want, got = dg.tensor(x), dg.tensor(x, device=cuda)
    WRITES[name](want, "cpu")
    WRITES[name](got, cuda)
    same(got, want)


def test_index_write_gradients_on_cuda_match_cpu(cuda, same):
    grads, data = {}, f(4, 3)
    for dev in ("cpu", cuda):
        x = dg.tensor(data, device=dev, requires_grad=True)
        v = dg.tensor([2.0, 3.0, 4.0], device=dev, requires_grad=True)
        y = x * 1
        y[dg.tensor([1, 2], device=dev)] = v
        (y * y).sum().backward()
        grads[str(dev)] = (x.grad, v.grad)
    for got, want in zip(grads["cuda:0"], grads["cpu"]):
        same(got, want)


def test_remembered_index_range_goes_stale_on_write(cuda):
    x = dg.zeros(4, 2, device=cuda)
    idx = dg.tensor([0, 3], device=cuda)
    x.index_select(0, idx)          # checked once; the range is remembered
    idx[1] = 7                      # an in-place write: the remembered range no longer holds
    with pytest.raises(IndexError, match="index 7 is out of range for dimension 0 with size 4"):
        x.index_select(0, idx)
