"""Exercise 5: gradient checkpointing: trade compute for memory.

Backward needs the activations of the forward pass, so a deep network keeps all of
them alive until backward runs. ``torch.utils.checkpoint.checkpoint(block, x)`` keeps
only the block's *input*; in backward it runs the block's forward again to get the
activations back. Memory drops from one set of activations per layer to one per
checkpointed block, for about one extra forward pass of compute.

This script builds a deep residual MLP and measures the memory its graph holds with
``retrograd.viz.graph_report`` (every tensor saved for backward, and the inputs a
checkpoint keeps to rerun its segment): plain, checkpointing every block, and
checkpointing sqrt(depth) segments (the classic sqrt(n) memory plan). It checks that
the gradients are identical and times each. With matplotlib it draws the figure.

Run: ``python examples/05_checkpointing.py --out ckpt``.
"""

import argparse
import os
import time

import retrograd as torch
from retrograd import nn
from retrograd.utils.checkpoint import checkpoint
from retrograd.viz import graph_report


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        return x + self.fc2(torch.tanh(self.fc1(x)))  # a residual block


class DeepNet(nn.Module):
    def __init__(self, width: int, depth: int):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, 1)

    def forward(self, x, segments: int = 0):
        """``segments`` = 0: plain; k: the blocks in k checkpointed segments."""
        if segments == 0:
            for block in self.blocks:
                x = block(x)
        else:
            size = -(-len(self.blocks) // segments)
            for start in range(0, len(self.blocks), size):
                x = checkpoint(self.run_blocks, x, start, start + size, use_reentrant=False)
        return self.head(x).pow(2).mean()

    def run_blocks(self, x, start: int, stop: int):
        for block in self.blocks[start:stop]:
            x = block(x)
        return x


def run(model, x, segments: int):
    model.zero_grad()
    t = time.perf_counter()
    loss = model(x, segments)
    saved = graph_report(loss).total_bytes  # measured before backward frees the graph
    loss.backward()
    took = time.perf_counter() - t
    grads = [p.grad.clone() for p in model.parameters()]
    return loss.item(), saved, took, grads


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--out", default="checkpointing")
    args = p.parse_args(argv)
    torch.manual_seed(0)
    model = DeepNet(args.width, args.depth)
    x = torch.randn(args.batch, args.width)
    k = max(1, round(args.depth ** 0.5))
    plans = [("plain", 0), (f"every block ({args.depth})", args.depth),
             (f"{k} segments (sqrt)", k)]
    rows = []
    base_grads = None
    mib = 2 ** 20
    print(f"{args.depth} residual blocks of width {args.width}, batch {args.batch}")
    for name, segments in plans:
        loss, saved, took, grads = run(model, x, segments)
        if base_grads is None:
            base_grads = grads
        same = all(torch.equal(a, b) for a, b in zip(base_grads, grads))
        rows.append({"plan": name, "segments": segments, "bytes": saved, "seconds": took,
                     "loss": loss, "same_grads": same})
        print(f"  {name:<22} graph holds {saved / mib:6.2f} MiB, forward+backward "
              f"{took:.3f} s, gradients identical to plain: {same}")
    print("  (each checkpointed segment also rebuilds its own activations during backward, "
          "one segment at a time)")
    result = {"plans": rows}
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        os.makedirs(args.out, exist_ok=True)
        fig = Figure(figsize=(8, 3.4), constrained_layout=True)
        FigureCanvasAgg(fig)
        ax, bx = fig.subplots(1, 2)
        names = [r["plan"] for r in rows]
        colors = ["#c44e52", "#dd8452", "#4c72b0"]
        ax.bar(names, [r["bytes"] / mib for r in rows], color=colors)
        for i, r in enumerate(rows):
            ax.text(i, r["bytes"] / mib, f"{r['bytes'] / mib:.2f}", ha="center", va="bottom",
                    fontsize=8)
        ax.set_ylabel("MiB saved for backward")
        ax.set_title("memory held by the graph", fontsize=10)
        bx.bar(names, [r["seconds"] for r in rows], color=colors)
        bx.set_ylabel("seconds")
        bx.set_title("forward + backward time", fontsize=10)
        for a in (ax, bx):
            a.tick_params(axis="x", labelsize=8)
        fig.suptitle(f"Gradient checkpointing of {args.depth} residual blocks (same "
                     "gradients in every case)", fontsize=10)
        path = os.path.join(args.out, "checkpoint_memory.png")
        fig.savefig(path, dpi=110)
        result["plot"] = path
        print(f"plot: {path}")
    except ImportError:
        print("(no plot: matplotlib is not installed)")
    return result


if __name__ == "__main__":
    main()
