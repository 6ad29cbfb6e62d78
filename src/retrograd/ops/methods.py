"""Tensor methods and operators: one function serves ``retrograd.f(x)`` and ``x.f()``.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([1., 2.])
    >>> (2 * x + 1).tolist(), x.exp().sum().item() == torch.exp(x).sum().item()
    ([3.0, 5.0], True)
"""

from __future__ import annotations

from .. import _dtype as D
from .._tensor import Tensor
from . import functions as F
from . import table as T
from .dispatch import binary

_METHODS = """
add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow
float_power atan2 arctan2 maximum minimum fmax fmin neg negative abs absolute sign floor ceil
round trunc frac exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan asin
acos atan arcsin arccos arctan sinh cosh tanh sigmoid relu erf square clamp clip clamp_min
clamp_max lerp eq ne lt le gt ge greater greater_equal less less_equal not_equal
logical_and logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor bitwise_not
isnan isinf isfinite isposinf isneginf nan_to_num allclose isclose equal sum mean nansum nanmean
prod max min amax amin aminmax argmax argmin all any count_nonzero var std logsumexp cumsum
cumprod softmax log_softmax norm dist matmul mm bmm mv dot inner outer ger addmm tensordot
view reshape view_as
reshape_as flatten unflatten squeeze unsqueeze permute transpose swapaxes swapdims t movedim
moveaxis expand expand_as broadcast_to sum_to_size repeat tile repeat_interleave flip fliplr
flipud roll split tensor_split chunk unbind narrow select diagonal diag trace tril triu
index_put gather scatter scatter_add index_select index_add masked_fill masked_select
take_along_dim take nonzero argwhere sort argsort topk kthvalue median to type_as clone
contiguous fill_ zero_ copy_ uniform_ normal_ bernoulli_ bernoulli exponential_ random_
multinomial
""".split()

_INPLACE = """
add sub mul div pow clamp clamp_min clamp_max neg abs exp log sqrt sin cos tanh sigmoid relu
floor ceil round trunc sign reciprocal rsqrt square lerp masked_fill index_put scatter
scatter_add index_add remainder fmod atan2 log1p expm1 exp2 log2 log10 erf frac nan_to_num
tan asin acos atan sinh cosh clip
""".split()


def _cast_methods():
    return {"float": D.float32, "double": D.float64, "half": D.float16, "bfloat16": D.bfloat16,
            "long": D.int64, "int": D.int32, "short": D.int16, "char": D.int8, "byte": D.uint8,
            "bool": D.bool}


def install() -> None:
    """Attach methods and operators to ``Tensor`` (called once at import)."""
    for name in _METHODS:
        setattr(Tensor, name, getattr(F, name))
    for name in _INPLACE:
        setattr(Tensor, name + "_", F._make_inplace(getattr(F, name), name + "_"))
    for name, dt in _cast_methods().items():
        setattr(Tensor, name, F._caster(dt))
    Tensor.type = F.type_
    Tensor.cpu = _cpu
    Tensor.cuda = _cuda
    Tensor.addcmul = addcmul
    Tensor.addcmul_ = F._make_inplace(addcmul, "addcmul_")
    Tensor.addcdiv = addcdiv
    Tensor.addcdiv_ = F._make_inplace(addcdiv, "addcdiv_")
    Tensor.T = property(lambda self: self.permute(tuple(reversed(range(self.ndim)))),
                        doc="All dims reversed.")
    Tensor.where = where
    Tensor.mT = property(lambda self: self.transpose(-2, -1), doc="Last two dims swapped.")
    Tensor.H = Tensor.T
    Tensor.mH = Tensor.mT

    def op(opdef, reflected=False):
        if reflected:
            def fn(self, other):
                return binary(opdef, other, self)
        else:
            def fn(self, other):
                return binary(opdef, self, other)
        return fn

    for name, opdef in (("add", T.add), ("sub", T.sub), ("mul", T.mul), ("truediv", T.div),
                        ("floordiv", T.floor_divide), ("mod", T.remainder), ("pow", T.pow)):
        setattr(Tensor, f"__{name}__", op(opdef))
        setattr(Tensor, f"__r{name}__", op(opdef, reflected=True))
    for name in ("add", "sub", "mul", "truediv", "pow", "mod"):
        method = getattr(Tensor, {"truediv": "div", "mod": "remainder"}.get(name, name) + "_")
        setattr(Tensor, f"__i{name}__", method)
    Tensor.__ifloordiv__ = F._make_inplace(F.floor_divide, "floor_divide_")
    Tensor.floor_divide_ = Tensor.__ifloordiv__
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(Tensor, f"__{name}__", op(T._CMP[name]))
    for name, key in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor")):
        setattr(Tensor, f"__{name}__", op(T._CMP[key]))
        setattr(Tensor, f"__r{name}__", op(T._CMP[key], reflected=True))
        setattr(Tensor, f"__i{name}__", F._make_inplace(getattr(F, key), f"{key}_"))
    Tensor.__matmul__ = lambda self, other: F.matmul(self, other)
    Tensor.__rmatmul__ = lambda self, other: F.matmul(other, self)
    Tensor.__neg__ = F.neg
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = F.abs
    Tensor.__invert__ = F.bitwise_not
    Tensor.__getitem__ = F.getitem
    Tensor.__setitem__ = F.setitem


def _cpu(self, memory_format=None) -> Tensor:
    """The tensor itself: retrograd tensors always live on the CPU.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2); x.cpu() is x
        True
    """
    return self


def _cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
    """Always raises: retrograd runs on the CPU (check ``torch.cuda.is_available()``).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1).cuda()  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        ...
        RuntimeError: retrograd runs on the CPU only (NumPy kernels) ...
    """
    from .._device import check_device

    check_device("cuda" if device is None else device)
    return self


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:  # noqa: A002
    """``input + value * tensor1 * tensor2``.

    Example:
        >>> import retrograd as torch
        >>> torch.addcmul(torch.zeros(2), torch.ones(2), torch.ones(2), value=2)
        tensor([2., 2.])
    """
    # (value * t1) * t2, in PyTorch's kernel order, so results match bit for bit
    return input + ((tensor1 * value) * tensor2 if value != 1 else tensor1 * tensor2)


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:  # noqa: A002
    """``input + value * tensor1 / tensor2``.

    Example:
        >>> import retrograd as torch
        >>> torch.addcdiv(torch.zeros(2), torch.ones(2), torch.full((2,), 4.))
        tensor([0.2500, 0.2500])
    """
    return input + ((tensor1 * value) / tensor2 if value != 1 else tensor1 / tensor2)


def where(self, condition, y) -> Tensor:
    """``self`` where ``condition``, else ``y`` (the method form of ``torch.where``).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([1., -2.])
        >>> x.where(x > 0, 0.)
        tensor([1., 0.])
    """
    return F.where(condition, self, y)
