"""Recurrent layers ``RNN LSTM GRU`` and cells ``RNNCell LSTMCell GRUCell``, as PyTorch's.

Parameter names, shapes, gate order and default initialisation (every weight and bias uniform in
``(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``) match PyTorch, so state_dicts load both ways.
The layers also take a ``PackedSequence`` (``nn.utils.rnn``) and then return one, with the states
of each sequence after its own last step.

Example:
    >>> import dynagrad as dg
    >>> from dynagrad import nn
    >>> lstm = nn.LSTM(10, 20, num_layers=2)
    >>> out, (h, c) = lstm(dg.randn(5, 3, 10))
    >>> tuple(out.shape), tuple(h.shape), tuple(c.shape)
    ((5, 3, 20), (2, 3, 20), (2, 3, 20))
"""
from __future__ import annotations

import math
import numbers
import warnings
from functools import partial

from ... import creation
from ...autograd.grad_mode import no_grad
from ...errors import describe
from ...ops.movement import cat, stack
from ...tensor import Tensor
from ..functional.misc import dropout
from ...ops.nn.rnn import GATES, _cell, check_dtypes, recurrent
from ..module import Module
from ..parameter import Parameter

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _uniform_init(module: Module, hidden_size: int) -> None:
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
    with no_grad():
        for p in module.parameters():
            p.uniform_(-bound, bound)


def stacked_recurrent(mode: str, x: Tensor, hx, cx, weights: list, num_layers: int,
                      directions: int, dropout_p: float, training: bool) -> tuple:
    """The layers of a (bidirectional) recurrent network on a checked time-major ``(T, B, I)``
    input: ``weights[layer * directions + d]`` is ``(w_ih, w_hh, b_ih, b_hh)`` (biases may be
    None), ``hx`` / ``cx`` the initial states ``(num_layers * directions, B, H)`` or None.
    Dropout with ``dropout_p`` follows every layer but the last when ``training``. Returns
    ``(output (T, B, directions * H), h_n, c_n or None)``."""
    lstm = mode == "lstm"
    h_out, c_out = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            idx = layer * directions + d
            run = projected_lstm if len(weights[idx]) == 5 else partial(recurrent, mode)
            res = run(x, None if hx is None else hx[idx], None if cx is None else cx[idx],
                      *weights[idx], d == 1)
            outs.append(res[0])
            h_out.append(res[1])
            if lstm:
                c_out.append(res[2])
        x = outs[0] if directions == 1 else cat(outs, 2)
        if dropout_p > 0 and training and layer < num_layers - 1:
            x = dropout(x, dropout_p, True)
    return x, stack(h_out), stack(c_out) if lstm else None


def _segments(batch_sizes: list) -> list:
    """``(first_row, steps, batch)`` for each run of equal batch sizes of a packed sequence:
    its rows ``first_row : first_row + steps * batch`` are a ``(steps, batch, *)`` block."""
    segs, row, t = [], 0, 0
    while t < len(batch_sizes):
        b, start = batch_sizes[t], t
        while t < len(batch_sizes) and batch_sizes[t] == b:
            t += 1
        segs.append((row, t - start, b))
        row += (t - start) * b
    return segs


def _packed_direction(mode: str, x: Tensor, segs: list, h0, c0, weights: tuple,
                      reverse: bool) -> tuple:
    """One direction of one layer over packed rows ``x`` (N, I): every run of equal batch
    size is one ``recurrent`` node on its ``(steps, batch, I)`` block.

    Sequences are sorted longest first, so going forward a sequence that ends keeps its last
    state (the batch shrinks from the end); going backward a sequence joins, at its last step,
    with its initial state. Returns ``(output rows (N, H), h_n, c_n or None)`` for the batch."""
    lstm = mode == "lstm"
    n_in = x.shape[1]
    h, c = h0, c0
    outs, done_h, done_c = [], [], []

    def start_states(state, init, b):
        # the states entering a block of batch b: the running ones, then initial ones
        if state is None:
            return None if init is None else init[:b]
        n = state.shape[0]
        if n > b:
            return state[:b]
        if n < b:
            extra = (init[n:b] if init is not None
                     else state.new_zeros((b - n,) + tuple(state.shape[1:])))
            return cat([state, extra])
        return state

    for row, steps, b in (reversed(segs) if reverse else segs):
        if not reverse and h is not None and h.shape[0] > b:
            done_h.append(h[b:])  # the sequences b.. ended at the previous step
            if lstm:
                done_c.append(c[b:])
        h = start_states(h, h0, b)
        c = start_states(c, c0, b) if lstm else None
        block = x[row:row + steps * b].reshape(steps, b, n_in)
        run = projected_lstm if len(weights) == 5 else partial(recurrent, mode)
        res = run(block, h, c, *weights, reverse)
        outs.append(res[0].reshape(steps * b, -1))
        h = res[1]
        c = res[2] if lstm else None
    if reverse:
        outs.reverse()
        return cat(outs), h, c
    h_n = cat([h] + done_h[::-1])
    return cat(outs), h_n, cat([c] + done_c[::-1]) if lstm else None


def packed_recurrent(mode: str, x: Tensor, batch_sizes: list, hx, cx, weights: list,
                     num_layers: int, directions: int, dropout_p: float, training: bool) -> tuple:
    """``stacked_recurrent`` on the rows ``x`` (N, I) of a packed sequence with ``batch_sizes``
    (a list); ``hx``/``cx`` are in sorted batch order. Returns ``(output rows, h_n, c_n)``."""
    lstm = mode == "lstm"
    segs = _segments(batch_sizes)
    h_out, c_out = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            idx = layer * directions + d
            out, h_n, c_n = _packed_direction(mode, x, segs, None if hx is None else hx[idx],
                                              None if cx is None else cx[idx], weights[idx],
                                              d == 1)
            outs.append(out)
            h_out.append(h_n)
            if lstm:
                c_out.append(c_n)
        x = outs[0] if directions == 1 else cat(outs, 1)
        if dropout_p > 0 and training and layer < num_layers - 1:
            x = dropout(x, dropout_p, True)
    return x, stack(h_out), stack(c_out) if lstm else None


def projected_lstm(x: Tensor, h0, c0, w_ih: Tensor, w_hh: Tensor, b_ih, b_hh, w_hr: Tensor,
                   reverse: bool) -> tuple:
    """One direction of an LSTM layer with a projection (``proj_size > 0``) on a time-major
    ``(T, B, I)`` input, composed of ops step by step: ``c' = f * c + i * g`` and
    ``h' = (o * tanh(c')) @ w_hr.T``, so the hidden state and the output have ``proj_size``
    features while the cell keeps ``hidden_size``. Returns ``(output (T, B, P), h_n, c_n)``."""
    steps, batch = x.shape[0], x.shape[1]
    hidden, proj = w_hr.shape[1], w_hr.shape[0]
    h = h0 if h0 is not None else creation.zeros(batch, proj, dtype=x.dtype, device=x.device)
    c = c0 if c0 is not None else creation.zeros(batch, hidden, dtype=x.dtype, device=x.device)
    # the input part of every gate for every step at once
    xg = x.matmul(w_ih.t()) + (b_ih if b_ih is not None else 0.0)
    if b_hh is not None:
        xg = xg + b_hh
    outs = [None] * steps
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        i, f, g, o = (xg[t] + h.matmul(w_hh.t())).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = (o.sigmoid() * c.tanh()).matmul(w_hr.t())
        outs[t] = h
    return stack(outs), h, c


class RNNBase(Module):
    """Shared machinery of ``RNN``, ``LSTM`` and ``GRU`` (``mode``: ``"rnn_tanh" "rnn_relu"
    "lstm" "gru"``)."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 \
                or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             f"probability of an element being zeroed (got {dropout!r})")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, v in (("input_size", input_size), ("hidden_size", hidden_size),
                        ("num_layers", num_layers)):
            if not isinstance(v, int) or isinstance(v, bool) or v < (1 if name != "input_size"
                                                                     else 0):
                raise ValueError(f"{type(self).__name__}: {name} must be a positive integer "
                                 f"(got {v!r})")
        if not isinstance(proj_size, int) or isinstance(proj_size, bool) or proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "lstm":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        # with a projection the hidden state (and each layer's output) has proj_size features
        state_size = proj_size or hidden_size
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else state_size * directions
            for d in range(directions):
                sfx = f"_l{layer}" + ("_reverse" if d == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_in)),
                          ("weight_hh", (gate_size, state_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for base, shape in shapes:
                    setattr(self, base + sfx,
                            Parameter(creation.empty(shape, dtype=dtype, device=device)))
                    self._flat_weights_names.append(base + sfx)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in ``(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        _uniform_init(self, self.hidden_size)

    def flatten_parameters(self) -> None:
        """No-op kept for PyTorch compatibility (there is no packed weight buffer here)."""

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) for n in self._flat_weights_names]

    def _layer_weights(self, index: int) -> tuple:
        """(w_ih, w_hh, b_ih, b_hh) of layer-direction ``index`` (biases None without bias)."""
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        ws = [getattr(self, n) for n in self._flat_weights_names[index * per:(index + 1) * per]]
        if not self.bias:
            ws[2:2] = [None, None]
        return tuple(ws)

    def _check_hidden(self, h: Tensor, expected: tuple, what: str) -> None:
        if tuple(h.shape) != expected:
            raise RuntimeError(f"{type(self).__name__}: Expected {what} size {expected}, got "
                               f"{list(h.shape)}")

    def _run(self, input: Tensor, hx, cx):
        """Shared forward: returns (output, h_n, c_n or None) in the caller's layout."""
        name = type(self).__name__
        # imported here: nn.utils builds on nn.modules (parametrize's containers), not back
        from ..utils.rnn import PackedSequence
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx, cx)
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D input "
                             f"instead ({describe(input)})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]} ({describe(input)})")
        batched = input.ndim == 3
        lstm = self.mode == "lstm"
        state_names = ("hidden[0]", "hidden[1]") if lstm else ("hidden", None)
        if not batched:
            for h, what in ((hx, state_names[0]), (cx, state_names[1])):
                if h is not None and h.ndim != 2:
                    raise RuntimeError(f"{name}: For unbatched 2-D input, {what} should also be "
                                       f"2-D but got {h.ndim}-D tensor")
            input = input.unsqueeze(1)
            hx = None if hx is None else hx.unsqueeze(1)
            cx = None if cx is None else cx.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        directions = 2 if self.bidirectional else 1
        cell_expected = (self.num_layers * directions, input.shape[1], self.hidden_size)
        for h, what in ((hx, state_names[0]), (cx, state_names[1])):
            expected = cell_expected
            if what == state_names[0] and self.proj_size:
                expected = cell_expected[:2] + (self.proj_size,)
            if h is not None:
                if h.ndim != 3:
                    raise RuntimeError(f"{name}: For batched 3-D input, {what} should also be "
                                       f"3-D but got {h.ndim}-D tensor")
                self._check_hidden(h, expected, what)
        check_dtypes(name, {"input": input, "hx": hx, "cx": cx, "weight_ih_l0": self.weight_ih_l0})

        weights = [self._layer_weights(i) for i in range(self.num_layers * directions)]
        x, h_n, c_n = stacked_recurrent(self.mode, input, hx, cx, weights, self.num_layers,
                                        directions, self.dropout, self.training)
        if not batched:
            return x.squeeze(1), h_n.squeeze(1), None if c_n is None else c_n.squeeze(1)
        if self.batch_first:
            x = x.transpose(0, 1)
        return x, h_n, c_n

    def _run_packed(self, input, hx, cx) -> tuple:
        """The forward on a packed sequence: a PackedSequence output and, per sequence, the
        states after its last step, in the caller's batch order."""
        name = type(self).__name__
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if data.ndim != 2:
            raise RuntimeError(f"{name}: input must have 2 dimensions, got {data.ndim} "
                               f"(the packed data {describe(data)})")
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {data.shape[-1]} ({describe(data)})")
        sizes = [int(b) for b in batch_sizes.tolist()]
        directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * directions, sizes[0], self.hidden_size)
        lstm = self.mode == "lstm"
        for h, what in ((hx, "hidden[0]" if lstm else "hidden"), (cx, "hidden[1]")):
            if h is not None:  # with a projection the hidden state has proj_size features
                size = self.proj_size if what == "hidden[0]" and self.proj_size else expected[2]
                self._check_hidden(h, expected[:2] + (size,), what)
        check_dtypes(name, {"input": data, "hx": hx, "cx": cx,
                            "weight_ih_l0": self.weight_ih_l0})
        if sorted_indices is not None:  # the states are given in the caller's order
            hx = None if hx is None else hx.index_select(1, sorted_indices)
            cx = None if cx is None else cx.index_select(1, sorted_indices)
        weights = [self._layer_weights(i) for i in range(self.num_layers * directions)]
        out, h_n, c_n = packed_recurrent(self.mode, data, sizes, hx, cx, weights,
                                         self.num_layers, directions, self.dropout,
                                         self.training)
        if unsorted_indices is not None:
            h_n = h_n.index_select(1, unsorted_indices)
            c_n = None if c_n is None else c_n.index_select(1, unsorted_indices)
        return type(input)(out, batch_sizes, sorted_indices, unsorted_indices), h_n, c_n

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``, act tanh or relu.

    ``forward(input, hx=None)`` returns ``(output, h_n)``; input ``(L, N, H_in)`` (``(N, L, H_in)``
    with batch_first, ``(L, H_in)`` unbatched), hx ``(D*num_layers, N, H_out)``.

    Example:
        >>> import dynagrad as dg
        >>> out, h = RNN(4, 6, nonlinearity="relu")(dg.randn(3, 2, 4))
        >>> tuple(out.shape), tuple(h.shape)
        ((3, 2, 6), (1, 2, 6))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("rnn_" + nonlinearity, input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple:
        out, h_n, _ = self._run(input, hx, None)
        return out, h_n


class LSTM(RNNBase):
    """Long short-term memory; ``forward(input, hx=None)`` with ``hx = (h_0, c_0)`` returns
    ``(output, (h_n, c_n))``. Gates ``i f g o`` are the row blocks of ``weight_ih_l{k}``.

    Example:
        >>> import dynagrad as dg
        >>> lstm = LSTM(4, 6, batch_first=True, bidirectional=True)
        >>> out, (h, c) = lstm(dg.randn(2, 3, 4))
        >>> tuple(out.shape), tuple(h.shape)
        ((2, 3, 12), (2, 2, 6))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None):
        super().__init__("lstm", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0) of tensors "
                               f"(got {type(hx).__name__})")
        h0, c0 = (None, None) if hx is None else hx
        out, h_n, c_n = self._run(input, h0, c0)
        return out, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit (gates ``r z n``); ``forward(input, hx=None)`` returns
    ``(output, h_n)``.

    Example:
        >>> import dynagrad as dg
        >>> out, h = GRU(4, 6, num_layers=2)(dg.randn(3, 2, 4))
        >>> tuple(h.shape)
        (2, 2, 6)
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None):
        super().__init__("gru", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple:
        out, h_n, _ = self._run(input, hx, None)
        return out, h_n


class RNNCellBase(Module):
    """Parameters ``weight_ih (G*H, I)``, ``weight_hh (G*H, H)``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(creation.empty((g, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(creation.empty((g, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(creation.empty((g,), dtype=dtype, device=device))
            self.bias_hh = Parameter(creation.empty((g,), dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in ``(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        _uniform_init(self, self.hidden_size)

    def _step(self, mode: str, input: Tensor, hx, cx) -> tuple:
        return _cell(type(self).__name__, mode, input, hx, cx, self.weight_ih, self.weight_hh,
                     self.bias_ih, self.bias_hh)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """One Elman RNN step; ``forward(input, hx=None)`` returns ``h'`` (``hx`` None: zeros).

    Example:
        >>> import dynagrad as dg
        >>> tuple(RNNCell(3, 5)(dg.randn(2, 3)).shape)
        (2, 5)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step("rnn_" + self.nonlinearity, input, hx, None)[0]


class LSTMCell(RNNCellBase):
    """One LSTM step; ``forward(input, hx=None)`` with ``hx = (h, c)`` returns ``(h', c')``.

    Example:
        >>> import dynagrad as dg
        >>> h, c = LSTMCell(3, 5)(dg.randn(2, 3))
        >>> tuple(c.shape)
        (2, 5)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:
        h, c = (None, None) if hx is None else hx
        return self._step("lstm", input, h, c)


class GRUCell(RNNCellBase):
    """One GRU step; ``forward(input, hx=None)`` returns ``h'``.

    Example:
        >>> import dynagrad as dg
        >>> tuple(GRUCell(3, 5)(dg.randn(3)).shape)
        (5,)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step("gru", input, hx, None)[0]
