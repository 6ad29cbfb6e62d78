"""``retrograd.nn.init``: in-place parameter initialisation, as PyTorch's.

Random draws come from retrograd's global generator (``torch.manual_seed``) or a
``generator=``, through the tensors' own ``uniform_``/``normal_``, so a seeded
initialisation gives PyTorch's numbers bit for bit (orthogonal_ to float rounding, see
Note [Initialisers' arithmetic]).

Example:
    >>> import retrograd as torch
    >>> w = torch.empty(3, 5)
    >>> _ = torch.nn.init.constant_(w, 0.5)
    >>> w.sum().item()
    7.5
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core.grad_mode import no_grad
from .._functions import sampling
from .._functions.creation import empty_like
from .._functions.pointwise import where
from .._random import rng
from .._tensor.tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]


def calculate_gain(nonlinearity: str, param: int | float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.init.calculate_gain('relu')
        1.4142135623730951
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fill(tensor: Tensor, arr) -> Tensor:
    with no_grad():
        tensor._data[...] = arr
        tensor._vc[0] += 1
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: rng.Generator | None = None) -> Tensor:
    """Fill with U(a, b) samples.

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.init.uniform_(torch.empty(100), -1, 1)
        >>> bool((w.abs() <= 1).all())
        True
    """
    with no_grad():
        return sampling.uniform_(tensor, a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: rng.Generator | None = None) -> Tensor:
    """Fill with N(mean, std²) samples.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.init.normal_(torch.empty(2, 3)).shape
        torch.Size([2, 3])
    """
    with no_grad():
        return sampling.normal_(tensor, mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: rng.Generator | None = None) -> Tensor:
    """Fill with N(mean, std²) samples truncated to [a, b], by PyTorch's rejection sampling
    (so a seed gives PyTorch's draws, see Note [Initialisers' arithmetic]).

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.init.trunc_normal_(torch.empty(1000), std=1.0, a=-0.5, b=0.5)
        >>> bool((w.abs() <= 0.5).all())
        True
    """
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            # most normal draws land in [a, b]: redraw the ones that do not
            lo, hi = (float(tensor._data.dtype.type(v)) for v in (a, b))  # in its dtype
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                outside = (result < lo) | (result > hi)
                if not outside.any():
                    break
                redraw = empty_like(result).normal_(mean, std, generator=generator)
                result = where(outside, redraw, result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        # a narrow window: uniform candidates in [a, b], accepted with the normal density
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        accept_buf = empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates = tensor.clone()
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
        result = tensor
        while pending.any():
            candidates.uniform_(a, b, generator=generator)
            result = where(pending, candidates, result)
            candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            accepted = accept_buf.uniform_(generator=generator).log_().gt(candidates)
            pending = where(pending, accepted, pending)
        if result is not tensor:
            tensor.copy_(result)
        return tensor


# Note [Initialisers' arithmetic]
# The random draws of every initialiser are PyTorch's (they go through uniform_/normal_).
# trunc_normal_ is PyTorch's rejection sampler step by step, so its accept/redraw choices
# and values match too (tested bit for bit), as long as retrograd's float log, division and
# power round as PyTorch's do at the acceptance edge. orthogonal_ takes a QR factorisation,
# which LAPACK builds (NumPy's OpenBLAS, PyTorch's MKL) round differently: its values agree
# with PyTorch's to float rounding.


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.init.constant_(torch.empty(2), 3.0)
        tensor([3., 3.])
    """
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.init.ones_(torch.empty(2))
        tensor([1., 1.])
    """
    return _fill(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.init.zeros_(torch.empty(2))
        tensor([0., 0.])
    """
    return _fill(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """Identity matrix (2-D tensors only).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.init.eye_(torch.empty(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    if tensor._data.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor._data.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Dirac delta kernels: a convolution with them is the identity.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.init.dirac_(torch.empty(1, 1, 3))
        tensor([[[0., 1., 0.]]])
    """
    d = tensor._data.ndim
    if d not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor._data.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per = sizes[0] // groups
    min_dim = min(out_per, sizes[1])
    arr = np.zeros(sizes)
    for g in range(groups):
        for i in range(min_dim):
            arr[(g * out_per + i, i) + tuple(s // 2 for s in sizes[2:])] = 1
    return _fill(tensor, arr)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    dim = tensor._data.ndim
    if dim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    num_in = tensor._data.shape[1]
    num_out = tensor._data.shape[0]
    receptive = 1
    for s in tensor._data.shape[2:]:
        receptive *= s
    return num_in * receptive, num_out * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: rng.Generator | None = None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot).

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.init.xavier_uniform_(torch.empty(3, 3))
        >>> bool((w.abs() <= 1).all())
        True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: rng.Generator | None = None) -> Tensor:
    """N(0, std²) with std = gain * sqrt(2 / (fan_in + fan_out)).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.init.xavier_normal_(torch.empty(3, 3)).shape
        torch.Size([3, 3])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: rng.Generator | None = None) -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan) (He); PyTorch's Linear/Conv default uses
    ``a=sqrt(5)``.

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.init.kaiming_uniform_(torch.empty(4, 4), a=5 ** 0.5)
        >>> bool((w.abs() <= 0.5).all())
        True
    """
    if 0 in tensor._data.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: rng.Generator | None = None) -> Tensor:
    """N(0, std²) with std = gain / sqrt(fan) (He).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.init.kaiming_normal_(torch.empty(4, 4), nonlinearity='relu').shape
        torch.Size([4, 4])
    """
    if 0 in tensor._data.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0,
                generator: rng.Generator | None = None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample.

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.init.orthogonal_(torch.empty(3, 3))
        >>> bool(torch.allclose(w @ w.T, torch.eye(3), atol=1e-5))
        True
    """
    if tensor._data.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor._data.size == 0:
        return tensor
    rows = tensor._data.shape[0]
    cols = tensor._data.size // rows
    dt = tensor._data.dtype
    flat = rng.normal(generator, rows * cols, dt).reshape(rows, cols)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r)).astype(q.dtype)
    if rows < cols:
        q = q.T
    with no_grad():
        tensor._data[...] = q.reshape(tensor._data.shape)
        tensor._data *= dt.type(gain)
        tensor._vc[0] += 1
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: rng.Generator | None = None) -> Tensor:
    """Normal entries with a fraction ``sparsity`` of each column set to zero.

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.init.sparse_(torch.empty(10, 3), 0.5)
        >>> int((w == 0).sum())
        15
    """
    if tensor._data.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._data.shape
    num_zeros = int(math.ceil(sparsity * rows))
    normal_(tensor, 0.0, std, generator)
    with no_grad():
        for c in range(cols):  # PyTorch draws these from the default generator
            tensor._data[rng.randperm(None, rows)[:num_zeros], c] = 0
    return tensor


# legacy names without the trailing underscore
def _deprecated(fn):
    def wrapper(*args, **kwargs) -> Tensor:
        warnings.warn(f"`nn.init.{fn.__name__[:-1]}` is now deprecated in favor of "
                      f"`nn.init.{fn.__name__}`.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    wrapper.__name__ = fn.__name__[:-1]
    wrapper.__doc__ = f"Deprecated alias of ``{fn.__name__}``."
    return wrapper


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
sparse = _deprecated(sparse_)
