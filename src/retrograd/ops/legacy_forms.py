"""PyTorch's deprecated scalar-first call forms, still accepted with its warning:
``add(input, alpha, other)``, ``x.add_(alpha, other)``, ``addcmul(input, value, t1, t2)``,
``x.addcdiv_(value, t1, t2)`` and the like (the optimizers of PyTorch 0.x wrote
``p.data.add_(-lr, grad)``).

Example:
    >>> import warnings
    >>> import retrograd as torch
    >>> x = torch.zeros(2)
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = x.add_(-0.5, torch.ones(2))
    >>> x, str(w[0].message).splitlines()[0]
    (tensor([-0.5000, -0.5000]), 'This overload of add_ is deprecated:')
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from .._tensor import Tensor

__all__: list[str] = []

# Note [Legacy value-first forms]
# PyTorch's argument parser keeps the old overloads that put the scalar first
# (tools/autograd/deprecated.yaml) and warns with the old and the new signature. Here the
# function (``add``, ``addcmul``) takes the extra positional arguments as ``*rest`` and,
# only when there are some, calls ``value_first`` to reorder them and warn: the usual call
# pays one empty-tuple test. Method forms name no ``input`` and no ``out`` in the warning,
# so the methods are small wrappers made by ``value_first_method``; an in-place method
# runs its wrapper off the fast path (``inplace_variant``, or the function given to
# ``_make_inplace``), so optimizers' ``p.add_(g, alpha=-lr)`` pays nothing. ``Tensor.add``
# and ``Tensor.sub`` are too common to wrap: they are the functions themselves, and their
# scalar-first method form warns with the function form's signature.


def value_first(name: str, method: bool, scalar: str, tensors: str, args: tuple,
                keyword_given: bool, stacklevel: int = 3) -> tuple[tuple, object]:
    """``(tensor arguments, scalar)`` from the deprecated ``(scalar, *tensors)`` order of
    ``name``, after PyTorch's warning. ``scalar`` and ``tensors`` name the arguments as
    PyTorch's signatures do (``"alpha"``, ``"Tensor other"``); ``stacklevel``: how far
    up the user's call is, for the warning's location.

    Example:
        >>> import warnings
        >>> from retrograd.ops.legacy_forms import value_first
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     value_first("add", True, "alpha", "Tensor other", (2, "y"), False)
        (('y',), 2)
    """
    count = tensors.count("Tensor")
    takes = (1 if method else 2) + count - 1  # the new form's positional arguments (+ self)
    if len(args) != count + 1 or keyword_given:
        raise TypeError(f"{name}() takes {takes} positional arguments but "
                        f"{takes + len(args) - count} were given (the deprecated form is "
                        f"{name}({'' if method else 'input, '}{scalar}, ...); the current one "
                        f"takes {scalar}= as a keyword)")
    value = args[0]
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise TypeError(f"{name}(): {scalar} must be a Number, not a Tensor of "
                            f"{value.numel()} elements (pass {scalar}= as a keyword)")
        value = value.item()
    head, out = ("", "") if method else ("Tensor input, ", ", *, Tensor out = None")
    new_out = "" if method else ", Tensor out = None"
    warnings.warn(f"This overload of {name} is deprecated:\n\t{name}({head}Number {scalar}, "
                  f"{tensors}{out})\nConsider using one of the following signatures "
                  f"instead:\n\t{name}({head}{tensors}, *, Number {scalar} = 1{new_out})",
                  UserWarning, stacklevel=stacklevel)
    return args[1:], value


def value_first_method(name: str, fn: Callable, scalar: str, tensors: str,
                       stacklevel: int = 3) -> Callable:
    """The method ``Tensor.<name>`` (or the function an in-place method runs) of ``fn``,
    accepting the deprecated scalar-first order with the method form's warning
    (``stacklevel`` 4 for the function an in-place method runs: one frame deeper).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.legacy_forms import value_first_method
        >>> add = value_first_method("add", torch.add, "alpha", "Tensor other")
        >>> add(torch.ones(1), torch.ones(1), alpha=2)
        tensor([3.])
    """
    count = tensors.count("Tensor")

    def method(self, *args, **kwargs):
        if len(args) > count:
            args, kwargs[scalar] = value_first(name, True, scalar, tensors, args,
                                               scalar in kwargs, stacklevel)
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method
