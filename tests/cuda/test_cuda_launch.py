"""The packed kernel launch (dynagrad.kernels.cuda.launch).

Every other CUDA test launches through it on a GPU; the GPU tests here check the contract
directly: the values it packs are exactly those numba's own launch would pass, and an argument the
kernel was not compiled for is refused with a clear error instead of being launched. Numba's
simulator runs kernels as Python functions and packs nothing, so only the fallbacks to numba's
dispatcher run there.
"""
import ctypes
import threading
import warnings

import numpy as np
import pytest
from numba import cuda as nbcuda
from numba.cuda.core import config

import dynagrad as dg
from dynagrad.kernels import cache
from dynagrad.kernels.cuda import runner as cuda, launch as cuda_launch
from dynagrad.kernels.cuda.device_array import DeviceArray
from dynagrad.kernels.cuda.launch import Launcher

gpu_only = pytest.mark.skipif(bool(config.ENABLE_CUDASIM),
                              reason="the simulator launches Python functions: no packing")


def _launcher_of(expr: str) -> Launcher:
    keys = [k for k in cache._memory if k[:3] == ("cuda", cache.cuda_arch(), "ew") and expr in k]
    assert len(keys) == 1
    kernel = cache._memory[keys[0]]
    assert isinstance(kernel, Launcher)
    return kernel


def _numba_values(launcher: Launcher, args: tuple) -> list:
    kernel, values = launcher._kernel, []
    for ty, arg in zip(kernel.argument_types, args):
        kernel._prepare_args(ty, arg, 0, [], values)
    return values


def _packed_values(launcher: Launcher, args: tuple) -> list:
    values: list = []
    for pack, arg in zip(launcher._pack, args):
        pack(arg, values)
    return values


def _plain(values: list) -> list:
    return [v.value if isinstance(v, ctypes._SimpleCData) else v for v in values]


@gpu_only
@pytest.mark.parametrize("strided", [False, True])
def test_packed_arguments_are_numbas_own(strided):
    """Both layout classes: flat 1-d views, and 2-d views with any strides (0 broadcasts)."""
    expr = "x * y + z" + (" + 0.5" if strided else "")  # a fresh kernel for each layout class
    a = nbcuda.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = nbcuda.to_device(np.full((3, 4), 2, np.float32))
    if strided:  # a transposed view times a broadcast row: the strided kernel's 2-d views
        shape, x, y = (4, 3), cuda._view(a, (4, 3), (4, 16)), cuda._view(b, (4, 3), (0, 4))
    else:
        shape, x, y = (3, 4), a, b
    out = nbcuda.device_array(shape, np.float32)
    cuda.elementwise(expr, ("a", "a", "s"), ("float32",) * 3, "float32", (x, y, 1.5), out)
    want = x.copy_to_host() * y.copy_to_host() + 1.5 + (0.5 if strided else 0.0)
    np.testing.assert_allclose(out.copy_to_host(), want)

    # the arguments the kernel was launched with: flat views when contiguous, else as given
    args = (x, y, np.float32(1.5), out) if strided else \
        tuple(cuda._view(v, (12,), (4,)) for v in (x, y)) + (np.float32(1.5),
                                                            cuda._view(out, (12,), (4,)))
    launcher = _launcher_of(expr)
    assert _plain(_packed_values(launcher, args)) == _plain(_numba_values(launcher, args))


@gpu_only
def test_an_argument_the_kernel_was_not_compiled_for_is_refused():
    expr = "x - y * 3"
    a = nbcuda.to_device(np.ones(8, np.float32))
    out = nbcuda.device_array(8, np.float32)
    cuda.elementwise(expr, ("a", "a"), ("float32",) * 2, "float32", (a, a), out)
    launcher = _launcher_of(expr)
    wrong_dtype = nbcuda.to_device(np.ones(8, np.float64))
    with pytest.raises(TypeError, match=r"argument 0 must be a 1-d float32 device array, got "
                                        r"1-d float64"):
        launcher[1, 32](wrong_dtype, a, out)
    with pytest.raises(TypeError, match="3 arguments expected, got 2"):
        launcher[1, 32](a, out)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(8, -2, np.float32))  # untouched


@gpu_only
def test_same_shape_contiguous_elementwise_ops_build_no_numba_views(monkeypatch):
    """Such ops (the common case in a training step) pack their buffers' addresses directly;
    other layouts still go through numba views."""
    a = dg.arange(12.0, device="cuda").reshape(3, 4)
    b = dg.full((3, 4), 3.0, device="cuda")
    (a * b + 2).cpu()  # compiles both kernels
    views = []
    real = DeviceArray.kernel_view
    monkeypatch.setattr(DeviceArray, "kernel_view", lambda self: views.append(self) or real(self))
    c = a * b + 2
    assert views == []
    np.testing.assert_array_equal(c.cpu().numpy(), np.arange(12.0).reshape(3, 4) * 3 + 2)
    d = a.t() * b.t()  # transposed operands: the strided kernel, through numba views
    assert views
    np.testing.assert_array_equal(d.cpu().numpy(), (np.arange(12.0).reshape(3, 4) * 3).T)


def test_a_kernel_with_an_argument_type_it_cannot_pack_launches_through_numba():
    from numba.cuda import types

    class Kernel:  # a compiled kernel taking a complex scalar, which no packer here handles
        argument_types, extensions, debug, cooperative = (types.complex64,), [], False, False

    class Dispatcher:
        overloads = {"(complex64,)": Kernel()}

    dispatcher = Dispatcher()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an expected case: no warning
        assert cuda_launch.launcher(dispatcher, "k") is dispatcher


def test_numba_cuda_internals_that_moved_fall_back_to_numba_with_one_warning(monkeypatch):
    monkeypatch.setattr(cuda_launch, "_warned", [])

    class Moved:  # a dispatcher of a numba-cuda release that keeps its kernels elsewhere
        overloads: dict = {}

    dispatcher = Moved()
    with pytest.warns(RuntimeWarning, match="launch through numba's dispatcher instead"):
        assert cuda_launch.launcher(dispatcher, "k") is dispatcher
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cuda_launch.launcher(dispatcher, "k") is dispatcher  # warned once only


def test_each_thread_loads_kernels_under_its_own_token_even_when_thread_ids_are_reused():
    """A thread that has not launched yet must go through numba's loader, which makes the
    device's context current in it; a token per thread (not its reusable id) ensures that."""
    tokens = []

    def launch_twice():
        first = cuda_launch._thread_token()
        again = cuda_launch._thread_token()
        assert again is first
        tokens.append(first)

    for _ in range(3):  # one after another: CPython usually hands out the same id again
        worker = threading.Thread(target=launch_twice)
        worker.start()
        worker.join()
    assert len({id(t) for t in tokens}) == 3
