"""``GradScaler``: loss scaling for mixed-precision training (PyTorch's semantics).

Note [GradScaler state machine]
A port of ``torch.amp.GradScaler``: the scale is a 0-d float32 tensor (initially
2**16) and the growth tracker a 0-d int32 tensor, both made on the first
``scale()``. Per optimizer and iteration a stage goes READY -> UNSCALED (by
``unscale_``, or inside ``step``) -> STEPPED, and ``update()`` resets every stage.
``unscale_`` multiplies each gradient by 1/scale (the reciprocal taken in float64,
as PyTorch does) in the gradient's own dtype with float32 arithmetic for
float16/bfloat16, and records whether any gradient held an inf or NaN; ``step``
then skips ``optimizer.step()`` and returns None. ``update`` follows
``torch._amp_update_scale_``'s CPU kernel exactly: on inf, scale *= backoff_factor
and the tracker resets; otherwise the tracker counts successful steps and after
``growth_interval`` of them scale *= growth_factor (kept only if finite). The
products are taken in float64 and rounded to float32 once, as the C++ kernel does
(float times double). The same errors are raised for the same misuse (unscale_
twice, step twice, float16 gradients, closures).

retrograd addition: ``last_step_skipped`` says whether the most recent ``step()``
skipped the optimizer because of inf/NaN gradients (PyTorch only returns None,
which a normal ``optimizer.step()`` returns too).

Example:
    >>> import retrograd as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.5)
    >>> scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    >>> scaler.scale((w * 3).sum()).backward()
    >>> w.grad
    tensor([12., 12.])
    >>> scaler.step(opt); scaler.update()
    >>> w, scaler.last_step_skipped, scaler.get_scale()
    (tensor([-0.5000, -0.5000], requires_grad=True), False, 4.0)
"""

from __future__ import annotations

import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

from .._core import dtype as D
from .._core.grad_mode import no_grad
from .._functions.creation import full
from .._functions.namespace import isfinite
from .._tensor.tensor import Tensor
from .state import _warn_deprecated

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Stage of one optimizer within an iteration (Note [GradScaler state machine]).

    Example:
        >>> from retrograd.amp import OptState
        >>> OptState.UNSCALED.value
        1
    """

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _full(value, dtype):
    return full((), value, dtype=dtype)


def _non_finite_check_and_unscale_(grads: list, found_inf, inv_scale) -> None:
    """``torch._amp_foreach_non_finite_check_and_unscale_`` written with Tensor ops."""
    for g in grads:
        if not bool(isfinite(g).all()):
            found_inf.fill_(1.0)
        if g.dtype is D.float32 or g.dtype is D.float64:
            g.mul_(inv_scale)
        else:  # float32 arithmetic, one rounding to the gradient's dtype
            g.copy_(g.float() * inv_scale)


class GradScaler:
    """Scale the loss so small low-precision gradients do not flush to zero; unscale before
    the optimizer step and skip steps whose gradients overflowed.

    ``device='cuda'`` (PyTorch's default) warns and disables the scaler, as a CPU-only
    PyTorch build does: pass ``'cpu'``. Methods: ``scale``, ``unscale_``, ``step``,
    ``update``, ``get_scale``, ``state_dict``/``load_state_dict``, ``is_enabled`` and the
    growth/backoff getters and setters.

    Example:
        >>> import retrograd as torch
        >>> s = torch.amp.GradScaler("cpu")
        >>> s.get_scale(), s.is_enabled()
        (65536.0, True)
        >>> s.scale(torch.tensor(2.0))
        tensor(131072.)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if device not in ("cpu", "cuda"):
            raise RuntimeError(f"GradScaler: unsupported device {device!r}; retrograd runs on "
                               "the CPU: use GradScaler('cpu')")
        self._device = device
        self._enabled = enabled
        self.last_step_skipped: bool | None = None
        if self._device == "cuda" and enabled:
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling. "
                "(retrograd runs on the CPU: use torch.amp.GradScaler('cpu') to scale "
                "gradients.)", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states: dict = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self) -> None:
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = _full(self._init_scale, D.float32)
        self._growth_tracker = _full(self._init_growth_tracker, D.int32)

    def scale(self, outputs):
        """Multiply a tensor (or nested lists/tuples of tensors) by the current scale.

        Example:
            >>> import retrograd as torch
            >>> torch.amp.GradScaler("cpu", init_scale=8.0).scale([torch.ones(1)])
            [tensor([8.])]
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker()
            return outputs * self._scale

        return self._apply_scale(outputs)

    def _apply_scale(self, val):
        # (a method, not a closure calling itself: that would be a reference cycle holding
        # the scaled outputs and their graph until the cyclic collector runs)
        if isinstance(val, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker()
            return val * self._scale
        if isinstance(val, abc.Iterable):
            it = map(self._apply_scale, val)
            if isinstance(val, (list, tuple)):
                return type(val)(it)
            return it
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16: bool) -> dict:
        per_dtype: dict = defaultdict(list)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(
                            f"expected param to be torch.Tensor, got {type(param).__name__}")
                    g = param.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is D.float16:
                        raise ValueError(
                            "Attempting to unscale FP16 gradients. (Parameters held in "
                            "float16 get float16 gradients, which overflow when scaled: keep "
                            "the parameters in float32 and let autocast cast them.)")
                    per_dtype[g.dtype].append(g)
            for grads in per_dtype.values():
                _non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        return {"cpu": found_inf} if per_dtype else {}

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale (once per step), e.g. before
        clipping; records whether any is inf/NaN.

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(1, requires_grad=True); opt = torch.optim.SGD([w], lr=1.0)
            >>> s = torch.amp.GradScaler("cpu", init_scale=4.0)
            >>> s.scale(w.sum()).backward(); s.unscale_(opt); w.grad
            tensor([1.])
        """
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last "
                "update(). (The gradients are already unscaled; call unscale_ at most once "
                "per optimizer between step() and update().)")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step(). (Call unscale_ "
                               "before scaler.step(optimizer), or not at all.)")
        # the reciprocal is taken in float64, as PyTorch does
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _full(0.0, D.float32)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, state: dict, *args, **kwargs):
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
            self.last_step_skipped = False
        else:
            self.last_step_skipped = True
        return retval

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done) and run ``optimizer.step()`` unless a gradient is inf/NaN.

        Returns what ``optimizer.step`` returned, or None when the step was skipped
        (``last_step_skipped`` tells the two apart).

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(1, requires_grad=True); opt = torch.optim.SGD([w], lr=1.0)
            >>> s = torch.amp.GradScaler("cpu")
            >>> s.scale(w * float("inf")).sum().backward()
            >>> s.step(opt) is None, s.last_step_skipped, w
            (True, True, tensor([1.], requires_grad=True))
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled. (Compute the loss and call backward before "
                               "scaler.step(optimizer).)")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update(). "
                               "(Call scaler.update() once per iteration, after step().)")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Back the scale off after a skipped step, or grow it after ``growth_interval``
        good steps; ``new_scale`` sets it instead.

        Example:
            >>> import retrograd as torch
            >>> s = torch.amp.GradScaler("cpu"); _ = s.scale(torch.ones(1))
            >>> s.update(new_scale=2.0); s.get_scale()
            2.0
        """
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != "cpu":
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [f for st in self._per_optimizer_states.values()
                          for f in st["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = found_infs[0]
            for f in found_infs[1:]:
                found += f
            self._update_scale(scale, tracker, bool(found.item()))
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, scale, tracker, found_inf: bool) -> None:
        """``torch._amp_update_scale_`` (CPU kernel): float * double products, rounded once."""
        with no_grad():
            if found_inf:
                scale.copy_(scale.double() * self._backoff_factor)
                tracker.fill_(0)
                return
            successful = int(tracker.item()) + 1
            if successful == self._growth_interval:
                grown = (scale.double() * self._growth_factor).float()
                if bool(grown.isfinite()):
                    scale.copy_(grown)
                tracker.fill_(0)
            else:
                tracker.fill_(successful)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled).

        Example:
            >>> import retrograd as torch
            >>> torch.amp.GradScaler("cpu", init_scale=128.0).get_scale()
            128.0
        """
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self) -> float:
        """The factor the scale grows by after ``growth_interval`` good steps.

        Example:
            >>> import retrograd as torch
            >>> torch.amp.GradScaler("cpu").get_growth_factor()
            2.0
        """
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the growth factor.

        Example:
            >>> import retrograd as torch
            >>> s = torch.amp.GradScaler("cpu"); s.set_growth_factor(4.0); s.get_growth_factor()
            4.0
        """
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale is multiplied by after a skipped step.

        Example:
            >>> import retrograd as torch
            >>> torch.amp.GradScaler("cpu").get_backoff_factor()
            0.5
        """
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the backoff factor.

        Example:
            >>> import retrograd as torch
            >>> s = torch.amp.GradScaler("cpu"); s.set_backoff_factor(0.25)
            >>> s.get_backoff_factor()
            0.25
        """
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many consecutive good steps grow the scale.

        Example:
            >>> import retrograd as torch
            >>> torch.amp.GradScaler("cpu").get_growth_interval()
            2000
        """
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the growth interval.

        Example:
            >>> import retrograd as torch
            >>> s = torch.amp.GradScaler("cpu"); s.set_growth_interval(10)
            >>> s.get_growth_interval()
            10
        """
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else int(self._growth_tracker.item()))
        return 0

    def is_enabled(self) -> bool:
        """Whether this scaler scales at all.

        Example:
            >>> import retrograd as torch
            >>> torch.amp.GradScaler("cpu", enabled=False).is_enabled()
            False
        """
        return self._enabled

    def state_dict(self) -> dict:
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker ({} if off).

        Example:
            >>> import retrograd as torch
            >>> torch.amp.GradScaler("cpu").state_dict()["scale"]
            65536.0
        """
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what ``state_dict()`` returned (a no-op when disabled).

        Example:
            >>> import retrograd as torch
            >>> s = torch.amp.GradScaler("cpu"); s.load_state_dict({"scale": 8.0,
            ...     "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 10,
            ...     "_growth_tracker": 3})
            >>> s.get_scale(), s.get_growth_interval()
            (8.0, 10)
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _found_inf_per_device(self, optimizer) -> dict:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]


class _DeprecatedGradScaler(GradScaler):
    """``torch.<device>.amp.GradScaler``: PyTorch's FutureWarning, then
    ``GradScaler(<device>, ...)``; subclasses set ``_deprecated_device``."""

    _deprecated_device = "cpu"

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        dev = self._deprecated_device
        _warn_deprecated(f"torch.{dev}.amp.GradScaler(args...)",
                         f"torch.amp.GradScaler('{dev}', args...)")
        super().__init__(dev, init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
