"""Every public function of retrograd has type hints on its parameters and its return, and
the hints name real types (issue 36).

Note [Public functions]
A public function is a function or method a user reaches through retrograd's public API,
defined in retrograd (its ``__module__``, after unwrapping decorators, starts with
``retrograd``) and named without a leading underscore:

- the functions among the public attributes of the namespaces in ``NAMESPACES``
  (``retrograd``, ``retrograd.nn.functional``, ``retrograd.linalg``, ..., and PyTorch's
  public submodules of them: ``autograd.forward_ad``, ``nn.utils.rnn``, ``nn.utils.prune``,
  ...; a namespace this build lacks, such as ``retrograd.fft``, is skipped);
- every method of ``retrograd.Tensor`` defined in retrograd, property getters included
  (``grad``, ``device``, ``T``): the public ones and the dunder methods (operators,
  ``__getitem__``, ``__len__``, ...: they are how users call the operators; the
  single-underscore ones are private);
- the public methods of ``retrograd.nn.Module``, and ``__init__``/``forward`` of every
  ``Module`` subclass exported by ``retrograd.nn``;
- ``__init__``/``step``/``zero_grad`` of the optimizer classes of ``retrograd.optim``;
- ``__init__``, the public methods and the public properties' getters of the classes
  exported by ``retrograd.distributions``.

Other classes' methods (``Generator``, ``GradScaler``, the schedulers) are outside the
definition. A function reached by several names counts once.

Fully hinted: every parameter has an annotation (a first ``self``/``cls`` excepted;
``*args``/``**kwargs`` may go without), and so does the return. For a decorated function
the signature is the one ``inspect.signature`` shows, the wrapped function's. And
``typing.get_type_hints`` resolves every annotation, in the globals of the function's
module plus the names its ``if TYPE_CHECKING:`` block imports, to a real type form:
``bool`` in a module whose globals hold retrograd's ``bool`` dtype is an error.
"""

from __future__ import annotations

import ast
import collections.abc
import importlib
import inspect
import sys
import types
import typing
from pathlib import Path

import retrograd as R

NAMESPACES = (
    "retrograd", "retrograd.nn.functional", "retrograd.linalg", "retrograd.special",
    "retrograd.fft", "retrograd.autograd", "retrograd.autograd.functional",
    "retrograd.autograd.forward_ad", "retrograd.autograd.graph", "retrograd.func",
    "retrograd.nn.init", "retrograd.nn.utils", "retrograd.nn.utils.rnn",
    "retrograd.nn.utils.parametrize", "retrograd.nn.utils.parametrizations",
    "retrograd.nn.utils.prune", "retrograd.nn.utils.stateless", "retrograd.nn.utils.fusion",
    "retrograd.amp", "retrograd.utils.checkpoint", "retrograd.distributions", "retrograd.viz",
)

def _ours(obj) -> bool:
    return (getattr(inspect.unwrap(obj), "__module__", None) or "").startswith("retrograd")


def _function(obj):
    """The function behind a class attribute (static/class methods, property getters)."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        obj = obj.fget
    return obj if inspect.isfunction(obj) and _ours(obj) else None


def _class_members(cls: type, names) -> list:
    out = []
    for name in names:
        for klass in cls.__mro__:  # the definition Python finds, read statically
            if name in vars(klass):
                fn = _function(vars(klass)[name])
                if fn is not None:
                    out.append((f"{cls.__module__}.{cls.__qualname__}.{name}", fn))
                break
    return out


def _public_names(obj) -> list:
    return [n for n in dir(obj) if not n.startswith("_")]


def public_functions() -> dict:
    """id -> (a name a user reaches it by, the function), per Note [Public functions]."""
    found: dict = {}

    def add(pairs) -> None:
        for where, fn in pairs:
            found.setdefault(id(fn), (where, fn))

    for ns in NAMESPACES:
        try:
            mod = importlib.import_module(ns)
        except ImportError:
            continue
        for name in _public_names(mod):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and _ours(obj):
                add([(f"{ns}.{name}", obj)])
    tensor_names = [n for n in dir(R.Tensor)
                    if not n.startswith("_") or (n.startswith("__") and n.endswith("__"))]
    add(_class_members(R.Tensor, tensor_names))
    add(_class_members(R.nn.Module, _public_names(R.nn.Module)))
    for name in _public_names(R.nn):
        obj = getattr(R.nn, name)
        if inspect.isclass(obj) and issubclass(obj, R.nn.Module):
            add(_class_members(obj, ["__init__", "forward"]))
    for name in _public_names(R.optim):
        obj = getattr(R.optim, name)
        if inspect.isclass(obj) and issubclass(obj, R.optim.Optimizer):
            add(_class_members(obj, ["__init__", "step", "zero_grad"]))
    for name in _public_names(R.distributions):
        obj = getattr(R.distributions, name)
        if inspect.isclass(obj) and _ours(obj):
            add(_class_members(obj, ["__init__", *_public_names(obj)]))
    return found


def unhinted(fn) -> list:
    """The names of ``fn``'s parameters without an annotation, and ``return`` if its return
    has none."""
    sig = inspect.signature(fn)
    missing = []
    for i, p in enumerate(sig.parameters.values()):
        if (i == 0 and p.name in ("self", "cls")) or p.kind in (p.VAR_POSITIONAL,
                                                                  p.VAR_KEYWORD):
            continue
        if p.annotation is p.empty:
            missing.append(p.name)
    if sig.return_annotation is sig.empty:
        missing.append("return")
    return missing


def _where(fn) -> str:
    target = inspect.unwrap(fn)
    try:
        path = Path(inspect.getsourcefile(target))
        line = inspect.getsourcelines(target)[1]
    except (OSError, TypeError):
        return "?"
    parts = path.parts
    rel = Path(*parts[parts.index("retrograd"):]) if "retrograd" in parts else path
    return f"{rel}:{line}"


_CHECKING_NAMES: dict = {}


def _checking_names(module) -> dict:
    """The names ``module`` imports under ``if TYPE_CHECKING:``, imported now (the package
    is whole, so no import is circular any more)."""
    if module.__name__ not in _CHECKING_NAMES:
        names: dict = {}
        try:
            tree = ast.parse(inspect.getsource(module))
        except (OSError, TypeError):
            tree = ast.Module(body=[], type_ignores=[])
        for node in tree.body:
            if (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                    and node.test.id == "TYPE_CHECKING"):
                ns = dict(vars(module))
                exec(compile(ast.Module(body=node.body, type_ignores=[]),
                             module.__file__, "exec"), ns)
                names.update({k: v for k, v in ns.items() if vars(module).get(k) is not v})
        _CHECKING_NAMES[module.__name__] = names
    return _CHECKING_NAMES[module.__name__]


def resolved_hints(fn) -> dict:
    """``typing.get_type_hints(fn)`` in the globals of ``fn``'s module plus its
    TYPE_CHECKING names."""
    target = inspect.unwrap(fn)
    module = sys.modules[target.__module__]
    globalns = {**vars(module), **_checking_names(module)}
    return typing.get_type_hints(fn, globalns=globalns)


_FORMS = (type, types.UnionType, types.GenericAlias, typing.TypeVar, typing.ParamSpec)
_SPECIAL = (typing.Any, typing.NoReturn)


def not_a_type(hint) -> object | None:
    """The part of a resolved hint that is not a type form (``None`` when all are)."""
    if hint is None or hint in _SPECIAL or isinstance(hint, _FORMS):
        parts = typing.get_args(hint) if not isinstance(hint, type) else ()
    elif typing.get_origin(hint) is not None:  # typing.Union[...], Callable[...], Literal
        if typing.get_origin(hint) is typing.Literal:
            return None
        parts = typing.get_args(hint)
    elif isinstance(hint, (list, tuple)):  # Callable[[A, B], C]'s argument list
        parts = hint
    elif hint is Ellipsis:
        return None
    else:
        return hint
    for part in parts:
        bad = not_a_type(part)
        if bad is not None:
            return bad
    return None


FUNCTIONS = public_functions()


def test_public_functions_are_found():
    # unwrapped: constructing an optimizer wraps its class's step (Note [Step hooks])
    functions = {id(inspect.unwrap(fn)) for _, fn in FUNCTIONS.values()}
    for fn in (R.add, R.nn.functional.conv2d, R.linalg.norm, vars(R.Tensor)["__add__"],
               R.nn.Module.state_dict, R.nn.Linear.forward, R.optim.Adam.step,
               R.distributions.Normal.log_prob, R.distributions.Normal.mean.fget):
        assert id(inspect.unwrap(fn)) in functions, fn
    assert id(vars(R.Tensor)["_detached"]) not in functions
    assert len(FUNCTIONS) > 1500


def test_every_public_function_is_hinted():
    missing = []
    for where, fn in FUNCTIONS.values():
        lacking = unhinted(fn)
        if lacking:
            missing.append(f"{where} ({_where(fn)}): {', '.join(lacking)}")
    hinted = len(FUNCTIONS) - len(missing)
    assert not missing, (f"{len(missing)} of {len(FUNCTIONS)} public functions lack type "
                         f"hints ({hinted} hinted), Note [Public functions]:\n"
                         + "\n".join(sorted(missing)))


def test_hints_name_real_types():
    errors = []
    for where, fn in FUNCTIONS.values():
        try:
            hints = resolved_hints(fn)
        except Exception as e:
            errors.append(f"{where} ({_where(fn)}): {type(e).__name__}: {e}")
            continue
        for name, hint in hints.items():
            bad = not_a_type(hint)
            if bad is not None:
                errors.append(f"{where} ({_where(fn)}): {name}: {bad!r} is not a type")
    assert not errors, "\n".join(sorted(errors))


def test_not_a_type_catches_a_dtype_named_bool():
    assert not_a_type(R.bool) is R.bool
    assert not_a_type(int | None) is None
    assert not_a_type(tuple[R.Tensor, ...]) is None
    assert not_a_type(collections.abc.Callable[[int], R.Tensor]) is None
    assert not_a_type(collections.abc.Sequence[R.bool]) is R.bool
    assert not_a_type(typing.Literal["mean", "sum"]) is None
    assert not_a_type(typing.NoReturn) is None
