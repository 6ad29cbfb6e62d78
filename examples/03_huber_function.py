"""Exercise 3: a custom autograd Function for the Huber loss, checked with gradcheck.

    huber(r) = r^2 / 2                 if |r| <= delta
             = delta * (|r| - delta/2)  otherwise          (r = input - target)

    d huber / d r = r                  if |r| <= delta
                  = delta * sign(r)    otherwise

``Huber.forward`` saves its inputs; ``Huber.backward`` returns the gradient for the
input and the target (minus the same), and ``None`` for ``delta``. The backward is
written with tensor ops from saved inputs, so it is itself differentiable and
``gradgradcheck`` passes too. The values and gradients are compared with the built-in
``torch.nn.functional.huber_loss``.

Run: ``python examples/03_huber_function.py``.
"""

import argparse

import retrograd as torch


class Huber(torch.autograd.Function):
    """Mean Huber loss of ``input`` against ``target``."""

    @staticmethod
    def forward(ctx, input, target, delta=1.0):
        # save the inputs, not the residual: the residual made here has no history
        # (forward runs without recording), so a backward built on it could not be
        # differentiated again; recomputing it in backward keeps double backward exact
        ctx.save_for_backward(input, target)
        ctx.delta = delta
        r = input - target
        a = r.abs()
        loss = torch.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))
        return loss.mean()

    @staticmethod
    def backward(ctx, grad_output):
        input, target = ctx.saved_tensors
        r = input - target
        d = ctx.delta
        grad_r = torch.where(r.abs() <= d, r, d * torch.sign(r)) / r.numel()
        grad_r = grad_r * grad_output
        return grad_r, -grad_r, None


def huber(input, target, delta=1.0):
    return Huber.apply(input, target, delta)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=8)
    args = p.parse_args(argv)
    torch.manual_seed(0)
    # float64 for the numerical check; residuals kept away from |r| = delta, where the
    # second derivative jumps and finite differences would straddle the kink
    x = torch.randn(args.n, dtype=torch.float64) * 2
    x = torch.where((x.abs() - 1.0).abs() < 0.1, x + 0.3, x).requires_grad_()
    t = torch.zeros(args.n, dtype=torch.float64, requires_grad=True)

    ok1 = torch.autograd.gradcheck(huber, (x, t))
    ok2 = torch.autograd.gradgradcheck(huber, (x, t))
    print(f"gradcheck: {ok1}, gradgradcheck: {ok2}")

    ours = huber(x, t)
    ref = torch.nn.functional.huber_loss(x, t, delta=1.0)
    (g_ours,) = torch.autograd.grad(ours, x)
    (g_ref,) = torch.autograd.grad(ref, x)
    print(f"loss: custom {ours.item():.6f}, built-in {ref.item():.6f}")
    print(f"max |grad difference| vs built-in: {(g_ours - g_ref).abs().max().item():.2e}")
    print(f"graph: {ours.grad_fn.name()} <- "
          f"{[n.name() for n, _ in ours.grad_fn.next_functions if n is not None]}")
    return {"gradcheck": ok1, "gradgradcheck": ok2, "loss": ours.item(), "ref": ref.item(),
            "grad": g_ours.tolist(), "grad_ref": g_ref.tolist()}


if __name__ == "__main__":
    main()
