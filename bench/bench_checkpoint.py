"""Memory of a deep MLP trained with and without activation checkpointing.

Usage:
    python bench/bench_checkpoint.py                     # 20 x (Linear 1024 + ReLU), batch 256
    python bench/bench_checkpoint.py --blocks 8 --width 256 --batch 64   # quicker

Prints, for a plain run and for ``checkpoint_sequential(segments=4)``:

* graph memory after the forward pass: bytes of every tensor the loss's graph keeps
  for backward (``saved_tensor_bytes``: Node._saved tensors, Node._out arrays, and
  the inputs each checkpointed segment keeps to rerun itself), each ndarray base
  counted once; also split into parameters (leaves) and activations;
* tracemalloc peak of a whole training step (forward, backward, SGD step), for the
  first step (gradients allocated during it) and for a later step (gradients
  accumulated in place into existing .grad tensors);
* whether the gradients of the two runs are identical.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import retrograd as torch
from retrograd._graph.saved_hooks import _Packed
from retrograd.utils.checkpoint import _Holder, checkpoint_sequential


def _base(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _is_leaf(x) -> bool:
    """A leaf that requires grad, or a view of one (nn.Linear saves its weight's ``.t()``)."""
    root = x._base if x._base is not None else x
    return root._rg and root._gfn is None


def saved_tensor_bytes(t, split: bool = False):
    """Bytes the graph behind ``t`` holds for backward (each ndarray base once).

    Walks the grad_fn nodes (iteratively) and counts the tensors in ``Node._saved``,
    the arrays in ``Node._out`` (saved outputs), tensors behind saved-tensor hooks,
    and the inputs a non-reentrant checkpoint keeps to recompute its segment. With
    ``split=True`` returns (total, bytes of leaf tensors, bytes of the rest).
    """
    seen_nodes, seen_arrays, frames = set(), {}, set()
    leaf_bytes = 0
    stack = [t.grad_fn] if t.grad_fn is not None else []

    def add(x, is_leaf=False):
        nonlocal leaf_bytes
        arr = x._data if isinstance(x, torch.Tensor) else x
        b = _base(arr)
        if id(b) not in seen_arrays:
            seen_arrays[id(b)] = b.nbytes
            if is_leaf:
                leaf_bytes += b.nbytes

    while stack:
        node = stack.pop()
        if node is None or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        for s in (node._saved or ()):
            if isinstance(s, torch.Tensor):
                add(s, _is_leaf(s))
            elif isinstance(s, _Packed):
                p = s.packed
                if isinstance(p, torch.Tensor):
                    add(p, _is_leaf(p))
                elif isinstance(p, _Holder) and id(p.frame) not in frames:
                    frames.add(id(p.frame))
                    for a in p.frame.inputs:
                        if isinstance(a, torch.Tensor):
                            add(a, _is_leaf(a))
                    for r in p.frame.recomputed.values():
                        add(r)
        for o in (node._out or ()):
            if o is not None:
                add(o[0])
        for e in node._edges:
            if e is not None:
                stack.append(e[0])
    total = sum(seen_arrays.values())
    return (total, leaf_bytes, total - leaf_bytes) if split else total


def make_model(blocks: int, width: int):
    torch.manual_seed(0)
    layers = []
    for _ in range(blocks):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


def forward(model, x, ckpt: bool, segments: int):
    if ckpt:
        return checkpoint_sequential(model, segments, x, use_reentrant=False).square().mean()
    return model(x).square().mean()


def run(blocks: int, width: int, batch: int, segments: int, ckpt: bool) -> dict:
    model = make_model(blocks, width)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    torch.manual_seed(1)
    x = torch.randn(batch, width)
    res = {}
    gc.collect()
    loss = forward(model, x, ckpt, segments)
    res["graph"] = saved_tensor_bytes(loss, split=True)
    del loss
    gc.collect()
    for step in ("first", "later", "later"):
        opt.zero_grad(set_to_none=(step == "first"))
        gc.collect()
        tracemalloc.start()
        t0 = time.perf_counter()
        loss = forward(model, x, ckpt, segments)
        loss.backward()
        if step == "first":
            grads = [p.grad for p in model.parameters()]
        opt.step()
        dt = time.perf_counter() - t0
        del loss
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        res[f"time_{step}"] = min(dt, res.get(f"time_{step}", dt))
        res[f"peak_{step}"] = max(peak, res.get(f"peak_{step}", peak))
        if step == "first":  # copied outside the traced region
            res["grads"] = [g.detach().clone() for g in grads]
            del grads
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--segments", type=int, default=4)
    a = ap.parse_args()
    mib = 1 / 2**20
    plain = run(a.blocks, a.width, a.batch, a.segments, ckpt=False)
    ck = run(a.blocks, a.width, a.batch, a.segments, ckpt=True)
    print(f"MLP: {a.blocks} x (Linear({a.width}, {a.width}) + ReLU), batch {a.batch}; "
          f"checkpoint_sequential(segments={a.segments}, use_reentrant=False)")
    print(f"{'':34s}{'plain':>12s}{'checkpoint':>12s}{'ratio':>8s}")
    rows = [("graph after forward, all (MiB)", plain["graph"][0], ck["graph"][0]),
            ("  of which parameters (MiB)", plain["graph"][1], ck["graph"][1]),
            ("  of which activations (MiB)", plain["graph"][2], ck["graph"][2]),
            ("peak of first step (MiB)", plain["peak_first"], ck["peak_first"]),
            ("peak of a later step (MiB)", plain["peak_later"], ck["peak_later"])]
    for name, p, c in rows:
        print(f"{name:34s}{p * mib:12.1f}{c * mib:12.1f}{c / p:8.2f}")
    print(f"{'step time, later step (s, noisy)':34s}{plain['time_later']:12.2f}"
          f"{ck['time_later']:12.2f}{ck['time_later'] / plain['time_later']:8.2f}")
    same = all(bool(torch.equal(g1, g2)) for g1, g2 in zip(plain["grads"], ck["grads"]))
    print(f"gradients identical: {same}")


if __name__ == "__main__":
    main()
