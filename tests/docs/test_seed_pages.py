"""The code examples of the two seed pages, run with retrograd and with PyTorch.

The seed pages (shared/seeds/*.txt: "Gradient Parameter in PyTorch Backward Function"
and "PyTorch Gradients") are what retrograd reproduces first. Every example that needs
only plain tensors and autograd is below, verbatim except for the indentation the page
text lost. Each runs twice, once as written (real PyTorch) and once with
``import retrograd as torch``; the printed output must be identical, character for
character, and where PyTorch raises (several examples on the pages are wrong: a
gradient of the wrong shape, a second backward through a freed graph, grad() without
outputs) retrograd must raise the same error type with PyTorch's message as a prefix.

``torch.randn`` inputs are replaced by fixed values (the same for both runs) so the
printed numbers can be compared. Examples that need torch.nn / torch.optim or
autograd.Function are left to the tests of those modules.
"""

# ruff: noqa: E501 - the examples are the pages' code, verbatim (long lines included)
from __future__ import annotations

import contextlib
import io
import re
import textwrap

import pytest

torch = pytest.importorskip("torch")

# the values torch.manual_seed(0); torch.randn(2, 2) gives, written out
_X = "torch.tensor([[1.5410, -0.2934], [-2.1788, 0.5684]], requires_grad=True)"


def _fixed(code: str) -> str:
    return code.replace("torch.randn(2, 2, requires_grad=True)", _X)


SEEDS = {
    # --- 000: Gradient Parameter in PyTorch Backward Function --------------------
    "000_practical_example": """
import torch

# Create a tensor
x = torch.randn(2, 2, requires_grad=True)

# Perform some operations
y = x.pow(2).sum()

# Calculate gradients with a scalar loss
y.backward()

# Calculate gradients with a vector-valued loss
v = torch.tensor([1.0, 0.5], dtype=torch.float32)
y.backward(gradient=v)
""",
    "000_scalar_loss": """
import torch

# Create a tensor with requires_grad=True
x = torch.randn(2, 2, requires_grad=True)

# Perform some operations
y = x.pow(2).sum()

# Calculate gradients (default gradient is 1)
y.backward()

print(x.grad)
""",
    "000_vector_valued_loss": """
import torch

# Create a tensor with requires_grad=True
x = torch.randn(2, 2, requires_grad=True)

# Perform some operations
y = x.pow(2)

# Specify a gradient vector
v = torch.tensor([0.1, 0.5, 0.2, 0.3])

# Calculate gradients with the specified gradient vector
y.backward(gradient=v)

print(x.grad)
""",
    "000_autograd_grad": """
import torch

x = torch.randn(2, 2, requires_grad=True)
y = x.pow(2).sum()

# Calculate gradients using torch.autograd.grad()
grads = torch.autograd.grad(outputs=y, inputs=x)

print(grads)
""",
    "000_higher_order": """
import torch

x = torch.randn(2, 2, requires_grad=True)
y = x.pow(2).sum()

# Calculate second-order derivatives
second_derivatives = torch.autograd.grad(grad_outputs=torch.ones_like(y), inputs=x, create_graph=True)[0]
second_derivatives = torch.autograd.grad(outputs=second_derivatives, inputs=x)[0]

print(second_derivatives)
""",
    # --- 001: PyTorch Gradients ---------------------------------------------------
    "001_basic": """
import torch

# Create a tensor with requires_grad=True
x = torch.tensor([2.0], requires_grad=True)
y = torch.tensor([3.0], requires_grad=True)

# Define a simple function z = x^2 + y^3
z = x**2 + y**3

# Compute gradients by backpropagation
z.backward()

# Access the gradients
print(f"dz/dx: {x.grad}") # Should be 2x = 2*2 = 4
print(f"dz/dy: {y.grad}") # Should be 3y^2 = 3*3^2 = 27
""",
    "001_accumulation": """
import torch

# Create a tensor
x = torch.tensor([1.0], requires_grad=True)

# First function: y = x^2
y = x**2
y.backward()

print(f"Gradient after first backward: {x.grad}")

# Second function: z = 2*x
z = 2 * x
z.backward()

print(f"Gradient after second backward: {x.grad}") # This will be 2 + 2 = 4

# Reset gradients
x.grad.zero_()
print(f"Gradient after reset: {x.grad}")
""",
    "001_detach": """
import torch

# Create tensors
x = torch.tensor([2.0], requires_grad=True)
y = x * 3

# Detach y from the computation graph
z = y.detach()
z = z * 2

# Backward pass
z.backward()

# x.grad will be None because we detached the computation
print(f"x.grad: {x.grad}") # None or 0

# But if we don't detach:
y = x * 3
z = y * 2
z.backward()
print(f"x.grad after normal backward: {x.grad}") # Should be 6
""",
    "001_no_grad": """
import torch

x = torch.tensor([2.0], requires_grad=True)

# Using torch.no_grad() context manager
with torch.no_grad():
    y = x * 3
    z = y * 2
    print(f"Does z require gradients? {z.requires_grad}")

# Outside the context, gradient tracking is re-enabled
y = x * 3
z = y * 2
print(f"Does z require gradients now? {z.requires_grad}")
""",
    "001_non_scalar": """
import torch

# Create a tensor
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)

# Vector function: y = x^2
y = x**2

# Option 1: Sum to scalar
z = y.sum()
z.backward()
print(f"Gradient when using sum: {x.grad}")

# Reset gradients
x.grad.zero_()

# Option 2: Specify gradient for backward
y.backward(torch.ones_like(y))
print(f"Gradient with explicit grad_outputs: {x.grad}")
""",
    "001_mixed_precision_guard": """
import torch

# Make sure you have a compatible GPU
if torch.cuda.is_available():
    # Enable automatic mixed precision
    scaler = torch.cuda.amp.GradScaler()

    # Define model and optimizer (simplified)
    model = torch.nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    # In training loop:
    for epoch in range(1):
        # Forward pass with autocast
        with torch.cuda.amp.autocast():
            x = torch.randn(3, 10, device='cuda')
            output = model(x)
            loss = output.mean()

        # Backward pass with scaled gradients
        scaler.scale(loss).backward()

        # Unscale gradients and clip if needed
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)

        # Update weights and scaler
        scaler.step(optimizer)
        scaler.update()

    print("Successfully ran mixed precision training example")
else:
    print("CUDA not available, skipping mixed precision example")
""",
    # Exercise 1 of page 001, written out: f(x) = x^3 - 4x + 2 at x = 3, and its
    # higher derivatives (the page's "higher order" topic)
    "001_exercise_cubic": """
import torch

x = torch.tensor(3.0, requires_grad=True)
f = x**3 - 4*x + 2
f.backward()
print(f"f'(3) = {x.grad}")

x = torch.tensor(3.0, requires_grad=True)
f = x**3 - 4*x + 2
d1, = torch.autograd.grad(f, x, create_graph=True)
d2, = torch.autograd.grad(d1, x, create_graph=True)
d3, = torch.autograd.grad(d2, x)
print(d1, d2, d3)
""",
}

# What PyTorch does with each example: "ok", or the error it raises (the page is wrong)
EXPECTED = {
    "000_practical_example": "Mismatch in shape",  # gradient (2,) for a scalar output
    "000_vector_valued_loss": "Mismatch in shape",  # gradient (4,) for a (2, 2) output
    "000_higher_order": "TypeError",  # grad() called without outputs
    "001_detach": "element 0 of tensors does not require grad",  # z is detached
    "001_non_scalar": "Trying to backward through the graph a second time",
}


def _run(code: str, use_retrograd: bool):
    src = _fixed(textwrap.dedent(code))
    if use_retrograd:
        src = re.sub(r"^import torch$", "import retrograd as torch", src, flags=re.M)
    out = io.StringIO()
    err = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(src, "<seed example>", "exec"), {"__name__": "__seed__"})
        except Exception as e:
            err = e
    return out.getvalue(), err


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_example(name):
    code = SEEDS[name]
    t_out, t_err = _run(code, use_retrograd=False)
    r_out, r_err = _run(code, use_retrograd=True)
    expected = EXPECTED.get(name, "ok")
    # the page's behaviour under PyTorch is what we think it is
    if expected == "ok":
        assert t_err is None, f"torch raised {t_err!r}"
    elif expected == "TypeError":
        assert isinstance(t_err, TypeError), t_err
    else:
        assert t_err is not None and str(t_err).startswith(expected), t_err
    assert r_out == t_out, f"printed output differs:\n--- retrograd\n{r_out}\n--- torch\n{t_out}"
    if t_err is None:
        assert r_err is None, f"retrograd raised {r_err!r}"
        return
    assert r_err is not None, f"torch raised {t_err!r}; retrograd did not"
    assert isinstance(r_err, type(t_err)), f"retrograd raised {r_err!r}, torch {t_err!r}"
    if not isinstance(t_err, TypeError):  # Python's own argument errors name the function
        assert str(r_err).startswith(str(t_err).split(" Hint:")[0].rstrip(".")), (
            f"retrograd: {r_err}\ntorch: {t_err}")


def test_seed_examples_print_something():
    """The comparisons above are not vacuous: the examples print tensors."""
    out, err = _run(SEEDS["001_non_scalar"], use_retrograd=True)
    assert "tensor([[2., 4.]" in out and err is not None
    out, err = _run(SEEDS["000_scalar_loss"], use_retrograd=True)
    assert err is None and out.startswith("tensor([[ 3.0820, -0.5868]")
