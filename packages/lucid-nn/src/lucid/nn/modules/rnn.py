"""Recurrent layers (``torch.nn``): RNN, LSTM, GRU and their cells.

Parameter names, shapes, gate order (LSTM: i, f, g, o; GRU: r, z, n) and initialisation
(U(-1/sqrt(hidden), 1/sqrt(hidden))) are PyTorch's, so state dicts load either way. Each layer
projects the whole input sequence with one GEMM, then steps through time with the recurrent
GEMM only; everything is lucid ops, so autograd (and double backward) come from them.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import lucid
from lucid import Tensor, kernels
from lucid.autograd import Function, enable_grad
from lucid.autograd.grad_mode import is_grad_enabled
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.module import Module
from lucid.nn.modules._checks import check_tensor
from lucid.nn.parameter import Parameter
from lucid.nn.utils.rnn import PackedSequence

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
State = Any  # a hidden Tensor, or (h, c) for LSTM


# -- one time step -------------------------------------------------------------------------------
def _rnn_step(act: Callable[[Tensor], Tensor]) -> Callable[..., State]:
    def step(xw: Tensor, state: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
        return act(xw + F.linear(state, w_hh, b_hh))

    return step


def _lstm_step(xw: Tensor, state: tuple[Tensor, Tensor], w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    h, c = state
    i, f, g, o = (xw + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = i.sigmoid() * g.tanh() + f.sigmoid() * c
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _gru_step(xw: Tensor, state: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    xr, xz, xn = xw.chunk(3, -1)
    hr, hz, hn = F.linear(state, w_hh, b_hh).chunk(3, -1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    out: Tensor = n + z * (state - n)
    return out


def _lstm_reference(x: Tensor, h0: Tensor, c0: Tensor, w_ih: Tensor, w_hh: Tensor,
                    b_ih: Tensor | None, b_hh: Tensor | None,
                    reverse: bool) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    """One LSTM layer and direction over padded steps in lucid ops: the fused kernel's oracle
    and its double backward."""
    proj = F.linear(x, w_ih, b_ih)
    steps = proj.unbind(0)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    outs: list[Tensor] = [None] * len(steps)  # type: ignore[list-item]
    state = (h0, c0)
    for t in order:
        state = _lstm_step(steps[t], state, w_hh, b_hh)
        outs[t] = state[0]
    return lucid.stack(outs, 0), state[0], state[1]


class _FusedLSTM(Function):
    """One LSTM layer and direction as one op: a backend's ``kernels.LSTM`` computes it (arrays
    in, arrays out), forward and backward. Where a graph of the gradient is wanted
    (``create_graph=True``) the backward runs ``_lstm_reference`` on the saved inputs and
    differentiates it, so double backward works as through the reference."""

    @staticmethod
    def forward(ctx: Any, x: Any, h0: Any, c0: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
                reverse: bool) -> Any:  # fmt: skip
        fused = kernels.LSTM.find(ctx.backend)
        assert fused is not None  # _fusable checked
        out, ctx.residuals = fused.forward(ctx.backend, x, h0, c0, w_ih, w_hh, b_ih, b_hh,
                                           reverse)  # fmt: skip
        ctx.fused, ctx.reverse = fused, reverse
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
        return out

    @staticmethod
    def backward(ctx: Any, dy: Any, dh: Any, dc: Any) -> Any:
        saved = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if is_grad_enabled():  # a graph of the gradient: differentiate the reference
            with enable_grad():
                x, h0, c0, w_ih, w_hh, b_ih, b_hh = saved
                outs = _lstm_reference(x, h0, c0, w_ih, w_hh, b_ih, b_hh, ctx.reverse)
                pairs = [(o, gr) for o, gr in zip(outs, (dy, dh, dc)) if gr is not None]
                wanted = [t for t, need in zip(saved, needs) if need]
                got = iter(lucid.autograd.grad([o for o, _ in pairs], wanted,
                                               [gr for _, gr in pairs], create_graph=True,
                                               allow_unused=True))  # fmt: skip
            return (*[next(got) if need else None for need in needs[:7]], None)
        arrays = tuple(None if gr is None else gr.array for gr in (dy, dh, dc))
        grads = ctx.fused.backward(ctx.backend, ctx.residuals, arrays, needs)
        wrap = Tensor.from_backend_array
        return (*[None if a is None else wrap(a, ctx.backend) for a in grads], None)


def _cell_reference(mode: str, x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor,
                    b_ih: Tensor | None, b_hh: Tensor | None,
                    reverse: bool) -> tuple[Tensor, Tensor]:  # fmt: skip
    """One GRU or Elman RNN layer and direction over padded steps in lucid ops: the fused
    kernels' oracle and their double backward."""
    step = _step_for(mode)
    proj = F.linear(x, w_ih, b_ih)
    steps = proj.unbind(0)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    outs: list[Tensor] = [None] * len(steps)  # type: ignore[list-item]
    h = h0
    for t in order:
        h = step(steps[t], h, w_hh, b_hh)
        outs[t] = h
    return lucid.stack(outs, 0), h


class _FusedCell(Function):
    """One GRU (``_FusedGRU``) or Elman RNN (``_FusedRNN``) layer and direction as one op: a
    backend's ``kernels.GRU`` / ``kernels.RNN`` computes it, forward and backward; with
    ``create_graph=True`` the backward differentiates ``_cell_reference``, as ``_FusedLSTM``.
    The arguments are ``(x, h0, w_ih, w_hh, b_ih, b_hh, *flags)``, the flags the kernel's
    (the RNN's nonlinearity, then ``reverse``)."""

    @staticmethod
    def _kernel(backend: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def _mode(flags: tuple[Any, ...]) -> str:
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx: Any, x: Any, h0: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
                *flags: Any) -> Any:  # fmt: skip
        fused = cls._kernel(ctx.backend)
        assert fused is not None  # _fusable checked
        out, ctx.residuals = fused.forward(ctx.backend, x, h0, w_ih, w_hh, b_ih, b_hh, *flags)
        ctx.fused, ctx.flags = fused, flags
        ctx.save_for_backward(x, h0, w_ih, w_hh, b_ih, b_hh)
        return out

    @classmethod
    def backward(cls, ctx: Any, dy: Any, dh: Any) -> Any:
        saved = ctx.saved_tensors
        needs = ctx.needs_input_grad
        tail = (None,) * len(ctx.flags)
        if is_grad_enabled():  # a graph of the gradient: differentiate the reference
            with enable_grad():
                x, h0, w_ih, w_hh, b_ih, b_hh = saved
                outs = _cell_reference(cls._mode(ctx.flags), x, h0, w_ih, w_hh, b_ih, b_hh,
                                       ctx.flags[-1])  # fmt: skip
                pairs = [(o, gr) for o, gr in zip(outs, (dy, dh)) if gr is not None]
                wanted = [t for t, need in zip(saved, needs) if need]
                got = iter(lucid.autograd.grad([o for o, _ in pairs], wanted,
                                               [gr for _, gr in pairs], create_graph=True,
                                               allow_unused=True))  # fmt: skip
            return (*[next(got) if need else None for need in needs[:6]], *tail)
        arrays = tuple(None if gr is None else gr.array for gr in (dy, dh))
        grads = ctx.fused.backward(ctx.backend, ctx.residuals, arrays, needs)
        wrap = Tensor.from_backend_array
        return (*[None if a is None else wrap(a, ctx.backend) for a in grads], *tail)


class _FusedGRU(_FusedCell):
    """One GRU layer and direction as one op (``kernels.GRU``); flags ``(reverse,)``."""

    @staticmethod
    def _kernel(backend: Any) -> Any:
        return kernels.GRU.find(backend)

    @staticmethod
    def _mode(flags: tuple[Any, ...]) -> str:
        return "GRU"


class _FusedRNN(_FusedCell):
    """One Elman RNN layer and direction as one op (``kernels.RNN``); flags
    ``(nonlinearity, reverse)``."""

    @staticmethod
    def _kernel(backend: Any) -> Any:
        return kernels.RNN.find(backend)

    @staticmethod
    def _mode(flags: tuple[Any, ...]) -> str:
        return "RNN_TANH" if flags[0] == "tanh" else "RNN_RELU"


_CONTRACTS: dict[str, kernels.KernelContract[Any]] = {
    "LSTM": kernels.LSTM, "GRU": kernels.GRU, "RNN_TANH": kernels.RNN, "RNN_RELU": kernels.RNN,
}  # fmt: skip


def _fusable(x: Tensor, params: list[Tensor | None], mode: str = "LSTM") -> bool:
    """Whether the fused op for ``mode`` runs (``_FusedLSTM``, ``_FusedGRU``, ``_FusedRNN``): a
    backend with its kernel and one float dtype."""
    found = _CONTRACTS[mode].find(x._backend)
    if found is None or x.dtype not in (lucid.float32, lucid.float64):
        return False
    return all(p is None or (p.dtype == x.dtype and p._backend is x._backend) for p in params)


def _reset_uniform(module: Module, hidden_size: int) -> None:
    """PyTorch's recurrent init: every parameter uniform on ``[-1/sqrt(hidden_size),
    1/sqrt(hidden_size)]`` (all zero for ``hidden_size`` 0)."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


def _step_for(mode: str) -> Callable[..., State]:
    if mode == "LSTM":
        return _lstm_step
    if mode == "GRU":
        return _gru_step
    return _rnn_step(lucid.tanh if mode == "RNN_TANH" else F.relu)


# -- multi-layer recurrent layers ----------------------------------------------------------------
class RNNBase(Module):
    """Shared machinery: parameters ``weight_ih_l{k}[_reverse]`` etc., layers, directions."""

    mode = "RNN_TANH"

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        if not isinstance(dropout, (int, float)) or not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"dropout should be a number in range [0, 1] representing the "
                             f"probability of an element being zeroed, got {dropout}")  # fmt: skip
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)  # fmt: skip
        for what, v in (("hidden_size", hidden_size), ("num_layers", num_layers)):
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"{name}: {what} must be a positive integer, got {v!r}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")  # fmt: skip
        if proj_size >= hidden_size:
            raise ValueError(f"proj_size has to be smaller than hidden_size, got "
                             f"proj_size={proj_size} and hidden_size={hidden_size}")  # fmt: skip
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate = _GATES[mode] * hidden_size
        out_size = proj_size or hidden_size  # the size of h (and of each direction's output)
        self._flat_weights_names: list[str] = []
        kw = {"dtype": dtype, "device": device}
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else out_size * directions
            for d in range(directions):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                params: dict[str, tuple[int, ...]] = {
                    f"weight_ih{sfx}": (gate, layer_in),
                    f"weight_hh{sfx}": (gate, out_size),
                }
                if bias:
                    params.update({f"bias_ih{sfx}": (gate,), f"bias_hh{sfx}": (gate,)})
                if proj_size:
                    params[f"weight_hr{sfx}"] = (proj_size, hidden_size)
                for pname, shape in params.items():
                    setattr(self, pname, Parameter(lucid.empty(*shape, **kw)))
                    self._flat_weights_names.append(pname)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Reinitialize every weight and bias uniform on ``[-1/sqrt(hidden_size),
        1/sqrt(hidden_size)]``."""
        _reset_uniform(self, self.hidden_size)

    def flatten_parameters(self) -> None:
        """No-op (cuDNN's weight packing in PyTorch); kept so ported code runs unchanged."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters grouped per layer and direction, in PyTorch's order."""
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i : i + per]] for i in range(0, len(names), per)]

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

    # -- forward ---------------------------------------------------------------------------------
    def _check_input(self, x: Any) -> None:
        name = type(self).__name__
        check_tensor(name, x, self.weight_ih_l0)
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            raise ValueError(f"{name} expected input of shape (L, N, {self.input_size}) "
                             f"{'(batch_first: (N, L, ...)) ' if self.batch_first else ''}"
                             f"or (L, {self.input_size}), got {tuple(x.shape)}")  # fmt: skip

    def _check_hx(self, hx: Any, batched: bool) -> None:
        """torch's checks: a Tensor (LSTM: a pair) with as many dims as the input, ours dtype."""
        name = type(self).__name__
        lstm = self.mode == "LSTM"
        parts = hx if lstm and isinstance(hx, (tuple, list)) else (hx,)
        if lstm and len(parts) != 2:
            raise TypeError(f"{name} expected hx as a tuple (h_0, c_0), got {type(hx).__name__}")
        for p in parts:
            check_tensor(name, p, self.weight_ih_l0)
        want = 3 if batched else 2
        if any(p.ndim != want for p in parts):
            kind = "batched 3-D" if batched else "unbatched 2-D"
            what = "hx and cx" if lstm else "hx"
            got = ", ".join(f"{p.ndim}-D" for p in parts)
            got = f"({got}) tensors" if lstm else f"{got} tensor"
            raise RuntimeError(f"For {kind} input, {what} should also be {want}-D but got {got}")

    def _initial(self, hx: Any, n: int, like: Tensor) -> list[State]:
        """Per layer-and-direction initial states."""
        count = self.num_layers * (2 if self.bidirectional else 1)
        h_shape = (count, n, self.proj_size or self.hidden_size)
        c_shape = (count, n, self.hidden_size)
        if hx is None:
            h = lucid.zeros(*h_shape, dtype=like.dtype, device=like.device)
            if self.mode != "LSTM":
                return [h[i] for i in range(count)]
            c = h if c_shape == h_shape else lucid.zeros(*c_shape, dtype=like.dtype,
                                                         device=like.device)  # fmt: skip
            return [(h[i], c[i]) for i in range(count)]
        if self.mode == "LSTM":
            for k, (p, shape) in enumerate(zip(hx, (h_shape, c_shape))):
                if tuple(p.shape) != shape:
                    raise RuntimeError(f"Expected hidden[{k}] size {shape}, got "
                                       f"{tuple(p.shape)}")  # fmt: skip
            return [(hx[0][i], hx[1][i]) for i in range(count)]
        if tuple(hx.shape) != h_shape:
            raise RuntimeError(f"Expected hidden size {h_shape}, got {tuple(hx.shape)}")
        return [hx[i] for i in range(count)]

    def _run_direction(
        self, xs: Tensor, state: State, sfx: str, reverse: bool, batch_sizes: list[int] | None
    ) -> tuple[Tensor, State]:
        """One layer in one direction over padded ``(L, N, *)`` steps, or packed ones (then
        step ``t`` advances only the first ``batch_sizes[t]`` rows of the state)."""
        w_ih, w_hh = getattr(self, f"weight_ih{sfx}"), getattr(self, f"weight_hh{sfx}")
        b_ih = getattr(self, f"bias_ih{sfx}") if self.bias else None
        b_hh = getattr(self, f"bias_hh{sfx}") if self.bias else None
        if (
            self.mode == "LSTM"
            and not self.proj_size
            and batch_sizes is None
            and _fusable(xs, [state[0], state[1], w_ih, w_hh, b_ih, b_hh])
        ):
            ys, h, c = _FusedLSTM.apply_multi(xs, state[0], state[1], w_ih, w_hh, b_ih, b_hh,
                                              reverse)  # fmt: skip
            return ys, (h, c)
        if (
            self.mode != "LSTM"
            and batch_sizes is None
            and _fusable(xs, [state, w_ih, w_hh, b_ih, b_hh], self.mode)
        ):
            if self.mode == "GRU":
                ys, h = _FusedGRU.apply_multi(xs, state, w_ih, w_hh, b_ih, b_hh, reverse)
            else:
                act = "tanh" if self.mode == "RNN_TANH" else "relu"
                ys, h = _FusedRNN.apply_multi(xs, state, w_ih, w_hh, b_ih, b_hh, act, reverse)
            return ys, h
        step = _step_for(self.mode)
        if self.proj_size:
            step = functools.partial(_lstm_step, w_hr=getattr(self, f"weight_hr{sfx}"))
        proj = F.linear(xs, w_ih, b_ih)  # all time steps in one GEMM
        steps = proj.unbind(0) if batch_sizes is None else proj.split(batch_sizes, 0)
        order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
        outs: list[Tensor] = [None] * len(steps)  # type: ignore[list-item]
        for t in order:
            state = _advance(step, steps[t], state, w_hh, b_hh)
            h = state[0] if self.mode == "LSTM" else state
            outs[t] = h if h.shape[0] == steps[t].shape[0] else h[: steps[t].shape[0]]
        return (lucid.stack(outs, 0) if batch_sizes is None else lucid.cat(outs, 0)), state

    def _layers(
        self, x: Tensor, states: list[State], batch_sizes: list[int] | None
    ) -> tuple[Tensor, Any]:
        """Every layer and direction: the last layer's outputs and the final states h_n."""
        directions = 2 if self.bidirectional else 1
        finals: list[State] = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                state = states[layer * directions + d]
                out, final = self._run_direction(x, state, sfx, d == 1, batch_sizes)
                outs.append(out)
                finals.append(final)
            x = outs[0] if directions == 1 else lucid.cat(outs, dim=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout)
        if self.mode == "LSTM":
            return x, (lucid.stack([f[0] for f in finals]), lucid.stack([f[1] for f in finals]))
        return x, lucid.stack(finals)

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        self._check_input(input)
        batched = input.ndim == 3
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        if hx is not None:
            self._check_hx(hx, batched)
        if hx is not None and not batched:
            hx = tuple(h.unsqueeze(1) for h in hx) if self.mode == "LSTM" else hx.unsqueeze(1)
        x, h_n = self._layers(x, self._initial(hx, x.shape[1], x), None)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        if not batched:
            x = x.squeeze(1)
            h_n = tuple(h.squeeze(1) for h in h_n) if self.mode == "LSTM" else h_n.squeeze(1)
        return x, h_n

    def _forward_packed(self, packed: PackedSequence, hx: Any) -> tuple[PackedSequence, Any]:
        """A PackedSequence in, one out; h_n holds each sequence's state at its last step,
        in the original batch order (torch's permute_hidden)."""
        data = packed.data
        name = type(self).__name__
        check_tensor(name, data, self.weight_ih_l0)
        if data.ndim != 2 or data.shape[-1] != self.input_size:
            raise ValueError(f"{name} expected packed data of shape (*, {self.input_size}), got "
                             f"{tuple(data.shape)}")  # fmt: skip
        batch_sizes = [int(n) for n in packed.batch_sizes.tolist()]
        if hx is not None:
            self._check_hx(hx, True)
            hx = _permute_hidden(hx, packed.sorted_indices)
        states = self._initial(hx, batch_sizes[0], data)
        out, h_n = self._layers(data, states, batch_sizes)
        result = PackedSequence(out, packed.batch_sizes, packed.sorted_indices,
                                packed.unsorted_indices)  # fmt: skip
        return result, _permute_hidden(h_n, packed.unsorted_indices)


def _advance(
    step: Callable[..., State], xw: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None
) -> State:
    """One step for the first ``len(xw)`` rows of ``state``; the other rows keep theirs."""
    n = xw.shape[0]
    parts = state if isinstance(state, tuple) else (state,)
    if parts[0].shape[0] == n:
        return step(xw, state, w_hh, b_hh)
    head = tuple(p[:n] for p in parts)
    new = step(xw, head if isinstance(state, tuple) else head[0], w_hh, b_hh)
    new_parts = new if isinstance(new, tuple) else (new,)
    joined = tuple(lucid.cat([a, p[n:]], 0) for a, p in zip(new_parts, parts))
    return joined if isinstance(state, tuple) else joined[0]


def _permute_hidden(hx: Any, order: Tensor | None) -> Any:
    """Reorder the batch dim (1) of h (or of LSTM's (h, c)) by ``order``."""
    if order is None:
        return hx
    if isinstance(hx, (tuple, list)):
        return tuple(h.index_select(1, order) for h in hx)
    return hx.index_select(1, order)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    >>> rnn = nn.RNN(4, 8, num_layers=2, batch_first=True)
    >>> out, h = rnn(lucid.randn(3, 5, 4))
    >>> out.shape, h.shape
    ((3, 5, 8), (2, 3, 8))
    """

    def __init__(
        self, input_size: int, hidden_size: int, num_layers: int = 1,
        nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
        dropout: float = 0.0, bidirectional: bool = False, device: Any = None, dtype: Any = None
    ) -> None:  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")  # fmt: skip
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)  # fmt: skip
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory; ``forward(input, (h_0, c_0))`` returns ``(out, (h_n, c_n))``.

    >>> lstm = nn.LSTM(4, 8, bidirectional=True)
    >>> out, (h, c) = lstm(lucid.randn(5, 3, 4))
    >>> out.shape, h.shape
    ((5, 3, 16), (2, 3, 8))
    """

    def __init__(
        self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
        batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
        proj_size: int = 0, device: Any = None, dtype: Any = None
    ) -> None:  # fmt: skip
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)  # fmt: skip


class GRU(RNNBase):
    """Gated recurrent unit (PyTorch's formulation: r applied to ``W_hn h + b_hn``)."""

    def __init__(
        self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
        batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
        device: Any = None, dtype: Any = None
    ) -> None:  # fmt: skip
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)  # fmt: skip


# -- cells -----------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """One time step; parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    bias_ih: Parameter | None
    bias_hh: Parameter | None

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
        dtype: Any = None
    ) -> None:  # fmt: skip
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"dtype": dtype, "device": device}
        self.weight_ih = Parameter(lucid.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(lucid.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(lucid.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(lucid.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Reinitialize every weight and bias uniform on ``[-1/sqrt(hidden_size),
        1/sqrt(hidden_size)]``."""
        _reset_uniform(self, self.hidden_size)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        return s

    def _prepare(self, input: Any, hx: Any) -> tuple[Tensor, bool]:
        name = type(self).__name__
        check_tensor(name, input, self.weight_ih)
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(f"{name} expected input of shape (N, {self.input_size}) or "
                             f"({self.input_size},), got {tuple(input.shape)}")  # fmt: skip
        batched = input.ndim == 2
        return (input if batched else input.unsqueeze(0)), batched

    def _zeros(self, x: Tensor) -> Tensor:
        out: Tensor = lucid.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        return out

    def _hidden(self, h: Tensor | None, x: Tensor, batched: bool) -> Tensor:
        if h is None:
            return self._zeros(x)
        check_tensor(type(self).__name__, h, self.weight_ih)
        if h.ndim != (2 if batched else 1):
            raise RuntimeError(f"{type(self).__name__}: Expected hidden to be "
                               f"{2 if batched else 1}D for {2 if batched else 1}D input, got "
                               f"{h.ndim}D ({tuple(h.shape)})")  # fmt: skip
        h = h if batched else h.unsqueeze(0)
        if tuple(h.shape) != (x.shape[0], self.hidden_size):
            want = (x.shape[0], self.hidden_size)
            raise RuntimeError(f"{type(self).__name__}: expected hidden of shape {want}, got "
                               f"{tuple(h.shape)}")  # fmt: skip
        return h


class RNNCell(RNNCellBase):
    """``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu)."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
        device: Any = None, dtype: Any = None
    ) -> None:  # fmt: skip
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, batched = self._prepare(input, hx)
        h = self._hidden(hx, x, batched)
        step = _step_for("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU")
        out: Tensor = step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                           self.bias_hh)  # fmt: skip
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: ``forward(input, (h, c)) -> (h', c')`` (gates i, f, g, o)."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
        dtype: Any = None
    ) -> None:  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        x, batched = self._prepare(input, hx)
        h0, c0 = (None, None) if hx is None else hx
        state = (self._hidden(h0, x, batched), self._hidden(c0, x, batched))
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), state, self.weight_hh,
                          self.bias_hh)  # fmt: skip
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n)."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
        dtype: Any = None
    ) -> None:  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, batched = self._prepare(input, hx)
        h = self._hidden(hx, x, batched)
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)
