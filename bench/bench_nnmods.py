"""Forward + backward time of the layers added for issue 16 (CTC loss, grid_sample,
embedding_bag, fractional max pooling, antialiased bicubic resize, a Transformer
decoder), retrograd against PyTorch in one process, torch on one thread.

Usage:
    PYTHONPATH=src python bench/bench_nnmods.py

Each op runs 3 rounds; a round times 5 calls of each framework (after one warm-up
call) and keeps the best; the line shows the last round's times and every round's
ratio retrograd / torch, so the spread of the ratios shows how noisy the machine is.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import torch

import retrograd as R

warnings.simplefilter("ignore")
torch.set_num_threads(1)


def _data() -> dict:
    rng = np.random.default_rng(0)
    offs = np.sort(rng.choice(4000, 256, replace=False))
    offs[0] = 0
    d = {"x": rng.standard_normal((50, 16, 20)).astype(np.float32),
         "tg": rng.integers(1, 20, (16, 15)), "il": (50,) * 16,
         "tl": tuple(int(v) for v in rng.integers(5, 16, 16)),
         "img": rng.standard_normal((8, 16, 32, 32)).astype(np.float32),
         "grid": rng.uniform(-1, 1, (8, 32, 32, 2)).astype(np.float32),
         "w": rng.standard_normal((1000, 64)).astype(np.float32),
         "idx": rng.integers(0, 1000, 4000), "offs": offs,
         "smp": rng.random((8, 16, 2)).astype(np.float32),
         "tgt": rng.standard_normal((10, 8, 64)).astype(np.float32),
         "mem": rng.standard_normal((20, 8, 64)).astype(np.float32)}
    for L in (torch, R):
        L.manual_seed(0)
        d[L.__name__] = L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(64, 4, 128, 0.0), 2)
    return d


def ctc(L, d):
    x = L.tensor(d["x"], requires_grad=True)
    L.nn.functional.ctc_loss(x.log_softmax(2), L.tensor(d["tg"]), d["il"], d["tl"]).backward()


def grid(L, d):
    x = L.tensor(d["img"], requires_grad=True)
    g = L.tensor(d["grid"], requires_grad=True)
    L.nn.functional.grid_sample(x, g, align_corners=False).sum().backward()


def bag(L, d):
    w = L.tensor(d["w"], requires_grad=True)
    y = L.nn.functional.embedding_bag(L.tensor(d["idx"]), w, L.tensor(d["offs"]), mode="mean")
    y.sum().backward()


def frac(L, d):
    x = L.tensor(d["img"], requires_grad=True)
    y = L.nn.functional.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.5),
                                              _random_samples=L.tensor(d["smp"]))
    y.sum().backward()


def bicubic(L, d):
    x = L.tensor(d["img"], requires_grad=True)
    y = L.nn.functional.interpolate(x, scale_factor=0.5, mode="bicubic", antialias=True)
    y.sum().backward()


def decoder(L, d):
    d[L.__name__](L.tensor(d["tgt"]), L.tensor(d["mem"])).sum().backward()


def best_of(fn, L, d, reps: int) -> float:
    fn(L, d)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(L, d)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    d = _data()
    cases = [("ctc_loss T50 N16 C20 S<=15", ctc), ("grid_sample 8x16x32x32", grid),
             ("embedding_bag 4000 idx 256 bags", bag),
             ("fractional_max_pool2d 8x16x32x32", frac),
             ("interpolate bicubic aa 0.5x 8x16x32x32", bicubic),
             ("TransformerDecoder 2 layers d64", decoder)]
    for name, fn in cases:
        ratios = []
        for _ in range(3):
            tt, tr = best_of(fn, torch, d, 5), best_of(fn, R, d, 5)
            ratios.append(f"{tr / tt:.1f}")
        print(f"{name:40s} torch {tt * 1e3:7.2f} ms  retrograd {tr * 1e3:7.2f} ms  "
              f"ratio per round {ratios}")


if __name__ == "__main__":
    main()
