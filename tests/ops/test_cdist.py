"""torch.cdist beyond the op database (tests/support/opdb_cdist_polynomials.py): PyTorch's
errors, the second derivative (none on the direct kernel, as PyTorch; the matrix-product
path's equals PyTorch's), the graph of the matrix-product path, and autocast (a float32 op
on PyTorch's CPU list)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
from _autograd_compare import same_error

torch = pytest.importorskip("torch")

_MM = "use_mm_for_euclid_dist"


@pytest.mark.parametrize("call", [
    lambda m: m.cdist(m.ones(3), m.ones(3, 3)),
    lambda m: m.cdist(m.ones(3, 3), m.ones(3)),
    lambda m: m.cdist(m.ones(3, 4), m.ones(3, 5)),
    lambda m: m.cdist(m.ones(3, 4), m.ones(3, 4), p=-1),
    lambda m: m.cdist(m.ones(3, 4), m.ones(3, 4), p=float("nan")),
    lambda m: m.cdist(m.ones(3, 4), m.ones(3, 4), compute_mode="foo"),
    lambda m: m.cdist(m.ones(3, 4), m.ones(3, 4), compute_mode=None),
    lambda m: m.cdist(m.ones(3, 4), m.ones(3, 4, dtype=m.float64)),
    lambda m: m.cdist(m.ones(3, 4, dtype=m.int32), m.ones(3, 4)),
    lambda m: m.cdist(m.ones(3, 4), m.ones(3, 4, dtype=m.int32)),
    lambda m: m.cdist(m.ones(2, 3, 4), m.ones(3, 3, 4)),
    lambda m: m.cdist(m.ones(3, 4, dtype=m.bfloat16), m.ones(3, 4, dtype=m.bfloat16)),
    lambda m: m.cdist(m.ones(3, 4, dtype=m.float16), m.ones(3, 4, dtype=m.float16), p=3),
    lambda m: m.cdist(m.ones(3, 4, dtype=m.bfloat16), m.ones(3, 4), compute_mode=_MM),
], ids=["x1-1d", "x2-1d", "columns", "negative-p", "nan-p", "mode", "mode-none", "dtypes",
        "int-x1", "int-x2", "batch", "bfloat16", "float16", "mm-dtypes"])
def test_errors_match_torch(call):
    same_error(call)


def test_no_double_backward_on_the_direct_kernel():
    for p in (1.5, 2.0):
        def second(m, p=p):
            x = m.tensor(np.arange(6.0).reshape(3, 2) / 5, requires_grad=True)
            y = m.tensor(np.ones((2, 2)), requires_grad=True)
            (g,) = m.autograd.grad(m.cdist(x, y, p).sum(), x, create_graph=True)
            assert g.grad_fn.name() == "CdistBackwardBackward0"
            g.sum().backward()
        same_error(second)


def _mm_second(m):
    rng = np.random.default_rng(3)
    x = m.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    y = m.tensor(rng.standard_normal((4, 4)), requires_grad=True)
    d = m.cdist(x, y, compute_mode=_MM)
    gx, gy = m.autograd.grad((d * d.detach()).sum(), (x, y), create_graph=True)
    hx, hy = m.autograd.grad((gx ** 2).sum() + gy.sum(), (x, y))
    return [d, gx, gy, hx, hy]


def test_mm_path_second_derivatives_match_torch():
    for r, t in zip(_mm_second(R), _mm_second(torch)):
        np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-9,
                                   atol=1e-10)


def _graph(fn):
    out = []
    todo = [(fn, 0)]
    while todo:
        f, depth = todo.pop()
        out.append((depth, f.name() if hasattr(f, "name") else type(f).__name__))
        todo.extend((g, depth + 1) for g, _ in reversed(f.next_functions) if g is not None)
    return out


@pytest.mark.parametrize("shapes", [((3, 2), (4, 2)), ((2, 3, 2), (4, 2)),
                                    ((2, 1, 3, 2), (3, 4, 2)), ((1, 3, 2), (4, 2))])
def test_mm_path_graph_is_torchs(shapes):
    def graph(m):
        x = m.ones(*shapes[0], requires_grad=True)
        y = m.ones(*shapes[1], requires_grad=True)
        return _graph(m.cdist(x, y, compute_mode=_MM).grad_fn)
    assert graph(R) == graph(torch)


@pytest.mark.parametrize("dt", ["bfloat16", "float32"])
@pytest.mark.parametrize("mode", [_MM, "donot_use_mm_for_euclid_dist"])
def test_autocast_computes_in_float32(dt, mode):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))

    def run(m):
        with m.autocast("cpu"):
            out = m.cdist(m.tensor(a).to(getattr(m, dt)), m.tensor(b).to(getattr(m, dt)),
                          compute_mode=mode)
        return out

    r, t = run(R), run(torch)
    assert str(r.dtype) == str(t.dtype) == "torch.float32"
    np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)


def test_mm_path_in_half_precision():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    r, t = (m.cdist(m.tensor(a).half(), m.tensor(b).half(), compute_mode=_MM)
            for m in (R, torch))
    assert str(r.dtype) == str(t.dtype)
    np.testing.assert_allclose(r.float().numpy(), t.float().numpy(), rtol=2e-3, atol=2e-3)
