"""The DataPipe decorators of ``torch.utils.data``: ``functional_datapipe``,
``non_deterministic`` with ``guaranteed_datapipes_determinism``, and the type-hint
checks ``argument_validation`` / ``runtime_validation`` with ``runtime_validation_disabled``.

Example:
    >>> from retrograd.utils.data import IterDataPipe, functional_datapipe
    >>> @functional_datapipe("doubled_example")
    ... class Doubled(IterDataPipe):
    ...     def __init__(self, source):
    ...         self.source = source
    ...     def __iter__(self):
    ...         for x in self.source:
    ...             yield 2 * x
    >>> class Source(IterDataPipe):
    ...     def __iter__(self):
    ...         yield from (1, 2)
    >>> list(Source().doubled_example())
    [2, 4]
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import wraps
from typing import Any, get_type_hints

from .datapipe import IterDataPipe, MapDataPipe

__all__ = ["argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism",
           "non_deterministic", "runtime_validation", "runtime_validation_disabled"]


class functional_datapipe:
    """Class decorator: register an IterDataPipe or MapDataPipe class as the method
    ``name`` of every DataPipe of its kind (``dp.name(*args)`` is ``Cls(dp, *args)``).

    Example:
        >>> from retrograd.utils.data import MapDataPipe, functional_datapipe
        >>> @functional_datapipe("plus_one_example")
        ... class PlusOne(MapDataPipe):
        ...     def __init__(self, source):
        ...         self.source = source
        ...     def __getitem__(self, i):
        ...         return self.source[i] + 1
        >>> class Ten(MapDataPipe):
        ...     def __getitem__(self, i):
        ...         return 10 * i
        >>> Ten().plus_one_example()[2]
        21
    """

    name: str

    def __init__(self, name: str, enable_df_api_tracing: bool = False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if isinstance(cls, type) and issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(
                self.name, cls, enable_df_api_tracing=self.enable_df_api_tracing)
        elif isinstance(cls, non_deterministic) or isinstance(
                getattr(cls, "__self__", None), non_deterministic):
            IterDataPipe.register_datapipe_as_function(
                self.name, cls, enable_df_api_tracing=self.enable_df_api_tracing)
        elif isinstance(cls, type) and issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


# Note [DataPipe decorator switches]
# PyTorch keeps the determinism and runtime-validation switches as module globals (not
# thread-local); so does this module, so code that flips them from a worker behaves the
# same. Both are context managers that take effect at construction and restore on exit.
_determinism: bool = False


class guaranteed_datapipes_determinism:
    """Within the block, constructing a ``non_deterministic`` DataPipe raises TypeError.

    Example:
        >>> from retrograd.utils.data import guaranteed_datapipes_determinism
        >>> with guaranteed_datapipes_determinism():
        ...     pass
    """

    prev: bool

    def __init__(self) -> None:
        global _determinism
        self.prev = _determinism
        _determinism = True

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        global _determinism
        _determinism = self.prev


class non_deterministic:
    """Mark an IterDataPipe class as non-deterministic (always, or when a function of the
    constructor arguments returns True): building it under
    ``guaranteed_datapipes_determinism`` raises TypeError.

    Example:
        >>> from retrograd.utils.data import (IterDataPipe, guaranteed_datapipes_determinism,
        ...                                    non_deterministic)
        >>> @non_deterministic
        ... class Shuffled(IterDataPipe):
        ...     def __iter__(self):
        ...         yield 1
        >>> with guaranteed_datapipes_determinism():
        ...     Shuffled()
        Traceback (most recent call last):
        TypeError: Shuffled is non-deterministic, but you set 'guaranteed_datapipes_determinism'...
    """

    cls: type | None = None
    deterministic_fn: Callable[..., bool]

    def __init__(self, arg: type | Callable[..., bool]) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError("Only `IterDataPipe` can be decorated with `non_deterministic`"
                                f", but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _determinism:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off "
                                "determinism for this DataPipe if that is acceptable for your "
                                "application")
            return self.cls(*args, **kwargs)
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {args[0].__name__} is "
                            "found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs) -> IterDataPipe:
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to "
                            f"return a boolean value, but {type(res)} is found")
        if _determinism and res:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you "
                            "set 'guaranteed_datapipes_determinism'. You can turn off "
                            "determinism for this DataPipe if that is acceptable for your "
                            "application")
        return self.cls(*args, **kwargs)


def _is_datapipe_hint(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, (IterDataPipe, MapDataPipe))


def argument_validation(f: Callable) -> Callable:
    """Check, at each call, that arguments annotated with a DataPipe class are
    IterDataPipes whose ``type`` is a subtype of the annotation's ``type``.

    As in PyTorch 2.13, DataPipe classes carry no ``type`` (their typing system is
    switched off), so a correctly typed argument reaches that comparison and raises
    AttributeError there, as PyTorch's does; other arguments pass through.

    Example:
        >>> from retrograd.utils.data import IterDataPipe, argument_validation
        >>> @argument_validation
        ... def consume(dp: IterDataPipe, n: int):
        ...     return n
        >>> consume([1, 2], 3)
        Traceback (most recent call last):
        TypeError: Expected argument 'dp' as a IterDataPipe, but found <class 'list'>
    """
    signature = inspect.signature(f)
    hints = get_type_hints(f)

    @wraps(f)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            if name in hints and _is_datapipe_hint(hints[name]):
                hint = hints[name]
                if not isinstance(value, IterDataPipe):
                    raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found "
                                    f"{type(value)}")
                if not value.type.issubtype(hint.type):
                    raise TypeError(f"Expected type of argument '{name}' as a subtype of hint "
                                    f"{hint.type}, but found {value.type}")
        return f(*args, **kwargs)
    return wrapper


_runtime_validation_enabled: bool = True


class runtime_validation_disabled:
    """Within the block, ``runtime_validation`` lets every element through unchecked.

    Example:
        >>> from retrograd.utils.data import runtime_validation_disabled
        >>> with runtime_validation_disabled():
        ...     pass
    """

    prev: bool

    def __init__(self) -> None:
        global _runtime_validation_enabled
        self.prev = _runtime_validation_enabled
        _runtime_validation_enabled = False

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        global _runtime_validation_enabled
        _runtime_validation_enabled = self.prev


def runtime_validation(f: Callable) -> Callable:
    """Decorate an IterDataPipe's ``__iter__`` so each element is checked with
    ``self.type.issubtype_of_instance(element)`` (a RuntimeError for a mismatch), unless
    ``runtime_validation_disabled`` is active.

    Example:
        >>> from retrograd.utils.data import runtime_validation
        >>> @runtime_validation
        ... def read(self):
        ...     yield 1
        Traceback (most recent call last):
        TypeError: Can not decorate function read with 'runtime_validation'
    """
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @wraps(f)
    def wrapper(self):
        if not _runtime_validation_enabled:
            yield from f(self)
        else:
            for d in f(self):
                if not self.type.issubtype_of_instance(d):
                    raise RuntimeError(f"Expected an instance as subtype of {self.type}, but "
                                       f"found {d}({type(d)})")
                yield d
    return wrapper
