"""Collating samples into batches: ``default_collate`` and ``default_convert``.

Example:
    >>> from retrograd.utils.data import default_collate
    >>> default_collate([{'x': 1.0, 'y': 0}, {'x': 2.0, 'y': 1}])
    {'x': tensor([1., 2.], dtype=torch.float64), 'y': tensor([0, 1])}
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

from ..._core import dtype as D
from ..._functions.creation import as_tensor, tensor
from ..._functions.namespace import stack
from ..._tensor.tensor import Tensor

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map"]

# NumPy dtype strings of byte/unicode strings and objects, which do not become tensors
_np_str_obj = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def _as_tensor(x) -> Tensor:

    return as_tensor(x)


def default_convert(data):
    """Turn NumPy arrays (also inside dicts, lists, tuples) into tensors; leave the rest.

    This is the DataLoader's ``collate_fn`` when automatic batching is off
    (``batch_size=None``).

    Example:
        >>> import numpy as np
        >>> from retrograd.utils.data import default_convert
        >>> default_convert([np.array([0, 1]), 'a'])
        [tensor([0, 1]), 'a']
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _np_str_obj.search(data.dtype.str) is not None:
            return data
        return _as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return elem_type({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collate a list of samples, recursing into dicts, namedtuples and sequences;
    leaves are handled by ``collate_fn_map`` (type -> ``fn(batch, *, collate_fn_map)``).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.data._collate import collate, default_collate_fn_map
        >>> collate([(torch.zeros(2), 1), (torch.ones(2), 2)],
        ...         collate_fn_map=default_collate_fn_map)
        [tensor([[0., 0.],
                [1., 1.]]), tensor([1, 2])]
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                              for k in elem})
                return clone
            return elem_type({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                              for k in elem})
        except TypeError:
            return {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                    for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            # tuples become lists, as in PyTorch (backwards compatibility)
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = collate(s, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(s, collate_fn_map=collate_fn_map) for s in transposed])
        except TypeError:
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def _collate_tensor(batch, *, collate_fn_map=None) -> Tensor:

    return stack(batch, 0)


def _collate_numpy_array(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def _collate_numpy_scalar(batch, *, collate_fn_map=None) -> Tensor:
    return _as_tensor(np.asarray(batch))


def _collate_float(batch, *, collate_fn_map=None) -> Tensor:

    return tensor(batch, dtype=D.float64)


def _collate_int(batch, *, collate_fn_map=None) -> Tensor:

    return tensor(batch)


def _collate_str(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: _collate_tensor,
    np.ndarray: _collate_numpy_array,
    (np.bool_, np.number, np.object_): _collate_numpy_scalar,
    float: _collate_float,
    int: _collate_int,
    str: _collate_str,
    bytes: _collate_str,
}


def default_collate(batch):
    """Stack a list of samples into a batch: tensors and NumPy arrays are stacked along
    a new first dimension, Python floats become float64 tensors and ints int64 tensors,
    strings stay lists; dicts, namedtuples, tuples and lists are collated field by field.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.data import default_collate
        >>> default_collate([(torch.tensor([1., 2.]), 0), (torch.tensor([3., 4.]), 1)])
        [tensor([[1., 2.],
                [3., 4.]]), tensor([0, 1])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
