"""Normalisation layers: ``BatchNorm1d BatchNorm2d BatchNorm3d LayerNorm GroupNorm InstanceNorm1d
InstanceNorm2d InstanceNorm3d RMSNorm LocalResponseNorm``, with PyTorch's parameters, buffers, defaults and reprs.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> bn = nn.BatchNorm2d(6)
    >>> bn
    BatchNorm2d(6, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> _ = bn(dg.randn(4, 6, 3, 3)); int(bn.num_batches_tracked)
    1
"""
from __future__ import annotations

from ... import dtypes
from ...creation import empty, ones, tensor, zeros
from ...ops.nn.norm import _normalized_shape
from ...tensor import Tensor
from .. import init
from ..functional import norm as F
from ..module import Module
from ..parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm"]


def _register_affine(module: Module, shape, affine: bool, bias: bool, dtype,
                     device=None) -> None:
    """Give ``module`` an uninitialised ``weight`` and ``bias`` of ``shape``; ``None`` in their
    place where ``affine`` (or, for the bias alone, ``bias``) is off."""
    if affine:
        module.weight = Parameter(empty(shape, dtype=dtype, device=device))
        if bias:
            module.bias = Parameter(empty(shape, dtype=dtype, device=device))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module: Module) -> None:
    """Weight 1 and bias 0, skipping whichever the module does not have."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _NormBase(Module):
    """Shared state of batch and instance norm: affine parameters and running statistics."""

    _version = 2  # state_dicts older than this lack num_batches_tracked

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None, dtype=None,
                 *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _register_affine(self, num_features, affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked",
                                 tensor(0, dtype=dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        """Weight 1 and bias 0 (and fresh running statistics)."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            # checkpoints from before the counter existed load as "no batches seen"
            if key in missing_keys:
                missing_keys.remove(key)
            init.zeros_(self.num_batches_tracked)


class _BatchNorm(_NormBase):
    _dims: tuple = ()

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {want} input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum=None: a cumulative moving average over all batches seen
            factor = (1.0 / int(self.num_batches_tracked) if self.momentum is None
                      else self.momentum)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over ``(N, C)`` or ``(N, C, L)`` inputs (statistics per channel ``C``).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.BatchNorm1d(3)(dg.randn(8, 3)).shape
        dynagrad.Size([8, 3])
    """
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over ``(N, C, H, W)`` inputs (statistics per channel ``C``).

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> bn = nn.BatchNorm2d(2).eval()    # eval: normalise by the running statistics
        >>> bool((bn(dg.ones(1, 2, 2, 2)) - 1 / (1 + 1e-5) ** 0.5).abs().max() < 1e-6)
        True
    """
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm over ``(N, C, D, H, W)`` inputs."""
    _dims = (5,)


class _InstanceNorm(_NormBase):
    _spatial = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        s = self._spatial
        if input.ndim not in (s + 1, s + 2):
            raise ValueError(f"expected {s + 1}D or {s + 2}D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        unbatched = input.ndim == self._spatial + 1
        x = input.unsqueeze(0) if unbatched else input
        if self.affine and x.shape[1] != self.num_features:
            raise ValueError(f"expected input's size at dim=1 to match num_features "
                             f"({self.num_features}), but got: {x.shape[1]}.")
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return y.squeeze(0) if unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over ``(N, C, L)`` or unbatched ``(C, L)`` inputs."""
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over ``(N, C, H, W)`` or unbatched ``(C, H, W)`` inputs: each channel of each
    sample is normalised over its own ``H x W`` values.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> y = nn.InstanceNorm2d(3)(dg.randn(2, 3, 4, 4))
        >>> bool(y.mean((2, 3)).abs().max() < 1e-5)
        True
    """
    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)`` inputs."""
    _spatial = 3


class LocalResponseNorm(Module):
    """Normalise each channel by the mean square of its ``size`` neighbouring channels; see
    ``F.local_response_norm``.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.LocalResponseNorm(2)
        LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, with elementwise weight and bias.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.LayerNorm(4)
        LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, self.normalized_shape, elementwise_affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise groups of ``num_channels // num_groups`` channels per sample; per-channel affine.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.GroupNorm(2, 4)(dg.randn(3, 4, 5)).shape
        dynagrad.Size([3, 4, 5])
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine(self, num_channels, affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Divide by the root mean square over the trailing ``normalized_shape`` dims, times weight.

    Example:
        >>> import dynagrad as dg
        >>> from dynagrad import nn
        >>> nn.RMSNorm([4])
        RMSNorm((4,), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
