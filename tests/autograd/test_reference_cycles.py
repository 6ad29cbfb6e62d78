"""Nothing a training step, a transform or a compiled call makes is left in a reference
cycle: every tensor, graph node and array is freed when its last reference goes, not
when Python's cyclic collector next runs (which keeps arrays alive, costs a collection
pass, and under vmap kept each call's whole batched graph)."""

from __future__ import annotations

import collections
import gc

import pytest

import retrograd as torch
from retrograd.func import grad, hessian, jacrev, vmap
from retrograd.utils.checkpoint import checkpoint


def _cyclic_garbage(fn) -> dict:
    """What one call of ``fn`` leaves for the cyclic collector (objects only a reference
    cycle keeps), counted by type name; after three calls, so that a compiled function's
    traces (which may leave some) are done."""
    for _ in range(3):
        fn()
    gc.collect()
    # objects made before (by other tests: a torch.autograd.Function class whose last
    # reference goes during the call, say) are frozen out of the count
    gc.freeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        fn()
        gc.collect()
        found = collections.Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.unfreeze()
    return dict(found)


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


def _per_sample_grads():
    # the torch.func tutorial's recipe: a BatchedTensor and the phantom standing for its
    # data referred to each other (Note [Phantoms refer weakly]), and pytrees were rebuilt
    # by a closure calling itself
    model = _mlp()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = torch.randn(5, 3), torch.tensor([0, 1, 1, 0, 1])

    def loss(p, xb, yb):
        out = torch.func.functional_call(model, p, (xb.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, yb.unsqueeze(0))
    return lambda: vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)


def _compiled_call():
    model = _mlp()
    step = torch.compile(lambda t: model(t).relu().sum())
    x = torch.randn(4, 3)
    return lambda: step(x)


def _scaled_list_step():
    model = _mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    x = torch.randn(4, 3)

    def step():
        out = model(x)
        (a, b) = scaler.scale([out[:, 0].sum(), out[:, 1].sum()])
        (a + b).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
    return step


def _load_optimizer_state():
    model = _mlp()
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    return lambda: opt.load_state_dict(sd)


def _checkpointed_step():
    model = _mlp()
    x = torch.randn(4, 3, requires_grad=True)
    return lambda: checkpoint(model, x, use_reentrant=False).sum().backward()


def _gradient_penalty():
    model = _mlp()
    x = torch.randn(4, 3)

    def step():
        xi = x.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(model(xi).sum(), xi, create_graph=True)
        ((g.norm(2, dim=1) - 1) ** 2).mean().backward()
    return step


CASES = {
    "per-sample grads": _per_sample_grads,
    "nested vmap": lambda: (lambda x: lambda: vmap(vmap(lambda a: {"s": a.sin()}))(x))(
        torch.randn(3, 4)),
    "jacrev": lambda: (lambda x: lambda: jacrev(lambda a: a.tanh())(x))(torch.randn(4)),
    "hessian": lambda: (lambda x: lambda: hessian(lambda a: a.sin().sum())(x))(
        torch.randn(4)),
    "compiled call": _compiled_call,
    "GradScaler.scale of a list": _scaled_list_step,
    "Optimizer.load_state_dict": _load_optimizer_state,
    "checkpoint": _checkpointed_step,
    "gradient penalty": _gradient_penalty,
}


@pytest.mark.parametrize("name", list(CASES))
def test_leaves_no_reference_cycles(name):
    assert _cyclic_garbage(CASES[name]()) == {}, name
