"""The chi-squared distribution, a Gamma(df / 2, 1 / 2).

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Chi2
    >>> Chi2(torch.tensor([4.])).variance
    tensor([8.])
"""

from __future__ import annotations

from .._core.hints import Shape
from .._tensor.tensor import Tensor
from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi-squared distribution with ``df`` degrees of freedom.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Chi2
        >>> Chi2(torch.tensor([2.])).log_prob(torch.tensor([2.]))
        tensor([-1.6931])
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Chi2 | None = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
