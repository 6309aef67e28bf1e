"""PyTorch's legacy CPU tensor types (``FloatTensor``, ``LongTensor`` ...): constructors and
``isinstance`` checks on dtype and CPU device.

``T(*sizes)`` makes an uninitialised tensor of that shape, ``T(data)`` copies ``data`` as
``dg.tensor(data, dtype=...)``, ``T(tensor)`` returns a tensor of that dtype as it is (another
dtype is a TypeError, as in PyTorch), ``T()`` an empty one.

Example:
    >>> import dynagrad as dg
    >>> dg.FloatTensor([1, 2])
    tensor([1., 2.])
    >>> isinstance(dg.ones(2), dg.FloatTensor), isinstance(dg.ones(2).double(), dg.FloatTensor)
    (True, False)
"""
from __future__ import annotations

from . import dtypes
from .creation import empty, tensor
from .tensor import Size, Tensor

__all__ = ["BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor",
           "IntTensor", "LongTensor", "ShortTensor"]


class _TensorType(type):
    """The metaclass: ``isinstance(x, FloatTensor)`` is "a float32 tensor on the CPU"."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args, device=None):
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                               f"{device} was passed")
        if not args:
            return empty(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype != cls.dtype or t.device.type != "cpu":
                raise TypeError(f"expected {cls.__name__} (dtype={cls.dtype}, device=cpu), got a "
                                f"tensor of dtype={t.dtype}, device={t.device}")
            return t
        if len(args) == 1 and isinstance(args[0], Size):
            return empty(*args[0], dtype=cls.dtype)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return empty(*args, dtype=cls.dtype)
        if len(args) > 1:
            raise TypeError(f"{cls.__name__}(): expected sizes (ints) or one data argument, got "
                            f"{tuple(type(a).__name__ for a in args)}")
        return tensor(args[0], dtype=cls.dtype)

    def __repr__(cls) -> str:
        return f"<class 'dynagrad.{cls.__name__}'>"


def _make(name: str, dtype) -> type:
    return _TensorType(name, (), {"dtype": dtype, "__module__": __name__,
                                  "__doc__": f"Legacy CPU tensor type of dtype {dtype}."})


FloatTensor = _make("FloatTensor", dtypes.float32)
DoubleTensor = _make("DoubleTensor", dtypes.float64)
HalfTensor = _make("HalfTensor", dtypes.float16)
LongTensor = _make("LongTensor", dtypes.int64)
IntTensor = _make("IntTensor", dtypes.int32)
ShortTensor = _make("ShortTensor", dtypes.int16)
CharTensor = _make("CharTensor", dtypes.int8)
ByteTensor = _make("ByteTensor", dtypes.uint8)
BoolTensor = _make("BoolTensor", dtypes.bool_)
