"""``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``: what a node saved, under
PyTorch's names (Note [Saved attributes]).

Example:
    >>> import retrograd as torch
    >>> a = torch.tensor([1., 2.], requires_grad=True)
    >>> b = torch.tensor([3., 4.], requires_grad=True)
    >>> n = (a * b).grad_fn
    >>> n._saved_self, n._saved_other
    (tensor([1., 2.], requires_grad=True), tensor([3., 4.], requires_grad=True))
    >>> a.sum(0).grad_fn._saved_dim, a.sum(0).grad_fn._saved_self_sym_sizes
    ((0,), (2,))
"""

from __future__ import annotations

import re

import numpy as np

from .._graph.node import _FREED, _OUT_ONLY, _OutputSlot, _Packed, node_class
from .._tensor.tensor import Tensor, _make
from .records.saved_names import SAVED_NAMES

__all__ = ["class_for", "SavedTensor"]

# Note [Saved attributes]
# PyTorch's generated nodes show what they saved as attributes named after the arguments
# of derivatives.yaml: ``_saved_self``, ``_saved_other``, ``_saved_result``, ``_saved_dim``,
# ``_saved_self_sym_sizes``..., and each saved tensor also as ``_raw_saved_<name>``, a
# SavedTensor whose ``register_hooks(pack, unpack)`` sends that one tensor through a pair
# of saved-tensor hooks. retrograd keeps the same values its own way (Note [Recording] in
# ops/op.py): the entries of the record's ``save`` in ``node._saved`` (version-checked),
# the op's parameters in ``node._p``, the inputs' shapes on the edges. One table
# (ops/records/saved_names.py), keyed by node name, says where each of PyTorch's names is
# kept; ``class_for`` turns an entry into properties of the node's class (Note [Node
# classes] in _graph/node.py) when the first record of that name is constructed, so
# recording pays nothing and ``dir(grad_fn)`` lists the names as PyTorch's does. A read
# checks the saved version and raises PyTorch's error once backward has freed the graph,
# as PyTorch does for saved tensors (parameters and sizes stay readable). Where retrograd
# records something else than PyTorch (strides, an LU factorisation, a parameter it keeps
# in another form), the name is absent (``UNAVAILABLE`` lists them): reading it raises
# AttributeError. Dims are given as retrograd records them, non-negative; PyTorch gives
# the argument as passed, and a negative one as an unsigned 64-bit number.
_ITEM = re.compile(r"(\w+)=([\w\[\]|]+)(?::(\w+))?$")
_PATH = re.compile(r"\[(\d+)\]")


def _saved_index(node, key) -> int:
    """Position of ``key`` (an entry of the record's ``save``) in ``node._saved``."""
    try:
        return node._op.save.index(key)
    except (AttributeError, ValueError):
        raise AttributeError(f"'{type(node).__name__}' object's op saves no {key!r}") from None


def _wrapped(v):
    """A saved Python number as PyTorch holds it: a 0-d int64/float64 (wrapped) tensor."""
    if v is None or isinstance(v, Tensor):
        return v
    return _make(np.asarray(v))


def _saved_value(key):
    """Getter of a saved entry ("0", "out", "p0": a key of the record's ``save``)."""
    key = int(key) if key.isdigit() else key

    def get(node):
        return node._read_saved(_saved_index(node, key))
    return get


def _param_value(path: str):
    """Getter of a path into ``node._p`` ("p", "p[1]", "p[2][0]"; "|1": 1 for None)."""
    default = path.endswith("|1")
    steps = [int(i) for i in _PATH.findall(path)]

    def get(node):
        v = node._p
        try:
            for i in steps:
                v = v[i] if v is not None else None
        except (IndexError, TypeError):  # this record keeps its parameters otherwise
            raise AttributeError(f"'{type(node).__name__}' object: {path} is not kept by "
                                 f"{node._op!r}") from None
        return 1 if default and v is None else v
    return get


def _edge_value(source: str):
    """Getter of input ``i``'s shape ("sizes0") or element count ("numel0")."""
    i = int(source[5:])
    numel = source.startswith("numel")

    def get(node):
        e = node._edges[i]
        if e is None:  # no edge: the input's shape was not recorded
            raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                                 f"for input {i}'s sizes (it needs no gradient)")
        shape = tuple(int(s) for s in e[2])
        return int(np.prod(shape, dtype=np.int64)) if numel else shape
    return get


def _ints(v) -> tuple:
    if v is None:
        return ()
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    return tuple(int(x) for x in v)


_KINDS = {"tensor": _wrapped, "ints": _ints, "optints": lambda v: None if v is None else _ints(v),
          "int": lambda v: None if v is None else int(v),
          "bool": lambda v: None if v is None else bool(v), "str": lambda v: v,
          "float": lambda v: None if v is None else float(v),
          "num": lambda v: v.item() if isinstance(v, np.generic) else v}


def _getter(source: str):
    """(getter, default kind, whether it is a saved tensor) of a table source."""
    if source[0].isdigit() or source.startswith("out") or re.fullmatch(r"p\d+", source):
        return _saved_value(source), "tensor", True
    if source.startswith(("sizes", "numel")):
        return _edge_value(source), "ints" if source[0] == "s" else "int", False
    return _param_value(source), None, False


def _attributes(spec: str) -> dict:
    """The properties of a SAVED_NAMES entry: ``_saved_<name>`` for each item and
    ``_raw_saved_<name>`` for each saved tensor."""
    ns = {}
    for item in spec.split():
        name, source, kind = _ITEM.match(item).groups()
        get, default, is_saved = _getter(source)
        convert = _KINDS[kind or default or "num"]
        ns["_saved_" + name] = property(lambda node, g=get, c=convert: c(g(node)),
                                        doc=f"PyTorch's saved {name!r} ({source})")
        if is_saved and (kind or default) == "tensor":
            key = int(source) if source.isdigit() else source
            ns["_raw_saved_" + name] = property(
                lambda node, k=key, n=name: _raw(node, k, n),
                doc=f"The SavedTensor of {name!r}, for its own saved-tensor hooks")
    return ns


def class_for(node_name: str) -> type:
    """The node class of the records named ``node_name``, with its saved attributes (Note
    [Saved attributes]); made once per name.

    Example:
        >>> cls = class_for("ExpBackward0")
        >>> cls.__name__, [a for a in dir(cls) if "saved_" in a]
        ('ExpBackward0', ['_raw_saved_result', '_saved_result'])
    """
    return node_class(node_name, _attributes(SAVED_NAMES.get(node_name, "")))


def _raw(node, key, name: str) -> SavedTensor:
    cache = node.__dict__.setdefault("_raw_saved", {})
    r = cache.get(name)
    if r is None:
        r = cache[name] = SavedTensor(node, _saved_index(node, key))
    return r


_HOOKS_SET = ("Calling register_hooks on a saved tensor whose hooks have already been set. "
              "Hint: only one pair of hooks is allowed at a time.")


class SavedTensor:
    """One tensor a node saved (PyTorch's ``torch._C._autograd.SavedTensor``), as
    ``grad_fn._raw_saved_<name>`` gives it: ``register_hooks(pack, unpack)`` sends it
    through a pair of saved-tensor hooks of its own.

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([1., 2.], requires_grad=True)
        >>> y = x.exp()
        >>> y.grad_fn._raw_saved_result.register_hooks(lambda t: t * 1, lambda t: t)
        >>> y.sum().backward(); x.grad
        tensor([2.7183, 7.3891])
    """

    __slots__ = ("_node", "_j")

    def __init__(self, node, j: int):
        self._node = node
        self._j = j

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Pack the saved tensor now with ``pack_hook``; ``unpack_hook`` gives it back
        whenever it is read (by the rule, or by ``_saved_<name>``)."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks(): incompatible function arguments: expected two "
                            "callables (pack_hook, unpack_hook)")
        node, j = self._node, self._j
        saved = node._saved
        if saved is None:
            raise RuntimeError("Calling register_hooks on a saved tensor after it has been "
                               "freed." + _FREED[_FREED.index(" Saved intermediate"):]
                               .replace("saved tensors after", "saved variables after"))
        s = saved[j]
        if s.__class__ is _Packed:
            raise RuntimeError(_HOOKS_SET)
        t = node._read_saved(j)  # (checks the saved version)
        if not isinstance(t, Tensor):
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if s.__class__ is _OutputSlot:
            packed = _Packed(pack_hook(t._detached()), unpack_hook, True, s.k)
        else:
            src = None
            if t._rg:
                fn = t.grad_fn
                src = (fn, t._out_nr, t._grad_accumulator() if fn is None else None)
            packed = _Packed(pack_hook(t), unpack_hook, False, 0, src)
        if saved is _OUT_ONLY or not isinstance(saved, list):
            saved = node._saved = list(saved)
        saved[j] = packed
        node._ver = list(node._ver) if node._ver is not None else [None] * len(saved)
        node._ver[j] = 0

    def __repr__(self) -> str:
        return f"<SavedTensor object at {id(self):#x}>"

