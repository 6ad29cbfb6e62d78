"""retrograd.amp: automatic mixed precision (``autocast``, ``GradScaler``) on the CPU.

Example:
    >>> import retrograd as torch
    >>> model_w = torch.ones(4, 4, requires_grad=True)
    >>> opt = torch.optim.SGD([model_w], lr=0.1)
    >>> scaler = torch.amp.GradScaler("cpu")
    >>> with torch.amp.autocast("cpu", dtype=torch.bfloat16):
    ...     out = torch.ones(2, 4) @ model_w
    ...     loss = out.float().pow(2).mean()
    >>> out.dtype
    torch.bfloat16
    >>> scaler.scale(loss).backward()
    >>> scaler.step(opt); scaler.update()
    >>> model_w.grad.dtype, scaler.get_scale()
    (torch.float32, 65536.0)
"""

from __future__ import annotations

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler, OptState

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler",
           "OptState"]
