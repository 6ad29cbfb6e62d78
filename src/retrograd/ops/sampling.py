"""Random fills and sampling: ``uniform_``, ``normal_``, ``bernoulli_``/``bernoulli``,
``exponential_``, ``random_``, ``multinomial`` (draws from ``retrograd._random``).

Example:
    >>> import retrograd as torch
    >>> g = torch.Generator().manual_seed(0)
    >>> torch.empty(3).uniform_(0, 1, generator=g).shape
    torch.Size([3])
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make, check_inference_write
from . import overlap as _overlap
from .inplace import _WRITING, _aliased_write, _check_inplace_leaf
from .public import public


def _rand_inplace(self, arr):
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor.py)
        check_inference_write(self)
    if not self._data.flags.writeable and self is not _WRITING[0]:
        _overlap.check(self._data, ())  # Note [Memory overlap in in-place ops] (overlap.py)
        return _aliased_write(self, lambda: _rand_inplace(self, arr))
    _check_inplace_leaf(self)
    self._data[...] = arr
    self._vc[0] += 1
    return self


@public(function=False)
def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    """Fill with uniform samples from [a, b) in place.

    Example:
        >>> import retrograd as torch
        >>> bool((torch.zeros(100).uniform_(2, 3) >= 2).all())
        True
    """
    from .._random import gen

    return _rand_inplace(self, gen(generator).uniform(a, b, self._data.shape))


@public(function=False)
def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with normal samples in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).normal_().shape
        torch.Size([3])
    """
    from .._random import gen

    return _rand_inplace(self, gen(generator).normal(mean, std, self._data.shape))


@public(function=False)
def bernoulli_(self, p: float = 0.5, *, generator=None) -> Tensor:
    from .._random import gen

    pp = p._data if isinstance(p, Tensor) else p
    return _rand_inplace(self, gen(generator).random(self._data.shape) < pp)


@public
def bernoulli(input, p=None, *, generator=None) -> Tensor:  # noqa: A002
    from .._random import gen

    probs = input._data if p is None else p
    return _make((gen(generator).random(input._data.shape) < probs).astype(input._data.dtype))


@public(function=False)
def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
    from .._random import gen

    return _rand_inplace(self, gen(generator).exponential(1.0 / lambd, self._data.shape))


@public(function=False)
def random_(self, low: int = 0, high=None, *, generator=None) -> Tensor:
    from .._random import gen

    if high is None:
        low, high = 0, low if low else 2 ** 24
    return _rand_inplace(self, gen(generator).integers(low, high, self._data.shape))


@public
def multinomial(input, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator=None) -> Tensor:
    from .._random import gen

    g = gen(generator)
    p = np.asarray(input._data, dtype=np.float64)
    rows = p.reshape(-1, p.shape[-1])
    out = []
    for r in rows:
        out.append(g.choice(len(r), num_samples, replace=replacement, p=r / r.sum()))
    res = np.array(out, dtype=np.int64)
    return _make(res.reshape(p.shape[:-1] + (num_samples,)))
