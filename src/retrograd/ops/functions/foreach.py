"""``torch._foreach_*``: one op applied to every tensor of a list (what optimizers and EMA
code call), with PyTorch's overloads: a Scalar, a list of Scalars, a list of Tensors or a
0-d Tensor as the other operand.

Example:
    >>> import retrograd as torch
    >>> xs = [torch.tensor([1.0, 2.0]), torch.tensor([3.0])]
    >>> torch._foreach_add(xs, [torch.ones(2), torch.ones(1)], alpha=2)
    (tensor([3., 4.]), tensor([5.]))
    >>> _ = torch._foreach_mul_(xs, [10, 100]); xs
    [tensor([10., 20.]), tensor([300.])]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Number

from ..._tensor.tensor import Tensor
from ..public import public
from . import conversion, matmul, pointwise, reductions, special, writes

__all__: list[str] = []

# Note [Foreach ops]
# PyTorch's CPU foreach kernels are its "slow path": the per-tensor op in a loop, so each
# result equals the single-tensor op's, dtype promotion and errors included. Here too:
# every ``_foreach_<op>`` calls retrograd's ``<op>`` (or ``<op>_``) once per tensor.
# Out-of-place forms return a tuple, in-place forms return the list they were given, as
# PyTorch's do. Autograd: gradients are those of the per-tensor ops; the graph differs
# from PyTorch's, which records one node for the whole list (``ForeachAddBackward0List``)
# where retrograd records one node per tensor (``AddBackward0``).


def _check_list(name: str, tensors, *others) -> None:
    """PyTorch's argument checks for the tensor list ``tensors`` (the ``self`` operand)."""
    if (not isinstance(tensors, (list, tuple)) or not all(isinstance(t, Tensor) for t in tensors)
            or not all(isinstance(o, (Tensor, Number, list, tuple)) for o in others)):
        got = ", ".join(type(a).__name__ for a in (tensors, *others))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                        "but expected a list or tuple of Tensors first, then Tensors, lists of "
                        "Tensors, Numbers or lists of Numbers (PyTorch's foreach overloads)")
    if len(tensors) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")


def _operands(tensors: Sequence[Tensor], other, what: str = "other",
              tensor_overload: bool = False) -> list:
    """The second operand, one per tensor: a Scalar or a 0-d Tensor repeated, or a list of
    Scalars or of Tensors checked for length (PyTorch's messages). A 0-d Tensor stays a
    tensor (gradients flow to it) only for the ops PyTorch gives a Tensor overload (add,
    mul, div); elsewhere it is read as a Scalar, as PyTorch's argument parser does."""
    n = len(tensors)
    if isinstance(other, Tensor):
        if other.dim() != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                               f"dimensions and {other.numel()} elements. (the single-Tensor "
                               f"{what} of a foreach op is a 0-d tensor; pass a list for one "
                               "value per tensor)")
        return [other if tensor_overload else other.item()] * n
    if isinstance(other, (list, tuple)):
        if any(isinstance(o, Tensor) for o in other):
            if len(other) != n:
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} "
                                   f"and {len(other)}")
            return list(other)
        if len(other) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other)
    if isinstance(other, Number):
        return [other] * n
    raise TypeError(f"foreach {what} must be a Number, a list of Numbers, a list of Tensors or "
                    f"a 0-d Tensor, not {type(other).__name__}")


def _scalars(tensors: Sequence[Tensor], value) -> list:
    """``value=`` of addcmul/addcdiv: a Scalar, a list of Scalars or a 1-D Tensor of them."""
    if isinstance(value, Tensor):
        if value.dim() != 1 or value.numel() != len(tensors):
            raise RuntimeError(f"Expected length of scalars to match input of length "
                               f"{len(tensors)} but got {value.numel()} instead.")
        return value.tolist()
    return _operands(tensors, value, "value")


def _install(name: str, out_of_place: Callable | None, in_place: Callable | None,
             doc: str) -> None:
    """Expose ``torch._foreach_<name>`` and ``torch._foreach_<name>_`` (functions only)."""
    for fn, suffix in ((out_of_place, ""), (in_place, "_")):
        if fn is not None:
            fn.__name__ = fn.__qualname__ = f"_foreach_{name}{suffix}"
            fn.__doc__ = doc.format(name=name, suffix=suffix)
            globals()[fn.__name__] = fn
            public(fn, method=False)


# -- unary ---------------------------------------------------------------------------

#: op -> (module defining it, what it gives for tensor([0.5]), for the docstring example)
_UNARY = {
    "abs": (pointwise, "tensor([0.5000])"), "acos": (pointwise, "tensor([1.0472])"),
    "asin": (pointwise, "tensor([0.5236])"), "atan": (pointwise, "tensor([0.4636])"),
    "ceil": (pointwise, "tensor([1.])"), "cos": (pointwise, "tensor([0.8776])"),
    "cosh": (pointwise, "tensor([1.1276])"), "erf": (special, "tensor([0.5205])"),
    "erfc": (special, "tensor([0.4795])"), "exp": (pointwise, "tensor([1.6487])"),
    "expm1": (pointwise, "tensor([0.6487])"), "floor": (pointwise, "tensor([0.])"),
    "frac": (pointwise, "tensor([0.5000])"), "lgamma": (special, "tensor([0.5724])"),
    "log": (pointwise, "tensor([-0.6931])"), "log10": (pointwise, "tensor([-0.3010])"),
    "log1p": (pointwise, "tensor([0.4055])"), "log2": (pointwise, "tensor([-1.])"),
    "neg": (pointwise, "tensor([-0.5000])"), "reciprocal": (pointwise, "tensor([2.])"),
    "round": (pointwise, "tensor([0.])"), "rsqrt": (pointwise, "tensor([1.4142])"),
    "sigmoid": (pointwise, "tensor([0.6225])"), "sign": (pointwise, "tensor([1.])"),
    "sin": (pointwise, "tensor([0.4794])"), "sinh": (pointwise, "tensor([0.5211])"),
    "sqrt": (pointwise, "tensor([0.7071])"), "tan": (pointwise, "tensor([0.5463])"),
    "tanh": (pointwise, "tensor([0.4621])"), "trunc": (pointwise, "tensor([0.])"),
}


def _unary(name: str, example: str) -> None:
    method = name + "_"

    def out_of_place(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
        _check_list(f"_foreach_{name}", self)
        return tuple(getattr(t, name)() for t in self)

    def in_place(self: Sequence[Tensor]) -> Sequence[Tensor]:
        _check_list(f"_foreach_{name}_", self)
        for t in self:
            getattr(t, method)()
        return self

    _install(name, out_of_place, in_place, f"""``{name}`` of every tensor of a list; the ``_``
    form writes each result into its tensor (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_{name}([torch.tensor([0.5])])
        ({example},)
    """)


for _name, (_module, _example) in _UNARY.items():
    _unary(_name, _example)


# -- binary: Scalar, ScalarList, TensorList and (where PyTorch has it) Tensor ----------

#: the per-tensor op of maximum/minimum with a Scalar (torch.maximum takes tensors only)
_WITH_SCALAR = {"maximum": "clamp_min", "minimum": "clamp_max"}


def _binary(name: str, with_alpha: bool, example: str) -> None:
    tensor_overload = name in ("add", "mul", "div")

    def op(o, inplace: bool) -> str:
        base = name if isinstance(o, Tensor) else _WITH_SCALAR.get(name, name)
        return base + "_" if inplace else base

    def out_of_place(self: Sequence[Tensor], other, **kwargs) -> tuple[Tensor, ...]:
        _check_list(f"_foreach_{name}", self, other)
        return tuple(getattr(pointwise, op(o, False))(t, o, **kwargs)
                     for t, o in zip(self, _operands(self, other, "other", tensor_overload)))

    def in_place(self: Sequence[Tensor], other, **kwargs) -> Sequence[Tensor]:
        _check_list(f"_foreach_{name}_", self, other)
        for t, o in zip(self, _operands(self, other, "other", tensor_overload)):
            if name in _WITH_SCALAR and isinstance(o, Tensor):  # no Tensor.maximum_
                writes.copy_(t, getattr(pointwise, name)(t, o))
            else:
                getattr(t, op(o, True))(o, **kwargs)
        return self

    alpha = ", alpha=2" if with_alpha else ""
    _install(name, out_of_place, in_place, f"""``{name}`` of every tensor of a list with a
    Scalar, a list of Scalars, a list of Tensors or a 0-d Tensor{' (and ``alpha=``)' if
    with_alpha else ''}; the ``_`` form writes into the list's tensors (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_{name}([torch.tensor([1.0, 4.0])], [torch.tensor([2.0, 2.0])]{alpha})
        ({example},)
    """)


for _name, _alpha, _example in (("add", True, "tensor([5., 8.])"),
                                ("sub", True, "tensor([-3.,  0.])"),
                                ("mul", False, "tensor([2., 8.])"),
                                ("div", False, "tensor([0.5000, 2.0000])"),
                                ("maximum", False, "tensor([2., 4.])"),
                                ("minimum", False, "tensor([1., 2.])"),
                                ("clamp_min", False, "tensor([2., 4.])"),
                                ("clamp_max", False, "tensor([1., 2.])")):
    _binary(_name, _alpha, _example)


def _foreach_pow(self, exponent) -> tuple[Tensor, ...]:
    """``pow`` for every tensor of a list: ``self`` a list and ``exponent`` a Scalar, a
    list of Scalars or a list of Tensors, or ``self`` a Scalar raised to each tensor of the
    list ``exponent`` (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_pow([torch.tensor([2.0, 3.0])], 2)
        (tensor([4., 9.]),)
        >>> torch._foreach_pow(2.0, [torch.tensor([1.0, 3.0])])
        (tensor([2., 8.]),)
    """
    if isinstance(self, Number):
        _check_list("_foreach_pow", exponent, self)
        return tuple(pointwise.pow(self, e) for e in exponent)
    _check_list("_foreach_pow", self, exponent)
    return tuple(pointwise.pow(t, e) for t, e in zip(self, _operands(self, exponent)))


def _foreach_pow_(self, exponent) -> Sequence[Tensor]:
    """``pow_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([2.0, 3.0])]; _ = torch._foreach_pow_(xs, [3]); xs
        [tensor([ 8., 27.])]
    """
    _check_list("_foreach_pow_", self, exponent)
    for t, e in zip(self, _operands(self, exponent)):
        t.pow_(e)
    return self


public(_foreach_pow, method=False)
public(_foreach_pow_, method=False)


# -- ternary ---------------------------------------------------------------------------

def _pointwise3(name: str, example: str) -> None:
    method = name + "_"

    def out_of_place(self, tensor1, tensor2, value=1) -> tuple[Tensor, ...]:
        _check_list(f"_foreach_{name}", self, tensor1, tensor2)
        t1, t2 = _operands(self, tensor1, "tensor1"), _operands(self, tensor2, "tensor2")
        return tuple(getattr(t, name)(a, b, value=v)
                     for t, a, b, v in zip(self, t1, t2, _scalars(self, value)))

    def in_place(self, tensor1, tensor2, value=1) -> Sequence[Tensor]:
        _check_list(f"_foreach_{name}_", self, tensor1, tensor2)
        t1, t2 = _operands(self, tensor1, "tensor1"), _operands(self, tensor2, "tensor2")
        for t, a, b, v in zip(self, t1, t2, _scalars(self, value)):
            getattr(t, method)(a, b, value=v)
        return self

    _install(name, out_of_place, in_place, f"""``{name}`` for every tensor of a list, with
    ``value`` a Scalar, a list of Scalars or a 1-D Tensor of them; the ``_`` form writes
    into the list's tensors (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> a, b = [torch.tensor([2.0])], [torch.tensor([4.0])]
        >>> torch._foreach_{name}([torch.ones(1)], a, b, value=[0.5])
        ({example},)
    """)


_pointwise3("addcmul", "tensor([5.])")
_pointwise3("addcdiv", "tensor([1.2500])")


def _foreach_lerp(self, tensors1, weight) -> tuple[Tensor, ...]:
    """``lerp(self[i], tensors1[i], weight)`` for every tensor, ``weight`` a Scalar, a list
    of Scalars, a list of Tensors or a 0-d Tensor (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_lerp([torch.zeros(2)], [torch.ones(2)], 0.25)
        (tensor([0.2500, 0.2500]),)
    """
    _check_list("_foreach_lerp", self, tensors1, weight)
    ends, weights = _operands(self, tensors1, "tensors1"), _operands(self, weight, "weight")
    return tuple(pointwise.lerp(t, e, w) for t, e, w in zip(self, ends, weights))


def _foreach_lerp_(self, tensors1, weight) -> Sequence[Tensor]:
    """``lerp_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.zeros(2)]; _ = torch._foreach_lerp_(xs, [torch.ones(2)], [0.5]); xs
        [tensor([0.5000, 0.5000])]
    """
    _check_list("_foreach_lerp_", self, tensors1, weight)
    ends, weights = _operands(self, tensors1, "tensors1"), _operands(self, weight, "weight")
    for t, e, w in zip(self, ends, weights):
        t.lerp_(e, w)
    return self


public(_foreach_lerp, method=False)
public(_foreach_lerp_, method=False)


# -- reductions, copies ----------------------------------------------------------------

@public(method=False)
def _foreach_norm(self, ord: float = 2, dtype=None) -> tuple[Tensor, ...]:
    """The vector ``ord``-norm of every tensor of a list, as 0-d tensors.

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_norm([torch.tensor([3.0, 4.0]), torch.tensor([-2.0])], 1)
        (tensor(7.), tensor(2.))
    """
    if not isinstance(ord, Number):
        raise TypeError(f"_foreach_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    _check_list("_foreach_norm", self)
    return tuple(reductions.vector_norm(t, ord, dtype=dtype) for t in self)


@public(method=False)
def _foreach_max(self) -> tuple[Tensor, ...]:
    """The largest element of every tensor of a list, as 0-d tensors.

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_max([torch.tensor([3.0, 4.0]), torch.tensor([-2.0])])
        (tensor(4.), tensor(-2.))
    """
    _check_list("_foreach_max", self)
    return tuple(reductions.amax(t) for t in self)


@public(method=False)
def _foreach_mm(self, mat2) -> tuple[Tensor, ...]:
    """``self[i] @ mat2[i]`` for every pair of matrices.

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_mm([torch.eye(2)], [torch.tensor([[1.0, 2.0], [3.0, 4.0]])])
        (tensor([[1., 2.],
                [3., 4.]]),)
    """
    _check_list("_foreach_mm", self, mat2)
    return tuple(matmul.mm(a, b) for a, b in zip(self, _operands(self, mat2, "mat2")))


@public(method=False)
def _foreach_clone(self) -> tuple[Tensor, ...]:
    """A copy of every tensor of a list.

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.ones(1)]; ys = torch._foreach_clone(xs); ys[0].zero_(); xs
        tensor([0.])
        [tensor([1.])]
    """
    _check_list("_foreach_clone", self)
    return tuple(conversion.clone(t) for t in self)


@public(method=False)
def _foreach_copy_(self, src, non_blocking: bool = False) -> Sequence[Tensor]:
    """Copy ``src[i]`` into ``self[i]`` for every tensor (broadcasting, casting).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.zeros(2)]; _ = torch._foreach_copy_(xs, [torch.tensor([1, 2])]); xs
        [tensor([1., 2.])]
    """
    _check_list("_foreach_copy_", self, src)
    for t, s in zip(self, _operands(self, src, "src")):
        writes.copy_(t, s, non_blocking)
    return self


@public(method=False)
def _foreach_zero_(self) -> Sequence[Tensor]:
    """Fill every tensor of a list with zeros, in place.

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.ones(2), torch.ones(1)]; torch._foreach_zero_(xs)
        [tensor([0., 0.]), tensor([0.])]
    """
    _check_list("_foreach_zero_", self)
    for t in self:
        writes.zero_(t)
    return self
