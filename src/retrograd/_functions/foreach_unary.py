"""``torch._foreach_<op>`` of the unary ops: the op applied to every tensor of a list, and
its in-place form (``_foreach_<op>_``), each a function of its own (Note [Foreach ops] in
foreach.py).

Example:
    >>> import retrograd as torch
    >>> torch._foreach_sqrt([torch.tensor([4.0]), torch.tensor([9.0, 16.0])])
    (tensor([2.]), tensor([3., 4.]))
"""

from __future__ import annotations

from collections.abc import Sequence

from .._tensor.tensor import Tensor
from ..ops.public import public
from .foreach import _check_list

__all__: list[str] = []


@public(method=False)
def _foreach_abs(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``abs`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_abs([torch.tensor([0.5])])
        (tensor([0.5000]),)
    """
    _check_list("_foreach_abs", self)
    return tuple(t.abs() for t in self)


@public(method=False)
def _foreach_abs_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``abs_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_abs_(xs); xs
        [tensor([0.5000])]
    """
    _check_list("_foreach_abs_", self)
    for t in self:
        t.abs_()
    return self


@public(method=False)
def _foreach_acos(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``acos`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_acos([torch.tensor([0.5])])
        (tensor([1.0472]),)
    """
    _check_list("_foreach_acos", self)
    return tuple(t.acos() for t in self)


@public(method=False)
def _foreach_acos_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``acos_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_acos_(xs); xs
        [tensor([1.0472])]
    """
    _check_list("_foreach_acos_", self)
    for t in self:
        t.acos_()
    return self


@public(method=False)
def _foreach_asin(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``asin`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_asin([torch.tensor([0.5])])
        (tensor([0.5236]),)
    """
    _check_list("_foreach_asin", self)
    return tuple(t.asin() for t in self)


@public(method=False)
def _foreach_asin_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``asin_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_asin_(xs); xs
        [tensor([0.5236])]
    """
    _check_list("_foreach_asin_", self)
    for t in self:
        t.asin_()
    return self


@public(method=False)
def _foreach_atan(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``atan`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_atan([torch.tensor([0.5])])
        (tensor([0.4636]),)
    """
    _check_list("_foreach_atan", self)
    return tuple(t.atan() for t in self)


@public(method=False)
def _foreach_atan_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``atan_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_atan_(xs); xs
        [tensor([0.4636])]
    """
    _check_list("_foreach_atan_", self)
    for t in self:
        t.atan_()
    return self


@public(method=False)
def _foreach_ceil(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``ceil`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_ceil([torch.tensor([0.5])])
        (tensor([1.]),)
    """
    _check_list("_foreach_ceil", self)
    return tuple(t.ceil() for t in self)


@public(method=False)
def _foreach_ceil_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``ceil_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_ceil_(xs); xs
        [tensor([1.])]
    """
    _check_list("_foreach_ceil_", self)
    for t in self:
        t.ceil_()
    return self


@public(method=False)
def _foreach_cos(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``cos`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_cos([torch.tensor([0.5])])
        (tensor([0.8776]),)
    """
    _check_list("_foreach_cos", self)
    return tuple(t.cos() for t in self)


@public(method=False)
def _foreach_cos_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``cos_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_cos_(xs); xs
        [tensor([0.8776])]
    """
    _check_list("_foreach_cos_", self)
    for t in self:
        t.cos_()
    return self


@public(method=False)
def _foreach_cosh(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``cosh`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_cosh([torch.tensor([0.5])])
        (tensor([1.1276]),)
    """
    _check_list("_foreach_cosh", self)
    return tuple(t.cosh() for t in self)


@public(method=False)
def _foreach_cosh_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``cosh_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_cosh_(xs); xs
        [tensor([1.1276])]
    """
    _check_list("_foreach_cosh_", self)
    for t in self:
        t.cosh_()
    return self


@public(method=False)
def _foreach_erf(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``erf`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_erf([torch.tensor([0.5])])
        (tensor([0.5205]),)
    """
    _check_list("_foreach_erf", self)
    return tuple(t.erf() for t in self)


@public(method=False)
def _foreach_erf_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``erf_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_erf_(xs); xs
        [tensor([0.5205])]
    """
    _check_list("_foreach_erf_", self)
    for t in self:
        t.erf_()
    return self


@public(method=False)
def _foreach_erfc(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``erfc`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_erfc([torch.tensor([0.5])])
        (tensor([0.4795]),)
    """
    _check_list("_foreach_erfc", self)
    return tuple(t.erfc() for t in self)


@public(method=False)
def _foreach_erfc_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``erfc_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_erfc_(xs); xs
        [tensor([0.4795])]
    """
    _check_list("_foreach_erfc_", self)
    for t in self:
        t.erfc_()
    return self


@public(method=False)
def _foreach_exp(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``exp`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_exp([torch.tensor([0.5])])
        (tensor([1.6487]),)
    """
    _check_list("_foreach_exp", self)
    return tuple(t.exp() for t in self)


@public(method=False)
def _foreach_exp_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``exp_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_exp_(xs); xs
        [tensor([1.6487])]
    """
    _check_list("_foreach_exp_", self)
    for t in self:
        t.exp_()
    return self


@public(method=False)
def _foreach_expm1(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``expm1`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_expm1([torch.tensor([0.5])])
        (tensor([0.6487]),)
    """
    _check_list("_foreach_expm1", self)
    return tuple(t.expm1() for t in self)


@public(method=False)
def _foreach_expm1_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``expm1_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_expm1_(xs); xs
        [tensor([0.6487])]
    """
    _check_list("_foreach_expm1_", self)
    for t in self:
        t.expm1_()
    return self


@public(method=False)
def _foreach_floor(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``floor`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_floor([torch.tensor([0.5])])
        (tensor([0.]),)
    """
    _check_list("_foreach_floor", self)
    return tuple(t.floor() for t in self)


@public(method=False)
def _foreach_floor_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``floor_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_floor_(xs); xs
        [tensor([0.])]
    """
    _check_list("_foreach_floor_", self)
    for t in self:
        t.floor_()
    return self


@public(method=False)
def _foreach_frac(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``frac`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_frac([torch.tensor([0.5])])
        (tensor([0.5000]),)
    """
    _check_list("_foreach_frac", self)
    return tuple(t.frac() for t in self)


@public(method=False)
def _foreach_frac_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``frac_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_frac_(xs); xs
        [tensor([0.5000])]
    """
    _check_list("_foreach_frac_", self)
    for t in self:
        t.frac_()
    return self


@public(method=False)
def _foreach_lgamma(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``lgamma`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_lgamma([torch.tensor([0.5])])
        (tensor([0.5724]),)
    """
    _check_list("_foreach_lgamma", self)
    return tuple(t.lgamma() for t in self)


@public(method=False)
def _foreach_lgamma_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``lgamma_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_lgamma_(xs); xs
        [tensor([0.5724])]
    """
    _check_list("_foreach_lgamma_", self)
    for t in self:
        t.lgamma_()
    return self


@public(method=False)
def _foreach_log(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``log`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_log([torch.tensor([0.5])])
        (tensor([-0.6931]),)
    """
    _check_list("_foreach_log", self)
    return tuple(t.log() for t in self)


@public(method=False)
def _foreach_log_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``log_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_log_(xs); xs
        [tensor([-0.6931])]
    """
    _check_list("_foreach_log_", self)
    for t in self:
        t.log_()
    return self


@public(method=False)
def _foreach_log10(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``log10`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_log10([torch.tensor([0.5])])
        (tensor([-0.3010]),)
    """
    _check_list("_foreach_log10", self)
    return tuple(t.log10() for t in self)


@public(method=False)
def _foreach_log10_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``log10_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_log10_(xs); xs
        [tensor([-0.3010])]
    """
    _check_list("_foreach_log10_", self)
    for t in self:
        t.log10_()
    return self


@public(method=False)
def _foreach_log1p(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``log1p`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_log1p([torch.tensor([0.5])])
        (tensor([0.4055]),)
    """
    _check_list("_foreach_log1p", self)
    return tuple(t.log1p() for t in self)


@public(method=False)
def _foreach_log1p_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``log1p_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_log1p_(xs); xs
        [tensor([0.4055])]
    """
    _check_list("_foreach_log1p_", self)
    for t in self:
        t.log1p_()
    return self


@public(method=False)
def _foreach_log2(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``log2`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_log2([torch.tensor([0.5])])
        (tensor([-1.]),)
    """
    _check_list("_foreach_log2", self)
    return tuple(t.log2() for t in self)


@public(method=False)
def _foreach_log2_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``log2_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_log2_(xs); xs
        [tensor([-1.])]
    """
    _check_list("_foreach_log2_", self)
    for t in self:
        t.log2_()
    return self


@public(method=False)
def _foreach_neg(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``neg`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_neg([torch.tensor([0.5])])
        (tensor([-0.5000]),)
    """
    _check_list("_foreach_neg", self)
    return tuple(t.neg() for t in self)


@public(method=False)
def _foreach_neg_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``neg_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_neg_(xs); xs
        [tensor([-0.5000])]
    """
    _check_list("_foreach_neg_", self)
    for t in self:
        t.neg_()
    return self


@public(method=False)
def _foreach_reciprocal(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``reciprocal`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_reciprocal([torch.tensor([0.5])])
        (tensor([2.]),)
    """
    _check_list("_foreach_reciprocal", self)
    return tuple(t.reciprocal() for t in self)


@public(method=False)
def _foreach_reciprocal_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``reciprocal_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_reciprocal_(xs); xs
        [tensor([2.])]
    """
    _check_list("_foreach_reciprocal_", self)
    for t in self:
        t.reciprocal_()
    return self


@public(method=False)
def _foreach_round(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``round`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_round([torch.tensor([0.5])])
        (tensor([0.]),)
    """
    _check_list("_foreach_round", self)
    return tuple(t.round() for t in self)


@public(method=False)
def _foreach_round_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``round_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_round_(xs); xs
        [tensor([0.])]
    """
    _check_list("_foreach_round_", self)
    for t in self:
        t.round_()
    return self


@public(method=False)
def _foreach_rsqrt(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``rsqrt`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_rsqrt([torch.tensor([0.5])])
        (tensor([1.4142]),)
    """
    _check_list("_foreach_rsqrt", self)
    return tuple(t.rsqrt() for t in self)


@public(method=False)
def _foreach_rsqrt_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``rsqrt_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_rsqrt_(xs); xs
        [tensor([1.4142])]
    """
    _check_list("_foreach_rsqrt_", self)
    for t in self:
        t.rsqrt_()
    return self


@public(method=False)
def _foreach_sigmoid(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``sigmoid`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_sigmoid([torch.tensor([0.5])])
        (tensor([0.6225]),)
    """
    _check_list("_foreach_sigmoid", self)
    return tuple(t.sigmoid() for t in self)


@public(method=False)
def _foreach_sigmoid_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``sigmoid_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_sigmoid_(xs); xs
        [tensor([0.6225])]
    """
    _check_list("_foreach_sigmoid_", self)
    for t in self:
        t.sigmoid_()
    return self


@public(method=False)
def _foreach_sign(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``sign`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_sign([torch.tensor([0.5])])
        (tensor([1.]),)
    """
    _check_list("_foreach_sign", self)
    return tuple(t.sign() for t in self)


@public(method=False)
def _foreach_sign_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``sign_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_sign_(xs); xs
        [tensor([1.])]
    """
    _check_list("_foreach_sign_", self)
    for t in self:
        t.sign_()
    return self


@public(method=False)
def _foreach_sin(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``sin`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_sin([torch.tensor([0.5])])
        (tensor([0.4794]),)
    """
    _check_list("_foreach_sin", self)
    return tuple(t.sin() for t in self)


@public(method=False)
def _foreach_sin_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``sin_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_sin_(xs); xs
        [tensor([0.4794])]
    """
    _check_list("_foreach_sin_", self)
    for t in self:
        t.sin_()
    return self


@public(method=False)
def _foreach_sinh(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``sinh`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_sinh([torch.tensor([0.5])])
        (tensor([0.5211]),)
    """
    _check_list("_foreach_sinh", self)
    return tuple(t.sinh() for t in self)


@public(method=False)
def _foreach_sinh_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``sinh_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_sinh_(xs); xs
        [tensor([0.5211])]
    """
    _check_list("_foreach_sinh_", self)
    for t in self:
        t.sinh_()
    return self


@public(method=False)
def _foreach_sqrt(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``sqrt`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_sqrt([torch.tensor([0.5])])
        (tensor([0.7071]),)
    """
    _check_list("_foreach_sqrt", self)
    return tuple(t.sqrt() for t in self)


@public(method=False)
def _foreach_sqrt_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``sqrt_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_sqrt_(xs); xs
        [tensor([0.7071])]
    """
    _check_list("_foreach_sqrt_", self)
    for t in self:
        t.sqrt_()
    return self


@public(method=False)
def _foreach_tan(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``tan`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_tan([torch.tensor([0.5])])
        (tensor([0.5463]),)
    """
    _check_list("_foreach_tan", self)
    return tuple(t.tan() for t in self)


@public(method=False)
def _foreach_tan_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``tan_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_tan_(xs); xs
        [tensor([0.5463])]
    """
    _check_list("_foreach_tan_", self)
    for t in self:
        t.tan_()
    return self


@public(method=False)
def _foreach_tanh(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``tanh`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_tanh([torch.tensor([0.5])])
        (tensor([0.4621]),)
    """
    _check_list("_foreach_tanh", self)
    return tuple(t.tanh() for t in self)


@public(method=False)
def _foreach_tanh_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``tanh_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_tanh_(xs); xs
        [tensor([0.4621])]
    """
    _check_list("_foreach_tanh_", self)
    for t in self:
        t.tanh_()
    return self


@public(method=False)
def _foreach_trunc(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``trunc`` of every tensor of a list (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> torch._foreach_trunc([torch.tensor([0.5])])
        (tensor([0.]),)
    """
    _check_list("_foreach_trunc", self)
    return tuple(t.trunc() for t in self)


@public(method=False)
def _foreach_trunc_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """``trunc_`` on every tensor of a list, in place (Note [Foreach ops]).

    Example:
        >>> import retrograd as torch
        >>> xs = [torch.tensor([0.5])]; _ = torch._foreach_trunc_(xs); xs
        [tensor([0.])]
    """
    _check_list("_foreach_trunc_", self)
    for t in self:
        t.trunc_()
    return self
