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

from .._tensor.tensor import Tensor

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
        >>> from retrograd._functions.legacy_forms import value_first
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
        >>> from retrograd._functions.legacy_forms import value_first_method
        >>> add = value_first_method("add", torch.add, "alpha", "Tensor other")
        >>> add(torch.ones(1), torch.ones(1), alpha=2)
        tensor([3.])
    """
    count = tensors.count("Tensor")

    def method(self, *args, **kwargs) -> Tensor:
        if len(args) > count:
            args, kwargs[scalar] = value_first(name, True, scalar, tensors, args,
                                               scalar in kwargs, stacklevel)
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


def beta_alpha_first(name: str, args: tuple, keyword_given: bool, stacklevel: int = 3
                     ) -> tuple[tuple, object, object]:
    """``((input, mat1, mat2), beta, alpha)`` from addmm's deprecated orders, after
    PyTorch's warning: ``(beta, input, [alpha,] mat1, mat2)`` for the function,
    ``(self, beta, [alpha,] mat1, mat2)`` for the method (its ``self`` is a Tensor, the
    function's first argument a number: that tells the two apart).

    Example:
        >>> import warnings
        >>> from retrograd._functions.legacy_forms import beta_alpha_first
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     beta_alpha_first("addmm", (2, "x", 3, "a", "b"), False)
        (('x', 'a', 'b'), 2, 3)
    """
    method = isinstance(args[0], Tensor)
    if method:
        self, rest = args[0], args[1:]
        head, out, new_head, new_out = "", "", "", ""
    else:
        self, rest = args[1], args[:1] + args[2:]
        head, out = "", ", *, Tensor out = None"
        new_head, new_out = "Tensor input, ", ", Tensor out = None"
    if len(rest) not in (3, 4) or keyword_given:
        raise TypeError(f"{name}() received an invalid combination of arguments: the deprecated "
                        f"forms are {name}(beta, {'' if method else 'input, '}[alpha, ]mat1, "
                        "mat2), with no beta= or alpha= keywords; the current one is "
                        f"{name}({'' if method else 'input, '}mat1, mat2, *, beta=1, alpha=1)")
    beta, alpha = (rest[0], rest[1]) if len(rest) == 4 else (rest[0], 1)
    number_alpha = "Number alpha, " if len(rest) == 4 else ""
    old = (f"Number beta, {number_alpha}" if method else
           f"Number beta, Tensor input, {number_alpha}") + "Tensor mat1, Tensor mat2"
    warnings.warn(f"This overload of {name} is deprecated:\n\t{name}({head}{old}{out})\n"
                  "Consider using one of the following signatures instead:\n\t"
                  f"{name}({new_head}Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha "
                  f"= 1{new_out})", UserWarning, stacklevel=stacklevel)
    return (self, rest[-2], rest[-1]), beta, alpha
