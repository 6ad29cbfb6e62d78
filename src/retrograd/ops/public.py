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
from typing import NamedTuple

__all__ = ["Exposure", "PUBLIC", "public", "alias"]


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


def public(fn: Callable | None = None, *, name: str | None = None, function: bool = True,
           method: bool = True, inplace: bool = False, inplace_function: bool = False,
           tensor_operand: bool = False) -> Callable:
    """Record where a public function is exposed; returns the function unchanged.

    Used bare (``@public``: ``retrograd.f`` and ``Tensor.f``) or with flags
    (``@public(inplace=True)``). ``tensor_operand``: the second operand must be a tensor,
    and the method forms name it as PyTorch's methods do (position 1, after self).

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
            raise RuntimeError(f"the public name {key!r} is recorded twice (Note [Exposure "
                               "records]): give one of the functions another name")
        PUBLIC[key] = Exposure(f, function, method, inplace, inplace_function, tensor_operand)
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
    return public(fn, name=name, function=function, method=method, inplace=inplace,
                  inplace_function=inplace_function, tensor_operand=tensor_operand)
