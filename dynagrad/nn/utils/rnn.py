"""Variable-length sequences for recurrent layers (PyTorch's ``torch.nn.utils.rnn``).

A ``PackedSequence`` stores a batch of sequences of different lengths without padding: its
``data`` holds, time step after time step, the step's element of every sequence still running
(sequences sorted by decreasing length), and ``batch_sizes[t]`` says how many there are at step
``t``. ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` accept one as input and return one.

Packing and unpacking are one ``index_select`` each (a gather whose index is computed on the host
from the lengths), so gradients flow through them to the padded input and back.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> packed = pack_sequence([dg.tensor([1, 2, 3]), dg.tensor([4, 5]), dg.tensor([6])])
    >>> packed.data, packed.batch_sizes
    (tensor([1, 4, 6, 2, 5, 3]), tensor([3, 2, 1]))
    >>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
    >>> padded
    tensor([[1, 2, 3],
            [4, 5, 0],
            [6, 0, 0]])
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from ...creation import arange, as_tensor, full
from ...dtypes import float16, float32, float64, int8, int16, int32, int64, uint8
from ...errors import describe
from ...ops.movement import cat
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

_Fields = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices",
                                         "unsorted_indices"])


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(_Fields):
    """A batch of variable-length sequences, packed: ``(data, batch_sizes, sorted_indices,
    unsorted_indices)``.

    ``data`` holds the elements step by step (step ``t`` contributes ``batch_sizes[t]`` rows);
    ``batch_sizes`` is a CPU int64 tensor; ``sorted_indices[i]`` is the original batch position
    of the ``i``-th longest sequence and ``unsorted_indices`` its inverse (both None when the
    batch was already sorted). Build one with ``pack_padded_sequence`` or ``pack_sequence``,
    not by hand.

    Example:
        >>> import dynagrad as dg
        >>> p = pack_sequence([dg.ones(2, 3), dg.ones(1, 3)])
        >>> tuple(p.data.shape), p.batch_sizes.tolist(), p.is_cuda
        ((3, 3), [2, 1], False)
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError("batch_sizes should always be on CPU. Instances of "
                                 "PackedSequence should never be created manually. They should "
                                 "be instantiated by functions like pack_sequence and "
                                 "pack_padded_sequences in nn.utils.rnn.")
        else:
            # the older form PackedSequence((data, batch_sizes))
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data.to(*args, **kwargs)``; the index tensors follow ``data`` to its device and
        ``batch_sizes`` stays on the CPU. Returns ``self`` when ``data`` is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = _bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = _bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs) -> PackedSequence:
        """The sequence with ``data`` on a CUDA device (``cuda()``, ``cuda(1)``, ...)."""
        device = args[0] if args else kwargs.pop("device", None)
        args = args[1:]
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(device, *args, **kwargs)

    def cpu(self, *args, **kwargs) -> PackedSequence:
        """The sequence with ``data`` on the CPU."""
        return self.to("cpu", *args, **kwargs)

    def pin_memory(self) -> PackedSequence:
        """No-op kept for PyTorch compatibility (host memory here is not page-locked)."""
        return self

    def is_pinned(self) -> bool:
        """Always False: dynagrad does not page-lock host memory."""
        return False

    def double(self) -> PackedSequence:
        return self.to(dtype=float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` lives on a CUDA device."""
        return self.data.is_cuda



def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a 1-D permutation tensor (``None`` gives ``None``): ``out[p[i]] = i``.

    Example:
        >>> import dynagrad as dg
        >>> invert_permutation(dg.tensor([2, 0, 1]))
        tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    out = permutation.new_empty(permutation.shape)
    return out.scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))


def _sizes(batch_sizes: Tensor) -> list:
    return [int(b) for b in batch_sizes.tolist()]


def _lengths_tensor(lengths) -> Tensor:
    if not isinstance(lengths, Tensor):
        return as_tensor(lengths, dtype=int64, device="cpu")
    return lengths.to(dtype=int64)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) whose sequence
    ``b`` has ``lengths[b]`` valid steps.

    ``lengths`` is a list or a 1-D CPU tensor. With ``enforce_sorted`` (the default) the
    lengths must be in decreasing order; ``enforce_sorted=False`` sorts the batch and records
    the permutation in ``sorted_indices``. Steps past a sequence's length are dropped.

    Example:
        >>> import dynagrad as dg
        >>> x = dg.tensor([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
        >>> p = pack_padded_sequence(x, [2, 1, 3], batch_first=True, enforce_sorted=False)
        >>> p.data, p.batch_sizes, p.sorted_indices
        (tensor([4, 1, 3, 5, 2, 6]), tensor([3, 2, 1]), tensor([2, 0, 1]))
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence: input must be a Tensor, got {describe(input)}")
    lengths = _lengths_tensor(lengths)
    if lengths.ndim != 1 or lengths.device.type != "cpu":
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D {lengths.device} {describe(lengths)}")
    if input.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of "
                         f"[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 1) "
                         f"(pack_padded_sequence: input {describe(input)} needs a time and a "
                         "batch dimension)")
    sorted_indices = None
    lens = np.asarray(lengths.tolist(), dtype=np.int64)
    if not enforce_sorted:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = as_tensor(order, dtype=int64, device=input.device)
    t_dim, b_dim = (1, 0) if batch_first else (0, 1)
    n_t, n_b = input.shape[t_dim], input.shape[b_dim]
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lens.size != n_b:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.size} (batch_size={n_b})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if np.any(lens[:-1] < lens[1:]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if lens[0] > n_t:
        raise RuntimeError(f"pack_padded_sequence: a length ({lens[0]}) exceeds the padded "
                           f"sequence length {n_t} of input {describe(input)}")
    # batch_sizes[t]: sequences longer than t; step t takes the first batch_sizes[t] of them
    batch_sizes = (lens[None, :] > np.arange(lens[0])[:, None]).sum(1)
    steps = np.repeat(np.arange(lens[0]), batch_sizes)
    ranks = np.concatenate([np.arange(b) for b in batch_sizes])
    batch = ranks if sorted_indices is None else order[ranks]
    rows = batch * n_t + steps if batch_first else steps * n_b + batch
    flat = input.reshape((n_t * n_b,) + tuple(input.shape[2:]))
    data = flat.index_select(0, as_tensor(rows, dtype=int64, device=input.device))
    return PackedSequence(data, as_tensor(batch_sizes, dtype=int64, device="cpu"),
                          sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None) -> tuple:
    """Unpack ``sequence`` into a padded ``(T, B, *)`` tensor (``(B, T, *)`` with
    ``batch_first``) in the original batch order, and the lengths (a CPU int64 tensor).

    ``T`` is the longest length, or ``total_length`` when given (it may not be shorter);
    positions past a sequence's end hold ``padding_value``.

    Example:
        >>> import dynagrad as dg
        >>> p = pack_sequence([dg.tensor([1., 2.]), dg.tensor([3.])])
        >>> padded, lengths = pad_packed_sequence(p, padding_value=-1)
        >>> padded, lengths
        (tensor([[ 1.,  3.],
                [ 2., -1.]]), tensor([2, 1]))
    """
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: expected a PackedSequence, got "
                        f"{type(sequence).__name__}")
    data = sequence.data
    sizes = np.asarray(_sizes(sequence.batch_sizes), dtype=np.int64)
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    n_b = int(sizes[0])
    # row of data holding (step t, sorted position s); data.shape[0] is the padding row
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pos = np.arange(n_b)[None, :]
    valid = np.zeros((max_len, n_b), dtype=bool)
    valid[:len(sizes)] = pos < sizes[:, None]
    rows = np.where(valid, np.pad(offsets, (0, max_len - len(sizes)))[:, None] + pos,
                    data.shape[0])
    lengths = valid.sum(0)
    if sequence.unsorted_indices is not None:
        order = np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)
        rows, lengths = rows[:, order], lengths[order]
    if batch_first:
        rows = rows.T
    pad = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    out = cat([data, pad]).index_select(0, as_tensor(rows.reshape(-1), dtype=int64,
                                                     device=data.device))
    out = out.reshape(rows.shape + tuple(data.shape[1:]))
    return out, as_tensor(lengths, dtype=int64, device="cpu")


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors ``(L_i, *)`` of different lengths into ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``), ``T`` the longest length, filling with ``padding_value`` on
    ``padding_side`` (``"right"`` or ``"left"``). The result has the first tensor's dtype.

    Example:
        >>> import dynagrad as dg
        >>> pad_sequence([dg.tensor([1, 2, 3]), dg.tensor([4])], batch_first=True)
        tensor([[1, 2, 3],
                [4, 0, 0]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise TypeError(f"pad_sequence: sequences[{i}] must be a Tensor, got {describe(s)}")
        if s.ndim == 0:
            raise RuntimeError(f"pad_sequence: sequences[{i}] is 0-d ({describe(s)}); every "
                               "sequence needs a length dimension")
        if tuple(s.shape[1:]) != tuple(first.shape[1:]):
            raise RuntimeError("pad_sequence: every sequence must have the same trailing "
                               f"dimensions, but sequences[0] is {describe(first)} and "
                               f"sequences[{i}] is {describe(s)}")
    lengths = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    max_len = int(lengths.max())
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    total = int(lengths.sum())
    # row of the concatenated sequences for (step t, sequence b); ``total`` is the padding row
    steps = np.arange(max_len)[:, None]
    if padding_side == "left":
        steps = steps - (max_len - lengths)[None, :]
    rows = np.where((steps >= 0) & (steps < lengths[None, :]), starts[None, :] + steps, total)
    if batch_first:
        rows = rows.T
    trailing = tuple(first.shape[1:])
    pad = full((1,) + trailing, padding_value, dtype=first.dtype, device=first.device)
    parts = [s if s.dtype == first.dtype else s.to(first.dtype) for s in sequences]
    out = cat(parts + [pad]).index_select(0, as_tensor(rows.reshape(-1), dtype=int64,
                                                       device=first.device))
    return out.reshape(rows.shape + trailing)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """Split a padded ``(T, B, *)`` tensor (``(B, T, *)`` with ``batch_first``) into the list of
    its ``B`` sequences, sequence ``b`` cut to ``lengths[b]`` steps.

    Unlike PyTorch, which transposes a time-major ``padded_sequences`` in place, the argument is
    left unchanged.

    Example:
        >>> import dynagrad as dg
        >>> unpad_sequence(dg.tensor([[1, 4], [2, 0], [3, 0]]), dg.tensor([3, 1]))
        [tensor([1, 2, 3]), tensor([4])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lengths = lengths.tolist() if isinstance(lengths, Tensor) else list(lengths)
    if len(lengths) != padded_sequences.shape[0]:
        raise ValueError(f"unpad_sequence: got {len(lengths)} lengths for a batch of "
                         f"{padded_sequences.shape[0]} sequences")
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors ``(L_i, *)``: ``pad_sequence`` then ``pack_padded_sequence``.

    Example:
        >>> import dynagrad as dg
        >>> pack_sequence([dg.tensor([1, 2, 3]), dg.tensor([4, 5]), dg.tensor([6])]).data
        tensor([1, 4, 6, 2, 5, 3])
    """
    lengths = [v.shape[0] for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences packed in ``packed_sequences``, in their original order.

    Example:
        >>> import dynagrad as dg
        >>> p = pack_sequence([dg.tensor([1, 2]), dg.tensor([3, 4, 5])], enforce_sorted=False)
        >>> unpack_sequence(p)
        [tensor([1, 2]), tensor([3, 4, 5])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
