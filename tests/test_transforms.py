"""Function transforms: ``autograd.functional`` and ``dynagrad.func`` against torch on the same
functions and float64 inputs, against finite differences, nested, and their errors."""
import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import dynagrad as dg
import dynagrad.autograd.functional as F

RNG = np.random.default_rng(0)
A = RNG.standard_normal(3)
B = RNG.standard_normal((2, 3))


def D(*arrays):
    return tuple(dg.tensor(a) for a in arrays)


def T(*arrays):
    return tuple(torch.tensor(a) for a in arrays)


def same(got, want, tol=1e-10):
    """Nested results equal (torch sometimes nests with lists where it means tuples)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w, tol)
    elif isinstance(want, dict):
        assert set(got) == set(want)
        for k in want:
            same(got[k], want[k], tol)
    else:
        assert isinstance(got, dg.Tensor), type(got)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=tol, atol=tol)


def two_out(x, y):  # works on both libraries: methods only
    return (x.sin() * y).sum(-1), x.exp()


def scalar(x, y):
    return (x.sin() * y).sum() * x.sum()


def finite_jacobian(f, x, eps=1e-6):
    """Central differences of ``f`` (NumPy in, NumPy out) at ``x``: out.shape + x.shape."""
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append((f(x + e) - f(x - e)) / (2 * eps))
    return np.stack(cols, -1).reshape(np.shape(f(x)) + x.shape)


# --- autograd.functional --------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_tuple_inputs_and_outputs_match_torch(strategy):
    got = F.jacobian(two_out, D(A, B), vectorize=True, strategy=strategy)
    same(got, TF.jacobian(two_out, T(A, B), vectorize=True, strategy=strategy))


def test_jacobian_nesting_follows_the_arguments():
    x = dg.tensor(A)
    j = F.jacobian(lambda t: t.exp(), x)
    assert isinstance(j, dg.Tensor)
    same(j, TF.jacobian(lambda t: t.exp(), torch.tensor(A)))
    same(F.jacobian(lambda t: (t.exp(), t * 2), x),
         TF.jacobian(lambda t: (t.exp(), t * 2), torch.tensor(A)))
    same(F.jacobian(lambda t, u: t * u, D(A, A)), TF.jacobian(lambda t, u: t * u, T(A, A)))


def test_jacobian_against_finite_differences():
    f = lambda t: (t.sin() * t.sum()).exp()
    want = finite_jacobian(lambda v: np.exp(np.sin(v) * v.sum()), A)
    np.testing.assert_allclose(F.jacobian(f, dg.tensor(A)).numpy(), want, rtol=1e-6, atol=1e-8)


def test_hessian_matches_torch_and_finite_differences():
    same(F.hessian(scalar, D(A, B)), TF.hessian(scalar, T(A, B)))
    f = lambda t: (t ** 3).sum() * t.sum()
    got = F.hessian(f, dg.tensor(A))
    same(got, TF.hessian(f, torch.tensor(A)))
    grad_np = lambda v: 3 * v ** 2 * v.sum() + (v ** 3).sum()
    np.testing.assert_allclose(got.numpy(), finite_jacobian(grad_np, A), rtol=1e-6)
    same(F.hessian(scalar, D(A, B), vectorize=True, outer_jacobian_strategy="forward-mode"),
         TF.hessian(scalar, T(A, B), vectorize=True, outer_jacobian_strategy="forward-mode"))


def test_vector_products_match_torch():
    same(F.vjp(two_out, D(A, B), D(A[:2], A)), TF.vjp(two_out, T(A, B), T(A[:2], A)))
    same(F.jvp(two_out, D(A, B), D(A, B)), TF.jvp(two_out, T(A, B), T(A, B)))
    same(F.hvp(scalar, D(A, B), D(A, B)), TF.hvp(scalar, T(A, B), T(A, B)))
    same(F.vhp(scalar, D(A, B), D(A, B)), TF.vhp(scalar, T(A, B), T(A, B)))
    # v may be left out for a single-element output (vjp) or input (jvp)
    same(F.vjp(lambda t: t.sum(), dg.tensor(A)), TF.vjp(lambda t: t.sum(), torch.tensor(A)))
    same(F.jvp(lambda t: t * 3, dg.tensor([2.0])), TF.jvp(lambda t: t * 3, torch.tensor([2.0])))


def test_create_graph_gives_differentiable_results_and_leaves_inputs_alone():
    x = dg.tensor(A, requires_grad=True)
    xt = torch.tensor(A, requires_grad=True)
    h = F.hessian(lambda t: (t ** 3).sum(), x, create_graph=True)
    assert h.requires_grad
    h.sum().backward()
    TF.hessian(lambda t: (t ** 3).sum(), xt, create_graph=True).sum().backward()
    same(x.grad, xt.grad)
    y = dg.tensor(A, requires_grad=True)
    _, g = F.vjp(lambda t: t ** 2, y, dg.ones(3))
    assert not g.requires_grad and y.grad is None


def test_unused_inputs_get_zeros_unless_strict():
    f = lambda t, u: t * 2
    same(F.vjp(f, D(A, A), dg.ones(3)), TF.vjp(f, T(A, A), torch.ones(3)))
    same(F.jacobian(f, D(A, A)), TF.jacobian(f, T(A, A)))
    for fn, args in ((F.vjp, (f, D(A, A), dg.ones(3))), (F.jacobian, (f, D(A, A)))):
        with pytest.raises(RuntimeError, match="independent of input 1"):
            fn(*args, strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                                           "require gradients"):
        F.jacobian(lambda t: dg.ones(2), dg.tensor(A), strict=True)


def test_functional_errors_match_torch():
    x = dg.tensor(A)
    with pytest.raises(RuntimeError, match="v can only be None if the user-provided function "
                                           "returns a single Tensor with a single element"):
        F.vjp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be torch.Size\(\[3\]\) but "
                                           r"got torch.Size\(\[2\]\)"):
        F.vjp(lambda t: t * 2, x, dg.ones(2))
    with pytest.raises(RuntimeError, match="input to the user-provided function is a single "
                                           "Tensor with a single element"):
        F.jvp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        F.hessian(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        F.hessian(lambda t: (t.sum(),), x)
    with pytest.raises(TypeError, match="outputs of the user-provided function given to jacobian"):
        F.jacobian(lambda t: 3, x)
    with pytest.raises(TypeError, match="inputs given to jacobian must be either a Tensor"):
        F.jacobian(lambda t: t, 3)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(lambda t: t, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="`create_graph=True` and "):
        F.jacobian(lambda t: t, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(AssertionError, match="Expected strategy"):
        F.jacobian(lambda t: t, x, strategy="sideways")


# --- dynagrad.func ------------------------------------------------------------------------------

def cube_sum(t):
    return (t ** 3).sum() * t.sum()


def smooth(t):
    return (t.sin() * t.sum()).exp()


def test_grad_matches_torch_and_finite_differences():
    x, xt = dg.tensor(A), torch.tensor(A)
    got = dg.func.grad(cube_sum)(x)
    same(got, torch.func.grad(cube_sum)(xt))
    f_np = lambda v: np.array((v ** 3).sum() * v.sum())
    np.testing.assert_allclose(got.numpy(), finite_jacobian(f_np, A), rtol=1e-6)
    assert not got.requires_grad


def test_grad_argnums_tuple_pytrees_and_has_aux():
    f = lambda u, v: (u * v.exp()).sum()
    same(dg.func.grad(f, argnums=(0, 1))(*D(A, A)), torch.func.grad(f, argnums=(0, 1))(*T(A, A)))
    same(dg.func.grad(f, argnums=-1)(*D(A, A)), torch.func.grad(f, argnums=-1)(*T(A, A)))
    tree = lambda d: (d["a"] * d["b"][0].cos()).sum()
    same(dg.func.grad(tree)({"a": dg.tensor(A), "b": [dg.tensor(A)]}),
         torch.func.grad(tree)({"a": torch.tensor(A), "b": [torch.tensor(A)]}))
    aux = lambda t: ((t * t).sum(), t.cos())
    same(dg.func.grad(aux, has_aux=True)(dg.tensor(A)),
         torch.func.grad(aux, has_aux=True)(torch.tensor(A)))
    same(dg.func.grad_and_value(aux, has_aux=True)(dg.tensor(A)),
         torch.func.grad_and_value(aux, has_aux=True)(torch.tensor(A)))


def test_nested_transforms_match_torch():
    x, xt = dg.tensor(A), torch.tensor(A)
    fourth = lambda t: t ** 4
    same(dg.func.grad(dg.func.grad(fourth))(dg.tensor(2.0)),
         torch.func.grad(torch.func.grad(fourth))(torch.tensor(2.0)))
    same(dg.func.jacrev(dg.func.grad(cube_sum))(x),
         torch.func.jacrev(torch.func.grad(cube_sum))(xt))
    same(dg.func.hessian(cube_sum)(x), torch.func.hessian(cube_sum)(xt))
    same(dg.func.jacfwd(dg.func.jacrev(smooth))(x), torch.func.jacfwd(torch.func.jacrev(smooth))(xt))
    # a transform's result stays differentiable with respect to a tensor that requires grad
    w, wt = dg.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    dg.func.grad(cube_sum)(w).sum().backward()
    torch.func.grad(cube_sum)(wt).sum().backward()
    same(w.grad, wt.grad)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_match_torch_and_finite_differences(name):
    ours, theirs = getattr(dg.func, name), getattr(torch.func, name)
    same(ours(smooth)(dg.tensor(A)), theirs(smooth)(torch.tensor(A)))
    want = finite_jacobian(lambda v: np.exp(np.sin(v) * v.sum()), A)
    np.testing.assert_allclose(ours(smooth)(dg.tensor(A)).numpy(), want, rtol=1e-6, atol=1e-8)
    same(ours(two_out, argnums=(0, 1))(*D(A, B)), theirs(two_out, argnums=(0, 1))(*D2T(A, B)))
    aux = lambda t: (t.exp(), t.sum())
    same(ours(aux, has_aux=True)(dg.tensor(A)), theirs(aux, has_aux=True)(torch.tensor(A)))


def D2T(*arrays):
    return T(*arrays)


def test_vjp_jvp_linearize_match_torch():
    x, xt = dg.tensor(A), torch.tensor(A)
    out, fn = dg.func.vjp(two_out, *D(A, B))
    out_t, fn_t = torch.func.vjp(two_out, *T(A, B))
    same(out, out_t)
    same(fn((dg.tensor(A[:2]), dg.tensor(A))), fn_t((torch.tensor(A[:2]), torch.tensor(A))))
    same(fn((dg.tensor(A[::-1].copy()[:2]), dg.ones(3, dtype=dg.float64))),  # called again
         fn_t((torch.tensor(A[::-1].copy()[:2]), torch.ones(3, dtype=torch.float64))))
    same(dg.func.jvp(two_out, D(A, B), D(A, B)), torch.func.jvp(two_out, T(A, B), T(A, B)))
    aux = lambda t: (t.exp(), t.sum())
    same(dg.func.jvp(lambda t: dg.ones(2, dtype=dg.float64), (x,), (x,)),
         torch.func.jvp(lambda t: torch.ones(2, dtype=torch.float64), (xt,), (xt,)))
    same(dg.func.jvp(aux, (x,), (x,), has_aux=True),
         torch.func.jvp(aux, (xt,), (xt,), has_aux=True))
    out, jfn = dg.func.linearize(smooth, x)
    out_t, jfn_t = torch.func.linearize(smooth, xt)
    same(out, out_t)
    same(jfn(dg.tensor(A)), jfn_t(torch.tensor(A)))
    same(jfn(dg.ones(3, dtype=dg.float64)), jfn_t(torch.ones(3, dtype=torch.float64)))


def test_func_errors_match_torch():
    x = dg.tensor(A)
    cases = [
        (lambda: dg.func.grad(lambda t: t * 2)(x), ("Expected f\\(\\*args\\) to return a scalar "
         "Tensor, got tensor with 1 dims")),
        (lambda: dg.func.grad(lambda t: 3.0)(x), "Expected f\\(\\*args\\) to return a Tensor"),
        (lambda: dg.func.grad(lambda t: t.sum(), argnums=1)(x),
         "Got argnum=1, but only 1 positional inputs"),
        (lambda: dg.func.grad(lambda t: t.sum(), argnums=())(x), "argnums must be non-empty"),
        (lambda: dg.func.grad(lambda t: t.sum(), argnums=1.0)(x), "argnums must be int or Tuple"),
        (lambda: dg.func.jacrev(lambda t: t, argnums=(0, 0))(x), "argnums elements must be unique"),
        (lambda: dg.func.grad(lambda t: t.sum(), has_aux=True)(x),
         "output of function f should be a tuple"),
        (lambda: dg.func.grad(lambda t: t.sum())(dg.ones(2, dtype=dg.int64)),
         "only Tensors of floating point dtype can require gradients"),
        (lambda: dg.func.jvp(lambda t: t, x, (x,)), "Expected primals to be a tuple"),
        (lambda: dg.func.jvp(lambda t: t, (x,), [x]), ("Expected primals and tangents to have "
         "the same python structure")),
        (lambda: dg.func.jvp(lambda t: t, (x,), (dg.ones(2),)), ("Tensor is of size \\[3\\] while "
         "the given forward gradient is of size \\[2\\]")),
        (lambda: dg.func.vjp(lambda t: (t, t), x)[1]((x,)), ("Expected pytree structure of "
         "cotangents to be the same")),
        (lambda: dg.func.jvp(lambda t: dg.ones(2), (x,), (x,), strict=True),
         "The output of f is independent of the inputs"),
        (lambda: dg.func.jvp(lambda t: 3, (x,), (x,)), ("expected f\\(\\*args\\) to return only "
         "tensors")),
        (lambda: dg.func.functionalize(lambda t: t, remove="x"), ("received invalid argument for "
         "remove=x")),
    ]
    for call, message in cases:
        with pytest.raises(RuntimeError, match=message):
            call()


def test_functional_call_swaps_parameters_only_for_the_call():
    lin = dg.nn.Linear(3, 2, dtype=dg.float64)
    tl = torch.nn.Linear(3, 2, dtype=torch.float64)
    w, b = RNG.standard_normal((2, 3)), RNG.standard_normal(2)
    params = {"weight": dg.tensor(w), "bias": dg.tensor(b)}
    got = dg.func.functional_call(lin, params, (dg.tensor(A),))
    want = torch.func.functional_call(tl, {"weight": torch.tensor(w), "bias": torch.tensor(b)},
                                      (torch.tensor(A),))
    same(got, want)
    assert lin.weight is not params["weight"] and isinstance(lin.weight, dg.nn.Parameter)
    # a sequence of dicts, args given as a single tensor, gradients through the parameters
    loss = lambda p, inp: dg.func.functional_call(lin, [{"weight": p["weight"]},
                                                        {"bias": p["bias"]}], inp).sum()
    loss_t = lambda p, inp: torch.func.functional_call(tl, [{"weight": p["weight"]},
                                                            {"bias": p["bias"]}], inp).sum()
    same(dg.func.grad(loss)(params, dg.tensor(A)),
         torch.func.grad(loss_t)({"weight": torch.tensor(w), "bias": torch.tensor(b)},
                                 torch.tensor(A)))
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'x'.\n\tMissing key\\(s\\): "
                                           "'bias'."):
        dg.func.functional_call(lin, {"weight": dg.tensor(w), "x": dg.ones(1)}, (dg.tensor(A),),
                                strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        dg.func.functional_call(lin, [{"weight": dg.tensor(w)}, {"weight": dg.tensor(w)}],
                                (dg.tensor(A),))


def test_functional_call_ties_weights():
    seq = dg.nn.Sequential(dg.nn.Linear(2, 2, bias=False), dg.nn.Linear(2, 2, bias=False))
    seq[1].weight = seq[0].weight
    x = dg.tensor([1.0, 2.0])
    out = dg.func.functional_call(seq, {"0.weight": dg.eye(2) * 2}, (x,))
    np.testing.assert_allclose(out.numpy(), [4.0, 8.0])  # both layers took the replacement
    out = dg.func.functional_call(seq, {"0.weight": dg.eye(2) * 2}, (x,), tie_weights=False)
    want = (seq[0].weight.detach().numpy() @ (2 * x.numpy()))
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="which are tied"):
        dg.func.functional_call(seq, {"0.weight": dg.eye(2), "1.weight": dg.zeros(2, 2)}, (x,))


def test_stack_module_state_with_vmap_matches_each_model():
    models = [dg.nn.Linear(3, 2) for _ in range(3)]
    params, buffers = dg.func.stack_module_state(models)
    assert tuple(params["weight"].shape) == (3, 2, 3) and params["weight"].is_leaf
    assert params["weight"].requires_grad and buffers == {}
    x = dg.ones(3)
    base = models[0]
    out = dg.vmap(lambda p: dg.func.functional_call(base, p, (x,)))(params)
    for k, m in enumerate(models):
        np.testing.assert_allclose(out[k].detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    _, bn = dg.func.stack_module_state([dg.nn.BatchNorm1d(2), dg.nn.BatchNorm1d(2)])
    assert {k: tuple(v.shape) for k, v in bn.items()} == {
        "running_mean": (2, 2), "running_var": (2, 2), "num_batches_tracked": (2,)}
    for bad, message in (([], "Expected at least one model, got 0"),
                         ([dg.nn.Linear(2, 2), dg.nn.Linear(2, 2).eval()], "same training/eval"),
                         ([dg.nn.Linear(2, 2), dg.nn.ReLU()], "same class")):
        with pytest.raises(RuntimeError, match=message):
            dg.func.stack_module_state(bad)


def test_replace_all_batch_norm_modules_uses_batch_statistics():
    net = dg.nn.Sequential(dg.nn.Linear(2, 2), dg.nn.BatchNorm1d(2))
    assert dg.func.replace_all_batch_norm_modules_(net) is net
    bn = net[1]
    assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    x = dg.tensor(B.T.copy(), dtype=dg.float32)
    net.eval()  # no running statistics: batch statistics even in eval mode
    y = bn(x).detach().numpy()
    np.testing.assert_allclose(y.mean(0), 0, atol=1e-5)


def test_functionalize_and_debug_unwrap_preserve_semantics():
    x, xt = dg.ones(3), torch.ones(3)

    def bump(a):
        a.add_(1)
        return a.view(-1)
    y, yt = dg.func.functionalize(bump)(x), torch.func.functionalize(bump)(xt)
    y[0] = 5.0
    yt[0] = 5.0  # "mutations": the input is mutated; the output is a new tensor
    same(x, xt)
    view = lambda a: a.view(-1)
    y, yt = dg.func.functionalize(view)(x), torch.func.functionalize(view)(xt)
    y[0] = 9.0
    yt[0] = 9.0  # no mutation: the output view still aliases the input
    same(x, xt)
    y = dg.func.functionalize(bump, remove="mutations_and_views")(x)
    yt = torch.func.functionalize(bump, remove="mutations_and_views")(xt)
    y[1] = 7.0
    yt[1] = 7.0  # no aliasing of the input
    same(x, xt)
    assert dg.func.debug_unwrap(x) is x


@pytest.mark.parametrize("shape, pattern, lengths", [
    ((2, 6, 2), "b (h w) c -> b h w c", {"h": 2}),
    ((2, 2, 4, 2), "b h w c -> (b h) (w c)", {}),
    ((2, 2, 4, 3), "b ... c -> c b ...", {}),
    ((2, 2, 8), "b h (w c) -> c 1 (b h) w", {"c": 2}),
    ((2, 1, 3), "a () b -> b a", {}),
])
def test_rearrange_matches_torch(shape, pattern, lengths):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    same(dg.func.rearrange(dg.tensor(a), pattern, **lengths),
         torch.func.rearrange(torch.tensor(a), pattern, **lengths))


def test_rearrange_stacks_a_list_and_rejects_bad_patterns():
    parts = [np.arange(6.0).reshape(2, 3) + k for k in range(2)]
    same(dg.func.rearrange([dg.tensor(p) for p in parts], "n a b -> a (n b)"),
         torch.func.rearrange([torch.tensor(p) for p in parts], "n a b -> a (n b)"))
    with pytest.raises(ValueError):
        dg.func.rearrange(dg.zeros(2, 3), "a b -> a c")
    with pytest.raises(ValueError):
        dg.func.rearrange(dg.zeros(2, 3), "a b c -> a b c")


def test_per_sample_gradients_vmap_of_grad_over_functional_call():
    w, b = RNG.standard_normal((2, 3)), RNG.standard_normal(2)
    xs, ys = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2))

    def run(lib, fn):
        model = lib.nn.Linear(3, 2, dtype=lib.float64)
        params = {"weight": lib.tensor(w), "bias": lib.tensor(b)}

        def loss(p, x, y):
            return ((fn.functional_call(model, p, (x,)) - y) ** 2).sum()
        return fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(xs),
                                                            lib.tensor(ys))
    same(run(dg, dg.func), run(torch, torch.func))
