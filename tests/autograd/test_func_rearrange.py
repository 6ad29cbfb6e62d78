"""torch.func.rearrange (einops patterns) against torch: values, shapes, errors, grads."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as R

X = np.arange(2 * 6 * 4 * 1, dtype=np.float64).reshape(2, 6, 4, 1)

OK = [
    ("b h w c -> b h w c", {}), ("b h w c -> (b h) w c", {}), ("b h w c -> h (b w) c", {}),
    ("b h w c -> b c h w", {}), ("b (h1 h2) w c -> b h1 h2 w c", {"h1": 2}),
    ("b (h1 h2) w c -> b h2 h1 w c", {"h2": 3}), ("b h w c -> b (c h w)", {}),
    ("b h w 1 -> b h w", {}), ("... w c -> ... c w", {}), ("b ... c -> (b ...) c", {}),
    ("b ... -> b (...)", {}), ("... -> ...", {}), ("b h w c -> b (h w c) 1 1", {}),
    ("b (h w) w2 c -> (w h) b w2 c", {"w": 3}), ("b h w c -> (w b) (h c)", {}),
]

BAD = [
    ("b h w c -> b h w", {}), ("b h w -> b h w", {}), ("b h w c", {}),
    ("b h w c -> b h w c", {"z": 2}), ("b h w c -> b h w 2 c", {}), ("b h w. c -> b h w c", {}),
    ("b ((h) w c -> b h w c", {}), ("b h w c) -> b", {}), ("b h w c -> b h w (c", {}),
    ("b h h c -> b h c", {}), ("b h _w c -> b h _w c", {}), ("b h w c -> ... b h w c", {}),
    ("(b ...) c -> b c", {}), ("b h w c -> b h w c", {"h": 2.0}), ("b h w c -> b h w $", {}),
    ("b h w 0 -> b h w", {}), ("a b c d e -> a", {}),
]


def _run(lib, pattern, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.func.rearrange(lib.tensor(X), pattern, **kw)


@pytest.mark.parametrize("pattern,kw", OK)
def test_rearrange_matches_torch(pattern, kw):
    t, r = _run(torch, pattern, kw), _run(R, pattern, kw)
    assert tuple(r.shape) == tuple(t.shape)
    np.testing.assert_array_equal(r.numpy(), t.numpy())


@pytest.mark.parametrize("pattern,kw", BAD)
def test_rearrange_errors_match_torch(pattern, kw):
    errs = []
    for lib in (torch, R):
        with pytest.raises(Exception) as info:
            _run(lib, pattern, kw)
        errs.append(info.value)
    t, r = errs
    assert type(r) is type(t)
    # (sets in messages print in hash order)
    assert str(r).split(": {")[0] == str(t).split(": {")[0]


def test_rearrange_stacks_sequences_and_is_differentiable():
    xs = [R.ones(2, 3, requires_grad=True), R.zeros(2, 3, requires_grad=True)]
    out = R.func.rearrange(xs, "n a b -> a (n b)")
    t = torch.func.rearrange([torch.ones(2, 3), torch.zeros(2, 3)], "n a b -> a (n b)")
    np.testing.assert_array_equal(out.detach().numpy(), t.numpy())
    (out * R.arange(6.)).sum().backward()
    np.testing.assert_array_equal(xs[1].grad.numpy(), [[3, 4, 5], [3, 4, 5]])


def test_rearrange_sizes_that_cannot_be_inferred_raise_clearly():
    x = R.tensor(X)
    with pytest.raises(ValueError, match="cannot infer the sizes of"):
        R.func.rearrange(x, "b (h w) w2 c -> b h w w2 c")
    with pytest.raises(ValueError, match="has size 6, which"):
        R.func.rearrange(x, "b (h w) w2 c -> b h w w2 c", h=4)
