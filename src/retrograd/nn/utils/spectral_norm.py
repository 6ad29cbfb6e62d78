"""The legacy hook form of spectral normalization: ``nn.utils.spectral_norm`` and
``remove_spectral_norm`` (Note [Legacy reparametrization hooks] in ``weight_norm.py``).

The state dict records the format version under ``metadata['spectral_norm']``, and a
version-0 checkpoint (``weight``, ``weight_orig``, ``weight_u``, no ``weight_v``) still
loads, its ``weight_v`` solved from the other three, as PyTorch does.

Example:
    >>> import retrograd as torch
    >>> m = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3))
    >>> m.weight_u.shape, m.weight_v.shape
    (torch.Size([3]), torch.Size([4]))
"""

from __future__ import annotations

from ..._core.grad_mode import no_grad
from ..._functions.linalg import multi_dot, pinverse
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter
from . import _norms
from ._hooks import drop_forward_pre_hook

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of :func:`spectral_norm`.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3))
        >>> [type(h).__name__ for h in m._forward_pre_hooks.values()]
        ['SpectralNorm']
    """

    _version: int = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """The weight as a matrix with dimension ``dim`` as its rows."""
        return _norms.weight_to_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool):
        """``weight_orig / sigma``, after ``n_power_iterations`` power steps if asked."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                # v first, then u: the legacy order (the parametrization does u first)
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(weight_mat.mv(v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        """Put ``<name>`` back as a parameter holding its current value."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        v = multi_dot([pinverse(weight_mat.t().mm(weight_mat)), weight_mat.t(),
                       u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / u.dot(weight_mat.mv(v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        """Reparametrize ``module.<name>`` and register the hooks."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Loads version-0 spectral-norm state dicts (solves the missing ``weight_v``)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and weight_key not in state_dict and \
                all(weight_key + s in state_dict for s in ("_orig", "_u", "_v")):
            return
        has_missing_keys = False
        for suffix in ("_orig", "", "_u"):
            if weight_key + suffix not in state_dict:
                has_missing_keys = True
                if strict:
                    missing_keys.append(weight_key + suffix)
        if has_missing_keys:
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records the spectral-norm format version in the state dict's metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm before every forward, estimated by
    power iteration from the buffers ``<name>_u``/``<name>_v``; the parameter becomes
    ``<name>_orig``. ``dim`` defaults to 1 for transposed convolutions, else 0.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3))
        >>> sorted(m.state_dict())
        ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``<name>`` is a parameter again, with its current value.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.utils.remove_spectral_norm(torch.nn.utils.spectral_norm(
        ...     torch.nn.Linear(4, 3)))
        >>> sorted(m.state_dict())
        ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            drop_forward_pre_hook(module, k)
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for store, cls in ((module._state_dict_hooks, SpectralNormStateDictHook),
                       (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in store.items():
            if isinstance(hook, cls) and hook.fn.name == name:
                del store[k]
                break
    return module
