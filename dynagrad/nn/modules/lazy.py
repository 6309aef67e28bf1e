"""Lazy modules: ``LazyLinear LazyConv1d/2d/3d LazyConvTranspose1d/2d/3d LazyBatchNorm1d/2d/3d
LazyInstanceNorm1d/2d/3d``. Their input size (``in_features``, ``in_channels``,
``num_features``) is read from the first input: until then their parameters and running
statistics are ``UninitializedParameter`` / ``UninitializedBuffer`` placeholders; the first call
materialises them with the shapes and the initialisation of the plain module, which the lazy
module then becomes (``type(m) is nn.Linear`` after ``nn.LazyLinear(4)(x)``), as in PyTorch.
``load_state_dict`` on a lazy module materialises its placeholders with the stored shapes.
Unlike PyTorch's, a placeholder is an ordinary empty tensor (shape ``(0,)``) until then: using it
in an op before the first call is not trapped with a dedicated error.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> m = nn.LazyLinear(3)
    >>> m(dg.zeros(2, 5)).shape, type(m).__name__, tuple(m.weight.shape)
    (dynagrad.Size([2, 3]), 'Linear', (3, 5))
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...creation import tensor
from ...dtypes import int64
from ...tensor import Tensor
from ..parameter import UninitializedBuffer, UninitializedParameter
from .conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from .linear import Linear
from .norm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "LazyLinear",
    "LazyModuleMixin",
]

_PLACEHOLDERS = (UninitializedParameter, UninitializedBuffer)


class LazyModuleMixin:
    """Infers a module's parameter shapes from its first input: a forward pre-hook calls
    ``initialize_parameters(*args, **kwargs)``, then removes itself and turns the module into
    ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters,
                                                               with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer of this module (not its children) is a placeholder."""
        return any(isinstance(t, _PLACEHOLDERS)
                   for t in list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialise the placeholders from the first input (each lazy module's own rule)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        # a stored tensor gives its placeholder the shape to load into
        for table in (self._parameters, self._buffers):
            for name, t in table.items():
                key = prefix + name
                if isinstance(t, _PLACEHOLDERS) and key in state_dict:
                    with no_grad():
                        t.materialize(tuple(state_dict[key].shape))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


def _infer_parameters(module, args, kwargs):
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is ``input.shape[-1]`` of the first call."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    def _lazy_placeholders(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        n = self._nsp
        if input.ndim not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: "
                               f"{list(input.shape)}")
        self.in_channels = input.shape[1] if input.ndim == n + 2 else input.shape[0]
        if self.in_channels % self.groups:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        with no_grad():
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(base: type) -> type:
    """The lazy form of the convolution ``base``: ``in_channels`` from the first input."""

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                      padding_mode, device=device, dtype=dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters,
                                                               with_kwargs=True)
        self._lazy_placeholders(out_channels, bias, device, dtype)

    def __init_transposed__(self, out_channels: int, kernel_size, stride=1, padding=0,
                            output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                            padding_mode: str = "zeros", device=None, dtype=None) -> None:
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                      dilation, padding_mode, device=device, dtype=dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters,
                                                               with_kwargs=True)
        self._lazy_placeholders(out_channels, bias, device, dtype)

    name = "Lazy" + base.__name__
    init = __init_transposed__ if base._transposed else __init__
    doc = (f"``{base.__name__}`` whose ``in_channels`` is the channel count of the first input "
           f"(``input.shape[1]``, or ``shape[0]`` unbatched).")
    return type(name, (_LazyConvMixin, base), {"__init__": init, "cls_to_become": base,
                                               "__doc__": doc, "__module__": __name__})


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d)


class _LazyNormMixin(LazyModuleMixin):
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                t = getattr(self, name)
                if isinstance(t, _PLACEHOLDERS):
                    t.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base: type) -> type:
    """The lazy form of the norm layer ``base`` (``num_features`` from ``input.shape[1]``). As
    in PyTorch, the lazy instance norms too default to ``affine=True,
    track_running_stats=True``."""
    doc = f"``{base.__name__}`` whose ``num_features`` is ``input.shape[1]`` of the first call."
    return type("Lazy" + base.__name__, (_LazyNormMixin, base),
                {"cls_to_become": base, "__doc__": doc, "__module__": __name__})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
