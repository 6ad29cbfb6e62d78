"""``retrograd demo``: train a small network on the shipped 8x8 digits and write what its
gradients did (the gradient-flow plot, one step's backward graph, the graph's memory
report, a gradcheck of one layer, the metrics) to ``./retrograd-demo/``.

The command line (``_cli/main.py``) parses the options and calls ``demo``.

Example:
    >>> from retrograd._cli.demo import DemoResult
    >>> res = DemoResult()
    >>> res.metrics, res.files, res.skipped
    ({}, {}, {})
"""

from __future__ import annotations

import json
import os
import sys
import time

__all__ = ["demo", "DemoResult"]


# --------------------------------------------------------------------------------------
# the demo

class DemoResult:
    """What ``demo()`` did: ``metrics`` (the dict written to metrics.json), ``files``
    (``{kind: path}`` written), ``skipped`` (``{kind: reason}``)."""

    def __init__(self):
        self.metrics: dict = {}
        self.files: dict = {}
        self.skipped: dict = {}

    def __repr__(self) -> str:
        acc = self.metrics.get("final_test_acc")
        acc = "" if acc is None else f"test accuracy {acc:.1%}, "
        return (f"<DemoResult: {acc}{len(self.files)} files written, "
                f"{len(self.skipped)} skipped>")


def _say(msg: str = "") -> None:
    print(msg, flush=True)


def _is_terminal(stream) -> bool:
    """Whether ``stream`` is an interactive terminal (not a pipe, a file or a capture)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (where tqdm.auto draws a widget)."""
    return "ipykernel.zmqshell" in sys.modules


def _progress_bar() -> tuple:
    """``(bar class, its keyword arguments)``: tqdm.auto's bar (a widget in Jupyter,
    text on a terminal elsewhere), or ``(None, {})`` without tqdm.

    Example:
        >>> from retrograd._cli.demo import _progress_bar
        >>> cls, kwargs = _progress_bar()  # tqdm.auto's bar, or None without tqdm
        >>> cls is None or hasattr(cls, "set_postfix")
        True
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None, {}
    try:
        from tqdm.notebook import tqdm_notebook
    except ImportError:
        tqdm_notebook = ()
    if isinstance(tqdm, type) and issubclass(tqdm, tqdm_notebook):
        return tqdm, {}  # a widget as wide as the cell
    return tqdm, {"ncols": 88, "file": sys.stdout}


def _build_model(kind: str):
    from .demo_models import DigitsCNN, DigitsMLP, as_user_code

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
         limit: int | None = None, progress: bool | None = None) -> DemoResult:
    """Train on the shipped digits and write the gradient pictures; see the module docstring.

    Returns a ``DemoResult``. Without matplotlib the plot is skipped (its numbers are
    still written as CSV); without Graphviz the graph is written as DOT text only.
    ``progress``: a tqdm progress bar per epoch (``True``; ``tqdm.auto``'s, so a widget in
    Jupyter), plain lines only (``False``), or a bar only when standard output is a
    terminal or a Jupyter notebook (``None``, the default), so that piped output and
    logs get no carriage-return updates.

    Example:
        >>> import tempfile
        >>> from retrograd._cli.demo import demo
        >>> with tempfile.TemporaryDirectory() as d:  # doctest: +ELLIPSIS
        ...     res = demo(epochs=1, model="mlp", out=d, limit=64, progress=False)
        retrograd demo: an MLP (...
        >>> res.metrics["epochs"], sorted(res.files)[:2]
        (1, ['grad_flow_csv', 'grad_flow_png'])
    """
    import retrograd as torch
    from retrograd import nn
    from retrograd.data import load_digits
    from retrograd.utils.data import DataLoader, TensorDataset

    from ..viz import GradFlowMonitor, draw_graph, graph_report, graphviz_available, track_modules

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
    article = "an" if model == "mlp" else "a"  # "an MLP" (em-), "a CNN" (see-)
    _say(f"retrograd demo: {article} {model.upper()} ({n_params:,} parameters) learns to read "
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

    from .demo_models import step_loss as _step_loss

    def step_loss(xb, yb):
        return _step_loss(net, lossf, xb, yb, amp, checkpoint)

    if progress is None:
        progress = _is_terminal(sys.stdout) or _in_notebook()
    bar_cls, bar_kw = _progress_bar() if progress else (None, {})
    if progress and bar_cls is None:
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
                         **bar_kw)
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


