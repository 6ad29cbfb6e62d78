"""linspace, logspace and arange give PyTorch's values bit for bit (Notes [linspace as
PyTorch computes it], [logspace ...] and [arange ...] in _functions/creation.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as rg

_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8"]


def _cases():
    rng = np.random.default_rng(7)
    fixed = [(0, 1, 7), (-3.3, 2.7, 11), (0, 1, 100), (2, -3, 64), (0, 5, 0), (1, 1, 1),
             (0, 100, 1000), (-7, 9, 33), (0.1, 0.7, 17), (0, 1, 40000)]
    return fixed + [(float(rng.normal() * 5), float(rng.normal() * 5),
                     int(rng.integers(2, 2000))) for _ in range(40)]


def _np(t):
    return t.float().numpy() if t.dtype in (torch.bfloat16, rg.bfloat16) else t.numpy()


@pytest.mark.parametrize("dtype", _DTYPES)
def test_linspace_values_are_torchs(dtype):
    for a, b, n in _cases():
        if dtype.startswith("int"):
            a, b = round(a), round(b)
        t = torch.linspace(a, b, n, dtype=getattr(torch, dtype))
        r = rg.linspace(a, b, n, dtype=getattr(rg, dtype))
        assert str(r.dtype) == str(t.dtype)
        np.testing.assert_array_equal(_np(r), _np(t), err_msg=f"{dtype} {a} {b} {n}")


def test_linspace_default_dtype_and_errors():
    np.testing.assert_array_equal(rg.linspace(-1.5, 2, 9).numpy(), torch.linspace(-1.5, 2, 9))
    for m in (torch, rg):
        with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
            m.linspace(0, 1, -1)


@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_arange_values_are_torchs(dtype):
    """Note [arange as PyTorch computes it]: vector pairs and a scalar tail, in double."""
    rng = np.random.default_rng(3)
    cases = [(0, 1, 0.1), (-3.3, 2.7, 0.3), (0, 10, 0.7), (1.5, 100.2, 1.1), (0, 1, 1 / 3),
             (0.05, 7.3, 0.011), (5, -3, -0.37), (0, 5000, 0.37), (0, 1, 0.25), (1.5,)]
    for _ in range(30):
        start = float(rng.normal() * 3)
        cases.append((start, start + float(abs(rng.normal()) * 3 + 1),
                      float(abs(rng.normal()) * 0.1 + 0.001)))
    for args in cases:
        t = torch.arange(*args, **({} if dtype is None else {"dtype": getattr(torch, dtype)}))
        r = rg.arange(*args, **({} if dtype is None else {"dtype": getattr(rg, dtype)}))
        assert str(r.dtype) == str(t.dtype)
        np.testing.assert_array_equal(r.numpy(), t.numpy(), err_msg=f"{args} {dtype}")


def test_arange_refuses_a_step_away_from_the_end():
    for m in (torch, rg):
        with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent"):
            m.arange(5, 1, 0.5)
        assert m.arange(2, 2, 1).numel() == 0


@pytest.mark.parametrize("dtype", [None, "float32", "float64", "float16", "bfloat16", "int64"])
def test_logspace_values_are_torchs(dtype):
    """Note [logspace as PyTorch computes it]: the C library's pow of each exponent."""
    rng = np.random.default_rng(5)
    cases = [(0, 2, 5, 10.0), (-1, 3, 11, 10.0), (0, 1, 100, 10.0), (0.5, 2.5, 33, 2.0),
             (-2, 2, 17, 2.718281828459045), (0, 3, 1, 10.0), (1, 2, 0, 10.0)]
    cases += [(float(rng.normal()), float(rng.normal() + 2), int(rng.integers(2, 300)),
               float(abs(rng.normal()) + 1.5)) for _ in range(30)]
    for a, b, n, base in cases:
        t = torch.logspace(a, b, n, base=base,
                           **({} if dtype is None else {"dtype": getattr(torch, dtype)}))
        r = rg.logspace(a, b, n, base=base,
                        **({} if dtype is None else {"dtype": getattr(rg, dtype)}))
        assert str(r.dtype) == str(t.dtype)
        np.testing.assert_array_equal(_np(r), _np(t), err_msg=f"{a} {b} {n} {base} {dtype}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_with_out_matches_torch(dtype):
    for args in ((0.5, 2.0, (5,)), ("mean", 1.5)):
        outs = []
        for m in (torch, rg):
            out = m.empty(4 if args[0] == "mean" else 5, dtype=getattr(m, dtype))
            m.manual_seed(3)
            if args[0] == "mean":
                r = m.normal(m.arange(4, dtype=getattr(m, dtype)), args[1], out=out)
            else:
                r = m.normal(*args, out=out)
            assert r is out
            outs.append(out.numpy().copy())
        np.testing.assert_array_equal(outs[1], outs[0])
