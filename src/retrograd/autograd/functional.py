"""autograd.functional: vjp, jvp, jacobian, hessian, hvp and vhp of a function of tensors.

Same arguments, results and strict-mode errors as ``torch.autograd.functional``.

Example:
    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import jacobian, hessian
    >>> x = torch.tensor([1.0, 2.0])
    >>> jacobian(lambda x: x ** 2, x)
    tensor([[2., 0.],
            [0., 4.]])
    >>> hessian(lambda x: (x ** 3).sum(), x)
    tensor([[ 6.,  0.],
            [ 0., 12.]])
"""

from __future__ import annotations

from collections.abc import Callable

from .._core.grad_mode import STATE, enable_grad, set_grad_enabled
from .._functions.creation import ones_like, zeros, zeros_like
from .._functions.namespace import stack
from .._tensor.tensor import Tensor
from . import forward_ad as fwAD
from . import grad as autograd_grad

#: one tensor, or a tuple of them: each function mirrors the structure it is given
TensorOrTensors = Tensor | tuple[Tensor, ...]
#: a Jacobian or a Hessian: a tensor, a tuple of them, or a tuple of such tuples (one per
#: output, one per input), as the output and the inputs are tensors or tuples
Blocks = Tensor | tuple[Tensor, ...] | tuple[tuple[Tensor, ...], ...]

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# Note [Vectorized Jacobians]
# ``jacobian`` (reverse mode) runs ONE backward pass over a stack
# of one-hot cotangents: ``autograd.grad(..., is_grads_batched=True)``, where the
# engine runs each rule once on gradients with a leading batch dimension (rules are
# batch-agnostic; the few that are not run once per row inside the engine, see
# Note [Batched rules] in ops/records/reductions.py). The numbers are exactly those of one backward
# per output element (PyTorch's ``vectorize=False`` loop), so retrograd uses the batched
# pass by default; only ``strict=True``, which inspects each row's graph, keeps the loop.
# ``hessian(..., vectorize=True)`` is the Jacobian of the gradient, so it is one batched
# backward through the first backward's graph.
# Forward mode (``strategy="forward-mode"``, ``jvp``, ``hvp``) uses dual tensors
# (autograd/forward_ad.py); retrograd has no vmap, so the forward-mode Jacobian
# pushes one basis tangent at a time. Where a forward-AD level is already open (the
# user's, or an enclosing transform's) the double-backward trick replaces it, since
# levels do not nest.


def _tensor_cls():

    return Tensor


def _as_tuple_nocheck(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _as_tuple(inp, arg_name=None, fn_name=None):
    if arg_name is None and fn_name is None:
        return _as_tuple_nocheck(inp)
    T = _tensor_cls()
    is_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, T):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                                f"tuple of Tensors but the value at index {i} has type "
                                f"{type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the given {arg_name} has type {type(el)}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph: bool, need_graph: bool) -> tuple:
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph: bool):
    T = _tensor_cls()
    if isinstance(inputs[0], T):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _prepare_inputs(inputs, create_graph: bool, name: str) -> tuple:
    """``(is_inputs_tuple, inputs)``, the inputs as fresh leaves that require grad."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    return is_inputs_tuple, _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)


def _prepare_v(v, other, is_other_tuple: bool, create_graph: bool, name: str) -> tuple:
    """``v`` as a tuple of detached tensors matching ``other`` in number and sizes."""
    _, v = _as_tuple(v, "v", name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, other, is_other_tuple)
    return v


def _call_user_func(func, args, strict: bool, name: str) -> tuple:
    """``(is_outputs_tuple, outputs)`` of ``func(*args)``, checked to be Tensors (and, when
    ``strict``, to require grad)."""
    is_outputs_tuple, outputs = _as_tuple(func(*args), "outputs of the user-provided function",
                                          name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_outputs_tuple, outputs


def _postprocess_pair(outputs, res, create_graph: bool, unpack_outputs, unpack_res) -> tuple:
    """The ``(outputs, result)`` pair the API returns: detached unless ``create_graph``,
    and unpacked from 1-tuples where the user passed no tuple."""
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, unpack_outputs), _tuple_postprocess(res, unpack_res)


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got "
                               f"{el_v.size()}.")


def _check_requires_grad(inputs, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i} is "
                    "independent of the input. This is not allowed in strict mode. You should "
                    "ensure that your function is thrice differentiable and that the hessian "
                    "depends on the inputs.")
            if input_type == "jacobian":
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided "
                    f"function with respect to input {i} is independent of the input. This is "
                    "not allowed in strict mode. You should ensure that your function is twice "
                    "differentiable and that the jacobian depends on the inputs (this would be "
                    "violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(
                    f"The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when running "
                "in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph: bool = False,
                   retain_graph=None, is_grads_batched: bool = False) -> tuple:

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_gos = [], []
    for out, go in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_gos.append(go)
    if not new_outputs:
        return (None,) * len(inputs)
    return autograd_grad(new_outputs, inputs, new_gos, allow_unused=True,
                         create_graph=create_graph, retain_graph=retain_graph,
                         is_grads_batched=is_grads_batched)


_FILL_MSG = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward mode "
                         "AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:

    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_MSG[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def vjp(func: Callable, inputs: TensorOrTensors, v: TensorOrTensors | None = None,
        create_graph: bool = False, strict: bool = False
        ) -> tuple[TensorOrTensors, TensorOrTensors]:
    """``(func(inputs), vᵀJ)``: the vector-Jacobian product at ``inputs``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.functional import vjp
        >>> vjp(lambda x: x * 3, torch.ones(2), torch.tensor([1.0, 2.0]))
        (tensor([3., 3.]), tensor([3., 6.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _prepare_inputs(inputs, create_graph, "vjp")
        is_outputs_tuple, outputs = _call_user_func(func, inputs, strict, "vjp")
        if v is not None:
            v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp")
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else STATE.enabled):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return _postprocess_pair(outputs, res, create_graph, is_outputs_tuple, is_inputs_tuple)


def jvp(func: Callable, inputs: TensorOrTensors, v: TensorOrTensors | None = None,
        create_graph: bool = False, strict: bool = False
        ) -> tuple[TensorOrTensors, TensorOrTensors]:
    """``(func(inputs), J v)``: the Jacobian-vector product, by forward-mode AD.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.functional import jvp
        >>> jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.ones(2))
        (tensor([1., 4.]), tensor([2., 4.]))
    """

    with enable_grad():
        is_inputs_tuple, inputs = _prepare_inputs(inputs, create_graph, "jvp")
        if v is not None:
            v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp")
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        else:

            v = (ones_like(inputs[0]),)
        if fwAD.FW.level >= 0:
            return _jvp_double_backward(func, inputs, v, create_graph, strict, is_inputs_tuple)
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(x, t) for x, t in zip(inputs, v))
            is_outputs_tuple, outputs = _call_user_func(func, duals, strict, "jvp")
            unpacked = [fwAD.unpack_dual(o) for o in outputs]
        prim = tuple(u.primal for u in unpacked)
        tans = tuple(u.tangent for u in unpacked)
    res = _fill_in_zeros(tans, prim, strict, create_graph, "back_trick")
    return _postprocess_pair(prim, res, create_graph, is_outputs_tuple, is_outputs_tuple)


def _jvp_double_backward(func, inputs, v, create_graph, strict, is_inputs_tuple):
    """PyTorch's double-backward trick: J v = d/du (uᵀJ) v, for use inside a dual level."""

    with enable_grad():
        is_outputs_tuple, outputs = _call_user_func(func, inputs, strict, "jvp")
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else STATE.enabled):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return _postprocess_pair(outputs, res, create_graph, is_outputs_tuple, is_outputs_tuple)


def _construct_standard_basis_for(tensors, numels) -> tuple:
    """One-hot rows, split per tensor: chunk k is (sum(numels), numels[k])."""

    total = sum(numels)
    chunks = []
    start = 0
    for t, n in zip(tensors, numels):
        c = zeros((total, n), dtype=t.dtype)
        if n:
            c._data[start:start + n] = _eye(n, c._data.dtype)
        chunks.append(c)
        start += n
    return tuple(chunks)


def _eye(n, dtype):
    import numpy as np

    return np.eye(n, dtype=dtype)


def _jacfwd(func, inputs, strict: bool, vectorize: bool):
    """Forward-mode Jacobian: one basis tangent per input element (Note [Vectorized Jacobians])."""

    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")  # sic
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if fwAD.FW.level >= 0:
        return jacobian(func, inputs if is_inputs_tuple else inputs[0], vectorize=True)
    cols = [[] for _ in inputs]  # cols[j][c]: tuple of output tangents for column c of input j
    outputs = None
    is_outputs_tuple = False
    with fwAD.dual_level():
        for j, x in enumerate(inputs):
            for c in range(x.numel()):
                duals = []
                for k, xk in enumerate(inputs):
                    t = zeros_like(xk)
                    if k == j:
                        t._data.reshape(-1)[c] = 1
                    duals.append(fwAD.make_dual(xk.detach(), t))
                is_outputs_tuple, outs = _as_tuple(func(*duals), "outputs")
                unpacked = [fwAD.unpack_dual(o) for o in outs]
                outputs = tuple(u.primal for u in unpacked)
                cols[j].append(tuple(zeros_like(u.primal) if u.tangent is None else u.tangent
                                     for u in unpacked))
    if outputs is None:  # every input is empty
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs")
    jac = []
    for i, out in enumerate(outputs):
        row = []
        for j, x in enumerate(inputs):
            if cols[j]:
                col = stack([c[i] for c in cols[j]], -1)
                row.append(col.reshape(tuple(out.shape) + tuple(x.shape)))
            else:
                row.append(zeros(tuple(out.shape) + tuple(x.shape), dtype=out.dtype))
        jac.append(row)  # lists, as PyTorch's forward-mode jacobian returns
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func: Callable, inputs: TensorOrTensors, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False, strategy: str = "reverse-mode"
             ) -> Blocks:
    """The Jacobian of ``func`` at ``inputs``: shape ``output.shape + input.shape`` per pair.

    ``vectorize=True`` computes every row in one batched backward pass (Note
    [Vectorized Jacobians]); ``strategy="forward-mode"`` (with ``vectorize=True``) uses
    forward-mode AD, one column at a time.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.functional import jacobian
        >>> jacobian(lambda x: x.sum() * x, torch.tensor([1.0, 2.0]), vectorize=True)
        tensor([[4., 1.],
                [2., 5.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, "forward-mode" '
                             'tends to be more performant. Otherwise, prefer to use '
                             '"reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      'and `strategy="forward-mode"` are not supported together '
                                      "(yet). Please either set `create_graph=False` or "
                                      '`strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with enable_grad():
        is_inputs_tuple, inputs = _prepare_inputs(inputs, create_graph, "jacobian")
        is_outputs_tuple, outputs = _call_user_func(func, inputs, strict, "jacobian")
        # Note [Vectorized Jacobians]: the batched pass gives exactly the row loop's
        # numbers, so it is used by default; only strict mode (which checks each row's
        # graph) keeps PyTorch's loop.
        if vectorize or not strict:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                                   "`vectorized=True` are not supported together. Please either "
                                   "set `strict=False` or `vectorize=False`.")
            numels = tuple(o.numel() for o in outputs)
            total = sum(numels)
            grad_outputs = _construct_standard_basis_for(outputs, numels)
            flat = tuple(o.reshape(-1) for o in outputs)
            vj = list(_autograd_grad(flat, inputs, grad_outputs, create_graph=create_graph,
                                     is_grads_batched=True)) if total else [None] * len(inputs)
            for k, g in enumerate(vj):
                if g is None:
                    vj[k] = zeros_like(inputs[k]).expand((total,) + tuple(inputs[k].shape))
            jac_in_out = []
            for g, x in zip(vj, inputs):
                row = []
                for piece, out in zip(g.split(list(numels), dim=0), outputs):
                    row.append(piece.reshape(tuple(out.shape) + tuple(x.shape)))
                jac_in_out.append(row)
            jac = tuple(zip(*jac_in_out))
            jac = _grad_postprocess(jac, create_graph)
            return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat_out = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat_out[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for k, (g, x) in enumerate(zip(vj, inputs)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                "create_graph=True.")
                        rows[k].append(g)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode.")
                        rows[k].append(zeros_like(x))
            jac.append(tuple(
                (stack(r, 0) if r else zeros_like(x).reshape((0,) + tuple(x.shape)))
                .view(tuple(out.shape) + tuple(x.shape)) for r, x in zip(rows, inputs)))
        jac = _grad_postprocess(tuple(jac), create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable, inputs: TensorOrTensors, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Blocks:
    """The Hessian of a scalar function: the Jacobian of its gradient.

    With ``vectorize=True`` it is one batched backward pass through the gradient's
    graph (Note [Vectorized Jacobians]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.functional import hessian
        >>> hessian(lambda x, y: (x * y).sum(), (torch.ones(1), torch.ones(1)))
        ((tensor([[0.]]), tensor([[1.]])), (tensor([[1.]]), tensor([[0.]])))
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        return _scalar_output(func, inp, strict, "hessian")[1][0].squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func: Callable, inputs: TensorOrTensors, v: TensorOrTensors | None = None,
        create_graph: bool = False, strict: bool = False
        ) -> tuple[Tensor, TensorOrTensors]:
    """``(func(inputs), vᵀH)`` for a scalar function: reverse-over-reverse.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.functional import vhp
        >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _prepare_inputs(inputs, create_graph, "vhp")
        v = _check_hvp_v(v, inputs, is_inputs_tuple, create_graph, "vhp")
        is_outputs_tuple, outputs, jac = _scalar_output_and_grad(func, inputs, strict, "vhp",
                                                                 create_graph=True)
    with set_grad_enabled(True if create_graph else STATE.enabled):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return _postprocess_pair(outputs, res, create_graph, is_outputs_tuple, is_inputs_tuple)


def _check_hvp_v(v, inputs, is_inputs_tuple, create_graph, name):
    if v is not None:
        return _prepare_v(v, inputs, is_inputs_tuple, create_graph, name)
    if len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    return None


def _scalar_output(func, args, strict, name):
    """``(is_outputs_tuple, outputs)`` of ``func(*args)``, which must be one single-element
    Tensor."""
    T = _tensor_cls()
    is_outputs_tuple, outputs = _call_user_func(func, args, strict, name)
    if is_outputs_tuple or not isinstance(outputs[0], T):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain "
                           "a single element")
    return is_outputs_tuple, outputs


def _scalar_output_and_grad(func, args, strict, name, create_graph):
    """``_scalar_output`` and its gradient with respect to ``args`` (the Jacobian)."""
    is_outputs_tuple, outputs = _scalar_output(func, args, strict, name)
    jac = _autograd_grad(outputs, args, create_graph=create_graph)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_outputs_tuple, outputs, jac


def hvp(func: Callable, inputs: TensorOrTensors, v: TensorOrTensors | None = None,
        create_graph: bool = False, strict: bool = False
        ) -> tuple[Tensor, TensorOrTensors]:
    """``(func(inputs), H v)`` for a scalar function: forward-over-reverse (the gradient's
    tangent along ``v``), or the double-backward trick inside an open forward-AD level.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.functional import hvp
        >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """

    with enable_grad():
        is_inputs_tuple, inputs = _prepare_inputs(inputs, create_graph, "hvp")
        v = _check_hvp_v(v, inputs, is_inputs_tuple, create_graph, "hvp")
        if v is None:
            v = (ones_like(inputs[0]),)
        if fwAD.FW.level >= 0:
            is_outputs_tuple, outputs, jac = _scalar_output_and_grad(func, inputs, strict, "hvp",
                                                                     create_graph=True)
            grad_jac = tuple(zeros_like(x, requires_grad=True) for x in inputs)
            double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
            _check_requires_grad(jac, "hessian", strict=strict)
            with set_grad_enabled(True if create_graph else STATE.enabled):
                grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
                res = _fill_in_zeros(grad_res, inputs, strict, create_graph,
                                     "double_back_trick")
        else:
            with fwAD.dual_level():
                duals = tuple(fwAD.make_dual(x, t) for x, t in zip(inputs, v))
                is_outputs_tuple, outputs, jac = _scalar_output_and_grad(
                    func, duals, strict, "hvp", create_graph=create_graph or strict)
                tans = tuple(None if g is None else fwAD.unpack_dual(g).tangent for g in jac)
                outputs = tuple(fwAD.unpack_dual(o).primal for o in outputs)
            if strict and create_graph:
                _check_requires_grad(tans, "hessian", strict=strict)
            res = _fill_in_zeros(tans, inputs, strict, create_graph, "double_back_trick")
    return _postprocess_pair(outputs, res, create_graph, is_outputs_tuple, is_inputs_tuple)
