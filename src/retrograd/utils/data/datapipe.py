"""DataPipes (PyTorch's ``torch.utils.data.datapipes``): ``IterDataPipe``,
``MapDataPipe``, ``DFIterDataPipe`` and ``DataChunk``.

A DataPipe is a dataset built by chaining: ``functional_datapipe("name")`` registers a
DataPipe class as a method of every DataPipe (``dp.name(...)`` is ``Cls(dp, ...)``).

Example:
    >>> from retrograd.utils.data import IterDataPipe
    >>> class Numbers(IterDataPipe):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         yield from range(self.n)
    >>> dp = Numbers(3)
    >>> dp, list(dp)
    (Numbers, [0, 1, 2])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar

from .dataset import Dataset, IterableDataset

__all__ = ["DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe"]


class DataChunk(list):
    """A list that DataPipes pass along as one element (a batch), printable with an indent.

    Example:
        >>> from retrograd.utils.data import DataChunk
        >>> DataChunk([1, 2]).as_str("  "), list(DataChunk([1, 2]).raw_iterator())
        ('  [1, 2]', [1, 2])
    """

    def __init__(self, items: Iterable[Any]) -> None:
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self) -> Iterator[Any]:
        yield from super().__iter__()

    def raw_iterator(self) -> Iterator[Any]:
        yield from self.items


# Note [Single iterator per IterDataPipe]
# As in PyTorch, only the newest iterator of an IterDataPipe is valid: every subclass's
# ``__iter__`` is wrapped (at class creation, by __init_subclass__) so that starting an
# iterator bumps the DataPipe's ``_valid_iterator_id``, resets the sample count and calls
# ``reset()``, and each later ``next`` on an older iterator raises PyTorch's RuntimeError.
# A generator ``__iter__`` takes its id when first advanced (the generator's body starts
# then), any other ``__iter__`` when it is called. Exceptions raised inside a generator
# ``__iter__`` get PyTorch's "This exception is thrown by __iter__ of ..." line.
_FEEDBACK = ("\nFor feedback regarding this single iterator per IterDataPipe constraint, feel "
             "free to comment on this issue: https://github.com/pytorch/data/issues/45.")


def _input_args(dp) -> str:
    """``name=value`` for each constructor parameter that ``dp`` keeps as an attribute."""
    names = set(inspect.signature(dp.__class__).parameters)
    pairs = []
    for name, value in inspect.getmembers(dp):
        if name in names:
            pairs.append(f"{name}={value.__name__ if inspect.isfunction(value) else repr(value)}")
    return ", ".join(pairs)


def _describe(dp) -> str:
    return f"{dp.__class__.__name__}({_input_args(dp)})"


def _new_iterator_id(dp) -> int:
    dp._valid_iterator_id = 0 if dp._valid_iterator_id is None else dp._valid_iterator_id + 1
    dp._number_of_samples_yielded = 0
    dp.reset()
    return dp._valid_iterator_id


def _check_valid(dp, iterator_id: int) -> None:
    if dp._valid_iterator_id != iterator_id:
        raise RuntimeError("This iterator has been invalidated because another iterator has "
                           f"been created from the same IterDataPipe: {_describe(dp)}\nThis may "
                           "be caused by multiple references to the same IterDataPipe. We "
                           "recommend using `.fork()` if that is necessary." + _FEEDBACK)


class _CheckedIterator:
    """The iterator a non-generator ``__iter__`` returned, checked on each ``next``."""

    def __init__(self, iterator, dp, iterator_id: int, counts: bool) -> None:
        self.iterator, self.datapipe, self.iterator_id, self.counts = (iterator, dp,
                                                                       iterator_id, counts)

    def __iter__(self):
        return self

    def __next__(self):
        _check_valid(self.datapipe, self.iterator_id)
        result = next(self.iterator)
        if self.counts:
            self.datapipe._number_of_samples_yielded += 1
        return result

    def __getattr__(self, name):
        return getattr(self.iterator, name)


def _hook_iter(func: Callable, has_next: bool) -> Callable:
    if inspect.isgeneratorfunction(func):
        @functools.wraps(func)
        def wrap_generator(self, *args, **kwargs):
            gen = func(self, *args, **kwargs)
            iterator_id = _new_iterator_id(self)
            try:
                response = gen.send(None)
                while True:
                    self._number_of_samples_yielded += 1
                    request = yield response
                    _check_valid(self, iterator_id)
                    response = gen.send(request)
            except StopIteration:
                return
            except Exception as e:
                note = f"thrown by __iter__ of {_describe(self)}"
                if not e.args or not isinstance(e.args[0], str):
                    e.args = (f"\nThis exception is {note}",)
                elif ("thrown by __iter__ of" not in e.args[0]
                      and "single iterator per IterDataPipe constraint" not in e.args[0]):
                    e.args = (e.args[0] + f"\nThis exception is {note}",) + e.args[1:]
                raise
        return wrap_generator

    @functools.wraps(func)
    def wrap_iter(self, *args, **kwargs):
        it = func(self, *args, **kwargs)
        iterator_id = _new_iterator_id(self)
        return _CheckedIterator(it, self, iterator_id, not (it is self and has_next))
    return wrap_iter


def _wrap_next(func: Callable) -> Callable:
    @functools.wraps(func)
    def wrap_next(self, *args, **kwargs):
        result = func(self, *args, **kwargs)
        self._number_of_samples_yielded += 1
        return result
    return wrap_next


class _FunctionalMixin:
    """The registry of functional forms and the hooks shared by both DataPipe kinds."""

    functions: ClassVar[dict[str, Callable]]
    getstate_hook: ClassVar[Callable | None] = None
    reduce_ex_hook: ClassVar[Callable | None] = None
    str_hook: ClassVar[Callable | None] = None
    repr_hook: ClassVar[Callable | None] = None

    @classmethod
    def _registry_owner(cls) -> type:
        return IterDataPipe if issubclass(cls, IterDataPipe) else MapDataPipe

    def __getattr__(self, attribute_name: str):
        functions = self._registry_owner().functions
        if attribute_name in functions:
            f = functions[attribute_name]
            function = functools.partial(f, self)
            functools.update_wrapper(wrapper=function, wrapped=f, assigned=("__doc__",))
            return function
        # PyTorch's message, its missing closing quote included
        raise AttributeError(f"'{self.__class__.__name__}' object has no attribute "
                             f"'{attribute_name}")

    @classmethod
    def register_function(cls, function_name: str, function: Callable) -> None:
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name: str, cls_to_register: type,
                                      enable_df_api_tracing: bool = False) -> None:
        """Make ``dp.function_name(*args)`` build ``cls_to_register(dp, *args)``."""
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is "
                            "already taken")

        def class_function(source_dp, *args, **kwargs):
            return cls_to_register(source_dp, *args, **kwargs)
        functools.update_wrapper(wrapper=class_function, wrapped=cls_to_register,
                                 assigned=("__doc__",))
        cls.functions[function_name] = class_function

    def __getstate__(self):
        state = self.__dict__
        hook = self._registry_owner().getstate_hook
        return hook(state) if hook is not None else state

    def __reduce_ex__(self, *args, **kwargs):
        hook = self._registry_owner().reduce_ex_hook
        if hook is not None:
            try:
                return hook(self)
            except NotImplementedError:
                pass
        return super().__reduce_ex__(*args, **kwargs)

    @classmethod
    def set_getstate_hook(cls, hook_fn: Callable | None) -> None:
        owner = cls._registry_owner()
        if owner.getstate_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing getstate_hook")
        owner.getstate_hook = hook_fn

    @classmethod
    def set_reduce_ex_hook(cls, hook_fn: Callable | None) -> None:
        owner = cls._registry_owner()
        if owner.reduce_ex_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing reduce_ex_hook")
        owner.reduce_ex_hook = hook_fn

    def __repr__(self) -> str:
        if self.repr_hook is not None:
            return self.repr_hook(self)
        return str(self.__class__.__qualname__)

    def __str__(self) -> str:
        if self.str_hook is not None:
            return self.str_hook(self)
        return str(self.__class__.__qualname__)

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions.keys())


class IterDataPipe(_FunctionalMixin, IterableDataset):
    """Iterable-style DataPipe: subclasses define ``__iter__`` (and optionally ``reset``).

    Only the newest iterator of a DataPipe is valid (Note [Single iterator per
    IterDataPipe]); ``reset()`` runs each time an iterator starts.

    Example:
        >>> from retrograd.utils.data import IterDataPipe
        >>> class Twice(IterDataPipe):
        ...     def __iter__(self):
        ...         yield from (1, 2)
        >>> dp = Twice(); first = iter(dp); next(first)
        1
        >>> second = iter(dp); next(second)
        1
        >>> next(first)
        Traceback (most recent call last):
        RuntimeError: This iterator has been invalidated because another iterator has been ...
        ...
    """

    functions: ClassVar[dict[str, Callable]] = {}
    _valid_iterator_id: int | None = None
    _number_of_samples_yielded: int = 0

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        namespace = cls.__dict__
        if "__iter__" in namespace:
            cls.__iter__ = _hook_iter(namespace["__iter__"], "__next__" in namespace)
            if "__next__" in namespace:
                cls.__next__ = _wrap_next(namespace["__next__"])

    def __iter__(self) -> Iterator[Any]:
        return self

    def reset(self) -> None:
        """Reset the DataPipe to its initial state: a no-op unless a subclass overrides it
        (called whenever an iterator starts).

        Example:
            >>> from retrograd.utils.data import IterDataPipe
            >>> IterDataPipe().reset()
        """


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of DataFrames (PyTorch's marker class; no DataFrame tracing here).

    Example:
        >>> from retrograd.utils.data import DFIterDataPipe
        >>> DFIterDataPipe()._is_dfpipe()
        True
    """

    def _is_dfpipe(self) -> bool:
        return True


class MapDataPipe(_FunctionalMixin, Dataset):
    """Map-style DataPipe: subclasses define ``__getitem__`` (and usually ``__len__``).

    Example:
        >>> from retrograd.utils.data import MapDataPipe
        >>> class Squares(MapDataPipe):
        ...     def __getitem__(self, i):
        ...         return i * i
        ...     def __len__(self):
        ...         return 3
        >>> [Squares()[i] for i in range(len(Squares()))]
        [0, 1, 4]
    """

    functions: ClassVar[dict[str, Callable]] = {}
