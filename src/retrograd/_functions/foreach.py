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

from collections.abc import Sequence
from numbers import Number

from .._tensor.tensor import Tensor
from ..ops.public import public
from . import conversion, matmul, pointwise, reductions, writes

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


def _pairs(name: str, self, other, tensor_overload: bool = False):
    """Each tensor of the list ``self`` with its operand, after PyTorch's checks."""
    _check_list(name, self, other)
    return zip(self, _operands(self, other, "other", tensor_overload))


# -- binary: Scalar, ScalarList, TensorList and (where PyTorch has it) Tensor ----------
# (a 0-d Tensor operand stays a tensor for add, mul and div, PyTorch's Tensor overloads)


@public(method=False)
def _foreach_add(self: Sequence[Tensor], other, *, alpha=1) -> tuple[Tensor, ...]:
    """``add`` of every tensor of a list with a Scalar, a list of Scalars, a list of
    Tensors or a 0-d Tensor (and ``alpha=``) (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_add([torch.tensor([1.0, 4.0])], [torch.tensor([2.0, 2.0])], alpha=2)
        (tensor([5., 8.]),)
    """
    return tuple(pointwise.add(t, o, alpha=alpha)
                 for t, o in _pairs("_foreach_add", self, other, True))


@public(method=False)
def _foreach_add_(self: Sequence[Tensor], other, *, alpha=1) -> Sequence[Tensor]:
    """``add_`` on every tensor of a list, in place, with the operands of
    ``_foreach_add`` (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([1.0, 4.0])]
        >>> _ = torch._foreach_add_(xs, [torch.tensor([2.0, 2.0])], alpha=2); xs
        [tensor([5., 8.])]
    """
    for t, o in _pairs("_foreach_add_", self, other, True):
        t.add_(o, alpha=alpha)
    return self


@public(method=False)
def _foreach_sub(self: Sequence[Tensor], other, *, alpha=1) -> tuple[Tensor, ...]:
    """``sub`` of every tensor of a list with a Scalar, a list of Scalars, a list of
    Tensors or a 0-d Tensor (and ``alpha=``) (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_sub([torch.tensor([1.0, 4.0])], [torch.tensor([2.0, 2.0])], alpha=2)
        (tensor([-3.,  0.]),)
    """
    return tuple(pointwise.sub(t, o, alpha=alpha)
                 for t, o in _pairs("_foreach_sub", self, other))


@public(method=False)
def _foreach_sub_(self: Sequence[Tensor], other, *, alpha=1) -> Sequence[Tensor]:
    """``sub_`` on every tensor of a list, in place, with the operands of
    ``_foreach_sub`` (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([1.0, 4.0])]
        >>> _ = torch._foreach_sub_(xs, [torch.tensor([2.0, 2.0])], alpha=2); xs
        [tensor([-3.,  0.])]
    """
    for t, o in _pairs("_foreach_sub_", self, other):
        t.sub_(o, alpha=alpha)
    return self


@public(method=False)
def _foreach_mul(self: Sequence[Tensor], other) -> tuple[Tensor, ...]:
    """``mul`` of every tensor of a list with a Scalar, a list of Scalars, a list of
    Tensors or a 0-d Tensor (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_mul([torch.tensor([1.0, 4.0])], [torch.tensor([2.0, 2.0])])
        (tensor([2., 8.]),)
    """
    return tuple(pointwise.mul(t, o)
                 for t, o in _pairs("_foreach_mul", self, other, True))


@public(method=False)
def _foreach_mul_(self: Sequence[Tensor], other) -> Sequence[Tensor]:
    """``mul_`` on every tensor of a list, in place, with the operands of
    ``_foreach_mul`` (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([1.0, 4.0])]
        >>> _ = torch._foreach_mul_(xs, [torch.tensor([2.0, 2.0])]); xs
        [tensor([2., 8.])]
    """
    for t, o in _pairs("_foreach_mul_", self, other, True):
        t.mul_(o)
    return self


@public(method=False)
def _foreach_div(self: Sequence[Tensor], other) -> tuple[Tensor, ...]:
    """``div`` of every tensor of a list with a Scalar, a list of Scalars, a list of
    Tensors or a 0-d Tensor (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_div([torch.tensor([1.0, 4.0])], [torch.tensor([2.0, 2.0])])
        (tensor([0.5000, 2.0000]),)
    """
    return tuple(pointwise.div(t, o)
                 for t, o in _pairs("_foreach_div", self, other, True))


@public(method=False)
def _foreach_div_(self: Sequence[Tensor], other) -> Sequence[Tensor]:
    """``div_`` on every tensor of a list, in place, with the operands of
    ``_foreach_div`` (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([1.0, 4.0])]
        >>> _ = torch._foreach_div_(xs, [torch.tensor([2.0, 2.0])]); xs
        [tensor([0.5000, 2.0000])]
    """
    for t, o in _pairs("_foreach_div_", self, other, True):
        t.div_(o)
    return self


@public(method=False)
def _foreach_maximum(self: Sequence[Tensor], other) -> tuple[Tensor, ...]:
    """``maximum`` of every tensor of a list with a Scalar, a list of Scalars, a list of
    Tensors or a 0-d Tensor (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_maximum([torch.tensor([1.0, 4.0])], [torch.tensor([2.0, 2.0])])
        (tensor([2., 4.]),)
    """
    return tuple(pointwise.maximum(t, o) if isinstance(o, Tensor) else pointwise.clamp_min(t, o)
                 for t, o in _pairs("_foreach_maximum", self, other))


@public(method=False)
def _foreach_maximum_(self: Sequence[Tensor], other) -> Sequence[Tensor]:
    """``maximum_`` on every tensor of a list, in place, with the operands of
    ``_foreach_maximum`` (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([1.0, 4.0])]
        >>> _ = torch._foreach_maximum_(xs, [torch.tensor([2.0, 2.0])]); xs
        [tensor([2., 4.])]
    """
    for t, o in _pairs("_foreach_maximum_", self, other):
        if isinstance(o, Tensor):  # (no Tensor.maximum_)
            writes.copy_(t, pointwise.maximum(t, o))
        else:
            t.clamp_min_(o)
    return self


@public(method=False)
def _foreach_minimum(self: Sequence[Tensor], other) -> tuple[Tensor, ...]:
    """``minimum`` of every tensor of a list with a Scalar, a list of Scalars, a list of
    Tensors or a 0-d Tensor (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_minimum([torch.tensor([1.0, 4.0])], [torch.tensor([2.0, 2.0])])
        (tensor([1., 2.]),)
    """
    return tuple(pointwise.minimum(t, o) if isinstance(o, Tensor) else pointwise.clamp_max(t, o)
                 for t, o in _pairs("_foreach_minimum", self, other))


@public(method=False)
def _foreach_minimum_(self: Sequence[Tensor], other) -> Sequence[Tensor]:
    """``minimum_`` on every tensor of a list, in place, with the operands of
    ``_foreach_minimum`` (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([1.0, 4.0])]
        >>> _ = torch._foreach_minimum_(xs, [torch.tensor([2.0, 2.0])]); xs
        [tensor([1., 2.])]
    """
    for t, o in _pairs("_foreach_minimum_", self, other):
        if isinstance(o, Tensor):  # (no Tensor.minimum_)
            writes.copy_(t, pointwise.minimum(t, o))
        else:
            t.clamp_max_(o)
    return self


@public(method=False)
def _foreach_clamp_min(self: Sequence[Tensor], other) -> tuple[Tensor, ...]:
    """``clamp_min`` of every tensor of a list with a Scalar, a list of Scalars, a list of
    Tensors or a 0-d Tensor (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_clamp_min([torch.tensor([1.0, 4.0])], [torch.tensor([2.0, 2.0])])
        (tensor([2., 4.]),)
    """
    return tuple(pointwise.clamp_min(t, o)
                 for t, o in _pairs("_foreach_clamp_min", self, other))


@public(method=False)
def _foreach_clamp_min_(self: Sequence[Tensor], other) -> Sequence[Tensor]:
    """``clamp_min_`` on every tensor of a list, in place, with the operands of
    ``_foreach_clamp_min`` (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([1.0, 4.0])]
        >>> _ = torch._foreach_clamp_min_(xs, [torch.tensor([2.0, 2.0])]); xs
        [tensor([2., 4.])]
    """
    for t, o in _pairs("_foreach_clamp_min_", self, other):
        t.clamp_min_(o)
    return self


@public(method=False)
def _foreach_clamp_max(self: Sequence[Tensor], other) -> tuple[Tensor, ...]:
    """``clamp_max`` of every tensor of a list with a Scalar, a list of Scalars, a list of
    Tensors or a 0-d Tensor (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_clamp_max([torch.tensor([1.0, 4.0])], [torch.tensor([2.0, 2.0])])
        (tensor([1., 2.]),)
    """
    return tuple(pointwise.clamp_max(t, o)
                 for t, o in _pairs("_foreach_clamp_max", self, other))


@public(method=False)
def _foreach_clamp_max_(self: Sequence[Tensor], other) -> Sequence[Tensor]:
    """``clamp_max_`` on every tensor of a list, in place, with the operands of
    ``_foreach_clamp_max`` (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([1.0, 4.0])]
        >>> _ = torch._foreach_clamp_max_(xs, [torch.tensor([2.0, 2.0])]); xs
        [tensor([1., 2.])]
    """
    for t, o in _pairs("_foreach_clamp_max_", self, other):
        t.clamp_max_(o)
    return self


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

def _triples(name: str, self, tensor1, tensor2, value) -> zip:
    """Each tensor of the list ``self`` with its two operands and its ``value``."""
    _check_list(name, self, tensor1, tensor2)
    t1, t2 = _operands(self, tensor1, "tensor1"), _operands(self, tensor2, "tensor2")
    return zip(self, t1, t2, _scalars(self, value))


@public(method=False)
def _foreach_addcmul(self: Sequence[Tensor], tensor1, tensor2, value=1) -> tuple[Tensor, ...]:
    """``addcmul`` for every tensor of a list, with ``value`` a Scalar, a list of Scalars or a
    1-D Tensor of them (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> a, b = [torch.tensor([2.0])], [torch.tensor([4.0])]
        >>> torch._foreach_addcmul([torch.ones(1)], a, b, value=[0.5])
        (tensor([5.]),)
    """
    return tuple(t.addcmul(a, b, value=v)
                 for t, a, b, v in _triples("_foreach_addcmul", self, tensor1, tensor2, value))


@public(method=False)
def _foreach_addcmul_(self: Sequence[Tensor], tensor1, tensor2, value=1) -> Sequence[Tensor]:
    """``addcmul_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs, a, b = [torch.ones(1)], [torch.tensor([2.0])], [torch.tensor([4.0])]
        >>> _ = torch._foreach_addcmul_(xs, a, b, value=[0.5]); xs
        [tensor([5.])]
    """
    for t, a, b, v in _triples("_foreach_addcmul_", self, tensor1, tensor2, value):
        t.addcmul_(a, b, value=v)
    return self


@public(method=False)
def _foreach_addcdiv(self: Sequence[Tensor], tensor1, tensor2, value=1) -> tuple[Tensor, ...]:
    """``addcdiv`` for every tensor of a list, with ``value`` a Scalar, a list of Scalars or a
    1-D Tensor of them (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> a, b = [torch.tensor([2.0])], [torch.tensor([4.0])]
        >>> torch._foreach_addcdiv([torch.ones(1)], a, b, value=[0.5])
        (tensor([1.2500]),)
    """
    return tuple(t.addcdiv(a, b, value=v)
                 for t, a, b, v in _triples("_foreach_addcdiv", self, tensor1, tensor2, value))


@public(method=False)
def _foreach_addcdiv_(self: Sequence[Tensor], tensor1, tensor2, value=1) -> Sequence[Tensor]:
    """``addcdiv_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs, a, b = [torch.ones(1)], [torch.tensor([2.0])], [torch.tensor([4.0])]
        >>> _ = torch._foreach_addcdiv_(xs, a, b, value=[0.5]); xs
        [tensor([1.2500])]
    """
    for t, a, b, v in _triples("_foreach_addcdiv_", self, tensor1, tensor2, value):
        t.addcdiv_(a, b, value=v)
    return self


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
