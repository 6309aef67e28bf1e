"""Spatial transformers: ``affine_grid`` and ``grid_sample`` (torch.nn.functional's names and
signatures), and ``grid_sampler``, the int-coded form behind ``torch.grid_sampler``.

Both are compositions of ops. ``grid_sample`` turns each normalised grid coordinate into source
positions and weights per spatial axis (the taps: one for ``nearest``, two for ``bilinear``, four
for ``bicubic``), then gathers the input at every combination of taps and sums the weighted
values. The gradient reaches the input through the gathers (a scatter-add) and the grid through
the weights, as in PyTorch; the tap positions themselves (floors, roundings) carry none.

Example:
    >>> import dynagrad as dg, dynagrad.nn.functional as F
    >>> x = dg.arange(4.0).reshape(1, 1, 2, 2)
    >>> F.grid_sample(x, dg.zeros(1, 1, 1, 2), align_corners=True)   # the centre
    tensor([[[[1.5000]]]])
"""
from __future__ import annotations

import itertools
import math
import warnings

from ... import creation, dtypes
from ...errors import describe
from ...ops.elementwise import where
from ...ops.movement import stack
from ...tensor import Tensor

__all__ = ["affine_grid", "grid_sample"]

MODES = ("bilinear", "nearest", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")
_CUBIC_A = -0.75  # the cubic convolution kernel's parameter (PyTorch's and OpenCV's)


def _align_warning(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired. See the documentation of grid_sample for details.",
                      stacklevel=3)
        return False
    return bool(align_corners)


# --- affine_grid -------------------------------------------------------------------------------

def _base_axis(steps: int, align_corners: bool, like_t: Tensor) -> Tensor:
    """``steps`` normalised positions in [-1, 1] (pixel centres unless ``align_corners``)."""
    if steps == 1:
        return creation.zeros(1, dtype=like_t.dtype, device=like_t.device)
    axis = creation.linspace(-1.0, 1.0, steps, dtype=like_t.dtype, device=like_t.device)
    return axis if align_corners else axis * ((steps - 1) / steps)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps ``theta``: ``(N, 2, 3)`` for a 4-D ``size``
    ``(N, C, H, W)`` gives ``(N, H, W, 2)``, ``(N, 3, 4)`` for a 5-D one gives ``(N, D, H, W, 3)``;
    entry ``(.., x, y[, z])`` is ``theta @ (x, y[, z], 1)`` over the normalised output positions.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> identity = dg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> F.affine_grid(identity, (1, 1, 1, 3), align_corners=True)[0, 0]
        tensor([[-1.,  0.],
                [ 0.,  0.],
                [ 1.,  0.]])
    """
    align_corners = _align_warning(align_corners)
    if not isinstance(theta, Tensor) or not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"{describe(theta) if isinstance(theta, Tensor) else type(theta)}")
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    nsp = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (nsp, nsp + 1):
        raise ValueError(f"Expected a batch of {nsp}D affine matrices of shape "
                         f"Nx{nsp}x{nsp + 1} for size {size}. Got {describe(theta)}.")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: theta holds {theta.shape[0]} matrices but size asks "
                           f"for a batch of {size[0]} (got theta {describe(theta)}, size {size})")
    if min(size[2:]) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if align_corners and max(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    spatial = size[2:]                                   # (H, W) or (D, H, W)
    columns = []
    for k in range(nsp):                                 # x runs along W, y along H, z along D
        steps = spatial[nsp - 1 - k]
        view = [1] * nsp
        view[nsp - 1 - k] = steps
        columns.append(_base_axis(steps, align_corners, theta).reshape(view).expand(spatial))
    columns.append(creation.ones(spatial, dtype=theta.dtype, device=theta.device))
    base = stack(columns, -1).reshape(1, -1, nsp + 1)          # rows (x, y[, z], 1)
    grid = base @ theta.transpose(1, 2)                         # (N, P, nsp)
    return grid.reshape((size[0],) + spatial + (nsp,))


# --- grid_sample -------------------------------------------------------------------------------

def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] to pixel units: the corner pixels' centres (``align_corners``) or their edges."""
    if align_corners:
        return (coord + 1.0) * ((size - 1) / 2.0)
    return ((coord + 1.0) * size - 1.0) / 2.0


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """``coord`` reflected into ``[twice_low / 2, twice_high / 2]`` by folding at its ends."""
    if twice_low == twice_high:
        return coord * 0.0
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    dist = (coord - low).abs()
    extra = dist.fmod(span)
    flips = (dist / span).floor().detach()
    even = (flips.fmod(2.0) == 0)
    return where(even, extra + low, (span + low) - extra)


def _padded(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """A pixel coordinate mapped into the input for ``border`` and ``reflection`` padding."""
    if padding_mode == "border":
        return coord.clamp(0.0, size - 1.0)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return coord.clamp(0.0, size - 1.0)
    return coord


def _cubic_weights(t: Tensor) -> list:
    """The four cubic convolution weights of the taps at offsets -1, 0, 1, 2 from the floor."""
    a = _CUBIC_A

    def near(x):   # |x| <= 1
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0

    def far(x):    # 1 < |x| < 2
        return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def _axis_taps(coord: Tensor, size: int, mode: str, padding_mode: str,
               align_corners: bool) -> list:
    """``[(position, weight), ...]`` along one axis: positions are whole (float) pixel
    indices without gradient, weights carry the gradient of the grid."""
    x = _unnormalize(coord, size, align_corners)
    if mode != "bicubic":   # bicubic pads each tap position instead, below
        x = _padded(x, size, padding_mode, align_corners)
    if mode == "nearest":
        # half to even, as PyTorch's nearbyint; a weight of 1 that links the grid to the output
        # so that it gets its (zero) gradient, as in PyTorch
        return [(x.detach().round(), x * 0.0 + 1.0)]
    low = x.detach().floor()
    t = x - low
    if mode == "bilinear":
        return [(low, 1.0 - t), (low + 1.0, t)]
    return [(_padded(low + (k - 1.0), size, padding_mode, align_corners).floor(), w)
            for k, w in enumerate(_cubic_weights(t))]


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``torch.grid_sampler``: ``grid_sample`` with the modes as ints (interpolation 0 bilinear,
    1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    for name, t in (("input", input), ("grid", grid)):
        if not isinstance(t, Tensor):
            raise TypeError(f"grid_sampler(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    nsp = input.ndim - 2
    if grid.shape[-1] != nsp:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nsp} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if not input.dtype.is_floating_point or grid.dtype is not input.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be floating point tensors "
                           f"of the same dtype (got input {describe(input)}, grid "
                           f"{describe(grid)})")
    if any(n == 0 for n in input.shape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                           f"dimensions, but input has sizes {list(input.shape)}")
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): unknown interpolation_mode {interpolation_mode} or "
                           f"padding_mode {padding_mode}")
    mode, pad_mode = MODES[interpolation_mode], PADDING_MODES[padding_mode]
    if mode == "bicubic" and nsp != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    n, c = input.shape[:2]
    sizes = tuple(input.shape[2:])                 # (H, W) or (D, H, W)
    out_sp = tuple(grid.shape[1:-1])
    points = math.prod(out_sp)
    flat = input.reshape(n, c, math.prod(sizes))
    strides = [math.prod(sizes[a + 1:]) for a in range(nsp)]
    # coordinate k of the grid indexes spatial axis nsp - 1 - k (x: W, y: H, z: D)
    taps = [_axis_taps(grid.select(-1, nsp - 1 - a).reshape(n, points), sizes[a], mode, pad_mode,
                       bool(align_corners)) for a in range(nsp)]
    out = None
    for combo in itertools.product(*taps):
        inside, index, weight = None, None, None
        for a, (pos, w) in enumerate(combo):
            ok = (pos >= 0) & (pos <= sizes[a] - 1)
            inside = ok if inside is None else inside & ok
            term = pos.clamp(0, sizes[a] - 1).to(dtypes.int64) * strides[a]
            index = term if index is None else index + term
            weight = w if weight is None else weight * w
        values = flat.gather(2, index.unsqueeze(1).expand(n, c, points))
        weight = where(inside, weight, 0.0)
        term = values * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out.reshape((n, c) + out_sp)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` (or ``(N, C, D, H, W)``) at the normalised positions of
    ``grid`` ``(N, Ho, Wo, 2)`` (or ``(N, Do, Ho, Wo, 3)``), whose last dim holds ``(x, y[, z])``
    in [-1, 1]: ``-1`` is the left/top edge (``align_corners=False``) or the centre of the first
    pixel (``True``). ``mode``: ``bilinear`` (trilinear for 5-D), ``nearest`` or ``bicubic``
    (4-D); ``padding_mode`` says what lies outside: ``zeros``, the ``border`` values or a
    ``reflection``.

    Example:
        >>> import dynagrad as dg, dynagrad.nn.functional as F
        >>> x = dg.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> F.grid_sample(x, dg.tensor([[[[-1.0, -1.0], [1.0, 1.0]]]]), align_corners=True)
        tensor([[[[1., 4.]]]])
    """
    if mode not in MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    align_corners = _align_warning(align_corners)
    return grid_sampler(input, grid, MODES.index(mode), PADDING_MODES.index(padding_mode),
                        align_corners)
