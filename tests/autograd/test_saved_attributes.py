"""``grad_fn._saved_<name>`` and ``_raw_saved_<name>`` against torch 2.13, over the op
database: the names a node shows (``dir``) and their values, for every node of every
sample's graph whose name matches torch's (Note [Saved attributes] in
ops/saved_attributes.py). The names retrograd cannot give (``UNAVAILABLE``) are absent and
raise AttributeError."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pytest
import torch

import retrograd as R
from opdb import DB, build, flat, is_tensor, sample_rng
from retrograd.ops.records.saved_names import SAVED_NAMES, UNAVAILABLE

#: entries whose graphs multiply singular vectors or eigenvectors, whose signs LAPACK
#: chooses: the products' saved operands may differ in sign from torch's
_SIGNS = ("svd", "eig", "pca", "lowrank")
_ZERO_D = "a 0-d input reduced over dim 0: retrograd records no dims, torch (0,)"
#: (entry, node, attribute) where retrograd differs from torch, with the reason
KNOWN = {("linalg.cond", "LinalgInvExBackward0", "_saved_inverse"):
         "torch's cond writes into the inverse it saved (so reading it raises there); "
         "retrograd's does not",
         ("float_power", "PowBackward0", "_saved_exponent"):
         "torch's float_power converts the exponent to a float before pow; retrograd's "
         "pow keeps the number given",
         ("sum", "SumBackward1", "_saved_dim"): _ZERO_D,
         ("sum_method", "SumBackward1", "_saved_dim"): _ZERO_D,
         ("mean", "MeanBackward1", "_saved_dim"): _ZERO_D,
         ("logsumexp", "LogsumexpBackward0", "_saved_dim"): _ZERO_D}


def _roots(out) -> list:
    return [o.grad_fn for o in flat(out) if is_tensor(o) and o.grad_fn is not None]


def _pairs(tout, rout):
    """(torch node, retrograd node) pairs of the same name, walking both graphs together."""
    tr, rr = _roots(tout), _roots(rout)
    todo = list(zip(tr, rr)) if len(tr) == len(rr) else []
    seen = set()
    while todo:
        t, r = todo.pop()
        if t is None or r is None or id(t) in seen or t.name() != r.name():
            continue
        seen.add(id(t))
        yield t, r
        if len(t.next_functions) == len(r.next_functions):
            todo.extend((a[0], b[0]) for a, b in zip(t.next_functions, r.next_functions))


def _wrapped_negative(v) -> bool:
    """torch gives a negative int argument (dim=-1) as an unsigned 64-bit number."""
    if isinstance(v, tuple):
        return any(_wrapped_negative(x) for x in v)
    return isinstance(v, int) and v >= 2 ** 63


def _same(tv, rv) -> bool:
    if isinstance(tv, torch.Tensor):
        if not isinstance(rv, R.Tensor) or tuple(tv.shape) != tuple(rv.shape):
            return False
        if str(tv.dtype) != str(rv.dtype):
            return False
        a, b = tv.detach().numpy(), rv.detach().numpy()
        if a.dtype == bool or not np.issubdtype(a.dtype, np.floating):
            return np.array_equal(a, b)
        return np.allclose(a, b, rtol=1e-6, atol=1e-8, equal_nan=True)
    if isinstance(tv, tuple):
        return isinstance(rv, tuple) and len(rv) == len(tv) and all(map(_same, tv, rv))
    if isinstance(tv, bool) or tv is None or isinstance(tv, str):
        return type(rv) is type(tv) and rv == tv
    if isinstance(tv, numbers.Number):
        return type(rv) is type(tv) and rv == tv
    return False


def _saved_names(node) -> set:
    return {a for a in dir(node) if a.startswith(("_saved_", "_raw_saved_"))}


def _check_node(t, r, problems: list, entry: str = "") -> None:
    name = t.name()
    missing = {f"_saved_{a}" for a in UNAVAILABLE.get(name, "").split()}
    missing |= {"_raw" + a for a in missing}
    want = _saved_names(t) - missing
    got = _saved_names(r)
    if got != want:
        problems.append((name, "names", sorted(got ^ want)))
        return
    for a in sorted(want):
        if a.startswith("_raw_saved_"):
            continue
        try:
            tv = getattr(t, a)
        except RuntimeError as e:  # modified in place since: both refuse, with one message
            tv = e
        if _wrapped_negative(tv) or (entry, name, a) in KNOWN or (
                name == "MulBackward0" and any(k in entry for k in _SIGNS)):
            continue
        try:
            rv = getattr(r, a)
        except (AttributeError, RuntimeError) as e:
            rv = e
        if isinstance(tv, RuntimeError) or isinstance(rv, Exception):
            if not (isinstance(rv, RuntimeError) and isinstance(tv, RuntimeError)
                    and str(rv)[:80] == str(tv)[:80]):
                problems.append((name, a, f"torch {tv!r:.80} retrograd {rv!r:.80}"))
            continue
        if not _same(tv, rv):
            problems.append((name, a, f"torch {tv!r:.80} retrograd {rv!r:.80}"))


@pytest.mark.parametrize("entry", DB, ids=lambda e: e.name)
def test_saved_attributes_match_torch(entry):
    problems: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in entry.samples(sample_rng(entry.name)):
            try:
                a, k, _ = build(torch, s, "float64")
                tout = entry.fn(torch, *a, **k)
            except Exception:
                continue  # (the op database's own tests compare the errors)
            a, k, _ = build(R, s, "float64")
            rout = entry.fn(R, *a, **k)
            for t, r in _pairs(tout, rout):
                _check_node(t, r, problems, entry.name)
    assert not problems, problems[:5]


def test_the_table_names_only_nodes_and_no_name_twice():
    for name, spec in SAVED_NAMES.items():
        names = [item.partition("=")[0] for item in spec.split()]
        assert len(names) == len(set(names)), name
        assert not set(names) & set(UNAVAILABLE.get(name, "").split()), name
