"""The ``retrograd`` command: ``retrograd demo`` trains a network and shows its gradients.

- ``retrograd demo``: train a small CNN on the 8x8 handwritten digits shipped with
  retrograd, check one layer's gradients with gradcheck, and write the gradient-flow
  plot, a picture of one step's backward graph, the graph's memory report and the
  metrics to ``./retrograd-demo/``. Options: ``--epochs``, ``--model mlp|cnn``,
  ``--amp bf16``, ``--checkpoint``, ``--out``, ``--seed``.
- ``retrograd tour``: the core gradient ideas with real numbers, in the terminal.
- ``retrograd check FILE.py [ARGS]``: run a PyTorch script with ``torch`` mapped to
  retrograd.
- ``retrograd run --nproc N FILE.py [ARGS]``: run N ranks of a distributed script under
  mpiexec (torchrun's role; see docs/distributed.md).

Example:
    >>> from retrograd.__main__ import build_parser
    >>> args = build_parser().parse_args(["demo", "--epochs", "2", "--model", "mlp"])
    >>> args.command, args.epochs, args.model, args.out
    ('demo', 2, 'mlp', 'retrograd-demo')
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

__all__ = ["main", "build_parser", "demo", "tour", "DemoResult"]


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of ``retrograd``."""
    p = argparse.ArgumentParser(
        prog="retrograd", description="retrograd: PyTorch's autograd and training stack on "
        "NumPy. Subcommands show gradients at work.")
    sub = p.add_subparsers(dest="command")
    d = sub.add_parser("demo", help="train a small network on handwritten digits and write "
                       "pictures of its gradients (gradient flow, graph, memory report)")
    d.add_argument("--epochs", type=int, default=5, help="passes over the training set "
                   "(default 5)")
    d.add_argument("--model", choices=("cnn", "mlp"), default="cnn",
                   help="convolutional network (default) or a multilayer perceptron")
    d.add_argument("--amp", choices=("bf16",), default=None,
                   help="mixed precision: run matmuls and convolutions in bfloat16")
    d.add_argument("--checkpoint", action="store_true",
                   help="gradient checkpointing: recompute the feature layers in backward "
                   "instead of saving their activations")
    d.add_argument("--out", default="retrograd-demo", help="output folder "
                   "(default ./retrograd-demo)")
    d.add_argument("--seed", type=int, default=0, help="random seed (default 0); the run is "
                   "deterministic for a seed")
    d.add_argument("--batch-size", type=int, default=64)
    d.add_argument("--lr", type=float, default=1e-2, help="Adam learning rate (default 0.01)")
    d.add_argument("--limit", type=int, default=None,
                   help="use only the first N training images (quick runs)")
    d.add_argument("--no-progress", action="store_true", help="plain lines, no progress bar")
    sub.add_parser("tour", help="the core gradient ideas with numbers (backward, vᵀJ, "
                   "accumulation, detach/no_grad, higher order)")
    c = sub.add_parser("check", help="run a PyTorch script with torch mapped to retrograd")
    c.add_argument("file", help="the Python script to run")
    c.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    r = sub.add_parser("run", help="run N ranks of a distributed script under mpiexec "
                       "(torchrun's role)")
    r.add_argument("--nproc", "--nproc-per-node", "--nproc_per_node", type=int, default=1,
                   dest="nproc", help="number of ranks (default 1)")
    r.add_argument("--hostfile", default=None, help="Open MPI hostfile: spread the ranks "
                   "over several machines")
    r.add_argument("--mpiexec-arg", action="append", default=[], dest="mpiexec_args",
                   help="extra argument for mpiexec (repeatable)")
    r.add_argument("file", help="the Python script to run")
    r.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    return p


# --------------------------------------------------------------------------------------
# the tour (no dependencies, text only)

def tour() -> int:
    """Print the core gradient ideas with real numbers (no extra dependencies).

    Example:
        >>> from retrograd.__main__ import tour
        >>> tour()  # doctest: +ELLIPSIS
        retrograd tour: gradients, step by step
        ...
        0
    """
    import retrograd as torch

    print("retrograd tour: gradients, step by step\n")
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.tensor([3.0], requires_grad=True)
    z = x ** 2 + y ** 3
    z.backward()
    print("z = x**2 + y**3 at x=2, y=3")
    print(f"  dz/dx = {x.grad}   (2x = 4)")
    print(f"  dz/dy = {y.grad}   (3y^2 = 27)")

    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x ** 2
    v = torch.tensor([[1.0, 0.5], [0.1, 0.0]])
    y.backward(gradient=v)
    print("\nvector output y = x**2, backward(gradient=v) computes vᵀJ = v * 2x:")
    print(f"  x.grad = {x.grad}")

    x = torch.tensor([1.0], requires_grad=True)
    (x ** 2).backward()
    (2 * x).backward()
    print(f"\ngradients accumulate: after d(x^2) and d(2x) at x=1, x.grad = {x.grad}")

    x = torch.tensor([3.0], requires_grad=True)
    f = x ** 3 - 4 * x + 2
    (d1,) = torch.autograd.grad(f, x, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x, create_graph=True)
    (d3,) = torch.autograd.grad(d2, x)
    print(f"\nf(x) = x^3 - 4x + 2 at x=3: f' = {d1.item():g}, f'' = {d2.item():g}, "
          f"f''' = {d3.item():g}")
    with torch.no_grad():
        w = x * 2
    print(f"\nunder no_grad(): (x * 2).requires_grad = {w.requires_grad}")
    print("why? " + str(torch.explain_grad(w, name="(x * 2)")).splitlines()[0])
    print(f"graph of f: {f.grad_fn.name()} <- "
          + ", ".join(n.name() for n, _ in f.grad_fn.next_functions if n is not None))
    return 0


# --------------------------------------------------------------------------------------
# the demo

class DemoResult:
    """What ``demo()`` did: ``metrics`` (the dict written to metrics.json), ``files``
    (``{kind: path}`` written), ``skipped`` (``{kind: reason}``)."""

    def __init__(self):
        self.metrics: dict = {}
        self.files: dict = {}
        self.skipped: dict = {}


def _say(msg: str = "") -> None:
    print(msg, flush=True)


def _build_model(kind: str):
    from .viz._demo_models import DigitsCNN, DigitsMLP, as_user_code

    as_user_code()
    return DigitsCNN() if kind == "cnn" else DigitsMLP()


def _gradcheck_layer(model, kind: str) -> dict:
    """gradcheck the model's first layer in float64 at a few random inputs."""
    import retrograd as torch
    import retrograd.nn.functional as F

    first = model.conv1 if kind == "cnn" else model.fc1
    w = first.weight.detach().double().requires_grad_()
    b = first.bias.detach().double().requires_grad_()
    g = torch.Generator().manual_seed(1)
    if kind == "cnn":
        x = torch.randn(2, 1, 5, 5, generator=g, dtype=torch.float64, requires_grad=True)

        def fn(x, w, b):
            return F.conv2d(x, w, b, padding=1)
        name = "conv1 (conv2d)"
    else:
        x = torch.randn(3, w.shape[1], generator=g, dtype=torch.float64, requires_grad=True)

        def fn(x, w, b):
            return F.linear(x, w, b)
        name = "fc1 (linear)"
    t = time.perf_counter()
    try:
        ok = bool(torch.autograd.gradcheck(fn, (x, w, b), eps=1e-6, atol=1e-5))
        err = ""
    except Exception as e:  # the demo reports a failed check instead of stopping
        ok, err = False, str(e).splitlines()[0]
    return {"layer": name, "passed": ok, "error": err,
            "seconds": round(time.perf_counter() - t, 3)}


def demo(epochs: int = 5, model: str = "cnn", amp: str | None = None, checkpoint: bool = False,
         out: str = "retrograd-demo", seed: int = 0, batch_size: int = 64, lr: float = 1e-2,
         limit: int | None = None, progress: bool = True) -> DemoResult:
    """Train on the shipped digits and write the gradient pictures; see the module docstring.

    Returns a ``DemoResult``. Without matplotlib the plot is skipped (its numbers are
    still written as CSV); without Graphviz the graph is written as DOT text only.
    """
    import retrograd as torch
    from retrograd import nn
    from retrograd.data import load_digits
    from retrograd.utils.data import DataLoader, TensorDataset

    from .viz import GradFlowMonitor, draw_graph, graph_report, graphviz_available, track_modules

    res = DemoResult()
    t0 = time.perf_counter()
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(seed)
    X, Y = load_digits()
    perm = torch.randperm(X.shape[0], generator=torch.Generator().manual_seed(seed))
    X, Y = X[perm], Y[perm]
    n_test = 360
    Xtr, Ytr, Xte, Yte = X[n_test:], Y[n_test:], X[:n_test], Y[:n_test]
    if limit is not None:
        Xtr, Ytr = Xtr[:limit], Ytr[:limit]
    net = _build_model(model)
    n_params = sum(p.numel() for p in net.parameters())
    _say(f"retrograd demo: a {model.upper()} ({n_params:,} parameters) learns to read "
         f"handwritten digits")
    _say(f"  data: UCI 8x8 digits shipped with retrograd, {Xtr.shape[0]} training and "
         f"{n_test} test images; seed {seed}"
         + (", bfloat16 autocast" if amp else "") + (", checkpointing" if checkpoint else ""))

    gc = _gradcheck_layer(net, model)
    _say(f"  gradcheck {gc['layer']}: "
         + ("analytic gradients match finite differences" if gc["passed"]
            else f"FAILED ({gc['error']})"))

    opt = torch.optim.Adam(net.parameters(), lr=lr)
    lossf = nn.CrossEntropyLoss()
    monitor = GradFlowMonitor(net, optimizer=opt, vanish=1e-6, explode=1e2)
    loader = DataLoader(TensorDataset(Xtr, Ytr), batch_size=batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))

    from .viz._demo_models import step_loss as _step_loss

    def step_loss(xb, yb):
        return _step_loss(net, lossf, xb, yb, amp, checkpoint)

    bar_cls = None
    if progress:
        try:
            from tqdm import tqdm as bar_cls
        except ImportError:
            res.skipped["progress bar"] = "tqdm is not installed (pip install 'retrograd[demo]')"
    history = []
    graph_done = False
    for ep in range(1, epochs + 1):
        net.train()
        te = time.perf_counter()
        tot_loss, correct, seen = 0.0, 0, 0
        it = loader
        if bar_cls is not None:
            it = bar_cls(loader, desc=f"epoch {ep}/{epochs}", unit="batch", leave=True,
                         ncols=88, file=sys.stdout)
        for xb, yb in it:
            if not graph_done:
                with track_modules(net), track_modules(lossf, root="loss"):
                    logits, loss = step_loss(xb, yb)
                _write_graph(loss, net, out, res, draw_graph, graph_report, graphviz_available)
                graph_done = True
            else:
                logits, loss = step_loss(xb, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            n = yb.shape[0]
            tot_loss += loss.item() * n
            correct += int((logits.argmax(1) == yb).sum().item())
            seen += n
            if bar_cls is not None:
                it.set_postfix(loss=f"{tot_loss / seen:.3f}", acc=f"{correct / seen:.1%}")
        monitor.mark(f"epoch {ep}")
        net.eval()
        with torch.no_grad():
            if amp:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    test_logits = net(Xte)
            else:
                test_logits = net(Xte)
            test_acc = float((test_logits.argmax(1) == Yte).float().mean().item())
        row = {"epoch": ep, "train_loss": round(tot_loss / seen, 6),
               "train_acc": round(correct / seen, 6), "test_acc": round(test_acc, 6),
               "seconds": round(time.perf_counter() - te, 3)}
        history.append(row)
        if bar_cls is not None:
            it.close()
        _say(f"  epoch {ep}/{epochs}: loss {row['train_loss']:.4f}, train accuracy "
             f"{row['train_acc']:.1%}, test accuracy {row['test_acc']:.1%}")

    # gradient flow
    flow_csv = os.path.join(out, "grad_flow.csv")
    monitor.save_csv(flow_csv)
    res.files["grad_flow_csv"] = flow_csv
    flagged = monitor.flagged_layers()
    try:
        png = os.path.join(out, "grad_flow.png")
        monitor.plot(png, title=f"Gradient flow while training the {model.upper()} "
                     "(mean |grad| per parameter, every optimizer step)")
        res.files["grad_flow_png"] = png
    except ImportError:
        res.skipped["gradient-flow plot"] = ("matplotlib is not installed (pip install "
                                             "'retrograd[demo]'); the numbers are in "
                                             "grad_flow.csv")
    monitor.remove()

    metrics = {"model": model, "parameters": n_params, "seed": seed, "epochs": epochs,
               "batch_size": batch_size, "lr": lr, "amp": amp, "checkpoint": checkpoint,
               "train_images": int(Xtr.shape[0]), "test_images": n_test,
               "history": history, "final_test_acc": history[-1]["test_acc"] if history
               else None, "gradcheck": gc, "flagged_layers": flagged,
               "graph": res.metrics.get("graph", {}),
               "seconds": round(time.perf_counter() - t0, 2)}
    mpath = os.path.join(out, "metrics.json")
    with open(mpath, "w") as f:
        json.dump(metrics, f, indent=2)
    res.files["metrics"] = mpath
    res.metrics = metrics

    _say("")
    if flagged:
        _say("  gradient flow: flagged " + ", ".join(f"{k} ({v})" for k, v in flagged.items()))
    else:
        _say("  gradient flow: every layer's gradients stayed between 1e-6 and 1e2 (no "
             "vanishing or exploding layer)")
    _say(f"  wrote to {os.path.abspath(out)}/:")
    for kind, path in res.files.items():
        _say(f"    {os.path.basename(path):<22} {_DESCR.get(kind, kind)}")
    for what, why in res.skipped.items():
        _say(f"  skipped {what}: {why}")
    _say(f"  done in {metrics['seconds']:.1f} s")
    return res


_DESCR = {"graph_dot": "backward graph of one training step (Graphviz DOT text)",
          "graph_svg": "backward graph of one training step (picture)",
          "memory_report": "memory held by that graph, by op, module and line",
          "memory_json": "the same report as data",
          "grad_flow_png": "gradient magnitude per layer over training",
          "grad_flow_csv": "the numbers behind the gradient-flow plot",
          "metrics": "loss and accuracy per epoch, gradcheck result, settings"}


def _write_graph(loss, net, out, res, draw_graph, graph_report, graphviz_available) -> None:
    params = dict(net.named_parameters())
    pic = draw_graph({"loss": loss}, params=params,
                     title="one training step of the demo network")
    dot = os.path.join(out, "graph.dot")
    pic.save(dot)
    res.files["graph_dot"] = dot
    ok, why = graphviz_available()
    if ok:
        svg = os.path.join(out, "graph.svg")
        pic.save(svg)
        res.files["graph_svg"] = svg
    else:
        res.skipped["graph picture"] = f"{why}; wrote graph.dot instead"
    rep = graph_report(loss, params=params)
    rpath = os.path.join(out, "memory_report.txt")
    with open(rpath, "w") as f:
        f.write(rep.table() + "\n")
    res.files["memory_report"] = rpath
    jpath = os.path.join(out, "memory_report.json")
    with open(jpath, "w") as f:
        json.dump(rep.to_dict(), f, indent=2)
    res.files["memory_json"] = jpath
    res.metrics["graph"] = {"ops": rep.n_ops, "saved_bytes": rep.total_bytes}


def main(argv=None) -> int:
    """Entry point of the ``retrograd`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.epochs < 1:
            parser.error("--epochs must be at least 1")
        demo(epochs=args.epochs, model=args.model, amp=args.amp, checkpoint=args.checkpoint,
             out=args.out, seed=args.seed, batch_size=args.batch_size, lr=args.lr,
             limit=args.limit, progress=not args.no_progress)
        return 0
    if args.command == "tour":
        return tour()
    if args.command == "check":
        from ._check import run_check

        return run_check(args.file, args.args)
    if args.command == "run":
        from .distributed.launch import run

        return run(args.nproc, args.file, args.args, args.hostfile, args.mpiexec_args)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
