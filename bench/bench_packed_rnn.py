"""Packed-sequence recurrent layers: forward + backward of an LSTM/GRU over a
PackedSequence against the same layer over the padded batch, in retrograd and in PyTorch
(same weights, same data), measured in one run.

Usage:
    python bench/bench_packed_rnn.py                 # LSTM(32, 64, 2 layers, bidirectional)
    python bench/bench_packed_rnn.py --cell GRU --batch 8 --max-len 20 --repeats 5

Prints, per framework, the median time of a step (pack, run, pad back, sum, backward)
over ``--repeats`` alternating rounds with the lowest and highest round, and the ratios
packed/padded and retrograd/torch. Lengths are drawn uniformly in [1, max_len], so a
packed run does less arithmetic than a padded one; the other load on the machine moves
every number: compare ratios from one run, with their spread.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import retrograd as R


def _step(mod, lib, x, lengths, packed: bool) -> None:
    xt = lib.tensor(x, requires_grad=True)
    if packed:
        p = lib.nn.utils.rnn.pack_padded_sequence(xt, lengths, batch_first=True,
                                                  enforce_sorted=False)
        out, _ = mod(p)
        out, _ = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    else:
        out, _ = mod(xt)
    out.sum().backward()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cell", default="LSTM", choices=["LSTM", "GRU", "RNN"])
    ap.add_argument("--input", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--max-len", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="PyTorch's intra-op threads (1: one core, as retrograd's NumPy)")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(a.torch_threads)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((a.batch, a.max_len, a.input)).astype(np.float32)
    lengths = [int(v) for v in rng.integers(1, a.max_len + 1, a.batch)]
    lengths[0] = a.max_len
    kw = dict(num_layers=a.layers, bidirectional=True, batch_first=True)
    tm = getattr(torch.nn, a.cell)(a.input, a.hidden, **kw)
    rm = getattr(R.nn, a.cell)(a.input, a.hidden, **kw)
    rm.load_state_dict({k: R.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    cases = {(name, packed): (mod, lib)
             for name, mod, lib in (("retrograd", rm, R), ("torch", tm, torch))
             for packed in (False, True)}
    times = {c: [] for c in cases}
    for c, (mod, lib) in cases.items():  # warm-up
        _step(mod, lib, x, lengths, c[1])
    for _ in range(a.repeats):
        for c, (mod, lib) in cases.items():
            t = time.perf_counter()
            _step(mod, lib, x, lengths, c[1])
            times[c].append(time.perf_counter() - t)
    med = {c: statistics.median(v) for c, v in times.items()}
    print(f"{a.cell}({a.input}, {a.hidden}, layers={a.layers}, bidirectional) batch "
          f"{a.batch}, max_len {a.max_len}, {sum(lengths)} of {a.batch * a.max_len} steps "
          f"real; median of {a.repeats} (min-max), ms")
    for c, v in times.items():
        print(f"  {c[0]:9s} {'packed' if c[1] else 'padded':6s} {med[c] * 1e3:9.2f} "
              f"({min(v) * 1e3:.2f}-{max(v) * 1e3:.2f})")
    for name in ("retrograd", "torch"):
        print(f"  {name} packed/padded: {med[(name, True)] / med[(name, False)]:.2f}")
    for packed in (False, True):
        print(f"  retrograd/torch {'packed' if packed else 'padded'}: "
              f"{med[('retrograd', packed)] / med[('torch', packed)]:.1f}")


if __name__ == "__main__":
    main()
