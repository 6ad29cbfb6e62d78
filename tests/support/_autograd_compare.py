"""Helpers for the autograd toolkit tests: run one scenario with torch and retrograd, compare.

A scenario is a function ``f(m)`` of the module (``torch`` or ``retrograd``); it returns
a (nested) structure of tensors, numbers, strings and None. ``same(f)`` runs it with
both and checks the results agree: shapes, dtypes, ``requires_grad`` and values.
``same_error(f)`` checks both raise the same exception type, torch's message being a
prefix of retrograd's (retrograd adds the cause and the fix after it).
"""

from __future__ import annotations

import numpy as np
import torch

import retrograd

MODULES = (torch, retrograd)


def to_np(t) -> np.ndarray:
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.asarray(t.numpy())


def is_tensor(x) -> bool:
    return isinstance(x, (torch.Tensor, retrograd.Tensor))


def assert_same(r, t, where="result", rtol=1e-6, atol=1e-8, check_rg=True) -> None:
    """``r`` (retrograd) matches ``t`` (torch)."""
    if is_tensor(t):
        assert is_tensor(r), f"{where}: torch gave a tensor, retrograd {r!r}"
        assert tuple(r.shape) == tuple(t.shape), f"{where}: shape {tuple(r.shape)} vs " \
                                                 f"{tuple(t.shape)}"
        assert str(r.dtype) == str(t.dtype), f"{where}: dtype {r.dtype} vs {t.dtype}"
        if check_rg:
            assert r.requires_grad == t.requires_grad, \
                f"{where}: requires_grad {r.requires_grad} vs {t.requires_grad}"
        np.testing.assert_allclose(to_np(r), to_np(t), rtol=rtol, atol=atol, err_msg=where)
        return
    if isinstance(t, (tuple, list)):
        assert isinstance(r, (tuple, list)) and len(r) == len(t), f"{where}: {r!r} vs {t!r}"
        for k, (a, b) in enumerate(zip(r, t)):
            assert_same(a, b, f"{where}[{k}]", rtol, atol, check_rg)
        return
    if isinstance(t, dict):
        assert isinstance(r, dict) and r.keys() == t.keys(), f"{where}: {r!r} vs {t!r}"
        for k in t:
            assert_same(r[k], t[k], f"{where}[{k!r}]", rtol, atol, check_rg)
        return
    if isinstance(t, float):
        assert abs(r - t) <= atol + rtol * abs(t), f"{where}: {r} vs {t}"
        return
    assert r == t, f"{where}: {r!r} vs {t!r}"


def same(f, rtol=1e-6, atol=1e-8, check_rg=True):
    """Run ``f`` with torch and with retrograd; return retrograd's result after comparing."""
    t = f(torch)
    r = f(retrograd)
    assert_same(r, t, rtol=rtol, atol=atol, check_rg=check_rg)
    return r


def same_error(f, prefix_only=True):
    """Both raise the same exception type; torch's message starts retrograd's."""
    errs = []
    for m in MODULES:
        try:
            f(m)
        except Exception as e:
            errs.append(e)
        else:
            errs.append(None)
    te, re_ = errs
    assert te is not None, "torch did not raise"
    assert re_ is not None, f"torch raised {te!r}; retrograd did not"
    assert isinstance(re_, type(te)) or (  # e.g. GradcheckError: same name, own class
        type(re_).__name__ == type(te).__name__ and isinstance(re_, type(te).__mro__[1])), \
        f"retrograd raised {re_!r}, torch {te!r}"
    if prefix_only:
        head = str(te).split(" Hint:")[0].split("\n")[0].rstrip(".")
        assert str(re_).startswith(head), f"retrograd: {re_}\ntorch: {te}"
    return re_


def tensor(m, arr, **kw):
    return m.tensor(np.asarray(arr), **kw)
