"""L-BFGS with an optional strong-Wolfe line search (a port of ``torch.optim.LBFGS``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._line_search import strong_wolfe
from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """Limited-memory BFGS, as ``torch.optim.LBFGS``; ``step`` needs a closure.

    The closure clears the gradients, computes the loss, calls ``backward`` and returns the
    loss. One ``step`` runs up to ``max_iter`` iterations. All parameters form one group and
    live on one device; the state (history of steps and gradient changes) lives in the state
    of the first parameter.

    Example::

        >>> import lucid, lucid.optim as optim
        >>> x = lucid.tensor([3.0, -2.0], dtype=lucid.float64, requires_grad=True)
        >>> opt = optim.LBFGS([x], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((x - 1.0) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = opt.step(closure)
        >>> [round(v, 6) for v in x.tolist()]
        [1.0, 1.0]
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, _defaults(locals()))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def _check_group_options(self, group: ParamGroup) -> None:
        if not 0.0 <= group["lr"]:
            raise ValueError(f"Invalid learning rate: {group['lr']}")
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(
                "only 'strong_wolfe' is supported as line_search_fn, "
                f"got {group['line_search_fn']!r}"
            )

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if getattr(self, "param_groups", None):
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # -- flat views of all parameters ------------------------------------------------------------
    def _gather_flat_grad(self) -> Tensor:
        views = [
            lucid.zeros(p.numel(), dtype=p.dtype, device=p.device)
            if p.grad is None
            else p.grad.reshape(-1)
            for p in self._params
        ]
        return lucid.cat(views, 0)

    def _add_grad(self, step_size: float, update: Tensor) -> None:
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset : offset + numel].reshape(p.shape), alpha=step_size)
            offset += numel

    def _clone_param(self) -> list[Tensor]:
        return [p.detach().clone() for p in self._params]

    def _set_param(self, params_data: list[Tensor]) -> None:
        for p, pdata in zip(self._params, params_data):
            p.copy_(pdata)

    def _directional_evaluate(
        self, closure: Callable[[], Any], x: list[Tensor], t: float, d: Tensor
    ) -> tuple[float, Tensor]:
        self._add_grad(t, d)
        with lucid.enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # -- the whole-problem step ------------------------------------------------------------------
    def _step(self, closure: Callable[[], Any] | None = None) -> Any:
        if closure is None:
            raise RuntimeError("LBFGS requires a closure that re-evaluates the model")
        with lucid.no_grad():
            loss = self._run(closure)
        self._evaluate_lazy()
        return loss

    def _run(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with lucid.enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if _absmax(flat_grad) <= tolerance_grad:
            return orig_loss

        d: Tensor = state.get("d")  # type: ignore[assignment]
        t = float(state["t"] if "t" in state else lr)
        old_dirs: list[Tensor] = state.get("old_dirs", [])
        old_stps: list[Tensor] = state.get("old_stps", [])
        ro: list[float] = state.get("ro", [])
        h_diag: float = state.get("H_diag", 1.0)
        prev_flat_grad: Tensor | None = state.get("prev_flat_grad")
        prev_loss: float | None = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # compute the descent direction from the curvature history
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro, h_diag = [], [], [], 1.0
            else:
                assert prev_flat_grad is not None
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = float(y.dot(s).item())
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y).item())
                d = _two_loop(flat_grad, old_dirs, old_stps, ro, h_diag)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(flat_grad.abs().sum().item())) * lr
            else:
                t = lr
            gtd = float(flat_grad.dot(d).item())
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if group["line_search_fn"] == "strong_wolfe":
                x_init = self._clone_param()

                def obj_func(x: list[Tensor], t: float, d: Tensor) -> tuple[float, Tensor]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = _absmax(flat_grad) <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    with lucid.enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = _absmax(flat_grad) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _absmax(d.mul(t)) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=h_diag,
            prev_flat_grad=prev_flat_grad,
            prev_loss=prev_loss,
        )
        return orig_loss


def _absmax(t: Tensor) -> float:
    return float(t.abs().max().item())


def _two_loop(
    flat_grad: Tensor, old_dirs: list[Tensor], old_stps: list[Tensor], ro: list[float], h: float
) -> Tensor:
    """The L-BFGS two-loop recursion: an approximation of ``-H^{-1} g``."""
    num_old = len(old_dirs)
    al = [0.0] * num_old
    q = flat_grad.neg()
    for i in range(num_old - 1, -1, -1):
        al[i] = float(old_stps[i].dot(q).item()) * ro[i]
        q.add_(old_dirs[i], alpha=-al[i])
    r: Tensor = q.mul(h)
    for i in range(num_old):
        be_i = float(old_dirs[i].dot(r).item()) * ro[i]
        r.add_(old_stps[i], alpha=al[i] - be_i)
    return r
