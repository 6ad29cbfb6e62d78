"""Hooks against PyTorch: tensor hooks, post-accumulate-grad hooks, retain_grad, node
pre/post hooks (and their order), saved-tensor hooks, save_on_cpu and
disable_saved_tensors_hooks; plus the seed page's gradient-clamping hook example.
"""

from __future__ import annotations

import contextlib
import io
import re
import textwrap

import numpy as np
import pytest

from _autograd_compare import same, same_error, tensor

torch = pytest.importorskip("torch")


def _x(m, vals=(1.0, -2.0, 3.0)):
    return tensor(m, list(vals), requires_grad=True, dtype=m.float32)


# ----------------------------------------------------------------------------------
# tensor hooks


def test_leaf_hook_replaces_gradient_and_handle_removes_it():
    def f(m):
        x = _x(m)
        seen = []
        h = x.register_hook(lambda g: seen.append(g.clone()) or g * 10)
        (x * x).sum().backward()
        first = x.grad.clone()
        h.remove()
        x.grad = None
        (x * x).sum().backward()
        return seen, first, x.grad

    same(f)


def test_non_leaf_hook_changes_what_flows_upstream():
    def f(m):
        x = _x(m)
        y = x * 2
        y.register_hook(lambda g: g + 1)
        (y * y).sum().backward()
        return x.grad

    same(f)


def test_hooks_run_in_registration_order_and_chain():
    def f(m):
        x = _x(m)
        y = x.exp()
        log = []
        y.register_hook(lambda g: log.append(("a", g.clone())) or g * 2)
        y.register_hook(lambda g: log.append(("b", g.clone())))
        y.register_hook(lambda g: log.append(("c", g.clone())) or g - 1)
        y.sum().backward()
        return log, x.grad

    same(f)


def test_full_hook_order():
    """Tensor hooks, then retain_grad, then node pre-hooks, the node, node post-hooks;
    at the leaf: tensor hooks, accumulation, post-accumulate hooks."""
    def f(m):
        log = []
        x = _x(m)
        y = x * 3
        z = y.sin()
        y.retain_grad()
        y.register_hook(lambda g: log.append("y tensor hook") or g * 2)
        y.grad_fn.register_prehook(lambda go: log.append("y node prehook"))
        y.grad_fn.register_hook(lambda gi, go: log.append("y node posthook"))
        z.grad_fn.register_prehook(lambda go: log.append("z node prehook"))
        z.register_hook(lambda g: log.append("z tensor hook"))
        x.register_hook(lambda g: log.append("x tensor hook"))
        x.register_post_accumulate_grad_hook(
            lambda t: log.append(("x post accumulate", t.grad.clone())))
        z.sum().backward()
        return log, y.grad, x.grad

    same(f)


def test_retain_grad_sees_hooks_registered_after_it():
    def f(m):
        x = _x(m)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 100)
        y.sum().backward()
        return y.grad, x.grad

    same(f)


def test_fan_out_hook_called_once_with_summed_gradient():
    def f(m):
        x = _x(m)
        y = x * 2
        calls = []
        y.register_hook(lambda g: calls.append(g.clone()))
        (y * y + y.sin()).sum().backward()
        return calls, x.grad

    same(f)


def test_hook_on_one_output_of_a_multi_output_op():
    def f(m):
        x = tensor(m, np.arange(6.0), requires_grad=True)
        a, b = x.split(3)
        b.register_hook(lambda g: g * 0)
        (a * a).sum().add((b * b).sum()).backward()
        return x.grad

    same(f)


def test_hook_result_differentiable_under_create_graph():
    def f(m):
        x = tensor(m, [1.0, 2.0], requires_grad=True, dtype=m.float64)
        y = x ** 2
        y.register_hook(lambda g: g * x)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg

    same(f)


def test_register_hook_on_tensor_without_grad_errors():
    same_error(lambda m: m.ones(2).register_hook(lambda g: g))


def test_post_accumulate_grad_hook():
    def f(m):
        x = _x(m)
        seen = []
        h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        h.remove()
        (x * 4).sum().backward()
        return seen, x.grad

    same(f)


def test_post_accumulate_grad_hook_on_non_leaf_errors():
    same_error(lambda m: (_x(m) * 2).register_post_accumulate_grad_hook(lambda t: None))


def test_post_accumulate_grad_hook_can_update_in_place():
    """The optimizer-in-backward pattern: step inside the hook, then clear .grad."""
    def f(m):
        w = _x(m)

        def step(p):
            with m.no_grad():
                p.sub_(0.1 * p.grad)
            p.grad = None

        w.register_post_accumulate_grad_hook(step)
        (w * w).sum().backward()
        return w.detach(), w.grad

    same(f)


def test_handles_as_context_managers():
    def f(m):
        x = _x(m)
        with x.register_hook(lambda g: g * 3):
            (x * 1).sum().backward()
        inside = x.grad.clone()
        (x * 1).sum().backward()
        return inside, x.grad

    same(f)


# ----------------------------------------------------------------------------------
# node hooks


def test_node_post_hook_replaces_grad_inputs():
    def f(m):
        x = _x(m)
        w = tensor(m, [0.5, 0.5, 0.5], requires_grad=True)
        y = x * w
        seen = []

        def hook(gi, go):
            seen.append((len(gi), len(go), go[0].clone()))
            return (gi[0] * 0, gi[1])

        y.grad_fn.register_hook(hook)
        y.sum().backward()
        return seen, x.grad, w.grad

    same(f)


def test_node_prehook_replaces_grad_outputs():
    def f(m):
        x = _x(m)
        y = x.exp()
        y.grad_fn.register_prehook(lambda go: (go[0] * 5,))
        y.sum().backward()
        return x.grad

    same(f)


def test_node_hook_removal():
    def f(m):
        x = _x(m)
        y = x * 2
        h1 = y.grad_fn.register_prehook(lambda go: (go[0] * 5,))
        h2 = y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
        h1.remove()
        h2.remove()
        y.sum().backward()
        return x.grad

    same(f)


def test_accumulate_grad_node_hooks():
    def f(m):
        x = _x(m)
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        log = []
        acc.register_prehook(lambda go: log.append(go[0].clone()))
        y.sum().backward()
        return acc.name(), log, x.grad

    same(f)


# ----------------------------------------------------------------------------------
# saved-tensor hooks


def test_saved_tensors_hooks_pack_and_unpack():
    def f(m):
        packed, unpacked = [], []

        def pack(t):
            packed.append(tuple(t.shape))
            return t.clone() * 1

        def unpack(t):
            unpacked.append(tuple(t.shape))
            return t

        x = _x(m)
        w = tensor(m, [[1.0], [2.0], [3.0]], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x.exp() * w).sum()  # exp saves its output, mul both inputs
        y.backward()
        return sorted(packed), sorted(unpacked), x.grad, w.grad

    same(f)


def test_saved_tensors_hooks_innermost_wins_and_apply_to_functions():
    def f(m):
        log = []

        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = _x(m)
        with m.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t,
                                                  lambda t: t):
            with m.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t,
                                                      lambda t: log.append("unpack") or t):
                y = Square.apply(x)
        y.sum().backward()
        return log, x.grad

    same(f)


def test_unpack_hook_may_return_a_different_tensor():
    def f(m):
        x = _x(m)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 2,
                                                  lambda t: t):
            y = (x * x).sum()
        y.backward()
        return x.grad

    same(f)


def test_unpack_hook_must_return_a_tensor():
    def f(m):
        x = _x(m)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = (x * x).sum()
        y.backward()

    same_error(f)


def test_saved_tensors_hooks_skip_version_check_like_pytorch():
    """With hooks, the hooks own the saved value: an in-place change after packing a
    copy does not raise (PyTorch does not check versions of hooked saved tensors)."""
    def f(m):
        x = _x(m)
        a = x * 1
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = (a * a).sum()
        with m.no_grad():
            a.mul_(100)
        y.backward()
        return x.grad

    same(f)


def test_save_on_cpu():
    def f(m):
        x = _x(m)
        with m.autograd.graph.save_on_cpu(pin_memory=False):
            y = (x.sin() * x).sum()
        y.backward()
        return x.grad

    same(f)


def test_disable_saved_tensors_hooks():
    def f(m):
        with m.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    e = same_error(f)
    assert "no hooks here" in str(e)

    def g(m):
        x = _x(m)
        with m.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            y = (x * x).sum()  # no hooks registered: fine
        y.backward()
        return x.grad

    same(g)


# ----------------------------------------------------------------------------------
# the seed page's hook example (page 001, "Custom Gradient Manipulation")

SEED_HOOKS = '''
import torch
import torch.nn as nn

# Define a simple model
class GradientMonitorModel(nn.Module):
    def __init__(self):
        super(GradientMonitorModel, self).__init__()
        self.fc1 = nn.Linear(10, 5)
        self.fc2 = nn.Linear(5, 1)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = self.fc2(x)
        return x

    def register_gradient_hooks(self):
        """Register hooks to monitor/modify gradients"""
        def hook_fn(grad):
            # We could modify gradients here if needed
            print(f"Gradient statistics: min={grad.min().item():.5f}, max={grad.max().item():.5f}")

            # Example: clamp extreme values
            return torch.clamp(grad, min=-1.0, max=1.0)

        # Register hook on first layer weights
        self.fc1.weight.register_hook(hook_fn)
        return self

# Create model and register hooks
model = GradientMonitorModel().register_gradient_hooks()
with torch.no_grad():
    for p, v in zip(model.parameters(), PARAMS):
        p.copy_(torch.tensor(v))

# Training example
x = torch.tensor(XS)
target = torch.tensor(TARGET)

# Forward and backward pass
output = model(x)
loss = nn.MSELoss()(output, target)
loss.backward()

# Optimizer step
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
optimizer.step()
print(model.fc1.weight.grad.abs().max().item() <= 1.0)
print([round(v, 4) for v in model.fc1.weight.detach().reshape(-1)[:5].tolist()])
'''


def test_seed_gradient_hook_example():
    """Verbatim apart from fixed weights/inputs (the page draws them at random) and the
    printed statistics rounded to 5 digits (float32 sums differ in the last digit)."""
    rng = np.random.default_rng(0)
    params = [rng.uniform(-0.3, 0.3, s).astype(np.float32).tolist()
              for s in ((5, 10), (5,), (1, 5), (1,))]
    env = {"PARAMS": params, "XS": rng.standard_normal((5, 10)).astype(np.float32).tolist(),
           "TARGET": (10 * rng.standard_normal((5, 1))).astype(np.float32).tolist()}
    outs = []
    for use_retrograd in (False, True):
        src = textwrap.dedent(SEED_HOOKS)
        if use_retrograd:
            src = re.sub(r"^import torch$", "import retrograd as torch", src, flags=re.M)
            src = src.replace("import torch.nn as nn", "import retrograd.nn as nn")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(src, "<seed example>", "exec"), {"__name__": "__seed__", **env})
        outs.append(buf.getvalue())
    assert outs[0] == outs[1], f"torch:\n{outs[0]}\nretrograd:\n{outs[1]}"
    assert "Gradient statistics" in outs[1] and "True" in outs[1]
