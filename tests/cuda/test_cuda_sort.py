"""sort / argsort / topk on CUDA: the rank kernel's permutation against NumPy's stable argsort (the
CPU path) - ties, NaN, both directions, k = 0..n, 1-D and 3-D with the sorted dim in the middle -
and the gradients that flow back through the gathered values. Shapes are tiny (simulator)."""
import numpy as np
import pytest

import dynagrad as dg
from dynagrad.kernels.cuda import backend as gpu
from dynagrad.kernels.buffers import is_host

NAN = np.nan
TIES_NAN = np.array([3.0, 1.0, NAN, 1.0, 2.0, NAN, 3.0, -0.0, 0.0, 1.0], np.float32)


def reference_order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """The stable permutation in float64 NumPy: ascending NaN last; descending NaN first, equal
    values in their original order (how the CPU path defines it)."""
    x = np.asarray(x, np.float64)
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    return (n - 1) - np.flip(np.argsort(np.flip(x, dim), axis=dim, kind="stable"), dim)


def both(arr, cuda, requires_grad=False):
    """The same values as a CPU tensor and a CUDA tensor."""
    return (dg.tensor(arr, requires_grad=requires_grad),
            dg.tensor(arr, device=cuda, requires_grad=requires_grad))


def check_sorted(res, x: np.ndarray, dim: int, descending: bool, k=None):
    order = reference_order(x, dim, descending)
    if k is not None:
        order = np.take(order, np.arange(k), axis=dim)
    assert res.indices.is_cuda and res.values.is_cuda
    assert res.indices.dtype is dg.int64 and res.values.cpu().numpy().dtype == x.dtype
    np.testing.assert_array_equal(res.indices.cpu().numpy(), order)
    np.testing.assert_array_equal(res.values.cpu().numpy(), np.take_along_axis(x, order, dim))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_1d_ties_nan_signed_zero(cuda, descending):
    res = dg.tensor(TIES_NAN, device=cuda).sort(descending=descending)
    check_sorted(res, TIES_NAN, 0, descending)
    cpu = dg.tensor(TIES_NAN).sort(descending=descending)
    assert res.indices.tolist() == cpu.indices.tolist()
    # NaN first when descending, last when ascending; ties in original order either way
    want = [2, 5, 0, 6, 4, 1, 3, 9, 7, 8] if descending else [7, 8, 1, 3, 9, 4, 0, 6, 2, 5]
    assert res.indices.tolist() == want


@pytest.mark.parametrize("descending", [False, True])
def test_sort_3d_middle_dim_and_argsort(cuda, descending):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 3, size=(2, 5, 3)).astype(np.float32)  # many ties
    x[1, 2, 0] = x[0, 4, 2] = NAN
    check_sorted(dg.tensor(x, device=cuda).sort(1, descending), x, 1, descending)
    got = dg.tensor(x, device=cuda).argsort(dim=-2, descending=descending)
    np.testing.assert_array_equal(got.cpu().numpy(), reference_order(x, 1, descending))


def test_sort_strided_input_and_int_bool_dtypes(cuda):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    t = dg.tensor(x, device=cuda).t()  # (3, 4), not contiguous along the sorted dim
    check_sorted(t.sort(0), np.ascontiguousarray(x.T), 0, False)
    ints = np.array([[2, -1, 2, 7, -1], [0, 0, 5, -3, 5]], np.int64)
    check_sorted(dg.tensor(ints, device=cuda).sort(1, descending=True), ints, 1, True)
    bools = np.array([True, False, True, False, False])
    res = dg.tensor(bools, device=cuda).sort()
    assert res.indices.tolist() == [1, 3, 4, 0, 2]
    assert res.values.tolist() == [False, False, False, True, True]


def test_sort_permuted_3d_and_float16(cuda):
    """Strides that merge into no (outer, axis, inner) view go through a contiguous copy."""
    x = np.random.default_rng(5).integers(0, 3, (3, 2, 4)).astype(np.float32)
    xp = np.ascontiguousarray(x.transpose(1, 0, 2))
    t = dg.tensor(x, device=cuda).permute(1, 0, 2)
    for d in (0, 1, 2):
        check_sorted(t.sort(d, descending=True), xp, d, True)
        check_sorted(t.topk(1, d, largest=False), xp, d, False, 1)
    half = x.astype(np.float16)
    check_sorted(dg.tensor(half, device=cuda).sort(1), half, 1, False)


@pytest.mark.parametrize("k", [0, 1, 4, 10])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_1d(cuda, k, largest):
    res = dg.tensor(TIES_NAN, device=cuda).topk(k, largest=largest)
    check_sorted(res, TIES_NAN, 0, largest, k)
    cpu = dg.tensor(TIES_NAN).topk(k, largest=largest)
    assert res.indices.tolist() == cpu.indices.tolist()


def test_topk_3d_middle_dim(cuda):
    x = np.random.default_rng(3).integers(0, 4, size=(2, 6, 2)).astype(np.float32)
    for k in (0, 2, 6):
        check_sorted(dg.tensor(x, device=cuda).topk(k, 1), x, 1, True, k)
        check_sorted(dg.tensor(x, device=cuda).topk(k, 1, largest=False), x, 1, False, k)


def test_zero_dim_and_empty(cuda):
    s = dg.tensor(2.5, device=cuda)
    res = s.sort()
    assert res.values.is_cuda and res.indices.is_cuda and res.indices.item() == 0
    assert s.topk(1).indices.is_cuda
    e = dg.zeros((2, 0, 3), device=cuda)
    assert tuple(e.sort(1).indices.shape) == (2, 0, 3)
    assert tuple(dg.zeros((2, 3), device=cuda).topk(0, 1).values.shape) == (2, 0)


def test_order_is_computed_on_the_device(cuda, monkeypatch):
    """No host round trip: the permutation comes from the kernel, the values from gather."""
    import dynagrad.ops.indexing as indexing
    from dynagrad.kernels.cpu import backend as cpu

    def refuse(*args, **kwargs):
        raise AssertionError("the CUDA sort read its data back to the host")
    monkeypatch.setattr(cpu, "_argsort_array", refuse)
    monkeypatch.setattr(indexing, "host", refuse)
    x = dg.tensor([[1.0, 3.0, 2.0]], device=cuda)
    assert x.sort(1).indices.cpu().tolist() == [[0, 2, 1]]
    assert x.topk(2, 1).indices.cpu().tolist() == [[1, 2]]


def test_argsort_axis_buffer_api(cuda):
    x = np.array([[0.5, NAN, -1.0, 0.5]], np.float32)
    arr = dg.tensor(x, device=cuda)._data
    assert not is_host(arr)
    out = gpu.argsort_axis(arr, -1, True, 3)
    assert out.to_host().tolist() == [[1, 0, 3]]
    with pytest.raises(TypeError, match="sort_axis: out must be int64"):
        from dynagrad.kernels.cuda import runner as kcuda
        kcuda.sort_axis(arr.kernel_view(), 1, False, dg.zeros((1, 4), device=cuda)._data
                        .kernel_view())


@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_topk_gradients(cuda, descending):
    x = np.array([[0.3, -1.2, 0.3, 2.0], [1.0, 1.0, -0.5, 0.0], [0.7, -0.7, 0.1, 0.1]],
                 np.float32)
    up = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0
    grads = []
    for t in both(x, cuda, requires_grad=True):
        g = dg.tensor(up, device=t.device)
        values = t.sort(0, descending=descending).values
        top = t.topk(2, 1, largest=not descending).values
        ((values * g).sum() + (top * g[:, :2]).sum()).backward()
        grads.append(t.grad)
    assert grads[1].is_cuda
    # float64 reference: each upstream value lands on the element the permutation picked
    want = np.zeros((3, 4))
    order0 = reference_order(x, 0, descending)
    np.put_along_axis(want, order0, up, 0)  # a permutation per column: one value per slot
    order1 = reference_order(x, 1, not descending)[:, :2]
    for r in range(3):
        want[r, order1[r]] += up[r, :2]
    np.testing.assert_allclose(grads[0].numpy(), want, rtol=0, atol=0)
    np.testing.assert_allclose(grads[1].cpu().numpy(), want, rtol=0, atol=0)
