"""The ``retrograd`` command: ``retrograd demo`` shows gradients at work.

Example:
    >>> from retrograd.__main__ import build_parser
    >>> build_parser().parse_args(["demo"]).command
    'demo'
"""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="retrograd", description="retrograd: PyTorch's autograd "
                                "on NumPy. Subcommands show gradients at work.")
    sub = p.add_subparsers(dest="command")
    sub.add_parser("demo", help="walk through gradients: backward, vᵀJ, accumulation, "
                   "detach/no_grad, higher order")
    return p


def demo() -> int:
    """Print the core gradient ideas with real numbers (no extra dependencies)."""
    import retrograd as torch

    print("retrograd demo: gradients, step by step\n")
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([3.0], requires_grad=True)
    z = x ** 2 + y ** 3
    z.backward()
    print("z = x**2 + y**3 at x=2, y=3")
    print(f"  dz/dx = {x.grad}   (2x = 4)")
    print(f"  dz/dy = {y.grad}   (3y^2 = 27)")

    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x ** 2
    v = torch.tensor([[1.0, 0.5], [0.1, 0.0]])
    y.backward(gradient=v)
    print("\nvector output y = x**2, backward(gradient=v) computes vᵀJ = v * 2x:")
    print(f"  x.grad = {x.grad}")

    x = torch.tensor([1.0], requires_grad=True)
    (x ** 2).backward()
    (2 * x).backward()
    print(f"\ngradients accumulate: after d(x^2) and d(2x) at x=1, x.grad = {x.grad}")

    x = torch.tensor([3.0], requires_grad=True)
    f = x ** 3 - 4 * x + 2
    (d1,) = torch.autograd.grad(f, x, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x, create_graph=True)
    (d3,) = torch.autograd.grad(d2, x)
    print(f"\nf(x) = x^3 - 4x + 2 at x=3: f' = {d1.item():g}, f'' = {d2.item():g}, "
          f"f''' = {d3.item():g}")
    with torch.no_grad():
        w = x * 2
    print(f"\nunder no_grad(): (x * 2).requires_grad = {w.requires_grad}")
    print(f"graph of f: {f.grad_fn.name()} <- "
          + ", ".join(n.name() for n, _ in f.grad_fn.next_functions if n is not None))
    return 0


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        return demo()
    build_parser().print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
