"""Misuse sweep: every op-database entry called with wrong arguments in torch and retrograd.

Each entry's first samples are mutated (a tensor argument with its last dim 2 longer,
two leading dims more, 0-d, empty, int64 or bool instead of float, an int64 index filled
with 99 or -99; an int argument or keyword set to 9, -9, -1 or 0) and run with both
libraries, each entry in a forked process (a crash is reported, not fatal). Printed, one
line each: the cases where torch raises and retrograd does not, where the exception
types differ, and where retrograd's message has NumPy's wording and torch's does not.

Run: ``PYTHONPATH=src python tests/support/misuse_sweep.py [entry names...] [--json F]``
(a minute on two cores). Not a test: what it finds becomes cases in
tests/ops/test_numpy_wording_errors.py once fixed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

NUMPY_WORDS = re.compile(
    r"operands could not be broadcast|\baxis\b|array is too big|tuple index out of range|"
    r"list index out of range|not broadcastable|objects cannot be broadcast|inhomogeneous|"
    r"ufunc|numpy|ndarray|zero-size array|cannot reshape array|too many indices for array|"
    r"integer division or modulo by zero|NoneType")


def mutations(sample, opdb) -> list:
    """(description, mutated sample) pairs of one op-database sample."""
    A = opdb.A
    args, kw = list(sample.args), dict(sample.kwargs)
    out = []
    for i, a in enumerate(args):
        if isinstance(a, A):
            out += [(f"arg{i} {d}", i, v) for d, v in _tensor_mutations(a, A)]
        elif type(a) is int:
            out += [(f"arg{i}={v}", i, v) for v in (9, -9, -1, 0) if v != a]
    for k, v in kw.items():
        if type(v) is int:
            out += [(f"{k}={w}", k, w) for w in (9, -9, -1)]
    res = []
    for desc, where, val in out:
        a2, k2 = list(args), dict(kw)
        if isinstance(where, int):
            a2[where] = val
        else:
            k2[where] = val
        res.append((desc, opdb.Sample(tuple(a2), k2, sample.desc)))
    return res


def _tensor_mutations(a, A) -> list:
    arr = a.arr
    out = []
    if arr.ndim:
        longer = np.concatenate([arr, np.ones(arr.shape[:-1] + (2,))], axis=-1)
        out += [("last dim +2", A(longer, a.dom, a.grad, a.dtype, a.layout)),
                ("extra dims", A(np.broadcast_to(arr, (2, 5) + arr.shape).copy(), a.dom,
                                 a.grad, a.dtype))]
    out += [("0-d", A(np.asarray(0.5 if a.dtype is None else 1), a.dom, a.grad, a.dtype)),
            ("empty", A(np.zeros((0,) + arr.shape[1:]), a.dom, a.grad, a.dtype))]
    if a.dtype is None:
        out += [("int64", A(arr, a.dom, False, "int64", a.layout)),
                ("bool", A(arr, a.dom, False, "bool", a.layout))]
    elif a.dtype == "int64":
        out += [("float index", A(arr, "real", False, None, a.layout)),
                ("index 99", A(np.full(arr.shape, 99), a.dom, False, "int64", a.layout)),
                ("index -99", A(np.full(arr.shape, -99), a.dom, False, "int64", a.layout))]
    return out


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout


def call(m, entry, sample, opdb):
    """None, or (exception type name, first line of its message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        signal.alarm(5)
        try:
            args, kwargs, _ = opdb.build(m, sample, "float32", False)
            entry.fn(m, *args, **kwargs)
            return None
        except _Timeout:
            return ("Timeout", "")
        except Exception as e:
            return (type(e).__name__, str(e).split("\n")[0][:300])
        finally:
            signal.alarm(0)


def classify(t, r) -> str | None:
    if r is None:
        return "retrograd does not raise"
    if r[0] != t[0]:
        return "type differs"
    if NUMPY_WORDS.search(r[1]) and not NUMPY_WORDS.search(t[1]):
        return "numpy wording"
    return None


def sweep_entry(entry, opdb, torch, retrograd) -> list:
    rows, seen = [], set()
    for sample in entry.samples(opdb.sample_rng(entry.name))[:3]:
        for desc, ms in mutations(sample, opdb):
            if desc in seen:
                continue
            t = call(torch, entry, ms, opdb)
            if t is None or t[0] == "Timeout":
                continue
            r = call(retrograd, entry, ms, opdb)
            kind = classify(t, r)
            if kind is not None:
                seen.add(desc)
                rows.append({"op": entry.name, "case": desc, "sample": repr(ms)[:120],
                             "kind": kind, "torch": t, "retrograd": r})
    return rows


def main(argv: list) -> None:
    import importlib

    import torch

    import retrograd

    out = argv[argv.index("--json") + 1] if "--json" in argv else "misuse_sweep.jsonl"
    names = [a for a in argv if not a.startswith("--") and a != out]
    opdb = importlib.import_module("opdb")
    for mod in ("opdb_torchops", "opdb_construct", "opdb_scans", "opdb_special",
                "opdb_linalg", "opdb_cdist_polynomials"):
        importlib.import_module(mod)
    signal.signal(signal.SIGALRM, _alarm)
    open(out, "w").close()
    crashed = []
    for entry in opdb.DB:
        if names and entry.name not in names:
            continue
        pid = os.fork()
        if pid == 0:
            with open(out, "a") as f:
                for row in sweep_entry(entry, opdb, torch, retrograd):
                    f.write(json.dumps(row) + "\n")
            os._exit(0)
        if os.waitpid(pid, 0)[1]:
            crashed.append(entry.name)
    with open(out) as f:
        rows = [json.loads(line) for line in f]
    for r in rows:
        print(f"{r['kind']:26s} {r['op']} [{r['case']}] torch {r['torch'][0]}: "
              f"{r['torch'][1][:80]} | retrograd {r['retrograd']}"[:400])
    print(f"{len(rows)} cases; entries whose process crashed: {crashed}")


if __name__ == "__main__":
    main(sys.argv[1:])
