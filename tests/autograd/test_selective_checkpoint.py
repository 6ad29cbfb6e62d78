"""Selective activation checkpointing and the other torch.utils.checkpoint names,
against PyTorch 2.13."""

import functools

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tc

import retrograd as R
import retrograd.utils.checkpoint as rc

X = np.array([0.3, -1.2, 2.0])


def _grad_with_drift(m, cp, policy):
    """Gradient of sum(sin(x * s)) under SAC where ``s`` changes between forward and
    recompute: what the policy keeps decides which ``s`` the saved activations carry."""
    scale = [1.5]
    x = m.tensor(X, requires_grad=True)
    ctx_fn = functools.partial(cp.create_selective_checkpoint_contexts, policy)
    y = cp.checkpoint(lambda t: (t * scale[0]).sin().sum(), x, use_reentrant=False,
                      context_fn=ctx_fn)
    scale[0] = 0.5
    y.backward()
    return x.grad.numpy()


def _save_all(ctx, op, *args, **kwargs):
    return tc.CheckpointPolicy.MUST_SAVE if hasattr(op, "_schema") else \
        rc.CheckpointPolicy.MUST_SAVE


@pytest.mark.parametrize("ours,theirs", [
    (lambda c, op, *a, **k: rc.CheckpointPolicy.MUST_SAVE,
     lambda c, op, *a, **k: tc.CheckpointPolicy.MUST_SAVE),
    (lambda c, op, *a, **k: rc.CheckpointPolicy.PREFER_RECOMPUTE,
     lambda c, op, *a, **k: tc.CheckpointPolicy.PREFER_RECOMPUTE),
    (lambda c, op, *a, **k: True, lambda c, op, *a, **k: True),
    (lambda c, op, *a, **k: False, lambda c, op, *a, **k: False),
    (["mul"], [torch.ops.aten.mul.Tensor]),
    ([R.mul], [torch.ops.aten.mul.Tensor]),
    (["sin"], [torch.ops.aten.sin.default]),
])
def test_policy_decides_what_is_kept_like_torch(ours, theirs):
    np.testing.assert_allclose(_grad_with_drift(R, rc, ours),
                               _grad_with_drift(torch, tc, theirs), rtol=1e-12)


def test_save_everything_needs_no_recomputation_and_policy_sees_outputs():
    calls, seen = [], []

    def fn(t):
        calls.append(1)
        return (t.exp() * 2).tanh().sum()

    def policy(ctx, op, *args):
        seen.append((op.name, ctx.is_recompute, tuple(ctx.op_output.shape), len(args)))
        return rc.CheckpointPolicy.PREFER_SAVE
    x = R.tensor(X, requires_grad=True)
    y = rc.checkpoint(fn, x, use_reentrant=False,
                      context_fn=functools.partial(rc.create_selective_checkpoint_contexts,
                                                   policy))
    y.backward()
    tx = torch.tensor(X, requires_grad=True)
    (tx.exp() * 2).tanh().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert len(calls) == 1  # every saved activation was kept: nothing to rerun
    assert seen == [("exp", False, (3,), 1), ("mul", False, (3,), 2),
                    ("tanh", False, (3,), 1), ("sum", False, (), 1)]


def _mutated(m, cp, allow):
    x = m.tensor(X, requires_grad=True)
    ctx_fn = functools.partial(cp.create_selective_checkpoint_contexts,
                               lambda c, op, *a, **k: True, allow_cache_entry_mutation=allow)
    y = cp.checkpoint(lambda t: (t * 2).exp(), x, use_reentrant=False, context_fn=ctx_fn)
    y.add_(1)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return str(e).split(" (")[0]
    return x.grad.numpy().round(10).tolist()


@pytest.mark.parametrize("allow", [False, True])
def test_mutated_cached_tensor_like_torch(allow):
    assert _mutated(R, rc, allow) == _mutated(torch, tc, allow)


def test_policy_argument_errors_like_torch():
    for cp in (rc, tc):
        with pytest.raises(TypeError, match="policy_fn_or_list must be either a function or a "
                                            "list of ops."):
            cp.create_selective_checkpoint_contexts(3)
        with pytest.raises(ValueError, match="Expected op in `op_list` to be an OpOverload but "
                                             "got: 3 of type <class 'int'>."):
            cp.create_selective_checkpoint_contexts([3])


def test_policy_must_return_a_policy():
    x = R.ones(2, requires_grad=True)
    fn = functools.partial(rc.create_selective_checkpoint_contexts, lambda c, op, *a: "save")
    with pytest.raises(TypeError, match="must return a CheckpointPolicy"):
        rc.checkpoint(lambda t: t.exp(), x, use_reentrant=False, context_fn=fn)


def test_policy_enum_and_context_match_torch():
    assert {k: v.value for k, v in rc.CheckpointPolicy.__members__.items()} == \
           {k: v.value for k, v in tc.CheckpointPolicy.__members__.items()}
    for cp in (rc, tc):
        ctx = cp.SelectiveCheckpointContext(is_recompute=False, op_output=1)
        assert (ctx.is_recompute, ctx.op_output) == (False, 1)
    assert "detach" in rc.SAC_IGNORED_OPS


def test_device_states_group_and_debug_like_torch():
    def run(m, cp):
        out = [cp.get_device_states(m.ones(2), 3), cp.DefaultDeviceType.get_device_type()]
        cp.set_device_states([], [])
        try:
            cp.set_device_states([0], [m.get_rng_state()])
        except AttributeError as e:
            out.append(str(e).split(" (")[0])
        with cp.GraphExecGroup() as g:
            try:
                with cp.GraphExecGroup():
                    pass
            except RuntimeError as e:
                out.append(str(e).split(" Already")[0])
            out.append(cp.GraphExecGroup._get_current_group() is g)
        out.append(cp.GraphExecGroup._get_current_group())
        x = m.ones(2, requires_grad=True)
        with cp.set_checkpoint_debug_enabled(False):
            y = cp.checkpoint(lambda t: t.sin().sum(), x, use_reentrant=False, debug=True)
            out.append(round(y.item(), 5))
        return out
    assert run(R, rc) == run(torch, tc)


def test_graph_exec_group_two_backwards_recompute_once():
    calls = []

    def fn(t):
        calls.append(1)
        return t.sin() * 2, t.cos() * 3
    x = R.tensor(X, requires_grad=True)
    with rc.GraphExecGroup():
        a, b = rc.checkpoint(fn, x, use_reentrant=False)
        a.sum().backward(retain_graph=True)
        b.sum().backward()
    tx = torch.tensor(X)
    np.testing.assert_allclose(x.grad.numpy(), (2 * tx.cos() - 3 * tx.sin()).numpy(),
                               rtol=1e-12)
    assert len(calls) == 2  # the forward and one recomputation
