"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state.

Example:
    >>> import retrograd as torch
    >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
    >>> opt = torch.optim.SGD([w], lr=0.5, momentum=0.9); opt.step()
    >>> other = torch.zeros(1, requires_grad=True); other.grad = torch.ones(1)
    >>> with torch.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, opt.state_dict()):
    ...     opt.step()
    >>> w, other
    (tensor([0.5000], requires_grad=True), tensor([-0.9500], requires_grad=True))
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from .._tensor.tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _checked_state(state: Any) -> dict:
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    return state


def _checked_group_ids(idx: int, group: dict, swapin_group: Any) -> list[int]:
    if not isinstance(swapin_group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                           "params than the live optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to "
                           "exactly match the live optimizer group keys for group "
                           f"{idx}. Keys only in swap-in: {swapin_only}. Keys only in live: "
                           f"{live_only}.")
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Within the block, ``optimizer`` works on ``swapin_parameters`` (in
    ``param_groups`` order) with the state and hyperparameters of ``swapin_optim_state``
    (an ``optimizer.state_dict()``); on exit the live groups and state come back.

    As PyTorch's: in-place updates of the swapped-in state tensors reach the caller's
    ``swapin_optim_state``; new entries made during the block do not.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(1, requires_grad=True)
        >>> opt = torch.optim.SGD([w], lr=0.5)
        >>> with torch.optim.swap_in_optimizer_params_and_state(opt, {}, opt.state_dict()):
        ...     pass
        Traceback (most recent call last):
        RuntimeError: swap_in_optimizer_params_and_state requires initialized optimizer state.
    """
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _checked_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of "
                           f"param-group dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    flat = list(swapin_parameters.values())
    offset, seen, plan = 0, set(), []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _checked_group_ids(idx, group, swapin_group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        plan.append((group, swapin_group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    live_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict = defaultdict(dict)
        for group, swapin_group, params in plan:
            group["params"] = params
            group.update((k, v) for k, v in swapin_group.items() if k != "params")
            for p, pid in zip(params, swapin_group["params"]):
                swapped[p] = dict(state.get(pid, {}))  # shallow: in-place edits reach the caller
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
