"""Complex dtypes: creation, printing, promotion, the part views, arithmetic and reductions
against NumPy complex128, gradients against PyTorch's (the conjugate Wirtinger convention) and
finite differences, and PyTorch's errors.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from harness import check_op
from opinfo import family, params

import dynagrad as dg


@pytest.mark.parametrize("info,dtype", params(family("complex")))
def test_op(info, dtype):
    check_op(info, "cpu", dtype)


def cdata(shape, seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal(shape) + 1j * r.standard_normal(shape)


def rdata(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def close(a, b, tol=1e-10):
    a = a.detach().numpy() if isinstance(a, dg.Tensor) else a
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# --- dtypes, creation, printing ----------------------------------------------------------

def test_dtype_objects_and_promotion():
    assert dg.cfloat is dg.complex64 and dg.cdouble is dg.complex128
    assert dg.complex64.is_complex and not dg.complex64.is_floating_point
    assert not dg.float32.is_complex
    assert dg.complex64.to_real() is dg.float32 and dg.complex128.to_real() is dg.float64
    assert dg.float64.to_complex() is dg.complex128 and dg.int64.to_real() is dg.int64
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for int64"):
        dg.int64.to_complex()
    names = ["float32", "float64", "int64", "bool", "complex64", "complex128", "uint8"]
    for a in names:
        for b in names:
            got = dg.promote_types(getattr(dg, a if a != "bool" else "bool"),
                                   getattr(dg, b if b != "bool" else "bool"))
            want = torch.promote_types(getattr(torch, a), getattr(torch, b))
            assert got.name == str(want).replace("torch.", ""), (a, b)


def test_result_type_matches_torch_with_zero_dim_tensors_and_scalars():
    names = ["bool", "uint8", "int64", "float16", "float32", "float64", "complex64",
             "complex128"]
    bad = []
    for a in names:
        for b in names:
            for sa, sb in (((2,), ()), ((), (2,)), ((), ())):
                mine = dg.result_type(dg.zeros(sa, dtype=getattr(dg, a)),
                                      dg.zeros(sb, dtype=getattr(dg, b)))
                ref = torch.result_type(torch.zeros(sa, dtype=getattr(torch, a)),
                                        torch.zeros(sb, dtype=getattr(torch, b)))
                # (torch's complex32, which dynagrad lacks, becomes complex64 here)
                want = "complex64" if ref is torch.complex32 else str(ref).replace("torch.", "")
                if mine.name != want:
                    bad.append((a, b, sa, sb, mine, ref))
        for s in (True, 2, 2.5, 1j):
            mine = dg.result_type(dg.zeros(2, dtype=getattr(dg, a)), s)
            ref = torch.result_type(torch.zeros(2, dtype=getattr(torch, a)), s)
            want = "complex64" if ref is torch.complex32 else str(ref).replace("torch.", "")
            if mine.name != want:
                bad.append((a, s, mine, ref))
    assert bad == []


@pytest.mark.parametrize("dt,scalar,want", [
    ("int64", 1j, "complex64"), ("float32", 1j, "complex64"), ("float64", 1j, "complex128"),
    ("complex64", 2.0, "complex64"), ("complex64", 2, "complex64")])
def test_python_scalars_promote(dt, scalar, want):
    x = dg.tensor([1, 2], dtype=getattr(dg, dt))
    assert (x * scalar).dtype.name == want
    assert (torch.tensor([1, 2], dtype=getattr(torch, dt)) * scalar).dtype == getattr(torch, want)
    # a 0-dim complex128 tensor lifts a float32 tensor only to complex64
    assert (dg.ones(2) + dg.tensor(1j, dtype=dg.complex128)).dtype is dg.complex64


def test_creation():
    assert dg.tensor([1 + 2j, 3]).dtype is dg.complex64
    assert dg.tensor(np.array([1j])).dtype is dg.complex128
    assert dg.tensor([1.0], dtype=dg.cdouble).dtype is dg.complex128
    assert dg.zeros(2, dtype=dg.cfloat).numpy().dtype == np.complex64
    a = np.array([1 + 1j, 2j], np.complex64)
    t = dg.from_numpy(a)
    t[0] = 5j
    assert a[0] == 5j  # shares memory
    assert dg.tensor(1 + 2j).item() == 1 + 2j and isinstance(dg.tensor(1j).item(), complex)
    assert complex(dg.tensor(2 - 1j)) == 2 - 1j
    assert dg.tensor([1j, 2]).tolist() == [1j, 2 + 0j]
    z = dg.tensor([1.0, 2.0])
    assert z.cfloat().dtype is dg.complex64 and z.cdouble().dtype is dg.complex128
    assert dg.tensor([1j]).is_complex() and dg.is_complex(dg.tensor([1j]))
    assert not z.is_complex() and not dg.is_complex(z)
    assert dg.tensor([1j]).type() == "dynagrad.ComplexFloatTensor"
    dg.set_default_dtype(dg.float64)
    try:
        assert dg.tensor([1j]).dtype is dg.complex128
    finally:
        dg.set_default_dtype(dg.float32)


@pytest.mark.parametrize("values,dtype", [
    ([1 + 2j, 3 - 1j], None), ([1e-5 + 1j, 100.5], None), ([[1.5 + 2j, 3 - 1j], [0j, -1j]], None),
    ([1, 2j], None), ([1.0 + 2j], "complex128"), (1j, None), ([[0.25 + 1j] * 30] * 2, None),
    ([], "complex64"), ([], "complex128"), ([float("nan") + 1j, float("inf") - 2.5j], None)])
def test_printing_matches_torch(values, dtype):
    d = dg.tensor(values, dtype=getattr(dg, dtype) if dtype else None)
    t = torch.tensor(values, dtype=getattr(torch, dtype) if dtype else None)
    assert repr(d) == repr(t).replace("torch.", "dynagrad.")


def test_printing_with_grad():
    z = dg.tensor([1 + 1j], requires_grad=True)
    assert repr(z) == "tensor([1.+1.j], requires_grad=True)"


def test_serialization_round_trip(tmp_path):
    z = dg.tensor([[1 + 2j, -3j]], dtype=dg.complex128)
    dg.save({"z": z}, tmp_path / "z.pt")
    back = dg.load(tmp_path / "z.pt")["z"]
    assert back.dtype is dg.complex128 and back.tolist() == z.tolist()
    import pickle
    again = pickle.loads(pickle.dumps(dg.tensor([1j])))
    assert again.dtype is dg.complex64 and again.tolist() == [1j]


# --- views ----------------------------------------------------------------------------------

def test_view_as_real_and_complex_share_memory():
    z = dg.tensor([[1 + 2j, 3 - 1j], [5j, 2]])
    r = dg.view_as_real(z)
    assert r.shape == (2, 2, 2) and r.dtype is dg.float32 and r.stride() == (4, 2, 1)
    close(r, np.stack([z.numpy().real, z.numpy().imag], -1))
    r[0, 0, 1] = 7.0
    assert z[0, 0].item() == 1 + 7j
    c = dg.view_as_complex(r)
    assert c.dtype is dg.complex64 and c.shape == (2, 2)
    c[1, 1] = 4j
    assert r[1, 1].tolist() == [0.0, 4.0]
    zt = z.t()  # a transposed complex tensor: its real view keeps the strides
    close(dg.view_as_real(zt), torch.view_as_real(torch.tensor(z.numpy()).t()).numpy())
    assert dg.view_as_complex(dg.ones(3, 2, dtype=dg.float64)).dtype is dg.complex128


def test_real_imag_views():
    z = dg.tensor([1 + 2j, 3 - 1j])
    assert z.real.tolist() == [1.0, 3.0] and z.imag.tolist() == [2.0, -1.0]
    assert dg.real(z)._base is z and not z.imag.is_contiguous()
    z.imag[0] = 9.0
    assert z[0].item() == 1 + 9j
    z.real = dg.tensor([0.5, 0.5])
    assert z.tolist() == [0.5 + 9j, 0.5 - 1j]
    x = dg.tensor([1.0, 2.0])
    assert x.real is x and dg.tensor([1, 2]).real.dtype is dg.int64


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: dg.view_as_real(dg.ones(2)), RuntimeError,
     "view_as_real is only supported for complex tensors"),
    (lambda: dg.view_as_complex(dg.ones(2, 2).t()), RuntimeError,
     "Tensor must have a last dimension with stride 1"),
    (lambda: dg.view_as_complex(dg.ones(2, 3)), RuntimeError,
     "Tensor must have a last dimension of size 2"),
    (lambda: dg.view_as_complex(dg.ones(5)[1:].reshape(2, 2)), RuntimeError,
     "Tensor must have a storage_offset divisible by 2"),
    (lambda: dg.view_as_complex(dg.ones(2, 3, 2)[:, :, :]), None, None),
    (lambda: dg.view_as_complex(dg.ones(2, dtype=dg.int64)), RuntimeError,
     ("view_as_complex is only supported for float and double tensors, but got a tensor of "
     "scalar type: Long")),
    (lambda: dg.ones(2).imag, RuntimeError,
     "imag is not implemented for tensors with non-complex dtypes."),
    (lambda: dg.complex(dg.ones(2), dg.ones(2, dtype=dg.float64)), RuntimeError,
     "Expected object of scalar type Float but got scalar type Double for second argument"),
    (lambda: dg.complex(dg.tensor([1]), dg.tensor([1])), RuntimeError,
     "Expected both inputs to be Half, Float or Double tensors but got Long and Long"),
])
def test_view_errors_match_torch(call, exc, msg):
    if exc is None:
        call()
        return
    with pytest.raises(exc) as info:
        call()
    assert str(info.value) == msg


# --- values against NumPy complex128 ---------------------------------------------------------

Z, W, R = cdata((3, 4), 1), cdata((3, 4), 2), rdata((3, 4), 3)

_UNARY = ["neg", "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
          "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "asinh", "sinh", "cosh", "tanh",
          "sigmoid", "abs", "angle", "sgn", "conj", "conj_physical", "isnan", "isfinite",
          "isinf", "isreal"]


@pytest.mark.parametrize("name", _UNARY)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_unary_values_against_torch(name, dtype):
    d = getattr(dg, name)(dg.tensor(Z, dtype=getattr(dg, dtype)))
    t = getattr(torch, name)(torch.tensor(Z, dtype=getattr(torch, dtype)))
    assert d.dtype.name == str(t.dtype).replace("torch.", "")
    close(d, t.resolve_conj().numpy(), 1e-5 if dtype == "complex64" else 1e-12)


@pytest.mark.parametrize("expr", [
    "a + b", "a - b", "a * b", "a / b", "a ** b", "a + r", "r * a", "r / a", "a * 2.5",
    "a - 1j", "2j / a", "a ** 2", "a ** 0.5", "a == b", "a != a", "a == r"])
def test_binary_values_against_numpy(expr):
    a, b = dg.tensor(Z, dtype=dg.complex128), dg.tensor(W, dtype=dg.complex128)
    r = dg.tensor(R, dtype=dg.float64)
    got = eval(expr, {"a": a, "b": b, "r": r})
    want = eval(expr, {"a": Z, "b": W, "r": R})
    assert got.dtype.np == want.dtype
    close(got, want)


def test_reductions_matmul_and_movement():
    z = dg.tensor(Z, dtype=dg.complex128)
    close(z.sum(), Z.sum())
    close(z.sum(1, keepdim=True), Z.sum(1, keepdims=True))
    close(z.mean(0), Z.mean(0))
    close(z.prod(1), Z.prod(1))
    close(z.cumsum(1), Z.cumsum(1))
    close(z @ z.mT, Z @ Z.T)
    close(dg.mm(z, z.mT), Z @ Z.T)
    close(dg.bmm(z[None], z.mT[None]), (Z @ Z.T)[None])
    close(dg.einsum("ij,kj->ik", z, z), Z @ Z.T)
    close(z.mH, Z.conj().T)
    close(dg.adjoint(z), Z.conj().T)
    close(dg.where(dg.tensor(R > 0), z, dg.tensor(R, dtype=dg.float64)), np.where(R > 0, Z, R))
    close(dg.cat([z, z], 1), np.concatenate([Z, Z], 1))
    close(dg.stack([z, z]), np.stack([Z, Z]))
    close(z.t().contiguous(), Z.T)
    close(z.reshape(2, 6).flip(0), Z.reshape(2, 6)[::-1])
    close(z[1:, ::2], Z[1:, ::2])
    close(z.to(dg.complex64).to(dg.complex128), Z.astype(np.complex64))
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        close(z.to(dg.float64), Z.real)
    close(dg.polar(dg.tensor(np.abs(R)), dg.tensor(R)), np.abs(R) * np.exp(1j * R), 1e-6)
    close(dg.complex(dg.tensor(R), dg.tensor(R[:1])), R + 1j * R[:1])


def test_inplace_ops():
    z = dg.tensor(Z, dtype=dg.complex128)
    z.mul_(1j)
    z.add_(dg.tensor(W, dtype=dg.complex128))
    close(z, Z * 1j + W)
    z.conj_physical_()
    close(z, np.conj(Z * 1j + W))
    with pytest.raises(RuntimeError, match="can't be cast"):
        dg.ones(2).add_(dg.tensor([1j, 1j]))


@pytest.mark.parametrize("call,exc,msg", [
    (lambda lib, z: z < z * 2, NotImplementedError, "\"lt\" not implemented for 'ComplexFloat'"),
    (lambda lib, z: z.sign(), NotImplementedError, ("Unlike NumPy, torch.sign is not intended "
     "to support complex numbers. Please use torch.sgn instead.")),
    (lambda lib, z: z.floor(), NotImplementedError, "floor is not supported for complex inputs"),
    (lambda lib, z: z.clamp(0, 1), NotImplementedError,
     "clamp is not supported for complex types"),
    (lambda lib, z: lib.maximum(z, z), RuntimeError,
     "maximum not implemented for complex tensors."),
    (lambda lib, z: lib.atan2(z, z), NotImplementedError,
     "\"atan2\" not implemented for 'ComplexFloat'"),
    (lambda lib, z: z.sort(), RuntimeError, "Sort does not support complex dtypes on CPU"),
    (lambda lib, z: z.topk(1), RuntimeError, "topk does not support complex dtypes on CPU"),
])
def test_unsupported_ops_raise_like_torch(call, exc, msg):
    with pytest.raises(exc) as info:
        call(dg, dg.tensor([1 + 2j, 3 - 1j]))
    assert str(info.value) == msg
    with pytest.raises(exc):  # torch raises the same type
        call(torch, torch.tensor([1 + 2j, 3 - 1j]))


def test_max_refuses_complex():
    with pytest.raises(RuntimeError):
        dg.tensor([1j]).max()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real"):
        dg.tensor([1j], requires_grad=True).sum().backward()


# --- gradients: PyTorch parity (the conjugate Wirtinger convention) ----------------------------

def _loss(out, w, lib):
    """A real loss of a complex or real output: Re(sum(out * conj(w)))."""
    if out.is_complex():
        return (out * w.conj()).real.sum() if lib is torch else (out * dg.conj(w)).real.sum()
    return (out * w.real).sum()


def _compare(fn_dg, fn_t, *arrays, tol=1e-10):
    dins = [dg.tensor(a, requires_grad=True) for a in arrays]
    tins = [torch.tensor(a, requires_grad=True) for a in arrays]
    dout, tout = fn_dg(*dins), fn_t(*tins)
    close(dout, tout.detach().resolve_conj().numpy(), tol)
    w = cdata(tuple(tout.shape), 11)
    _loss(dout, dg.tensor(w), dg).backward()
    _loss(tout, torch.tensor(w), torch).backward()
    for d, t in zip(dins, tins):
        if t.grad is None:
            assert d.grad is None
            continue
        assert d.grad.dtype.name == str(t.grad.dtype).replace("torch.", "")
        close(d.grad, t.grad.resolve_conj().numpy(force=True), tol)


@pytest.mark.parametrize("name", [
    "neg", "reciprocal", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "exp2", "log1p",
    "rsqrt", "abs", "angle", "sgn", "conj", "conj_physical", "real", "imag", "view_as_real",
    "sum", "mean", "prod", "square"])
def test_unary_gradients_match_torch(name):
    _compare(getattr(dg, name), getattr(torch, name), cdata((2, 3), 4))


@pytest.mark.parametrize("name", ["angle", "sgn", "abs", "real", "conj"])
def test_real_input_gradients_match_torch(name):
    _compare(getattr(dg, name), getattr(torch, name), rdata((5,), 4) + 0.1)


@pytest.mark.parametrize("expr", [
    "a + b", "a - b", "a * b", "a / b", "a ** b", "a * r", "r / a", "a ** 2", "2j * a - a / 3",
    "a @ b.mT", "(a.unsqueeze(0) * r.unsqueeze(1)).sum(0)", "lib.where(r > 0, a, b)",
    "lib.cat([a, r], 1)", "a.t().reshape(6)", "lib.einsum('ij,kj->ik', a, b)",
    "lib.complex(r, r * 2)", "lib.polar(r.abs(), r)", "lib.view_as_complex(r.reshape(3, 2))",
    "a.prod(1)", "a.cumsum(1)", "a.mean(0)", "a.mH", "(a * a.conj()).real", "r.to(a.dtype) * a",
    "a.var(1)", "a.std()", "a.norm()", "a.norm(dim=0)", "a.var(0, correction=0)",
    "a.cumprod(1)", "(a * (r > 0)).cumprod(1)", "(a * (r > 0)).prod(1)",
    # indexing and movement carry complex gradients unchanged
    "a[lib.tensor([0, 1, 1])]", "a.gather(1, lib.tensor([[0, 2], [1, 1]]))",
    "a.index_select(1, lib.tensor([0, 0, 2]))", "a.masked_fill(r > 0, 0)", "a.roll(1, 1)",
    "a.flip(1)", "a.repeat(2, 1)", "lib.nn.functional.pad(a, (1, 2))", "a[:, None].expand(2, 3, 3)",
    "a.scatter(1, lib.tensor([[0], [1]]), b[:, :1])", "a.diagonal()", "a.narrow(1, 1, 2)"])
def test_gradients_match_torch(expr):
    def fn(lib):
        return lambda a, b, r: eval(expr, {"lib": lib, "a": a, "b": b, "r": r})
    _compare(fn(dg), fn(torch), cdata((2, 3), 5), cdata((2, 3), 6), rdata((2, 3), 7))


def test_gradients_by_finite_differences():
    # torch's convention: grad = dL/dx + i dL/dy for z = x + iy
    z0, w = cdata((4,), 8), cdata((4,), 9)

    def loss(z):
        t = dg.tensor(z)
        return float((((t * t).exp() / (t + 3)).abs() + (t.sgn() * dg.tensor(w)).real).sum())
    z = dg.tensor(z0, requires_grad=True)
    (((z * z).exp() / (z + 3)).abs() + (z.sgn() * dg.tensor(w)).real).sum().backward()
    eps, fd = 1e-6, np.zeros(4, complex)
    for i in range(4):
        for step in (1, 1j):
            e = np.zeros(4, complex)
            e[i] = eps * step
            d = (loss(z0 + e) - loss(z0 - e)) / (2 * eps)
            fd[i] += d * step
    close(z.grad, fd, 1e-6)


def test_double_backward_through_complex_mul():
    # d/dz of Re(sum(z * z * conj(w))) keeps a graph: compare the second derivative with torch
    z0, w = cdata((3,), 1), cdata((3,), 2)
    outs = []
    for lib in (dg, torch):
        z = lib.tensor(z0, requires_grad=True)
        (g,) = (dg.autograd.grad if lib is dg else torch.autograd.grad)(
            (z * z * lib.tensor(w).conj()).real.sum(), z, create_graph=True)
        (g.abs() ** 2).sum().backward()
        outs.append(z.grad)
    close(outs[0], outs[1].numpy())


def test_inplace_abs_of_complex_is_refused_like_torch():
    for lib in (dg, torch):
        with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
            lib.tensor([1j]).abs_()


def test_assert_close_compares_complex_values():
    z = dg.tensor([1 + 1j, 2j])
    dg.testing.assert_close(z, z.clone())
    for other in (z.conj(), z * 1.001):
        with pytest.raises(AssertionError, match="not close"):
            dg.testing.assert_close(z, other)


def test_dlpack_and_numpy_interop():
    t = torch.tensor([1 + 2j, 3j], dtype=torch.complex128)
    d = dg.from_dlpack(t)
    assert d.dtype is dg.complex128 and d.tolist() == [1 + 2j, 3j]
    back = torch.from_dlpack(dg.tensor([1 + 2j]))
    assert back.dtype == torch.complex64 and back.tolist() == [1 + 2j]
    assert np.asarray(dg.tensor([1j])).dtype == np.complex64
    assert dg.as_tensor(np.array([1j])).dtype is dg.complex128


def test_custom_function_with_complex_output_keeps_its_gradient():
    class Square(dg.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * (2 * z).conj()
    z = dg.tensor([1 + 2j, -1j], requires_grad=True)
    out = Square.apply(z)
    assert out.requires_grad
    (out * dg.tensor([1 - 1j, 2j]).conj()).real.sum().backward()
    t = torch.tensor([1 + 2j, -1j], requires_grad=True)
    ((t * t) * torch.tensor([1 - 1j, 2j]).conj()).real.sum().backward()
    close(z.grad, t.grad.numpy(), 1e-6)
