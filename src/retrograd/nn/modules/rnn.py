"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional, batch_first) and their
single-step cells.

Note [Recurrent layers]
The input projection of every time step is one ``linear`` over the whole sequence;
only the hidden-state product runs per step. Everything is Tensor ops, so gradients
(and double backward) flow through time as through any other graph.

Example:
    >>> import retrograd as torch
    >>> lstm = torch.nn.LSTM(4, 3, num_layers=2, batch_first=True)
    >>> out, (h, c) = lstm(torch.ones(2, 5, 4))
    >>> out.shape, h.shape, c.shape
    (torch.Size([2, 5, 3]), torch.Size([2, 2, 3]), torch.Size([2, 2, 3]))
"""

from __future__ import annotations

import math
import warnings

from ..._core import dtype as D
from ..._core.hints import DeviceLike
from ..._functions.creation import empty, zeros
from ..._functions.shape import cat, stack
from ..._tensor.tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(h, xt, w_hh, b_hh, relu):
    pre = xt + F.linear(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


def _lstm_step(h, c, xt, w_hh, b_hh):
    gates = xt + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return h, c


def _gru_step(h, xt, w_hh, b_hh):
    gh = F.linear(h, w_hh, b_hh)
    i_r, i_z, i_n = xt.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (h - n)


class RNNBase(Module):
    """Shared machinery of RNN, LSTM and GRU (parameters named as PyTorch's).

    Example:
        >>> import retrograd as torch
        >>> [n for n, _ in torch.nn.GRU(2, 3).named_parameters()]
        ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: DeviceLike | None = None,
                 dtype: D.dtype | None = None) -> None:
        super().__init__()
        if proj_size:
            raise NotImplementedError("LSTM with proj_size > 0 is not supported in retrograd")
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or \
                not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be an integer greater than zero")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        dt = dtype if dtype is not None else D.DEFAULTS.float
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_in = input_size if layer == 0 else hidden_size * dirs
                sfx = "_reverse" if direction == 1 else ""
                params = [("weight_ih_l{}{}", (gate, layer_in)),
                          ("weight_hh_l{}{}", (gate, hidden_size))]
                if bias:
                    params += [("bias_ih_l{}{}", (gate,)), ("bias_hh_l{}{}", (gate,))]
                names = []
                for fmt, shape in params:
                    name = fmt.format(layer, sfx)
                    setattr(self, name, Parameter(empty(*shape, dtype=dt)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every parameter, as PyTorch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Accepted for compatibility (no cuDNN weight buffer here)."""

    @property
    def all_weights(self) -> list:
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _layer_weights(self, idx):
        names = self._all_weights[idx]
        ws = [getattr(self, n) for n in names]
        if len(ws) == 2:
            ws += [None, None]
        return ws

    def _prepare(self, input, hx):
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D instead")
        batched = input.dim() == 3
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        return input, batched

    def _run(self, x, h0, c0):
        """x: (L, N, in); h0/c0: (layers * dirs, N, H). Returns output, h_n, c_n."""
        dirs = 2 if self.bidirectional else 1
        seq = x.shape[0]
        layer_input = x
        h_n, c_n = [], []
        relu = self.mode == "RNN_RELU"
        for layer in range(self.num_layers):
            outs_dir = []
            for d in range(dirs):
                idx = layer * dirs + d
                w_ih, w_hh, b_ih, b_hh = self._layer_weights(idx)
                xi = F.linear(layer_input, w_ih, b_ih)
                h = h0[idx]
                c = c0[idx] if c0 is not None else None
                outs = [None] * seq
                steps = range(seq) if d == 0 else range(seq - 1, -1, -1)
                for t in steps:
                    h, c = self._step(h, c, xi[t], w_hh, b_hh, relu)
                    outs[t] = h
                outs_dir.append(stack(outs, 0))
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_input = outs_dir[0] if dirs == 1 else cat(outs_dir, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, stack(h_n, 0), (stack(c_n, 0) if c_n else None)

    def _step(self, h, c, xt, w_hh, b_hh, relu):
        if self.mode == "LSTM":
            return _lstm_step(h, c, xt, w_hh, b_hh)
        if self.mode == "GRU":
            return _gru_step(h, xt, w_hh, b_hh), None
        return _rnn_step(h, xt, w_hh, b_hh, relu), None

    # Note [Packed recurrence]
    # At step t only the first ``sizes[t]`` sequences are running (Note [Packed layout] in
    # nn/utils/rnn.py). Forward in time, the rows of the sequences that end are set aside
    # as their final states and joined back after the last step; backward in time, the
    # batch grows as t falls and a joining sequence starts from its own row of h0. Either
    # way the final state of every sequence is its state after its own last (or first)
    # element, as PyTorch's packed kernels give.
    def _run_packed(self, data, sizes, h0, c0):
        """The layers over packed ``data`` with batch sizes ``sizes`` (ints): packed output
        data, h_n, c_n, the batch in packed order (Note [Packed recurrence])."""
        dirs = 2 if self.bidirectional else 1
        layer_input = data
        h_n, c_n = [], []
        relu = self.mode == "RNN_RELU"
        for layer in range(self.num_layers):
            outs_dir = []
            for d in range(dirs):
                idx = layer * dirs + d
                w_ih, w_hh, b_ih, b_hh = self._layer_weights(idx)
                xs = F.linear(layer_input, w_ih, b_ih).split(sizes, 0)
                hs, cs = h0[idx], (c0[idx] if c0 is not None else None)
                outs = [None] * len(sizes)
                if d == 0:
                    h, c = hs, cs
                    done_h, done_c = [], []  # final states of the sequences that ended
                    for t, b in enumerate(sizes):
                        if b < h.shape[0]:
                            done_h.append(h[b:])
                            h = h[:b]
                            if c is not None:
                                done_c.append(c[b:])
                                c = c[:b]
                        h, c = self._step(h, c, xs[t], w_hh, b_hh, relu)
                        outs[t] = h
                    if done_h:
                        h = cat([h, *reversed(done_h)], 0)
                        c = cat([c, *reversed(done_c)], 0) if c is not None else None
                else:
                    h, c = hs[:0], (cs[:0] if cs is not None else None)
                    for t in range(len(sizes) - 1, -1, -1):
                        b = sizes[t]
                        if b > h.shape[0]:
                            h = cat([h, hs[h.shape[0]:b]], 0)
                            if c is not None:
                                c = cat([c, cs[c.shape[0]:b]], 0)
                        h, c = self._step(h, c, xs[t], w_hh, b_hh, relu)
                        outs[t] = h
                outs_dir.append(cat(outs, 0))
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_input = outs_dir[0] if dirs == 1 else cat(outs_dir, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, stack(h_n, 0), (stack(c_n, 0) if c_n else None)

    def _forward_packed(self, packed, hx):
        """RNN/LSTM/GRU over a PackedSequence: a PackedSequence out, states in the caller's
        batch order."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        if data.dim() != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        if data.size(-1) != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {data.size(-1)}")
        sizes = [int(b) for b in batch_sizes.tolist()]
        dirs = 2 if self.bidirectional else 1
        expected = (self.num_layers * dirs, sizes[0], self.hidden_size)
        lstm = self.mode == "LSTM"
        if hx is None:
            h0 = zeros(*expected, dtype=data.dtype)
            c0 = h0 if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            if sorted_indices is not None:
                h0 = h0.index_select(1, sorted_indices)
                c0 = c0.index_select(1, sorted_indices) if lstm else None
            for state in (h0, c0) if lstm else (h0,):
                if tuple(state.shape) != expected:
                    raise RuntimeError(f"Expected hidden size {expected}, got "
                                       f"{list(state.shape)}")
        out, h_n, c_n = self._run_packed(data, sizes, h0, c0)
        if unsorted_indices is not None:
            h_n = h_n.index_select(1, unsorted_indices)
            c_n = c_n.index_select(1, unsorted_indices) if lstm else None
        out = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        return (out, (h_n, c_n)) if lstm else (out, h_n)

    def _zeros_state(self, x):
        dirs = 2 if self.bidirectional else 1
        return zeros(self.num_layers * dirs, x.shape[1], self.hidden_size, dtype=x.dtype)

    def _check_hidden(self, h, x, what="hx"):
        dirs = 2 if self.bidirectional else 1
        expected = (self.num_layers * dirs, x.shape[1], self.hidden_size)
        if tuple(h.shape) != expected:
            raise RuntimeError(f"Expected hidden size {expected}, got {list(h.shape)}")

    def forward(self, input: Tensor | PackedSequence, hx: Tensor | None = None
                ) -> tuple[Tensor | PackedSequence, Tensor]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        x, batched = self._prepare(input, hx)
        if hx is None:
            h0 = self._zeros_state(x)
        else:
            if not batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
            elif hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
            self._check_hidden(hx, x)
            h0 = hx
        out, h_n, _ = self._run(x, h0, None)
        return self._finish(out, h_n, batched)

    def _finish(self, out, h_n, batched, c_n=None):
        if not batched:
            out = out.squeeze(1)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        if c_n is not None:
            return out, (h_n, c_n)
        return out, h_n


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh) (or relu).

    Example:
        >>> import retrograd as torch
        >>> rnn = torch.nn.RNN(3, 5, nonlinearity='relu')
        >>> out, h = rnn(torch.ones(7, 2, 3))
        >>> out.shape, h.shape
        (torch.Size([7, 2, 5]), torch.Size([1, 2, 5]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o in that order in the weights).

    Example:
        >>> import retrograd as torch
        >>> out, (h, c) = torch.nn.LSTM(2, 3)(torch.ones(4, 1, 2))
        >>> out.shape
        torch.Size([4, 1, 3])
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: DeviceLike | None = None,
                 dtype: D.dtype | None = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def forward(self, input: Tensor | PackedSequence,
                hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor | PackedSequence, tuple[Tensor, Tensor]]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        x, batched = self._prepare(input, hx)
        if hx is None:
            h0 = self._zeros_state(x)
            c0 = self._zeros_state(x)
        else:
            h0, c0 = hx
            if not batched:
                if h0.dim() != 2 or c0.dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D "
                                       f"but got ({h0.dim()}-D, {c0.dim()}-D) tensors")
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            elif h0.dim() != 3 or c0.dim() != 3:
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({h0.dim()}-D, {c0.dim()}-D) tensors")
            self._check_hidden(h0, x)
            self._check_hidden(c0, x)
        out, h_n, c_n = self._run(x, h0, c0)
        return self._finish(out, h_n, batched, c_n)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n in that order in the weights).

    Example:
        >>> import retrograd as torch
        >>> out, h = torch.nn.GRU(2, 3, bidirectional=True)(torch.ones(4, 1, 2))
        >>> out.shape, h.shape
        (torch.Size([4, 1, 6]), torch.Size([2, 1, 3]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


class RNNCellBase(Module):
    """Shared machinery of the single-step cells."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        dt = dtype if dtype is not None else D.DEFAULTS.float
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, dtype=dt))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, dtype=dt))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dt))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dt))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every parameter."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def _batch(self, input, hx, n_states=1):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        return x, batched


class RNNCell(RNNCellBase):
    """One step of an Elman RNN.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.RNNCell(2, 3)(torch.ones(4, 2)).shape
        torch.Size([4, 3])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: DeviceLike | None = None,
                 dtype: D.dtype | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, batched = self._batch(input, hx)
        h = zeros(x.shape[0], self.hidden_size, dtype=x.dtype) if hx is None else \
            (hx if batched else hx.unsqueeze(0))
        xt = F.linear(x, self.weight_ih, self.bias_ih)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = _rnn_step(h, xt, self.weight_hh, self.bias_hh, self.nonlinearity == "relu")
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM; returns ``(h, c)``.

    Example:
        >>> import retrograd as torch
        >>> h, c = torch.nn.LSTMCell(2, 3)(torch.ones(4, 2))
        >>> h.shape
        torch.Size([4, 3])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        x, batched = self._batch(input, hx)
        if hx is None:
            z = zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
            h, c = z, z
        else:
            h, c = hx if batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        xt = F.linear(x, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(h, c, xt, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a GRU.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.GRUCell(2, 3)(torch.ones(4, 2)).shape
        torch.Size([4, 3])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, batched = self._batch(input, hx)
        h = zeros(x.shape[0], self.hidden_size, dtype=x.dtype) if hx is None else \
            (hx if batched else hx.unsqueeze(0))
        xt = F.linear(x, self.weight_ih, self.bias_ih)
        h = _gru_step(h, xt, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
