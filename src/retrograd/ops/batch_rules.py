"""Batching rules: how a table op runs on a whole batch in one call (Note [Batching rules]).

A rule is part of an op's record (``Op(..., batch=rule)``). vmap (retrograd._functorch)
calls it with the physical tensors of the op's inputs: every batched input carries the
same ``nb`` leading batch dims (size 1 where that input is not batched at a level), and
the unbatched inputs are as they are. The rule returns the physical result(s), with the
``nb`` batch dims in front, computed by ordinary op calls on the physical tensors (so
autograd records them as usual). Ops without a rule run once per batch element (the
slow fallback of _functorch/batched.py, which warns).

Example:
    >>> import retrograd as torch
    >>> from retrograd.func import vmap
    >>> vmap(torch.exp)(torch.zeros(3, 2)).shape
    torch.Size([3, 2])
"""

from __future__ import annotations

from collections.abc import Callable

from .._tensor.tensor import Tensor

__all__ = ["BatchCall", "pointwise", "reduction", "dim_at", "view_shape", "view_dims",
           "view_permute", "view_transpose", "view_prefix", "unbatched_first", "matmul_rule",
           "same", "t_rule", "expand_rule",
           "diagonal_rule", "cat_rule", "addmm_rule", "conv_rule", "gather_rule",
           "keep_layout_with", "NoBatchingRule", "PER_ELEMENT", "per_element_under_vmap",
           "RANDOM", "random_under_vmap"]


# Note [Batching rules]
# vmap runs a function once for a whole batch: each batched tensor is a physical tensor
# with the batch dims in front and a logical shape without them. An op call reaches the
# dispatcher with the logical view of its arguments (the public function has checked them
# and normalised dims and shapes against the logical shapes), and the dispatcher hands a
# batched call to vmap's handler, which asks the op's record for its rule. A rule turns
# the logical call into one call on the physical tensors: an elementwise op lines the
# logical dims up and lets broadcasting carry the batch dims; a reduction or a dim-wise op
# shifts its dims by the number of batch dims; a view op prefixes the batch sizes to its
# shape; matmul lets the batch dims be matmul's own. Rules only ever call ops, so the
# autograd graph of the physical tensors is the graph of the batched computation, and
# nested vmaps are batch dims side by side.
class BatchCall:
    """One batched op call as a rule sees it.

    ``args``: the op's inputs with batched tensors replaced by their physical tensors;
    ``batched[i]``: whether input i is batched; ``nb``: how many batch dims the batched
    ones carry in front; ``sizes``: the batch sizes; ``p``: the op's parameters (for the
    logical shapes); ``run(args, p)`` runs the op itself on physical inputs.
    """

    __slots__ = ("op", "args", "batched", "nb", "sizes", "p", "run")

    def __init__(self, op, args, batched, nb, sizes, p, run):
        self.op, self.args, self.batched, self.nb = op, args, batched, nb
        self.sizes, self.p, self.run = sizes, p, run

    def logical_ndim(self, i: int) -> int:
        x = self.args[i]
        return x.dim() - (self.nb if self.batched[i] else 0)

    def full(self, i: int):
        """Input i with every batch dim at its full size (an unbatched one expanded)."""
        x = self.args[i]
        if not self.batched[i]:
            x = x.reshape((1,) * self.nb + tuple(x.shape))
        return x.expand(tuple(self.sizes) + tuple(x.shape[self.nb:]))


def _lift(c: BatchCall, i: int, rank: int):
    """Batched input i with size-1 dims after its batch dims up to logical ``rank``."""
    x = c.args[i]
    r = c.logical_ndim(i)
    if r >= rank:
        return x
    s = tuple(x.shape)
    return x.reshape(s[:c.nb] + (1,) * (rank - r) + s[c.nb:])


def pointwise(c: BatchCall):
    """Elementwise ops (any arity): line the logical dims up and broadcast."""
    tensors = [i for i, x in enumerate(c.args) if isinstance(x, Tensor)]
    rank = max(c.logical_ndim(i) for i in tensors)
    args = list(c.args)
    for i in tensors:
        if c.batched[i]:
            args[i] = _lift(c, i, rank)
    _keep_logical_promotion(c, args, tensors)
    return c.run(args, c.p)


def _keep_logical_promotion(c: BatchCall, args, tensors) -> None:
    """A logically 0-d batched operand is 0-d for type promotion (it is not physically):
    cast the operands to the dtype the logical call would have (Note [Type promotion])."""
    if len(tensors) < 2 or len({args[i].dtype for i in tensors}) == 1:
        return
    if not any(c.batched[i] and c.logical_ndim(i) == 0 for i in tensors):
        return
    from .._core.dtype import result_type_of

    dims = [args[i].dtype for i in tensors if c.logical_ndim(i) > 0]
    zero = [args[i].dtype for i in tensors if c.logical_ndim(i) == 0]
    dt = result_type_of(dims, zero, [])
    for i in tensors:
        if args[i].dtype != dt:
            args[i] = args[i].to(dt)


def _shift_axes(axes, nb: int, ndim: int):
    if axes is None:
        return tuple(range(nb, nb + ndim))
    if isinstance(axes, int):
        return axes + nb
    return tuple(a + nb for a in axes)


def _on_scalar(c: BatchCall, p):
    """A dim-wise op of a logically 0-d tensor: run on it as a 1-element vector (dim
    ``nb``), the result reshaped back (PyTorch's dim 0/-1 of a 0-d tensor)."""
    x = c.args[0]
    shape = tuple(x.shape)
    out = c.run((x.reshape(shape + (1,)),) + tuple(c.args[1:]), p)
    if isinstance(out, tuple):
        return tuple(o.reshape(shape) if isinstance(o, Tensor) else o for o in out)
    return out.reshape(shape)


def reduction(c: BatchCall):
    """Ops whose ``p[0]`` is the reduced axes (None: all) and ``p[1]`` keepdim."""
    p = c.p
    if c.logical_ndim(0) == 0:
        return _on_scalar(c, ((c.nb,),) + tuple(p[1:]))
    axes = _shift_axes(p[0], c.nb, c.logical_ndim(0))
    return c.run(c.args, (axes,) + tuple(p[1:]))


def dim_at(k: int | None = 0):
    """Ops with one dim parameter: ``p[k]`` (``k`` None: ``p`` itself), shifted."""
    def rule(c: BatchCall):
        p = c.p
        q = list(p) if k is not None else None
        if k is not None:
            q[k] = q[k] + c.nb
        if c.logical_ndim(0) == 0:
            return _on_scalar(c, c.nb if k is None else tuple(q[:k] + [c.nb] + q[k + 1:]))
        return c.run(c.args, p + c.nb if k is None else tuple(q))
    return rule


def view_shape(c: BatchCall):
    """view/reshape/expand: the batch sizes before the logical shape."""
    x = c.args[0]
    return c.run(c.args, tuple(x.shape[:c.nb]) + tuple(c.p))


def view_dims(c: BatchCall):
    """squeeze/unsqueeze (``p``: a dim, dims, or None for every dim of size 1)."""
    p = c.p
    nb = c.nb
    if isinstance(p, int):
        return c.run(c.args, p + nb)
    if p is None:  # squeeze(): only the logical dims of size 1
        x = c.args[0]
        dims = tuple(i for i in range(nb, x.dim()) if x.shape[i] == 1)
        return c.run(c.args, dims)
    return c.run(c.args, tuple(d + nb for d in p))


def view_permute(c: BatchCall):
    """permute (``p``: a dims tuple): the batch dims stay in front."""
    nb = c.nb
    return c.run(c.args, tuple(range(nb)) + tuple(d + nb for d in c.p))


def view_transpose(c: BatchCall):
    """transpose (``p``: the two dims); of a logical 0-d tensor, the tensor itself."""
    if c.logical_ndim(0) == 0:
        x = c.args[0]
        return x.view(tuple(x.shape))
    nb = c.nb
    return c.run(c.args, tuple(d + nb for d in c.p))


def view_prefix(c: BatchCall):
    """Basic indexing (``p``: the index key): the batch dims kept whole in front."""
    key = c.p if isinstance(c.p, tuple) else (c.p,)
    return c.run(c.args, (slice(None),) * c.nb + key)


def unbatched_first(c: BatchCall):
    """Ops batched along their leading dims when input 0 (a table: embedding's weight) is
    unbatched and the others index into it; otherwise the slow path."""
    if c.batched[0]:
        return NotImplemented
    return c.run(c.args, c.p)


def matmul_rule(c: BatchCall):
    """mm/bmm/mv/dot/matmul: vectors as one-row/one-column matrices, the batch dims as
    matmul's own (the batched operands lifted to the larger logical rank)."""
    a, b = c.args
    ra, rb = c.logical_ndim(0), c.logical_ndim(1)
    if ra == 1:
        a = a.unsqueeze(a.dim() - 1)
    if rb == 1:
        b = b.unsqueeze(b.dim())
    rank = max(ra, rb, 2)
    lifted = BatchCall(c.op, (a, b), c.batched, c.nb, c.sizes, None, c.run)
    a = _lift(lifted, 0, rank) if c.batched[0] else a
    b = _lift(lifted, 1, rank) if c.batched[1] else b
    if c.batched[1] and rb == 2 and _LAYOUT_KEEPING and _expanded_column_major(b._data):
        out = c.run.apply_other(_LAYOUT_KEEPING[0], (a, b), None)  # Note [Linear under vmap]
    else:
        out = a.matmul(b)
    if rb == 1:
        out = out.squeeze(out.dim() - 1)
    if ra == 1:
        out = out.squeeze(out.dim() - (1 if rb == 1 else 2))
    return out


# Note [Linear under vmap]
# PyTorch's gradient of addmm/mm for a column-major mat2, such as nn.Linear's W.t(), is
# ``grad.t().mm(mat1).t()`` (mm_mat2_backward), so W's gradient comes out contiguous;
# torch.func batches that formula, and per-sample weight gradients are contiguous
# (B, out, in) stacks. vmap here differentiates the physical graph instead, where an
# unbatched weight under grad is an expanded stack of W.t() (batch strides 0, each matrix
# column-major). ``x @ W.t()`` is recorded for it with a matmul record whose gradient
# for b is ``(g.mT @ x).mT`` (table_matmul registers it here): per sample a contiguous
# (out, in) matrix, transposed back by W.t()'s node, with rows of the input's length
# (NumPy writes such outer products faster than rows of the output's length). Its
# forward is matmul's, folded into one BLAS call (Note [Folding a shared matrix]).
_LAYOUT_KEEPING: list = []


def keep_layout_with(op) -> None:
    """Register the matmul record used for an expanded column-major ``b`` under vmap
    (Note [Linear under vmap]).

    Example:
        >>> from retrograd.ops.batch_rules import _LAYOUT_KEEPING
        >>> _LAYOUT_KEEPING[0].name  # (registered by retrograd.ops.records.matmul)
        'matmul_keep_layout'
    """
    _LAYOUT_KEEPING[:] = [op]


def _expanded_column_major(d) -> bool:
    st = d.strides
    if d.ndim < 3 or any(st[:-2]) or d.shape[-2] < 2 or d.shape[-1] < 2:
        return False
    return st[-2] == d.itemsize and st[-1] == d.itemsize * d.shape[-2]


def same(c: BatchCall):
    """Ops whose parameters do not depend on the shape (clone, to_copy...)."""
    return c.run(c.args, c.p)


def t_rule(c: BatchCall):
    """t(): a transpose of the two logical dims (a 0-d or 1-d tensor is itself)."""
    x = c.args[0]
    if c.logical_ndim(0) < 2:
        return x.view(tuple(x.shape))
    return x.transpose(c.nb, c.nb + 1)


def expand_rule(c: BatchCall):
    """expand(shape): new logical dims go after the batch dims."""
    x = _lift(c, 0, len(c.p))
    return c.run((x,), tuple(x.shape[:c.nb]) + tuple(c.p))


def diagonal_rule(c: BatchCall):
    offset, d1, d2 = c.p
    return c.run(c.args, (offset, d1 + c.nb, d2 + c.nb))


def cat_rule(c: BatchCall):
    """cat (``p``: (dim, sizes)) and stack (``p``: dim): every operand at full batch size."""
    args = tuple(c.full(i) for i in range(len(c.args)))
    if isinstance(c.p, tuple):
        return c.run(args, (c.p[0] + c.nb,) + tuple(c.p[1:]))
    return c.run(args, c.p + c.nb)


def addmm_rule(c: BatchCall):
    """addmm(input, mat1, mat2) with p = (beta, alpha): matmul, then scale and add."""
    bias, m1, m2 = c.args
    beta, alpha = c.p[0], c.p[1]
    sub = BatchCall(c.op, (m1, m2), c.batched[1:], c.nb, c.sizes, None, c.run)
    out = matmul_rule(sub)
    if not any(c.batched[1:]):  # only the bias is batched: the product is every element's
        out = out.reshape((1,) * c.nb + tuple(out.shape))
    if alpha != 1:
        out = out * alpha
    if beta == 0:
        return out.expand(tuple(c.sizes) + tuple(out.shape[c.nb:]))
    if c.batched[0]:
        bias = _lift(c, 0, 2)
    return out + (bias if beta == 1 else bias * beta)


def conv_rule(c: BatchCall):
    """Convolutions: the batch folded into N when only the input is batched."""
    if any(c.batched[1:]):
        return NotImplemented
    x = c.args[0]
    shape = tuple(x.shape)
    nb = c.nb
    n = 1
    for s in shape[:nb + 1]:
        n *= s
    out = c.run((x.reshape((n,) + shape[nb + 1:]),) + tuple(c.args[1:]), c.p)
    return out.reshape(shape[:nb + 1] + tuple(out.shape[1:]))


def gather_rule(c: BatchCall):
    """gather(input, index) along ``p``: both operands at full batch size."""
    return c.run((c.full(0), c.full(1)), c.p + c.nb)


# Note [Per-element fallback]
# A public function that computes with NumPy on its inputs' values itself (sorting, index
# checks, LAPACK calls) rather than through a record reads a batched tensor's phantom data,
# which raises ``NoBatchingRule``. A function marked ``@per_element_under_vmap`` catches
# that and runs once per batch element instead (vmap's loop, which warns once per
# function), so such functions give right answers inside vmap until they get records
# with rules. The mark costs a function one flag test per call.
class NoBatchingRule(RuntimeError):
    """Raised by a batched tensor's phantom data when NumPy reads it (Note [Batched
    tensors] in _functorch/batched.py)."""


#: vmap's per-element loop (``loop(fn, args, kwargs)``), registered at its import
PER_ELEMENT: list = [None]


def per_element_under_vmap(fn):
    """Mark a public function that reads its inputs' values with NumPy (Note
    [Per-element fallback]): inside vmap it runs once per batch element when it must.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import vmap
        >>> vmap(lambda r: r.argmax())(torch.tensor([[1., 3.], [4., 2.]]))
        tensor([1, 0])
    """
    import functools

    from .._graph.modes import MODES, VMAP

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if MODES.bits & VMAP:
            try:
                return fn(*args, **kwargs)
            except NoBatchingRule:
                return PER_ELEMENT[0](fn, args, kwargs)
        return fn(*args, **kwargs)
    wrapper.__wrapped_by_vmap__ = fn
    return wrapper


#: vmap's handler for random functions (``run(fn, args, kwargs)``), registered at import
RANDOM: list = [None]


def random_under_vmap(fn: Callable | None = None, *, by_values: bool = False) -> Tensor:
    """Mark a public function that draws random numbers: inside vmap it follows vmap's
    ``randomness`` (Note [Randomness under vmap] in _functorch/random.py). ``by_values``:
    its draws depend on its tensor inputs' values (bernoulli's probabilities), which
    PyTorch's 'same' randomness refuses when they are batched.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import vmap
        >>> _ = torch.manual_seed(0)
        >>> r = vmap(lambda x: torch.rand(2) + x, randomness="different")(torch.zeros(3))
        >>> bool((r[0] != r[1]).all())
        True
    """
    import functools

    from .._graph.modes import MODES, VMAP

    def mark(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            if MODES.bits & VMAP:
                return RANDOM[0](f, args, kwargs, by_values)
            return f(*args, **kwargs)
        return wrapper
    return mark if fn is None else mark(fn)
