"""CUDA tensors: placement, transfers, views, creation, random numbers, errors, saving/loading.

Without a GPU these run on Numba's CUDA simulator (tests/conftest.py): what they cover there is the
framework's side (device bookkeeping, views over device memory, the generated kernels' logic);
real-device behaviour (transfer speed, memory placement) needs a GPU run of the same tests.
"""
import numpy as np
import pytest

import dynagrad as dg

ALL_DTYPES = [dg.float16, dg.float32, dg.float64, dg.int64, dg.int32, dg.int16, dg.int8,
              dg.uint8, dg.bool]


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=lambda d: d.name)
def test_round_trip_keeps_values_and_dtype(dt, cuda):
    x = dg.tensor(np.arange(-3, 3).reshape(2, 3), dtype=dt)
    y = x.to(cuda)
    assert y.is_cuda and y.device == cuda and y.dtype is dt and not x.is_cuda
    assert y.get_device() == 0 and x.get_device() == -1
    back = y.cpu()
    assert back.device == dg.device("cpu")
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    assert y.tolist() == x.tolist()
    assert x[0, 1].cuda().shape == () and x[0, 1].cuda().item() == x[0, 1].item()


def test_views_with_new_axes_upload(cuda):
    # arr[:, :, None] is C-contiguous with a zero stride on its new axis: the upload gives it a
    # fresh array's strides (the copy would otherwise drop that axis as a broadcast one)
    from dynagrad.ops import placement
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    like = dg.ones(1).to(cuda)
    for view in (arr[:, :, None], arr[None, :, None, :], arr[:, None][:1]):
        up = placement.like(view, like)
        assert up.is_cuda and tuple(up.shape) == view.shape
        np.testing.assert_array_equal(up.cpu().numpy(), view)
    moved = dg.tensor(arr)[:, :, None].to(cuda)
    assert tuple(moved.shape) == (2, 3, 1)
    np.testing.assert_array_equal(moved.cpu().numpy(), arr[:, :, None])
    assert (dg.tensor(arr).to(cuda)[:, None] * 2).cpu().tolist() == (arr[:, None] * 2).tolist()


def test_to_device_and_dtype_together_and_identity(cuda):
    x = dg.ones(2, 3)
    y = x.to(cuda, dg.float64)
    assert y.is_cuda and y.dtype is dg.float64
    assert y.to(cuda) is y and y.cuda() is y
    assert x.to("cpu") is x and x.cpu() is x
    z = y.to(cuda, copy=True)
    assert z is not y and z.data_ptr() != y.data_ptr()


def test_transfer_is_differentiable(cuda):
    x = dg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.cuda() * 2.0
    assert y.grad_fn is not None and y.is_cuda
    (y * y).sum().backward()
    assert not x.grad.is_cuda
    np.testing.assert_allclose(x.grad.numpy(), 8 * x.detach().numpy())


def test_numpy_refuses_and_repr_names_the_device(cuda):
    y = dg.tensor([1.5, 2.0], device=cuda)
    with pytest.raises(TypeError, match=r"cuda:0 device type tensor to numpy.*\.cpu\(\)"):
        y.numpy()
    assert repr(y) == "tensor([1.5000, 2.0000], device='cuda:0')"
    assert repr(dg.tensor([1, 2], device=cuda, dtype=dg.int32)) == \
        "tensor([1, 2], device='cuda:0', dtype=dynagrad.int32)"
    assert y[1].item() == 2.0 and float(y.sum()) == 3.5


def test_creation_functions_take_device(cuda):
    made = [dg.zeros(2, 3, device=cuda), dg.ones(2, device=cuda), dg.full((2,), 7, device=cuda),
            dg.empty(3, device=cuda), dg.arange(4, device=cuda),
            dg.linspace(0, 1, 3, device=cuda), dg.eye(2, device=cuda),
            dg.tensor([[1, 2]], device="cuda"), dg.scalar_tensor(2.5, device=cuda)]
    assert all(t.is_cuda for t in made)
    assert made[0].tolist() == [[0.0] * 3] * 2 and made[2].tolist() == [7, 7]
    assert made[4].tolist() == [0, 1, 2, 3] and made[6].tolist() == [[1.0, 0.0], [0.0, 1.0]]
    like = [dg.zeros_like(made[0]), dg.ones_like(made[0]), dg.full_like(made[0], 2.0),
            dg.rand_like(made[0]), made[0].new_zeros(4), made[0].new_full((2,), 1.0),
            made[0].new_tensor([1.0])]
    assert all(t.is_cuda for t in like), "*_like and new_* keep the source's device"
    assert dg.zeros_like(made[0], device="cpu").device == dg.device("cpu")


def test_views_share_device_memory(cuda):
    x = dg.arange(12, dtype=dg.float32, device=cuda).view(3, 4)
    t = x.t()
    assert not t.is_contiguous() and t.stride() == (1, 4)
    x[1:, 2:].fill_(-1.0)   # a strided view, written in place
    x.diagonal().zero_()
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    want[1:, 2:] = -1
    np.fill_diagonal(want, 0)
    np.testing.assert_array_equal(x.cpu().numpy(), want)
    np.testing.assert_array_equal(t.cpu().numpy(), want.T)
    assert x[2].storage_offset() == 8


def test_in_place_ops_and_copy_between_devices(cuda):
    x = dg.zeros(2, 3, device=cuda)
    x.copy_(dg.tensor([1.0, 2.0, 3.0]))          # CPU source broadcast into a GPU tensor
    x += 1
    x.mul_(dg.tensor(2.0, device=cuda))
    np.testing.assert_array_equal(x.cpu().numpy(), np.tile([4.0, 6.0, 8.0], (2, 1)))
    host = dg.empty(2, 3)
    host.copy_(x)
    np.testing.assert_array_equal(host.numpy(), x.cpu().numpy())


def test_mixing_devices_names_both(cuda):
    a, b = dg.ones(2, device=cuda), dg.ones(2)
    for op in (lambda: a + b, lambda: b * a, lambda: dg.cat([a, b]), lambda: a @ b,
               lambda: dg.where(a > 0, a, b)):
        with pytest.raises(RuntimeError, match=r"same device.*cuda:0.*cpu|same device.*cpu.*cuda"):
            op()


def test_unavailable_device_ordinal_is_refused(cuda):
    with pytest.raises(RuntimeError, match="invalid CUDA device ordinal"):
        dg.zeros(1, device=f"cuda:{dg.cuda.device_count()}")


def test_same_seed_same_numbers_on_both_devices(cuda):
    draws = {}
    for dev in ("cpu", cuda):
        dg.manual_seed(123)
        draws[str(dev)] = [dg.rand(5, device=dev), dg.randn(2, 3, device=dev),
                           dg.randint(0, 10, (4,), device=dev), dg.randperm(6, device=dev)]
    for c, g in zip(draws["cpu"], draws["cuda:0"]):
        assert g.is_cuda
        np.testing.assert_array_equal(g.cpu().numpy(), c.numpy())
    dg.cuda.manual_seed(5)
    a = dg.rand(3, device=cuda)
    dg.cuda.manual_seed(5)
    np.testing.assert_array_equal(dg.rand(3, device=cuda).cpu().numpy(), a.cpu().numpy())
    y = dg.empty(4, device=cuda).uniform_(2.0, 3.0)
    assert y.is_cuda and ((y >= 2) & (y < 3)).all().item()


def test_integer_division_by_zero_is_checked_on_the_device(cuda):
    with pytest.raises(ZeroDivisionError):
        dg.tensor([4, 5], device=cuda) // dg.tensor([1, 0], device=cuda)


def test_half_storage_and_math(cuda):
    x = dg.tensor([0.5, 1.5, -2.25], dtype=dg.float16)
    y = (x.cuda() * 2 + 1).exp()
    assert y.dtype is dg.float16
    np.testing.assert_allclose(y.cpu().numpy().astype(np.float32),
                               (x * 2 + 1).exp().numpy().astype(np.float32), rtol=1e-3)


def test_save_and_load_map_location(tmp_path, cuda):
    p = tmp_path / "w.dg"
    w = dg.nn.Parameter(dg.randn(2, 3).cuda())
    dg.save({"w": w, "cpu": dg.ones(2)}, p)
    back = dg.load(p)  # tensors return to the device they were saved from
    assert back["w"].is_cuda and isinstance(back["w"], dg.nn.Parameter)
    assert not back["cpu"].is_cuda
    np.testing.assert_array_equal(back["w"].detach().cpu().numpy(), w.detach().cpu().numpy())
    assert not dg.load(p, map_location="cpu")["w"].is_cuda
    assert not dg.load(p, map_location={"cuda:0": "cpu"})["w"].is_cuda
    assert dg.load(p, map_location=cuda)["cpu"].is_cuda


def test_module_to_moves_parameters_in_place(cuda):
    m = dg.nn.Linear(3, 2)
    w = m.weight
    assert m.to(cuda) is m and m.weight is w and w.is_cuda and m.bias.is_cuda
    assert not m.cpu().weight.is_cuda and m.cuda().weight is w and w.is_cuda


@pytest.mark.parametrize("hidden", ["numba.cuda", "numba.cuda.core"],
                         ids=["no_cuda_target", "numba_builtin_cuda_only"])
def test_without_cuda_every_device_request_fails_clearly(tmp_path, hidden):
    """On a machine without CUDA, asking for a cuda tensor, module or load target raises a
    RuntimeError that says CUDA is unavailable and how to fix it. Hidden here: all of
    ``numba.cuda``, or only numba-cuda's part (Numba's own old CUDA target is still there)."""
    import subprocess
    import sys
    import textwrap
    saved = tmp_path / "w.dg"
    dg.save({"w": dg.ones(2)}, saved)
    code = textwrap.dedent(f"""
        import sys
        sys.modules[{hidden!r}] = None   # as if numba-cuda were not installed
        import dynagrad as dg
        t = dg.zeros(2)
        calls = [t.cuda, lambda: t.to("cuda"), lambda: dg.zeros(2, device="cuda"),
                 lambda: dg.rand(2, device="cuda:0"), lambda: dg.nn.Linear(2, 2).to("cuda"),
                 lambda: dg.nn.Linear(2, 2).cuda(), lambda: dg.load({str(saved)!r},
                                                                    map_location="cuda")]
        print(dg.cuda.is_available())
        for call in calls:
            try:
                call()
            except RuntimeError as err:
                print("ERR", err)
            else:
                print("NO ERROR")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "False" and len(lines) == 8
    for line in lines[1:]:
        assert line.startswith("ERR") and "CUDA is not available" in line, line


def test_deterministic_algorithms_give_the_cpu_order_bit_for_bit(cuda):
    rng = np.random.default_rng(3)
    src = rng.normal(size=(40, 3)).astype(np.float32)
    index = rng.integers(0, 2, size=40)  # many repeats: the summation order matters
    want = dg.zeros(2, 3).index_add(0, dg.tensor(index), dg.tensor(src))
    dg.use_deterministic_algorithms(True)
    try:
        got = dg.zeros(2, 3, device=cuda).index_add(0, dg.tensor(index, device=cuda),
                                                   dg.tensor(src, device=cuda))
    finally:
        dg.use_deterministic_algorithms(False)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def _draw_sequence(dev):
    dg.manual_seed(7)
    return [dg.rand(3, device=dev), dg.rand(5, device=dev), dg.rand(2, dtype=dg.float64, device=dev),
            dg.rand(1, device=dev), dg.randn(3, device=dev), dg.rand(9, device=dev),
            dg.rand(4, 3, dtype=dg.float16, device=dev), dg.empty(6, device=dev).uniform_(-2, 3),
            dg.bernoulli(dg.full((7,), 0.3, device=dev)), dg.empty(5, device=dev).bernoulli_(0.6),
            dg.rand(300, device=dev), dg.rand(0, device=dev), dg.rand(2, device=dev),
            dg.nn.functional.dropout(dg.ones(10, device=dev), 0.4)]


def test_uniform_draws_on_the_device_continue_the_cpu_stream_exactly(cuda):
    """Uniform numbers are drawn by a Philox kernel on the GPU; odd 32-bit counts, float64 words,
    normal draws (host) and dropout in between must leave both streams at the same place."""
    for want, got in zip(_draw_sequence("cpu"), _draw_sequence(cuda)):
        assert got.is_cuda
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_philox_state_advance_matches_numpy(dtype):
    from dynagrad.kernels import philox
    for start in (0, 1, 3, 4, 7):
        for n in (0, 1, 2, 5, 8, 9, 33):
            g = np.random.Generator(np.random.Philox(key=11))
            g.random(start, dtype=np.float32)
            predicted = philox.advance_state(g.bit_generator.state, n, dtype)
            g.random(n, dtype=np.dtype(dtype))
            actual = g.bit_generator.state
            for k in ("buffer_pos", "has_uint32", "uinteger"):
                assert predicted[k] == actual[k], (start, n, k)
            np.testing.assert_array_equal(predicted["buffer"], actual["buffer"])
            np.testing.assert_array_equal(predicted["state"]["counter"],
                                          actual["state"]["counter"])


def test_unused_output_of_a_custom_function_gets_zeros_on_its_device(cuda):
    # the engine fills an output that got no gradient with zeros: on that output's device,
    # so backward's arithmetic never mixes a CPU zero with a CUDA gradient
    seen = {}

    class SplitScale(dg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g_double, g_triple):
            seen["devices"] = (g_double.device, g_triple.device)
            seen["unused"] = g_triple.cpu().tolist()
            return g_double * 2 + g_triple * 3

    x = dg.tensor([1.0, -2.0, 4.0], device=cuda, requires_grad=True)
    double, _ = SplitScale.apply(x)
    double.sum().backward()
    assert seen["devices"] == (cuda, cuda)
    assert seen["unused"] == [0.0, 0.0, 0.0]
    assert x.grad.is_cuda and x.grad.cpu().tolist() == [2.0, 2.0, 2.0]
