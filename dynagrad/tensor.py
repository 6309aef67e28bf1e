"""The Tensor: a NumPy buffer view plus dtype, device and autograd metadata.

Every computing method forwards to an op in ``dynagrad.ops`` (attached by the op registry), so this
file holds only what a tensor *is*: its buffer, shape and strides, conversions, and its repr.

Example:
    >>> import dynagrad as dg
    >>> x = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> x.shape, x.dtype, x.is_leaf
    (dynagrad.Size([2, 2]), dynagrad.float32, True)
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .device import CPU, cuda_device
from .kernels.cuda.device_array import DeviceArray as _DA
from .dtypes import dtype as _dtype_cls


class Size(tuple):
    """A tensor shape: a tuple that prints as ``dynagrad.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"dynagrad.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class Tensor:
    """An n-dimensional array with autograd. Create with ``dg.tensor``, ``dg.zeros``, ``dg.randn``...

    Views (``view``, ``transpose``, slicing, ...) share memory and a version counter with their base.
    """

    # class-level defaults keep construction cheap: a new tensor sets only _data, dtype and _vc
    _requires_grad = False
    _grad = None
    grad_fn = None
    _output_nr = 0
    _base = None
    _accum = None
    _hooks = None
    _retains_grad = False
    _post_accumulate_hooks = None  # register_post_accumulate_grad_hook's {key: hook(tensor)}
    _pinned = False
    __array_priority__ = 1000  # numpy defers to our reflected operators
    # ``Tensor.dtype`` on the class (torch has one: ``hasattr(Tensor, "dtype")``) is the type of
    # every tensor's dtype. Each tensor sets its own in its ``__dict__``, which wins. Deliberately
    # not a property (a call on every read) nor any Python-level object, which would slow every
    # ``x.dtype`` read (bench/README.md); a class object under the instance value costs nothing.
    dtype = _dtype_cls

    def __init__(self, data=None, *, dtype=None, requires_grad: bool = False):
        from .creation import tensor as make
        src = make([] if data is None else data, dtype=dtype)
        self._data, self.dtype, self._vc = src._data, src.dtype, [0]
        if requires_grad:
            self.requires_grad = True

    # --- identity and metadata -------------------------------------------------------------
    @property
    def data(self) -> "Tensor":
        """A tensor sharing storage with this one, detached from the graph."""
        return self.detach()

    @data.setter
    def data(self, other: "Tensor") -> None:
        self._data, self.dtype = other._data, other.dtype

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim, "size")]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes the elements take (``numel() * itemsize``, whatever the strides)."""
        return self._data.size * self.dtype.itemsize

    def is_same_size(self, other: "Tensor") -> bool:
        """Whether ``other`` has this tensor's shape."""
        return self._data.shape == other._data.shape

    def is_signed(self) -> bool:
        """Whether the dtype holds negative values (False for bool and uint8)."""
        return self.dtype.is_signed

    def is_nonzero(self) -> bool:
        """The one element of a one-element tensor as a bool (torch's errors otherwise)."""
        n = self._data.size
        if n != 1:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if n == 0 else
                               "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()).item())

    def is_shared(self) -> bool:
        """Whether the memory is in shared memory for other processes: never (dynagrad pickles a
        tensor's values, it does not share them)."""
        return False

    def is_pinned(self) -> bool:
        """Whether the memory is page-locked host memory (``pin_memory``)."""
        base = self if self._base is None else self._base
        return base._pinned

    def to_dense(self, dtype=None, *, masked_grad=None) -> "Tensor":
        """This tensor (every dynagrad tensor is dense and strided), cast to ``dtype`` if given."""
        return self if dtype is None or dtype is self.dtype else self.to(dtype)

    def stride(self, dim: int | None = None):
        st = tuple(s // self.dtype.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim, "stride")]

    def storage_offset(self) -> int:
        if type(self._data) is _DA:
            return self._data.offset // self.dtype.itemsize
        base = self._data
        while isinstance(base.base, np.ndarray):
            base = base.base
        return (self._data.__array_interface__["data"][0]
                - base.__array_interface__["data"][0]) // self.dtype.itemsize

    def is_contiguous(self, memory_format=None) -> bool:
        return self._data.flags.c_contiguous

    def data_ptr(self) -> int:
        if type(self._data) is _DA:
            return self._data.data_ptr
        return self._data.__array_interface__["data"][0]

    @property
    def device(self):
        if type(self._data) is not _DA:
            return CPU
        return cuda_device(self._data.device_index)

    @property
    def is_cuda(self) -> bool:
        return type(self._data) is _DA

    @property
    def is_cpu(self) -> bool:
        return type(self._data) is not _DA

    def get_device(self) -> int:
        """The CUDA device index, or -1 for a CPU tensor."""
        return -1 if type(self._data) is not _DA else self._data.device_index

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if self.grad_fn is not None and not value:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(f"only Tensors of floating point and complex dtype can require "
                               f"gradients (got {self.dtype.name})")
        self._requires_grad = value

    @property
    def grad(self) -> "Tensor | None":
        """The accumulated gradient (leaves, and non-leaves after ``retain_grad``)."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"{type(value).__name__}")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(f"assigned grad has data of a different size: grad shape "
                                   f"{tuple(value.shape)}, tensor shape {tuple(self.shape)}")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: grad "
                                   f"{value.dtype.name}, tensor {self.dtype.name}")
        self._grad = value

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        self.requires_grad = requires_grad
        return self

    @property
    def _version(self) -> int:
        return self._vc[0]

    @property
    def output_nr(self) -> int:
        return self._output_nr

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    # --- autograd helpers ------------------------------------------------------------------
    def detach(self) -> "Tensor":
        """A tensor sharing storage and version counter, with no history and no grad."""
        return self._alias()

    def detach_(self) -> "Tensor":
        self.grad_fn = None
        self._requires_grad = False
        return self

    def _alias(self) -> "Tensor":
        """Same memory and version counter; no history, and (as PyTorch's ``detach``) not a view:
        it holds no reference to ``self``, so saving one in a graph node makes no cycle."""
        t = _new(Tensor)
        t._data, t.dtype, t._vc = self._data, self.dtype, self._vc
        return t

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        import weakref
        ref = weakref.ref(self)

        def keep(grad):
            t = ref()
            if t is not None:
                t.grad = grad.detach().clone() if t.grad is None else t.grad + grad.detach()
        self.grad_fn.register_retain_hook(keep, self._output_nr)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a new grad."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn.register_prehook(hook, self._output_nr)
        if self._hooks is None:
            self._hooks = {}
        key = object()
        self._hooks[key] = hook
        return _LeafHookHandle(self._hooks, key)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after a backward pass accumulated into this leaf's ``.grad``
        (not for ``autograd.grad``, which accumulates nothing); returns a handle to remove it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = {}
        key = object()
        self._post_accumulate_hooks[key] = hook
        return _LeafHookHandle(self._post_accumulate_hooks, key)

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
                 inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (see ``dg.autograd.backward``)."""
        engine = _ENGINE or _load_engine()  # imported once: an import statement costs per call
        engine.backward(self, gradient, retain_graph, create_graph, inputs)

    # --- conversion ------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The NumPy array sharing this tensor's memory (zero-copy)."""
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if type(self._data) is _DA:
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            return self._data.to_host()
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self._data if type(self._data) is not _DA else self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to "
                               "Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()  # a cuda buffer copies to the host for this

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self.dtype.category >= 2 or self._data.size != 1:  # (float or complex)
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self._data.size} values is "
                               "ambiguous")
        return bool(self.item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol):
        if type(self._data) is _DA:
            raise TypeError("pickling a cuda tensor is not supported; use dg.save (map_location= "
                            "chooses the device on load) or .cpu() first")
        return (_rebuild, (self._data.copy(), self.dtype.name, self._requires_grad))

    def __deepcopy__(self, memo):
        t = _wrap(self._data.copy(), self.dtype)  # a copy on the same device
        t._requires_grad = self._requires_grad
        if self.grad is not None:
            t.grad = _wrap(self.grad._data.copy(), self.grad.dtype)
        memo[id(self)] = t
        return t

    # --- printing --------------------------------------------------------------------------
    def __repr__(self) -> str:
        from .tensor_str import tensor_repr
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and spec:
            return format(self.item(), spec)
        return repr(self)


class _LeafHookHandle:
    __slots__ = ("_hooks", "_key")

    def __init__(self, hooks, key):
        self._hooks, self._key = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)


def _rebuild(arr, dtype_name, requires_grad):
    t = _wrap(arr, dtypes.from_name(dtype_name))
    t._requires_grad = requires_grad
    return t


_new = object.__new__
_ENGINE = None  # dynagrad.autograd.engine, which imports this module: bound on first backward()


def _load_engine():
    global _ENGINE
    from .autograd import engine
    _ENGINE = engine
    return engine


def reset_grads(tensors, set_to_none: bool = True) -> None:
    """``zero_grad`` for a group of tensors: drop each ``.grad`` or zero it in place (detached)."""
    for t in tensors:
        g = t.grad
        if g is None:
            continue
        if set_to_none:
            t.grad = None
            continue
        if g.grad_fn is not None:
            g.detach_()
        else:
            g.requires_grad_(False)
        g._data[...] = 0
        g._vc[0] += 1


# Exact types the hot paths accept as tensors (``type(x) in TENSOR_TYPES`` is cheaper than
# isinstance); nn adds Parameter.
TENSOR_TYPES = {Tensor}


def _wrap(arr: np.ndarray, dtype: _dtype_cls) -> Tensor:
    """A new tensor owning (or viewing) ``arr``, with no history. The hot-path constructor."""
    t = _new(Tensor)
    t._data = arr
    t.dtype = dtype
    t._vc = [0]
    return t


def _view(base: Tensor, arr: np.ndarray) -> Tensor:
    """A tensor that views ``base``'s memory: it shares the version counter."""
    t = _new(Tensor)
    t._data = arr
    t.dtype = base.dtype
    t._vc = base._vc
    t._base = base._base if base._base is not None else base
    return t


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim
