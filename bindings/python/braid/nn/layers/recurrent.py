"""Recurrent layers RNN, GRU and LSTM over sequences ``[N, L, D]`` or ``[L, D]``, as
mlx.nn's. Each returns the hidden state at every step."""

import math
from typing import Callable, Optional

import braid.core as mx
from braid.nn.layers.activations import tanh
from braid.nn.layers.base import Module


def _uniform(scale, shape):
    return mx.random.uniform(low=-scale, high=scale, shape=shape)


def _project(x, weight, bias):
    """x @ weight.T (+ bias)."""
    return x @ weight.T if bias is None else mx.addmm(bias, x, weight.T)


class RNN(Module):
    r"""Elman recurrence :math:`h_{t+1} = f(W_{xh} x_t + W_{hh} h_t + b)` with
    ``nonlinearity`` f (default tanh); weights from :math:`\mathcal{U}(-k, k)`,
    :math:`k = 1/\sqrt{H}`."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: Optional[Callable] = None,
    ):
        super().__init__()
        self.nonlinearity = nonlinearity or tanh
        if not callable(self.nonlinearity):
            raise ValueError(f"Nonlinearity must be callable. Current value: {nonlinearity}.")
        scale = 1.0 / math.sqrt(hidden_size)
        self.hidden_size = hidden_size
        self.Wxh = _uniform(scale, (hidden_size, input_size))
        self.Whh = _uniform(scale, (hidden_size, hidden_size))
        self.bias = _uniform(scale, (hidden_size,)) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wxh.shape[1]}, hidden_size={self.hidden_size}, "
            f"nonlinearity={self.nonlinearity}, bias={self.bias is not None}"
        )

    def __call__(self, x, hidden=None):
        x = _project(x, self.Wxh, self.bias)
        states = []
        for t in range(x.shape[-2]):
            pre = x[..., t, :]
            if hidden is not None:
                pre = mx.addmm(pre, hidden, self.Whh.T)
            hidden = self.nonlinearity(pre)
            states.append(hidden)
        return mx.stack(states, axis=-2)


class GRU(Module):
    r"""Gated recurrent unit: reset and update gates :math:`r, z`, candidate
    :math:`n = \tanh(W_{xn} x + b_n + r \odot (W_{hn} h + b_{hn}))` and
    :math:`h' = (1 - z) \odot n + z \odot h`."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.hidden_size = hidden_size
        scale = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform(scale, (3 * hidden_size, input_size))
        self.Wh = _uniform(scale, (3 * hidden_size, hidden_size))
        self.b = _uniform(scale, (3 * hidden_size,)) if bias else None
        self.bhn = _uniform(scale, (hidden_size,)) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
            f"bias={self.b is not None}"
        )

    def __call__(self, x, hidden=None):
        x = _project(x, self.Wx, self.b)
        h = self.hidden_size
        x_rz = x[..., :-h]
        x_n = x[..., -h:]
        states = []
        for t in range(x.shape[-2]):
            rz = x_rz[..., t, :]
            n = x_n[..., t, :]
            if hidden is not None:
                h_proj = hidden @ self.Wh.T
                h_rz = h_proj[..., :-h]
                h_n = h_proj[..., -h:]
                if self.bhn is not None:
                    h_n = h_n + self.bhn
                rz = rz + h_rz
            r, z = mx.split(mx.sigmoid(rz), 2, axis=-1)
            if hidden is not None:
                n = n + r * h_n
            n = mx.tanh(n)
            hidden = (1 - z) * n if hidden is None else (1 - z) * n + z * hidden
            states.append(hidden)
        return mx.stack(states, axis=-2)


class LSTM(Module):
    r"""Long short-term memory: gates :math:`i, f, o` and candidate :math:`g` from
    :math:`W_x x + W_h h + b`, then :math:`c' = f \odot c + i \odot g` and
    :math:`h' = o \odot \tanh(c')`. Returns the hidden and cell states of every step."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.hidden_size = hidden_size
        scale = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform(scale, (4 * hidden_size, input_size))
        self.Wh = _uniform(scale, (4 * hidden_size, hidden_size))
        self.bias = _uniform(scale, (4 * hidden_size,)) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
            f"bias={self.bias is not None}"
        )

    def __call__(self, x, hidden=None, cell=None):
        x = _project(x, self.Wx, self.bias)
        hiddens, cells = [], []
        for t in range(x.shape[-2]):
            gates = x[..., t, :]
            if hidden is not None:
                gates = mx.addmm(gates, hidden, self.Wh.T)
            i, f, g, o = mx.split(gates, 4, axis=-1)
            i, f, g, o = mx.sigmoid(i), mx.sigmoid(f), mx.tanh(g), mx.sigmoid(o)
            cell = i * g if cell is None else f * cell + i * g
            hidden = o * mx.tanh(cell)
            hiddens.append(hidden)
            cells.append(cell)
        return mx.stack(hiddens, axis=-2), mx.stack(cells, axis=-2)
