"""``retrograd tour``: the core gradient ideas, step by step, with real numbers.

Each step is a short piece of autograd code and what it prints. The steps are user
code for the sites retrograd records (Note [Tour sites]), so ``explain_grad`` names the
tour's own lines. On a terminal the tour waits for Enter between steps.

Example:
    >>> from retrograd._cli.tour import tour
    >>> tour(interactive=False)  # doctest: +ELLIPSIS
    retrograd tour: gradients, step by step
    ...
    0
"""

from __future__ import annotations

import sys

__all__ = ["tour", "STEPS"]


def _fmt(t) -> str:
    """A tensor's values on one line, e.g. ``[[1.0, 2.0], [3.0, 4.0]]``."""
    return str([[round(v, 4) for v in row] for row in t.tolist()] if t.dim() == 2
               else [round(v, 4) for v in t.tolist()])


def step_backward(torch) -> None:
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([3.0], requires_grad=True)
    z = x ** 2 + y ** 3
    z.backward()
    print("1. backward() fills .grad of the leaves")
    print("   z = x**2 + y**3 at x = 2, y = 3")
    print(f"   dz/dx = x.grad = {x.grad.item():g}   (2x = 4)")
    print(f"   dz/dy = y.grad = {y.grad.item():g}   (3y^2 = 27)")


def step_vjp(torch) -> None:
    values = [[1.0, 2.0], [3.0, 4.0]]
    x = torch.tensor(values, requires_grad=True)
    v = torch.tensor([[1.0, 0.5], [0.1, 0.0]])
    y = x ** 2
    y.backward(gradient=v)
    print("2. a vector output needs a vector: backward(gradient=v) computes vᵀJ")
    print("   y = x**2, elementwise, so J is diagonal with 2x and vᵀJ = v * 2x")
    print(f"   x        = {values}")
    print(f"   v        = {_fmt(v)}")
    print(f"   v * 2x   = {_fmt(v * 2 * torch.tensor(values))}")
    print(f"   x.grad   = {_fmt(x.grad)}")


def step_accumulate(torch) -> None:
    x = torch.tensor([1.0], requires_grad=True)
    (x ** 2).backward()
    first = x.grad.item()
    (2 * x).backward()
    print("3. gradients accumulate: each backward() adds to .grad")
    print(f"   at x = 1: after d(x^2)/dx, x.grad = {first:g}; after d(2x)/dx too, "
          f"x.grad = {x.grad.item():g}   (2 + 2)")
    print("   (that is why training loops call optimizer.zero_grad())")


def step_higher_order(torch) -> None:
    x = torch.tensor([3.0], requires_grad=True)
    f = x ** 3 - 4 * x + 2
    (d1,) = torch.autograd.grad(f, x, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x, create_graph=True)
    (d3,) = torch.autograd.grad(d2, x)
    print("4. create_graph=True makes the gradient differentiable again")
    print(f"   f(x) = x^3 - 4x + 2 at x = 3: f' = {d1.item():g}, f'' = {d2.item():g}, "
          f"f''' = {d3.item():g}   (3x^2 - 4 = 23, 6x = 18, 6)")
    print(f"   graph of f: {f.grad_fn.name()} <- "
          + ", ".join(n.name() for n, _ in f.grad_fn.next_functions if n is not None))


def step_no_grad(torch) -> None:
    x = torch.tensor([3.0], requires_grad=True)
    with torch.no_grad():
        w = x * 2
    print("5. no_grad() records nothing: values computed inside carry no gradient")
    print(f"   under no_grad(): w = x * 2 gives w.requires_grad = {w.requires_grad}")
    why = str(torch.explain_grad(w, name="w")).splitlines()[0]
    print("   explain_grad(w) says why:")
    print("   " + why)


STEPS = [step_backward, step_vjp, step_accumulate, step_higher_order, step_no_grad]


# Note [Tour sites]
# retrograd records the first line outside its own package as the source of a node or
# a cut (Note [User sites] in _graph/node.py). The tour lives in the package but is
# the user's code here, so this file is named user code (as the demo's models are,
# Note [Demo sites]); otherwise the site would be the console-script launcher.

def tour(interactive: bool | None = None) -> int:
    """Print the core gradient ideas with real numbers (no extra dependencies).

    ``interactive``: wait for Enter between steps; by default only when both standard
    input and output are a terminal.

    Example:
        >>> from retrograd._cli.tour import tour
        >>> tour(interactive=False)  # doctest: +ELLIPSIS
        retrograd tour: gradients, step by step
        ...
           x        = [[1.0, 2.0], [3.0, 4.0]]
        ...
        0
    """
    import retrograd as torch

    from .demo_models import as_user_code

    as_user_code(__file__)
    if interactive is None:
        interactive = _tty(sys.stdin) and _tty(sys.stdout)
    print("retrograd tour: gradients, step by step")
    for i, step in enumerate(STEPS):
        print()
        step(torch)
        if interactive and i + 1 < len(STEPS):
            try:
                input("   [Enter: next step, Ctrl-C: stop] ")
            except EOFError:
                interactive = False
    return 0


def _tty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
