"""Random fills and sampling: ``uniform_``, ``normal_``, ``bernoulli_``/``bernoulli``,
``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``, ``random_``, ``multinomial``,
with PyTorch's CPU numbers (``retrograd._random.rng``, ``retrograd._random.distributions``).

Example:
    >>> import retrograd as torch
    >>> g = torch.Generator().manual_seed(0)
    >>> torch.empty(3).uniform_(0, 1, generator=g).shape
    torch.Size([3])
"""

from __future__ import annotations

import numpy as np

from .._core.dtype import dtype
from .._random import distributions as random_dist
from .._random import rng
from .._tensor.tensor import Tensor, _make, check_inference_write
from ..ops import overlap as _overlap
from ..ops.batch_rules import random_under_vmap
from ..ops.public import public
from .creation import _check_floating, _empty_keeping_layout, _grad
from .inplace import _WRITING, _aliased_write, _check_inplace_leaf


def _rand_inplace(self, arr):
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor/tensor.py)
        check_inference_write(self)
    if not self._data.flags.writeable and self is not _WRITING[0]:
        _overlap.check(self._data, ())  # Note [Memory overlap in in-place ops] (overlap.py)
        return _aliased_write(self, lambda: _rand_inplace(self, arr))
    _check_inplace_leaf(self)
    self._data[...] = arr
    self._vc[0] += 1
    return self


# Note [Sampling order]
# PyTorch's serial sampling kernels write one sample per element in TensorIterator order:
# memory order, which is the logical order for a contiguous tensor and for slices of one,
# and the order of the strides for a permuted view (t.T.uniform_() fills t's memory as
# t.uniform_() would). _laid_out puts a flat run of samples where that order takes them.


def _laid_out(data: np.ndarray, flat: np.ndarray) -> np.ndarray:
    if data.ndim < 2 or data.flags.c_contiguous:
        return flat.reshape(data.shape)
    order = sorted(range(data.ndim), key=lambda d: -abs(data.strides[d]))
    out = np.empty(data.shape, flat.dtype)
    out.transpose(order)[...] = flat.reshape([data.shape[d] for d in order])
    return out


def _floating(self, kernel: str) -> np.dtype:
    dt = self._data.dtype
    if dt.kind != "f" and dt.name != "bfloat16":
        from .._core.dtype import FROM_NP

        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_DTYPE_NAMES.get(FROM_NP[dt].name, dt.name)}'")
    return dt


_DTYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}


@public(function=False)
def uniform_(self, a: float = 0.0, b: float = 1.0, *,
             generator: rng.Generator | None = None) -> Tensor:
    """Fill with uniform samples from [a, b) in place (PyTorch's numbers after a seed).

    Example:
        >>> import retrograd as torch
        >>> bool((torch.zeros(100).uniform_(2, 3) >= 2).all())
        True
    """
    dt = _floating(self, "uniform_kernel_cpu")
    if not a <= b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} "
                           f"> to={b}")
    flat = random_dist.uniform_range(generator, self._data.size, dt, a, b)
    return _rand_inplace(self, _laid_out(self._data, flat))


@public(function=False)
def normal_(self, mean: float = 0.0, std: float = 1.0, *,
            generator: rng.Generator | None = None) -> Tensor:
    """Fill with normal samples in place (PyTorch's numbers after a seed).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).normal_().shape
        torch.Size([3])
    """
    dt = _floating(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    data = self._data
    flat = rng.normal(generator, data.size, dt, mean, std, data.flags.c_contiguous)
    return _rand_inplace(self, _laid_out(data, flat))


def _check_p(p: float, name: str = "bernoulli_") -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"{name} expects p to be in [0, 1], but got p={p}")


@public(function=False)
def bernoulli_(self, p: Tensor | float = 0.5, *, generator: rng.Generator | None = None) -> Tensor:
    """Fill with 0/1 samples of probability ``p`` (a number or a tensor) in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).bernoulli_(1.0).tolist()
        [1.0, 1.0, 1.0]
    """
    data = self._data
    if isinstance(p, Tensor):
        probs = np.broadcast_to(p._data, data.shape)
        hits = random_dist.bernoulli_tensor(generator, _in_order(data, probs))
    else:
        _check_p(float(p))
        hits = random_dist.bernoulli(generator, data.size, p)
    return _rand_inplace(self, _laid_out(data, hits).astype(data.dtype))


def _in_order(data: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``other`` (of ``data``'s shape) flattened in ``data``'s sampling order."""
    if data.ndim < 2 or data.flags.c_contiguous:
        return other.reshape(-1)
    order = sorted(range(data.ndim), key=lambda d: -abs(data.strides[d]))
    return other.transpose(order).reshape(-1)


@public
@random_under_vmap(by_values=True)
def bernoulli(input: Tensor, p: float | None = None, *,
              generator: rng.Generator | None = None) -> Tensor:
    """0/1 samples with the probabilities in ``input`` (or a number ``p``), like PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.bernoulli(torch.tensor([0.0, 1.0])).tolist()
        [0.0, 1.0]
    """
    data = input._data
    if p is None:
        if data.dtype.kind != "f" and data.dtype.name != "bfloat16":
            raise NotImplementedError('"bernoulli_tensor_cpu_p_" not implemented for '
                                      f"'{_DTYPE_NAMES.get(data.dtype.name, data.dtype.name)}'")
        # PyTorch samples into a fresh contiguous result (empty_like with the legacy
        # contiguous format), so the draws follow the C order of the shape whatever the
        # input's strides (a transposed or expanded input included)
        hits = random_dist.bernoulli_tensor(generator, np.ascontiguousarray(data).reshape(-1))
        return _make(hits.reshape(data.shape).astype(data.dtype))
    else:
        _check_p(float(p))
        hits = random_dist.bernoulli(generator, data.size, p)
    return _make(_laid_out(data, hits).astype(data.dtype))


def _fill_with(self, kernel: str, samples) -> Tensor:
    dt = _floating(self, kernel)
    flat = samples(self._data.size).astype(dt)
    return _rand_inplace(self, _laid_out(self._data, flat))


@public(function=False)
def exponential_(self, lambd: float = 1.0, *, generator: rng.Generator | None = None) -> Tensor:
    """Fill with exponential samples of rate ``lambd`` in place.

    Example:
        >>> import retrograd as torch
        >>> bool((torch.zeros(5).exponential_() >= 0).all())
        True
    """
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill_with(self, "exponential_cpu",
                      lambda n: random_dist.exponential(generator, n, lambd))


@public(function=False)
def geometric_(self, p: float, *, generator: rng.Generator | None = None) -> Tensor:
    """Fill with geometric samples (trials to the first success) in place.

    Example:
        >>> import retrograd as torch
        >>> bool((torch.zeros(5).geometric_(0.5) >= 1).all())
        True
    """
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    data = self._data
    flat = random_dist.geometric(generator, data.size, p).astype(data.dtype)
    return _rand_inplace(self, _laid_out(data, flat))


@public(function=False)
def log_normal_(self, mean: float = 1.0, std: float = 2.0, *,
                generator: rng.Generator | None = None) -> Tensor:
    """Fill with log-normal samples in place.

    Example:
        >>> import retrograd as torch
        >>> bool((torch.zeros(5).log_normal_() > 0).all())
        True
    """
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill_with(self, "log_normal_cpu",
                      lambda n: random_dist.log_normal(generator, n, mean, std))


@public(function=False)
def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *,
            generator: rng.Generator | None = None) -> Tensor:
    """Fill with Cauchy samples in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2).cauchy_().shape
        torch.Size([2])
    """
    return _fill_with(self, "cauchy_cpu", lambda n: random_dist.cauchy(generator, n, median, sigma))


@public(function=False)
def random_(self, low: int | None = None, high: int | None = None, *,
            generator: rng.Generator | None = None, to: int | None = None,
            **from_: int) -> Tensor:
    """Fill with integers: ``random_()`` over the dtype's range, ``random_(to)`` from
    [0, to), ``random_(from, to)`` from [from, to). PyTorch's keywords are ``to=`` and
    ``from=`` (a Python keyword: ``random_(**{"from": 2, "to": 9})``).

    Example:
        >>> import retrograd as torch
        >>> bool((torch.zeros(5).random_(3) < 3).all()), torch.zeros(2).random_(to=1)
        (True, tensor([0., 0.]))
    """
    if to is not None or from_:
        low, high = _random_bounds(low, high, to, from_)
    data = self._data
    if low is None and high is None:
        flat = random_dist.random_full(generator, data.size, data.dtype)
    else:
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high)
        if low < high and (data.dtype.kind in "iub"):
            _check_int_bounds(data.dtype, low, high)
        flat = rng.randint(generator, data.size, low, high)
    return _rand_inplace(self, _laid_out(data, flat.astype(data.dtype)))


def _random_bounds(low, high, to, from_: dict) -> tuple:
    """``random_``'s bounds given as PyTorch's keywords ``to=`` and ``from=``."""
    extra = next((k for k in from_ if k != "from"), None)
    if extra is not None:
        raise TypeError(f"random_() got an unexpected keyword argument '{extra}'")
    if "from" in from_:
        if low is not None:
            raise TypeError("random_() got multiple values for argument 'from' (pass the lower "
                            "bound once)")
        low = from_["from"]
        if to is None and high is None:
            raise TypeError('random_() missing 1 required positional arguments: "to" (pass '
                            "to= with from=)")
    if to is not None:
        if high is not None:
            raise TypeError("random_() got multiple values for argument 'to' (pass the upper "
                            "bound once)")
        high = to
    return (0 if low is None else low), high


_C_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}


def _check_int_bounds(dt: np.dtype, low: int, high: int) -> None:
    lo, hi = (0, 1) if dt == np.bool_ else (np.iinfo(dt).min, np.iinfo(dt).max)
    name = _C_NAMES[dt.name]
    if not lo <= low <= hi:
        raise RuntimeError(f"from is out of bounds for {name}")
    if not lo <= high - 1 <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")


@public
@random_under_vmap(by_values=True)
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: rng.Generator | None = None) -> Tensor:
    """Indices sampled from the rows of ``input`` (weights), PyTorch's draws after a seed.

    Example:
        >>> import retrograd as torch
        >>> torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 2, True).tolist()
        [1, 1]
    """
    data = input._data
    if data.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if data.dtype.kind != "f" and data.dtype.name != "bfloat16":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    cats = data.shape[-1]
    if not replacement and num_samples > cats:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rows = data.reshape(-1, cats)
    if not (np.isfinite(rows).all() and (rows >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.astype(np.float64).sum(-1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    res = random_dist.multinomial(generator, rows, int(num_samples), bool(replacement))
    return _make(res.reshape(data.shape[:-1] + (int(num_samples),)))


__all__ = ["uniform_", "normal_", "bernoulli_", "bernoulli", "exponential_", "geometric_",
           "log_normal_", "cauchy_", "random_", "multinomial"]


# ---------------------------------------------------------------------------------
# random tensors shaped like another (creation functions over the fills above)


@public(method=False)
@random_under_vmap
def rand_like(input: Tensor, dtype: dtype | None = None, generator: rng.Generator | None = None,
              requires_grad: bool = False, **kw) -> Tensor:
    """``rand`` with ``input``'s shape, dtype and layout (PyTorch's numbers after a seed).

    Example:
        >>> import retrograd as torch
        >>> torch.rand_like(torch.zeros(2, 3)).shape
        torch.Size([2, 3])
    """
    out = _empty_keeping_layout(input, dtype, kw)
    _check_floating(out._data.dtype, "check_uniform_bounds")
    return _grad(uniform_(out, 0.0, 1.0, generator=generator), requires_grad)


@public(method=False)
@random_under_vmap
def randn_like(input: Tensor, dtype: dtype | None = None, generator: rng.Generator | None = None,
               requires_grad: bool = False, **kw) -> Tensor:
    """``randn`` with ``input``'s shape, dtype and layout (PyTorch's numbers after a seed).

    Example:
        >>> import retrograd as torch
        >>> torch.randn_like(torch.zeros(2, 3)).shape
        torch.Size([2, 3])
    """
    out = normal_(_empty_keeping_layout(input, dtype, kw), generator=generator)
    return _grad(out, requires_grad)


@public(method=False)
@random_under_vmap
def randint_like(input: Tensor, low: int, high: Tensor | int | None = None,
                 dtype: dtype | None = None, generator: rng.Generator | None = None,
                 requires_grad: bool = False, **kw) -> Tensor:
    """``randint`` with ``input``'s shape, dtype and layout (PyTorch's numbers after a seed).

    Example:
        >>> import retrograd as torch
        >>> bool((torch.randint_like(torch.zeros(5), 3) < 3).all())
        True
    """
    if high is None:
        low, high = 0, low
    out = random_(_empty_keeping_layout(input, dtype, kw), low, high, generator=generator)
    return _grad(out, requires_grad)
