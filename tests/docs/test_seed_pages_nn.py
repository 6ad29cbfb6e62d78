"""The seed pages' nn examples, run as written with ``import retrograd as torch``.

Random weights and inputs are replaced by the same fixed values in both runs (weights
through ``load_state_dict``), then the printed text must be PyTorch's: word for word,
and every number equal to float32 precision.
"""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import torch

import retrograd as R

_NUM = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def _run(code: str, lib: str, weights: dict) -> str:
    if lib == "retrograd":
        code = (code.replace("import torch.nn.utils as utils", "import retrograd.nn.utils as utils")
                .replace("import torch.nn as nn", "import retrograd.nn as nn")
                .replace("import torch.optim as optim", "import retrograd.optim as optim")
                .replace("import torch\n", "import retrograd as torch\n"))
    buf = io.StringIO()
    env = {"WEIGHTS": weights, "np": np}
    with contextlib.redirect_stdout(buf):
        exec(compile(code, f"<seed-{lib}>", "exec"), env)
    return buf.getvalue()


def _same_output(code: str, weights: dict) -> str:
    t = _run(code, "torch", weights)
    r = _run(code, "retrograd", weights)
    assert _NUM.sub("#", t) == _NUM.sub("#", r), f"torch:\n{t}\nretrograd:\n{r}"
    tn = [float(x) for x in _NUM.findall(t)]
    rn = [float(x) for x in _NUM.findall(r)]
    np.testing.assert_allclose(rn, tn, rtol=2e-6, atol=1e-7)
    return r


def _set(name):
    return (f"{name}.load_state_dict({{k: torch.tensor(v) for k, v in "
            f"WEIGHTS['{name}'].items()}})\n")


def _weights(name, make):
    torch.manual_seed(42)
    return {name: {k: v.numpy().copy() for k, v in make().state_dict().items()}}


SIMPLE_NN = '''
import torch
import torch.nn as nn
import torch.optim as optim

# Define a simple neural network
class SimpleNN(nn.Module):
    def __init__(self):
        super(SimpleNN, self).__init__()
        self.linear1 = nn.Linear(2, 3)
        self.linear2 = nn.Linear(3, 1)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.relu(self.linear1(x))
        x = self.linear2(x)
        return x

# Create a model and sample data
model = SimpleNN()
''' + _set("model") + '''
inputs = torch.tensor([[0.5, 0.3]], dtype=torch.float32)
targets = torch.tensor([[0.7]], dtype=torch.float32)

# Forward pass
outputs = model(inputs)
loss = (outputs - targets).pow(2).sum() # MSE loss

# Backward pass
loss.backward()

# Inspect gradients of model parameters
for name, param in model.named_parameters():
    print(f"Parameter: {name}, Size: {param.size()}")
    print(f"Gradient: {param.grad}")
    print("-" * 30)

# Zero gradients
optimizer = optim.SGD(model.parameters(), lr=0.01)
optimizer.zero_grad()
print(model)
'''


def test_seed_simple_nn_gradients():
    import torch.nn as tnn

    class SimpleNN(tnn.Module):
        def __init__(self):
            super().__init__()
            self.linear1 = tnn.Linear(2, 3)
            self.linear2 = tnn.Linear(3, 1)
            self.relu = tnn.ReLU()

    out = _same_output(SIMPLE_NN, _weights("model", SimpleNN))
    assert "Parameter: linear1.weight, Size: torch.Size([3, 2])" in out
    assert "Gradient: tensor(" in out


CLIPPING = '''
import torch
import torch.nn as nn
import torch.nn.utils as utils

# Define a simple model
model = nn.Sequential(
    nn.Linear(10, 5),
    nn.ReLU(),
    nn.Linear(5, 1)
)
''' + _set("model") + '''
# Sample input and target
x = torch.tensor(np.linspace(-2, 2, 30, dtype=np.float32).reshape(3, 10))
target = torch.tensor([[0.5], [-1.0], [2.0]])

# Compute loss
output = model(x)
loss = nn.MSELoss()(output, target)

# Backward pass
loss.backward()

# Before clipping
total_norm_before = 0
for p in model.parameters():
    if p.grad is not None:
        total_norm_before += p.grad.data.norm(2).item() ** 2
total_norm_before = total_norm_before ** 0.5
print(f"Total gradient norm before clipping: {total_norm_before}")

# Clip gradients by max norm
max_norm = 1.0
returned = utils.clip_grad_norm_(model.parameters(), max_norm)
print(f"clip_grad_norm_ returned: {returned}")

# After clipping
total_norm_after = 0
for p in model.parameters():
    if p.grad is not None:
        total_norm_after += p.grad.data.norm(2).item() ** 2
total_norm_after = total_norm_after ** 0.5
print(f"Total gradient norm after clipping: {total_norm_after}")
'''


def test_seed_gradient_clipping():
    import torch.nn as tnn

    weights = _weights("model", lambda: tnn.Sequential(tnn.Linear(10, 5), tnn.ReLU(),
                                                       tnn.Linear(5, 1)))
    out = _same_output(CLIPPING, weights)
    after = float(re.search(r"after clipping: (\S+)", out).group(1))
    assert abs(after - 1.0) < 1e-5


HOOKS = '''
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
            print(f"Gradient statistics: min={grad.min().item()}, max={grad.max().item()}")

            # Example: clamp extreme values
            return torch.clamp(grad, min=-1.0, max=1.0)

        # Register hook on first layer weights
        self.fc1.weight.register_hook(hook_fn)
        return self

# Create model and register hooks
model = GradientMonitorModel().register_gradient_hooks()
''' + _set("model") + '''
# Training example
x = torch.tensor(np.cos(np.arange(50, dtype=np.float32)).reshape(5, 10) * 3)
target = torch.tensor(np.sin(np.arange(5, dtype=np.float32)).reshape(5, 1))

# Forward and backward pass
output = model(x)
loss = nn.MSELoss()(output, target)
loss.backward()

# Optimizer step
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
optimizer.step()
print(model.fc1.weight.grad.abs().max())
print(model.fc1.weight)

if torch.cuda.is_available():
    print("CUDA available")
else:
    print("CUDA not available, skipping mixed precision example")
'''


def test_seed_gradient_hooks():
    import torch.nn as tnn

    class GradientMonitorModel(tnn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = tnn.Linear(10, 5)
            self.fc2 = tnn.Linear(5, 1)

    out = _same_output(HOOKS, _weights("model", GradientMonitorModel))
    assert out.startswith("Gradient statistics: min=")
    assert "CUDA not available" in out


REGULARIZATION = '''
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
''' + _set("model") + '''
x = torch.tensor(np.sin(np.arange(64, dtype=np.float32)).reshape(16, 4))
y = (x.sum(dim=1, keepdim=True) * 0.5).detach()
criterion = nn.MSELoss()
l1_lambda, l2_lambda, lr = 1e-3, 1e-2, 0.1
losses = []
for step in range(40):
    model.zero_grad()
    out = model(x)
    l1_norm = sum(p.abs().sum() for p in model.parameters())
    l2_norm = sum(p.pow(2.0).sum() for p in model.parameters())
    loss = criterion(out, y) + l1_lambda * l1_norm + l2_lambda * l2_norm
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
    losses.append(loss.item())
print(f"first {losses[0]:.6f} last {losses[-1]:.6f}")
'''


def test_l1_l2_regularization_trains_like_torch():
    import torch.nn as tnn

    weights = _weights("model", lambda: tnn.Sequential(tnn.Linear(4, 8), tnn.Tanh(),
                                                       tnn.Linear(8, 1)))
    t = _run(REGULARIZATION, "torch", weights)
    r = _run(REGULARIZATION, "retrograd", weights)
    first, last = (float(v) for v in re.findall(r"[-\d.]+", r))
    tfirst, tlast = (float(v) for v in re.findall(r"[-\d.]+", t))
    assert last < 0.5 * first
    np.testing.assert_allclose([first, last], [tfirst, tlast], rtol=1e-4)


def test_retrograd_module_alias_imports():
    assert R.nn.functional.relu is not None
    import retrograd.nn.functional as F  # noqa: F401
    import retrograd.nn.init as init  # noqa: F401
    import retrograd.nn.utils as utils  # noqa: F401
