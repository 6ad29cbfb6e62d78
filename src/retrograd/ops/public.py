"""Where each public function of the op layer shows up: ``retrograd.<name>``, the
``Tensor.<name>`` method, the in-place method ``Tensor.<name>_`` and the in-place function
``retrograd.<name>_`` (Note [Exposure records]).

Example:
    >>> import retrograd
    >>> from retrograd.ops.public import PUBLIC
    >>> e = PUBLIC["sin"]
    >>> e.function, e.method, e.inplace, e.inplace_function
    (True, True, True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import NamedTuple

from .op import Op

__all__ = ["Exposure", "PUBLIC", "public", "alias", "AUTOCAST", "autocast_category",
           "LOWER_PRECISION_FP", "FP32", "PROMOTE", "NUMPY_NAMES", "numpy_names",
           "numpy_named"]


# Note [Exposure records]
# A public function says where it is exposed next to its definition, with ``@public``:
# as ``retrograd.<name>`` (``function``), as the method ``Tensor.<name>`` (``method``),
# with an in-place method ``Tensor.<name>_`` generated from it (``inplace``, Note [In-place
# forms] in methods.py), and that in-place form also as ``retrograd.<name>_``
# (``inplace_function``). ``alias`` gives an existing function a second name
# (``divide``/``div``, ``clip``/``clamp``): the in-place method of an alias is the very
# method of the function it names. The op layer's namespace (``functions.__all__``), the
# Tensor methods and the in-place forms are all read from ``PUBLIC`` (methods.py), so
# adding a public op is its function, its ``@public`` line and its table record
# (docs/adding-an-op.md): no list of names to edit elsewhere.
class Exposure(NamedTuple):
    """Where the public function ``fn`` is exposed (Note [Exposure records])."""

    fn: Callable
    function: bool
    method: bool
    inplace: bool
    inplace_function: bool
    tensor_operand: bool = False


#: name -> Exposure, in the order the functions were defined
PUBLIC: dict[str, Exposure] = {}

# Note [Autocast records]
# PyTorch's CPU autocast puts some ops in a category (amp/policy.py, Note [Autocast policy
# table]): cast to the lower precision, to float32, or to the widest input. The category
# is part of the op's record: a table op carries it (``Op(..., autocast=...)``, read by
# autocast's dispatch interceptor), and a public function that PyTorch casts at its entry
# says so where it is defined (``@public(autocast=...)`` in the op layer,
# ``@autocast_category(...)`` for nn.functional and linalg), with the name of PyTorch's op
# it stands for when that differs (``F.cross_entropy`` is ``cross_entropy_loss``). A
# category is written once: a public function that is the front door of a table op with a
# category names that record instead (``@public(autocast=T.prod)``: the record's category,
# under the record's name), so the two doors cannot disagree. A category may be a function
# of the call's arguments (``F.pad``: only reflect and replicate modes are float32 ops).
# amp derives its tables from these records; a test holds them against torch 2.13's own
# list.
LOWER_PRECISION_FP = "lower_precision_fp"
FP32 = "fp32"
PROMOTE = "promote"


class AutocastEntry(NamedTuple):
    """A public function's autocast category and the PyTorch op it stands for."""

    category: str | Callable
    op: str


#: public name ("linalg_" + name for retrograd.linalg) -> AutocastEntry
AUTOCAST: dict[str, AutocastEntry] = {}


def autocast_category(category: str | Callable | Op, *, name: str | None = None,
                      op: str | None = None) -> Callable:
    """Record the autocast category of a public function (Note [Autocast records]);
    returns the function unchanged. ``category`` may be the table op the function
    stands for: its record's category, under the record's name.

    Example:
        >>> from retrograd.ops.public import AUTOCAST, FP32, autocast_category
        >>> @autocast_category(FP32, op="doc_example_loss")
        ... def doc_example_loss(x):
        ...     return x
        >>> AUTOCAST.pop("doc_example_loss")
        AutocastEntry(category='fp32', op='doc_example_loss')
        >>> from retrograd.ops.records import table as T
        >>> @autocast_category(T.prod, name="doc_example_prod")
        ... def doc_example_prod(x):
        ...     return x
        >>> AUTOCAST.pop("doc_example_prod")
        AutocastEntry(category='fp32', op='prod')
    """
    if category.__class__ is Op:
        if category.autocast is None:
            raise ValueError(f"{category!r} has no autocast category to give "
                             "(Note [Autocast records])")
        category, op = category.autocast, op or category.name

    def record(f: Callable) -> Callable:
        key = name or f.__name__
        AUTOCAST[key] = AutocastEntry(category, op or key)
        return f
    return record


def public(fn: Callable | None = None, *, name: str | None = None, function: bool = True,
           method: bool = True, inplace: bool = False, inplace_function: bool = False,
           tensor_operand: bool = False, autocast: str | Callable | Op | None = None,
           autocast_op: str | None = None) -> Callable:
    """Record where a public function is exposed; returns the function unchanged.

    Used bare (``@public``: ``retrograd.f`` and ``Tensor.f``) or with flags
    (``@public(inplace=True)``). ``tensor_operand``: the second operand must be a tensor,
    and the method forms name it as PyTorch's methods do (position 1, after self).
    ``autocast``: its autocast category (or the table op it stands for, whose record has
    the category), ``autocast_op`` PyTorch's name for it when it differs (Note [Autocast
    records]).

    Example:
        >>> from retrograd.ops.public import PUBLIC, public
        >>> @public(method=False, name="doc_example_twice")
        ... def twice(x):
        ...     return 2 * x
        >>> PUBLIC.pop("doc_example_twice").method, twice(3)
        (False, 6)
    """
    def record(f: Callable) -> Callable:
        key = name or f.__name__
        if key in PUBLIC:
            raise RuntimeError(f"the public name {key!r} is recorded twice (Note "
                               "[Exposure records]): give one of the functions another name")
        PUBLIC[key] = Exposure(f, function, method, inplace, inplace_function, tensor_operand)
        if autocast is not None:
            autocast_category(autocast, name=key, op=autocast_op)(f)
        return f
    return record if fn is None else record(fn)


def alias(name: str, fn: Callable, *, function: bool = True, method: bool = True,
          inplace: bool = False, inplace_function: bool = False,
          tensor_operand: bool = False) -> Callable:
    """Expose ``fn`` under a second public name; returns ``fn``.

    Example:
        >>> from retrograd.ops.public import PUBLIC, alias
        >>> def neg(x):
        ...     return -x
        >>> alias("doc_example_negative", neg) is neg
        True
        >>> PUBLIC.pop("doc_example_negative").fn is neg
        True
    """
    original = next((k for k, e in PUBLIC.items() if e.fn is fn), None)
    entry = AUTOCAST.get(original) if original is not None else None
    return public(fn, name=name, function=function, method=method, inplace=inplace,
                  inplace_function=inplace_function, tensor_operand=tensor_operand,
                  autocast=entry.category if entry else None,
                  autocast_op=entry.op if entry else None)


# Note [NumPy argument names]
# PyTorch's Python argument parser (torch/csrc/utils/python_arg_parser.cpp,
# ``numpy_compatibility_arg_names``) lets a keyword take NumPy's name for a parameter:
# ``axis`` for ``dim``, ``keepdims`` for ``keepdim``, ``x``/``a``/``x1`` for ``input`` and
# ``x2`` for ``other`` (``torch.sum(a=t, axis=0, keepdims=True)``, ``t.max(axis=1)``). Only
# the functions and methods it binds from C++ have it: the ones PyTorch writes in Python
# (``torch.split``, ``torch.norm``, ``Tensor.unflatten``, every ``nn.functional`` function)
# refuse ``axis`` with Python's "got an unexpected keyword argument 'axis'"
# (``PYTHON_DEFINED``). An alias binds only a parameter nothing else bound: given beside
# the name itself (``dim=0, axis=1``), beside the positional argument, or after another
# alias of the same name (``x=``, then ``a=``), it is left unexpected and raises PyTorch's
# TypeError, with the cause added.
#
# The translation is made in one place, where a function becomes ``retrograd.<name>`` or
# ``Tensor.<name>`` (``numpy_named``): a wrapper whose ``if kwargs`` is false on a call
# without keywords. Python accepts only a keyword its callee's code names or a
# ``**kwargs`` collects, so no translation is free: the wrapper's frame costs 70-110 ns a
# call (timeit, the raw function against the wrapped one in one process: 5-8% of
# ``x.sum()`` on a 3x4 tensor, ~10% of ``torch.exp(x)`` had it been wrapped; at most 140
# wrapped calls a training step in bench/programs.py's P1-P5, under 0.03% of a step). So
# only the functions with a ``dim`` or ``keepdim`` parameter (the reductions, softmax,
# cat/stack, sort, argmax, cumsum, ...: where NumPy's ``axis`` and ``keepdims`` are
# written) are wrapped, and they take all four aliases (PyTorch's
# ``torch.sum(a=t, axis=0)``); ``torch.exp(x=t)`` and ``torch.add(t, x2=u)``, which
# nobody writes, stay Python's TypeError, and every other call pays nothing. The functions
# the library calls itself (``_functions/namespace.py``, ``PUBLIC``) and the generated in-place
# methods (Note [In-place forms]) stay unwrapped.
NUMPY_NAMES: dict[str, tuple[str, ...]] = {
    "dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"), "other": ("x2",)}
#: public names that PyTorch defines in Python (torch/functional.py, torch/_tensor.py):
#: no NumPy names there; a test holds these against torch 2.13
PYTHON_DEFINED = frozenset({"norm", "split", "unique", "unique_consecutive"})
PYTHON_DEFINED_METHODS = PYTHON_DEFINED | {"unflatten"}


_KEYWORD = 1 << 30  # the position of a keyword-only parameter: never bound by position


def _parameters(fn: Callable) -> tuple[tuple[str, ...], int]:
    """The names ``fn`` binds by keyword and how many of them are positional."""
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    code = getattr(fn, "__code__", None)
    if code is None:
        return (), 0
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount], code.co_argcount


def _unexpected(name: str, alias: str, canonical: str, how: str) -> TypeError:
    return TypeError(f"{name}() got an unexpected keyword argument '{alias}' ({alias} is "
                     f"NumPy's name for {canonical}, which this call already gives {how}: "
                     "pass it once, under one name)")


def _renamed(kwargs: dict, nargs: int, renames: tuple, name: str) -> dict:
    """``kwargs`` with NumPy's names given PyTorch's (Note [NumPy argument names]);
    ``nargs`` positional arguments were passed."""
    for canonical, aliases, position in renames:
        bound = ("by keyword" if canonical in kwargs
                 else "by position" if position < nargs else None)
        for alias in aliases:
            if alias not in kwargs:
                continue
            if bound is not None:
                raise _unexpected(name, alias, canonical, bound)
            kwargs[canonical] = kwargs.pop(alias)
            bound = f"as {alias}="
    return kwargs


def numpy_names(fn: Callable, name: str, *, method: bool = False) -> Callable:
    """``fn``, or when it has a ``dim`` or ``keepdim`` parameter, ``fn`` behind a wrapper
    that takes NumPy's names for its parameters too (``axis``, ``keepdims``, ``a``, ``x2``:
    Note [NumPy argument names]). ``method``: the first parameter is ``self``, bound by
    position.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.public import numpy_names
        >>> def total(input, dim=None, keepdim=False):
        ...     return input.sum(dim, keepdim)
        >>> numpy_names(total, "total")(a=torch.ones(2, 3), axis=0, keepdims=True)
        tensor([[2., 2., 2.]])
    """
    names, npos = _parameters(fn)
    if "dim" not in names and "keepdim" not in names:
        return fn
    # (canonical name, its aliases, its position); self is never renamed
    renames = tuple((c, NUMPY_NAMES[c], names.index(c) if names.index(c) < npos else _KEYWORD)
                    for c in NUMPY_NAMES if c in names and not (method and names.index(c) == 0))

    def call(*args, **kwargs):
        if kwargs:
            kwargs = _renamed(kwargs, len(args), renames, name)
        return fn(*args, **kwargs)
    return wraps(fn)(call)


def numpy_named(functions: dict[str, Callable], *, method: bool = False) -> dict:
    """``{name: fn}`` with each function that PyTorch binds from C++ taking NumPy's names
    (``numpy_names``); those PyTorch writes in Python are left as they are.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functions import namespace
        >>> from retrograd.ops.public import numpy_named
        >>> f = numpy_named({"sum": namespace.sum, "split": namespace.split})
        >>> f["split"] is namespace.split, f["sum"](torch.ones(2, 2), axis=1)
        (True, tensor([2., 2.]))
    """
    python_defined = PYTHON_DEFINED_METHODS if method else PYTHON_DEFINED
    return {name: fn if name in python_defined else numpy_names(fn, name, method=method)
            for name, fn in functions.items()}
