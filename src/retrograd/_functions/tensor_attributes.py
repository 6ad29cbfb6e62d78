"""Tensor attributes and methods PyTorch keeps for devices, layouts and old APIs
(issue 16): ``is_cpu``, ``is_nested``, ``is_maia``, ``is_distributed()``, ``dim_order()``,
``name``, ``const_data_ptr()``, ``as_subclass()``, ``fill_diagonal_()``, ``module_load()``,
``to_padded_tensor()`` (nested tensors only), ``lu()`` (deprecated) and the removed
``volatile``, ``reinforce``, ``lstsq``, ``solve``, ``symeig``, ``eig`` with PyTorch's
warnings and errors. ``install()`` puts
them on ``Tensor`` (methods.py calls it).

Example:
    >>> import retrograd as torch
    >>> x = torch.ones(2, 3).t()
    >>> x.is_cpu, x.is_nested, x.dim_order()
    (True, False, (1, 0))
"""

from __future__ import annotations

import warnings
from typing import NoReturn

import numpy as np

from .._core.grad_mode import STATE
from .._core.hints import Number, Shape
from .._tensor.tensor import Tensor, _make
from ..ops.dispatch import view_apply
from ..ops.records import table as T
from .linalg_derived import lu_factor_ex

__all__ = ["install", "as_subclass", "fill_diagonal_", "dim_order", "const_data_ptr",
           "is_distributed", "module_load", "to_padded_tensor", "lu", "reinforce", "lstsq",
           "solve", "symeig", "eig"]


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """An alias of ``self`` (same memory, ``AliasBackward0`` in the graph) whose class is
    ``cls``, a subclass of Tensor.

    Example:
        >>> import retrograd as torch
        >>> class Marked(torch.Tensor):
        ...     pass
        >>> type(torch.ones(2).as_subclass(Marked)).__name__
        'Marked'
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = view_apply(T.alias, self, None)
    out.__class__ = cls
    return out


def fill_diagonal_(self: Tensor, fill_value: Number, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (all dims of equal length, or a matrix) in place; ``wrap``:
    a tall matrix's diagonal restarts every ``ncols + 1`` rows, as NumPy's.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3, 2).fill_diagonal_(1, wrap=True)
        tensor([[1., 0.],
                [0., 1.],
                [0., 0.]])
    """
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1 (fill_diagonal_ fills a matrix or "
                           "an array of equal dims)")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length (a diagonal needs "
                           f"a hypercube; got shape {list(shape)})")
    if STATE.enabled and self.requires_grad and self.is_leaf:  # PyTorch writes through a view
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation. (fill a clone, or fill under no_grad())")
    rows, cols = shape[0], shape[-1]
    if wrap and len(shape) == 2 and rows > cols + 1:
        flat = np.arange(0, rows * cols, cols + 1)
        key = (_make(flat // cols), _make(flat % cols))
    else:
        i = _make(np.arange(min(shape)))
        key = (i,) * len(shape)
    self[key] = fill_value
    return self


def _swap_order(t: Tensor, a: int, b: int) -> int:
    """1: dim ``a`` is inner to ``b`` in memory (swap them), -1: keep, 0: undecided."""
    sa, sb = t.stride(a), t.stride(b)
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:  # equal strides: the larger dim goes outside
        return 0 if _at_least(t.shape[b], t.shape[a]) else 1
    if _at_least(sb, sa):
        return -1
    return 1 if _at_least(sa, sb) else 0


def _at_least(a: int, b: int) -> bool:
    return b == 0 or (a != 0 and (a >= b or a % b == 0))


# Note [Dim order]
# ``dim_order()`` is PyTorch's elementwise output permutation: the dims from outermost to
# innermost in memory. A contiguous tensor gives the identity (size-1 dims and all);
# otherwise an insertion sort from the innermost logical dim moves a dim outward past
# each dim of smaller stride, leaving zero strides (expanded dims) and ties of equal size
# where they are. PyTorch's channels-last shortcut gives the same order as the sort for
# the tensors retrograd can make (no memory formats).
def dim_order(self: Tensor, *, ambiguity_check: bool | list = False) -> tuple:
    """The dims from outermost to innermost in memory (Note [Dim order]).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2, 3, 4).permute(2, 0, 1).dim_order()
        (1, 2, 0)
    """
    if not isinstance(ambiguity_check, (bool, list)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        "formats.")
    n = self.ndim
    if n <= 1 or self.is_contiguous():
        order = list(range(n))
    else:
        perm = list(reversed(range(n)))
        for i in range(1, n):
            j = i
            for k in reversed(range(i)):
                c = _swap_order(self, perm[k], perm[j])
                if c > 0:
                    perm[k], perm[j] = perm[j], perm[k]
                    j = k
                elif c < 0:
                    break
        order = list(reversed(perm))
    if ambiguity_check is not False and (
            any(self.stride(i) == self.stride(i + 1) for i in range(n - 1))
            or any(s == 1 for s in self.shape)):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")
    return tuple(order)


def const_data_ptr(self: Tensor) -> int:
    """``data_ptr()`` for reading (retrograd makes no copy-on-write distinction).

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2); x.const_data_ptr() == x.data_ptr()
        True
    """
    return self.data_ptr()


def is_distributed(self: Tensor) -> bool:
    """False: a retrograd tensor lives in one process.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1).is_distributed()
        False
    """
    return False


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """What ``Module.load_state_dict`` stores for this parameter or buffer: ``other``
    detached (``assign``), or ``other`` copied into ``self``, detached.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2).module_load(torch.ones(2))
        tensor([1., 1.])
    """
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def to_padded_tensor(self: Tensor, padding: float, output_size: Shape | None = None) -> Tensor:
    """Nested tensors only; a dense tensor raises as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2).to_padded_tensor(0.0)
        Traceback (most recent call last):
        ...
        NotImplementedError: Could not run 'aten::to_padded_tensor' with arguments from the 'CPU' backend. ...
    """  # noqa: E501
    raise NotImplementedError(
        "Could not run 'aten::to_padded_tensor' with arguments from the 'CPU' backend. ... "
        "(to_padded_tensor pads the rows of a nested tensor; retrograd has no nested "
        "tensors, and a dense tensor is already padded: use it as it is)")


_LU_DEPRECATION = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
    "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
    "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
    "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
    "should be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


def lu(self: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:
    """The deprecated ``Tensor.lu``: ``(LU, pivots)``, with ``infos`` if ``get_infos``.

    Example:
        >>> import retrograd as torch, warnings
        >>> warnings.simplefilter("ignore")
        >>> LU, piv = torch.tensor([[1., 2.], [3., 4.]]).lu(); piv
        tensor([2, 2], dtype=torch.int32)
    """
    warnings.warn(_LU_DEPRECATION, UserWarning, stacklevel=2)
    LU, pivots, infos = lu_factor_ex(self, pivot=pivot)
    return (LU, pivots, infos) if get_infos else (LU, pivots)


def _removed(message: str):
    def method(self, *args, **kwargs) -> NoReturn:
        raise RuntimeError(message)
    return method


_REMOVED_1_9 = "This function was deprecated since version 1.9 and is now removed. "
_MESSAGES = {
    "lstsq": _REMOVED_1_9 + (
        "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` "
        "has reversed arguments and does not return the QR decomposition in the returned "
        "tuple (although it returns other information about the problem).\n\nTo get the QR "
        "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
        "`torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
        "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the "
        "field 'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as "
        "in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = "
        "torch.linalg.lstsq(A, B).solution"),
    "solve": _REMOVED_1_9 + (
        "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` "
        "has its arguments reversed and does not return the LU factorization.\n\nTo get the "
        "LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
        "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
        "torch.linalg.solve(A, B)"),
    "symeig": _REMOVED_1_9 + (
        "The default behavior has changed from using the upper triangular portion of the "
        "matrix by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, "
        "upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if "
        "upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be "
        "replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"),
    "eig": _REMOVED_1_9 + (
        "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
        "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)"),
    "reinforce": (
        "reinforce() was removed.\nUse torch.distributions instead.\nSee "
        "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = "
        "policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
        "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = "
        "policy_network(state)\n# NOTE: categorical is equivalent to what used to be called "
        "multinomial\nm = torch.distributions.Categorical(probs)\naction = m.sample()\n"
        "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
        "loss.backward()\n"),
}
lstsq, solve, symeig, eig, reinforce = (_removed(_MESSAGES[k]) for k in
                                        ("lstsq", "solve", "symeig", "eig", "reinforce"))


def _volatile_get(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _volatile_set(self: Tensor, value) -> None:
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", UserWarning, stacklevel=2)


def _is_cpu(self: Tensor) -> bool:
    return not self.is_meta


def _false(self: Tensor) -> bool:
    return False


def _no_name(self: Tensor) -> None:
    return None


def install() -> None:
    """Put this module's attributes on ``Tensor``.

    Example:
        >>> import retrograd as torch
        >>> torch.Tensor.is_cpu.__doc__
        'True: retrograd tensors live in host memory (False on the meta device).'
    """
    Tensor.is_cpu = property(_is_cpu, doc="True: retrograd tensors live in host memory (False "
                                          "on the meta device).")
    Tensor.is_nested = property(_false, doc="False: no nested tensors here.")
    Tensor.is_maia = property(_false, doc="False: no MAIA device here.")
    Tensor.name = property(_no_name, doc="None: retrograd has no named tensors.")
    Tensor.volatile = property(_volatile_get, _volatile_set,
                               doc="Removed in PyTorch: always False, with its warning.")
    for name in __all__[1:]:
        setattr(Tensor, name, globals()[name])
