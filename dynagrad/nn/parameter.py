"""``Parameter``: a tensor that a ``Module`` registers as learnable when assigned as an attribute,
and ``Buffer``: a tensor that a ``Module`` registers as state (saved, not learned).

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> p = nn.Parameter(dg.tensor([1.0, 2.0]))
    >>> p
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    >>> isinstance(p * 2, nn.Parameter)   # results of ops are plain tensors
    False
"""
from __future__ import annotations

from ..creation import empty
from ..tensor import TENSOR_TYPES, Tensor, _rebuild

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and is registered by ``Module.__setattr__``.

    It shares memory (and the in-place version counter) with ``data``, as PyTorch's does.
    """

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Parameter: expected a Tensor as data, got {type(data).__name__}")
        self._data, self.dtype, self._vc = data._data, data.dtype, data._vc
        if requires_grad:
            self.requires_grad = True  # the setter refuses integer dtypes, as PyTorch does

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data.copy(), self.dtype.name, self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(Tensor.__deepcopy__(self, {}), self._requires_grad)
        if self._grad is not None:
            p._grad = self._grad.__deepcopy__({})
        memo[id(self)] = p
        return p


TENSOR_TYPES.add(Parameter)  # parameters take the same hot paths as plain tensors


def _rebuild_parameter(arr, dtype_name, requires_grad) -> Parameter:
    return Parameter(_rebuild(arr, dtype_name, False), requires_grad)


class _BufferMeta(type):
    # A Buffer is a plain tensor carrying a mark, so ``isinstance`` looks at the mark.
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and getattr(obj, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Mark a tensor as a buffer: ``self.running = nn.Buffer(dg.zeros(3), persistent=False)`` in a
    Module registers it like ``register_buffer``. Returns a plain tensor sharing ``data``'s memory.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Buffer: expected a Tensor as data, got {type(data).__name__}")
        t = data.detach()
        t._is_buffer = True
        t._buffer_persistent = persistent
        return t


class _Uninitialized:
    """What the placeholders of the lazy modules share: no shape until ``materialize``."""

    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the placeholder uninitialised storage of ``shape`` (on ``device``, of ``dtype``:
        its own by default) and turn it into a ``cls_to_become``."""
        data = empty(tuple(shape) if not isinstance(shape, int) else (shape,),
                     dtype=dtype or self.dtype, device=device or self.device)
        self._data, self.dtype, self._vc = data._data, data.dtype, data._vc
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape is not known yet (the weights of the ``Lazy*`` modules before
    their first call); ``materialize(shape)`` makes it a ``Parameter``.

    Example:
        >>> from dynagrad import nn
        >>> p = nn.UninitializedParameter()
        >>> p.materialize((2, 3)); type(p).__name__, tuple(p.shape)
        ('Parameter', (2, 3))
    """

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        super().__init__(empty(0, dtype=dtype, device=device), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = UninitializedParameter(self._requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet (running statistics of the lazy norm layers);
    ``materialize(shape)`` makes it a plain tensor."""

    def __init__(self, requires_grad: bool = False, device=None, dtype=None) -> None:
        data = empty(0, dtype=dtype, device=device)
        self._data, self.dtype, self._vc = data._data, data.dtype, data._vc
        if requires_grad:
            self.requires_grad = True

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = UninitializedBuffer(self._requires_grad, self.device, self.dtype)
        return memo[id(self)]
