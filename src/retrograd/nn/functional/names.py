"""The helper names ``torch.nn.functional`` carries beside its functions: the
``__torch_function__`` guards, TorchScript-era helpers, constants, typing re-exports and
the shared doc-string snippets.

Example:
    >>> import retrograd.nn.functional as F
    >>> F.GRID_SAMPLE_INTERPOLATION_MODES["bicubic"], F.has_torch_function((1.0,))
    (2, False)
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Optional

from ..._tensor.tensor import Tensor

__all__ = ["BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "Callable", "DType",
           "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "Optional",
           "ScalingType", "SwizzleType", "TYPE_CHECKING", "assert_int_or_pair",
           "boolean_dispatch", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "reproducibility_notes",
           "sparse_support_notes", "tf32_notes"]

DType = int  # PyTorch's alias, kept for annotations written against it

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


class ScalingType(enum.IntEnum):
    """The scale layouts ``F.scaled_mm`` names (PyTorch's ``_ScalingType``).

    Example:
        >>> import retrograd.nn.functional as F
        >>> F.ScalingType.RowWise.value
        1
    """

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.IntEnum):
    """The scale swizzles ``F.scaled_mm`` names (PyTorch's ``_SwizzleType``).

    Example:
        >>> import retrograd.nn.functional as F
        >>> F.SwizzleType.NO_SWIZZLE.value
        0
    """

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


class _BroadcastingList:
    """TorchScript's ``BroadcastingListN[T]`` annotation: "a T or N of them"; outside
    TorchScript it subscripts to ``None``, as PyTorch's does."""

    def __getitem__(self, types: Any) -> None:
        return None


BroadcastingList1 = _BroadcastingList()
BroadcastingList2 = BroadcastingList1
BroadcastingList3 = BroadcastingList1

# PyTorch's shared doc-string snippets (torch/_torch_docs.py), text as theirs
reproducibility_notes: dict[str, str] = {
    "forward_reproducibility_note": "This operation may behave nondeterministically when "
    "given tensors on a CUDA device. See :doc:`/notes/randomness` for more information.",
    "backward_reproducibility_note": "This operation may produce nondeterministic gradients "
    "when given tensors on a CUDA device. See :doc:`/notes/randomness` for more information.",
    "cudnn_reproducibility_note": "In some circumstances when given tensors on a CUDA device "
    "and using CuDNN, this operator may select a nondeterministic algorithm to increase "
    "performance. If this is undesirable, you can try to make the operation deterministic "
    "(potentially at a performance cost) by setting ``torch.backends.cudnn.deterministic = "
    "True``. See :doc:`/notes/randomness` for more information.",
}
sparse_support_notes: dict[str, str] = {
    "sparse_beta_warning": "\n.. warning::\n    Sparse support is a beta feature and some "
    "layout(s)/dtype/device combinations may not be supported,\n    or may not have autograd "
    "support. If you notice missing functionality please\n    open a feature request.",
}
tf32_notes: dict[str, str] = {
    "tf32_note": "This operator supports :ref:`TensorFloat32<tf32_on_ampere>`.",
}


def boolean_dispatch(arg_name: str, arg_index: int, default: bool, if_true: Callable,
                     if_false: Callable, module_name: str | None,
                     func_name: str | None) -> Callable:
    """A function that calls ``if_true`` or ``if_false`` by the boolean argument
    ``arg_name`` (keyword) or at position ``arg_index``, ``default`` when absent
    (how PyTorch builds ``F.max_pool2d`` from its ``return_indices`` flag).

    Example:
        >>> import retrograd.nn.functional as F
        >>> pick = F.boolean_dispatch("twice", 1, False, lambda x, twice=False: 2 * x,
        ...                           lambda x, twice=False: x, None, "pick")
        >>> pick(3), pick(3, True), pick(3, twice=True)
        (3, 6, 6)
    """
    def fn(*args, **kwargs):
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is not None and if_true.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = if_true.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """Raise ``AssertionError(message.format(arg_name))`` unless ``arg`` is an int or has
    two elements.

    Example:
        >>> import retrograd.nn.functional as F
        >>> F.assert_int_or_pair((1, 2, 3), "kernel_size", "{} must be int or 2-tuple")
        Traceback (most recent call last):
        AssertionError: kernel_size must be int or 2-tuple
    """
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


# Note [torch_function guards]
# retrograd's own functions do not dispatch through ``__torch_function__`` (there is no
# subclass or mode protocol in the op layer). What these helpers give is the pattern
# PyTorch-style user code writes around its own functions:
#     if has_torch_function_variadic(a, b): return handle_torch_function(f, (a, b), a, b)
# An argument counts when its type defines ``__torch_function__`` (a duck-typed array, a
# tracing proxy); a retrograd Tensor defines none, so for plain Tensors the guard is False
# and the function runs its body. handle_torch_function follows PyTorch's order (NEP 18:
# subclasses before their bases, otherwise left to right, one argument per type) and, as
# in PyTorch, lists a Tensor argument too: its turn is the default behaviour, the call
# run again with the guards off (PyTorch's Tensor.__torch_function__ under
# DisableTorchFunctionSubclass). When every override returns NotImplemented it raises
# PyTorch's TypeError.
class _Guard(threading.local):
    def __init__(self) -> None:
        self.disabled = False


_GUARD = _Guard()


def _overrides(t: type) -> bool:
    return getattr(t, "__torch_function__", None) is not None


def _overloaded_args(relevant_args: Iterable[Any]) -> list[Any]:
    types: set[type] = set()
    out: list[Any] = []
    for arg in relevant_args:
        t = type(arg)
        if t in types or not (_overrides(t) or issubclass(t, Tensor)):
            continue
        types.add(t)
        index = next((i for i, old in enumerate(out) if issubclass(t, type(old))), len(out))
        out.insert(index, arg)
    return out


def _tensor_default(public_api: Callable, args: tuple, kwargs: dict) -> Any:
    prev, _GUARD.disabled = _GUARD.disabled, True
    try:
        return public_api(*args, **kwargs)
    finally:
        _GUARD.disabled = prev


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether an element of ``relevant_args`` has a ``__torch_function__`` override
    (Note [torch_function guards]); retrograd Tensors have none.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.functional as F
        >>> class Proxy:
        ...     @classmethod
        ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
        ...         return "proxied"
        >>> F.has_torch_function((torch.ones(1),)), F.has_torch_function((torch.ones(1), Proxy()))
        (False, True)
    """
    return not _GUARD.disabled and any(_overrides(type(a)) for a in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    """``has_torch_function((arg,))``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.has_torch_function_unary(torch.ones(1))
        False
    """
    return not _GUARD.disabled and _overrides(type(arg))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.has_torch_function_variadic(torch.ones(1), None, 2.0)
        False
    """
    return has_torch_function(args)


def handle_torch_function(public_api: Callable, relevant_args: Iterable[Any], *args: Any,
                          **kwargs: Any) -> Any:
    """Call the ``__torch_function__`` overrides among ``relevant_args`` in PyTorch's
    order until one returns something other than ``NotImplemented``
    (Note [torch_function guards]).

    Example:
        >>> import retrograd.nn.functional as F
        >>> class Proxy:
        ...     @classmethod
        ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
        ...         return f"{func.__name__} on {[t.__name__ for t in types]}"
        >>> def double(x):
        ...     if F.has_torch_function_unary(x):
        ...         return F.handle_torch_function(double, (x,), x)
        ...     return 2 * x
        >>> double(2), double(Proxy())
        (4, "double on ['Proxy']")
    """
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        if _overrides(type(arg)):
            result = arg.__torch_function__(public_api, types, args, kwargs)
        else:
            result = _tensor_default(public_api, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")
