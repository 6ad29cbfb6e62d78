"""Exercise 1: the gradient of f(x) = x^3 - 4x + 2 at x = 3, and its higher derivatives.

    f'(x)   = 3x^2 - 4   -> 23 at x = 3
    f''(x)  = 6x         -> 18
    f'''(x) = 6          ->  6

It also shows the two ways to ask for a gradient (``backward()`` filling ``x.grad``,
and ``torch.autograd.grad`` returning it), and the ``gradient`` argument of
``backward()`` for a vector output: the vector-Jacobian product vᵀJ.

Run: ``python examples/01_cubic_gradient.py`` (the code is PyTorch code: replace the
import with ``import torch`` and it prints the same numbers).
"""

import argparse

import retrograd as torch


def f(x):
    return x ** 3 - 4 * x + 2


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--x", type=float, default=3.0)
    args = p.parse_args(argv)

    # 1. backward() accumulates df/dx into x.grad
    x = torch.tensor(args.x, requires_grad=True)
    y = f(x)
    y.backward()
    print(f"f({args.x:g}) = {y.item():g}")
    print(f"f'({args.x:g}) = {x.grad.item():g}   (3x^2 - 4)")

    # 2. autograd.grad with create_graph=True: the derivative is itself differentiable
    x = torch.tensor(args.x, requires_grad=True)
    (d1,) = torch.autograd.grad(f(x), x, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x, create_graph=True)
    (d3,) = torch.autograd.grad(d2, x)
    print(f"f'' = {d2.item():g}   (6x),  f''' = {d3.item():g}   (6)")

    # 3. a vector of points: backward(gradient=v) computes vᵀJ; with v = ones it is f'
    xs = torch.tensor([-2.0, 0.0, 1.0, 3.0], requires_grad=True)
    ys = f(xs)
    ys.backward(gradient=torch.ones_like(ys))
    print(f"f' at {xs.detach().tolist()} = {xs.grad.tolist()}")

    # 4. Newton's method on f'(x) = 0 with the second derivative: the local minimum
    x = torch.tensor(1.0, requires_grad=True)
    for _ in range(6):
        (g,) = torch.autograd.grad(f(x), x, create_graph=True)
        (h,) = torch.autograd.grad(g, x)
        with torch.no_grad():
            x -= g / h
    print(f"Newton: f'(x) = 0 at x = {x.item():.6f}  (exact: 2/sqrt(3) = "
          f"{2 / 3 ** 0.5:.6f})")
    return {"grad": d1.item(), "second": d2.item(), "third": d3.item(),
            "vector_grad": xs.grad.tolist(), "minimum": x.item()}


if __name__ == "__main__":
    main()
