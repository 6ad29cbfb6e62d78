"""Ready-made parametrizations: ``orthogonal``, ``spectral_norm`` and ``weight_norm``
(``nn.utils.parametrizations``), each registered through
:func:`~retrograd.nn.utils.parametrize.register_parametrization`.

Example:
    >>> import retrograd as torch
    >>> m = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(3, 3))
    >>> bool(torch.allclose(m.weight @ m.weight.T, torch.eye(3), atol=1e-5))
    True
"""

from __future__ import annotations

from enum import Enum, auto

from ..._core import dtype as D
from ..._core.grad_mode import no_grad
from ..._functions.creation import eye, randn, zeros_like
from ..._functions.linalg import qr, solve
from ..._functions.linalg_derived import householder_product
from ..._functions.shape import cat
from ..._tensor.tensor import Tensor
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import _norms, parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_EPS = {D.float16: 2.0 ** -10, D.bfloat16: 2.0 ** -7, D.float32: 2.0 ** -23,
        D.float64: 2.0 ** -52}


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    eps = 10.0 * n * _EPS[q.dtype]
    return bool((q.mH @ q).allclose(eye(k, dtype=q.dtype), atol=eps))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of ``a = QR`` with ``diag(R) >= 0`` (``a`` tall)."""
    q, r = qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _geqrf(a: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's ``geqrf`` in Tensor ops: R on and above the diagonal, the Householder
    vectors below it (unit leading entry implied), and their scales ``tau``.

    Note [geqrf in Tensor ops]: each reflector is LAPACK's dlarfg,
    ``beta = -sign(alpha) * ||(alpha, x)||``, ``tau = (beta - alpha) / beta``,
    ``v = x / (alpha - beta)``, and ``tau = 0`` (no reflection) where ``x`` is zero, so
    the signs on the diagonal are LAPACK's, which ``orthogonal``'s right_inverse reads.
    """
    a = a.clone()
    n, k = a.size(-2), a.size(-1)
    taus = []
    for j in range(min(n, k)):
        alpha = a[..., j, j]
        x = a[..., j + 1:, j]
        xnorm = x.norm(dim=-1) if n - j > 1 else zeros_like(alpha)
        skip = xnorm == 0
        sign = (alpha >= 0).to(a.dtype) * 2 - 1
        beta = -sign * (alpha * alpha + xnorm * xnorm).sqrt()
        beta = beta.where(~skip, alpha)
        denom = (alpha - beta).where(~skip, beta.new_ones(()))
        tau = ((beta - alpha) / beta).where(~skip, beta.new_zeros(()))
        v = cat([a.new_ones(*alpha.shape, 1), x / denom.unsqueeze(-1)], -1)
        trailing = a[..., j:, j + 1:]
        w = (v.unsqueeze(-1) * trailing).sum(-2)
        a[..., j:, j + 1:] = trailing - tau[..., None, None] * v.unsqueeze(-1) * w.unsqueeze(-2)
        a[..., j + 1:, j] = v[..., 1:]
        a[..., j, j] = beta
        taus.append(tau)
    return a, (taus[0].new_empty(*a.shape[:-2], 0) if not taus else
                cat([t.unsqueeze(-1) for t in taus], -1))


# Note [Orthogonal maps]
# The original ``x`` (made tall by a transpose) maps to an orthogonal ``q``: matrix_exp
# and cayley take the skew-symmetric ``tril(x) - tril(x)ᵀ`` (padded square) to ``exp(a)``
# or ``(I - a/2)⁻¹(I + a/2)``; householder takes the reflectors below the diagonal of
# ``x`` (signs on the diagonal) to their product. With ``use_trivialization`` the result
# is multiplied by the buffer ``base``, which assigning sets (the assigned matrix, made
# orthogonal, completed with randn columns when not square, as PyTorch draws them), and
# the original is reset to ``-I``, which every map sends to the identity.
class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        """The orthogonal matrix of the original (Note [Orthogonal maps])."""
        n, k = x.size(-2), x.size(-1)
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:
                x = cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], -1)
            a = x - x.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = a.matrix_exp()
            else:
                ident = eye(n, dtype=a.dtype)
                q = solve(ident - 0.5 * a, ident + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        """An original that maps to ``q`` (sets ``base`` with the trivialization)."""
        with no_grad():
            return self._right_inverse(q)

    def _right_inverse(self, q: Tensor) -> Tensor:
        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {q.shape}.")
        q_init = q
        n, k = q.size(-2), q.size(-1)
        transpose = n < k
        if transpose:
            q = q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            a, tau = _geqrf(q)
            diag = a.diagonal(dim1=-2, dim2=-1)
            diag.copy_(diag.sign().where(tau != 0, -diag.sign()))
            return a.mT if transpose else a
        if n == k:
            q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
        else:
            extra = randn(*(tuple(q.shape[:-2]) + (n, n - k)), dtype=q.dtype)
            q = _make_orthogonal(cat([q, extra], -1))
        self.base = q
        neg_id = zeros_like(q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep ``module.<name>`` orthogonal (its columns or rows orthonormal): the map is
    ``"matrix_exp"`` for square matrices and ``"householder"`` otherwise unless
    ``orthogonal_map`` says (``"cayley"`` too); the original starts as PyTorch's does.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(4, 2))
        >>> bool(torch.allclose(m.weight @ m.weight.T, torch.eye(2), atol=1e-5))
        True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1) or
                          weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        """``weight_g * weight_v / ||weight_v||``."""
        return _norms.weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        """``(||weight||, weight)``: magnitude and direction."""
        return _norms.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``module.<name> = g * v / ||v||`` with magnitude ``original0`` (``g``) and
    direction ``original1`` (``v``); the norm is over every dimension but ``dim``
    (``None``: the whole tensor). Old ``weight_g``/``weight_v`` state dicts still load.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 2))
        >>> [k for k in m.state_dict() if 'original' in k]
        ['parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = _norms.weight_to_matrix(weight, self.dim)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            with no_grad():
                _norms.power_iteration(weight_mat, self._u, self._v, 15, self.eps)

    def forward(self, weight: Tensor) -> Tensor:
        """``weight / sigma`` (power iteration first in training mode)."""
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = _norms.weight_to_matrix(weight, self.dim)
        if self.training:
            with no_grad():
                _norms.power_iteration(weight_mat, self._u, self._v, self.n_power_iterations,
                                       self.eps)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        """The value itself (any weight is a valid original)."""
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its largest singular value, estimated by power
    iteration (``n_power_iterations`` per training-mode access; ``_u``/``_v`` buffers);
    ``dim`` defaults to 1 for transposed convolutions, else 0.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(4, 3))
        >>> round(torch.linalg.matrix_norm(m.weight, 2).item(), 3)
        1.0
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
