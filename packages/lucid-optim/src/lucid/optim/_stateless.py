"""``swap_in_optimizer_params_and_state``: step an optimizer on other parameters and state."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from lucid import Tensor

from .optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]

_WHAT = "swap_in_optimizer_params_and_state requires"


def _check_groups(optimizer: Optimizer, swapin: Any) -> tuple[dict[Any, Any], list[Any]]:
    if not optimizer.state:
        raise RuntimeError(f"{_WHAT} initialized optimizer state.")
    if not isinstance(swapin, dict):
        raise RuntimeError(f"{_WHAT} a DCP-style optimizer state_dict.")
    state, groups = swapin.get("state"), swapin.get("param_groups")
    if not isinstance(state, dict):
        raise RuntimeError(
            f"{_WHAT} swapin_optim_state['state'] to be a dict mapping packed parameter ids to "
            f"per-param state dicts, got {type(state).__name__}."
        )
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_WHAT} optimizer.state_dict()-style state keyed by packed "
                           "parameter ids.")  # fmt: skip
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_WHAT} per-parameter optimizer state entries to be dictionaries.")
    if not isinstance(groups, list):
        raise RuntimeError(
            f"{_WHAT} swapin_optim_state['param_groups'] to be a list of param-group dicts, got "
            f"{type(groups).__name__}."
        )
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than "
                           "the live optimizer.")  # fmt: skip
    return state, groups


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(
    optimizer: Optimizer, swapin_parameters: dict[str, Tensor], swapin_optim_state: dict[str, Any]
) -> Iterator[None]:
    """Inside the block, ``optimizer`` steps ``swapin_parameters`` (in ``param_groups`` order)
    with the state and hyper-parameters of ``swapin_optim_state`` (an ``optimizer.state_dict()``
    shape); on exit its own parameters, state and groups are back. In-place updates of the
    swapped-in state tensors remain in the caller's dict, as torch's."""
    state, groups = _check_groups(optimizer, swapin_optim_state)
    flat = list(swapin_parameters.values())
    offset, seen, plan = 0, set(), []
    for idx, (live, group) in enumerate(zip(optimizer.param_groups, groups, strict=True)):
        if not isinstance(group, dict):
            raise RuntimeError(f"{_WHAT} each optimizer param group to be a dictionary.")
        ids = group.get("params")
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise RuntimeError(f"{_WHAT} optimizer.state_dict()-style param_groups[*]['params'] "
                               "entries keyed by packed parameter ids.")  # fmt: skip
        if len(live["params"]) != len(ids):
            raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                               "params than the live optimizer param group.")  # fmt: skip
        only_in = [k for k in group if k not in live]
        only_live = [k for k in live if k not in group]
        if only_in or only_live:
            raise RuntimeError(
                f"{_WHAT} optimizer.state_dict()-style param group keys to exactly match the "
                f"live optimizer group keys for group {idx}. Keys only in swap-in: {only_in}. "
                f"Keys only in live: {only_live}."
            )
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_WHAT} the explicit parameter state to match "
                               "optimizer.param_groups ordering.")  # fmt: skip
        plan.append((live, group, flat[offset : offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(
            f"{_WHAT} swapin_optim_state['state'] to be keyed only by packed parameter ids "
            f"from param_groups[*]['params']; got extra keys {extra!r}."
        )
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for live, group, params in plan:
            live["params"] = params
            live.update({k: v for k, v in group.items() if k != "params"})
            for p, pid in zip(params, group["params"], strict=True):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for live, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            live.clear()
            live.update(snapshot)
        optimizer.state = original_state
