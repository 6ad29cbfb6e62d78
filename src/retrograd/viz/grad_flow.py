"""Gradient flow: per-parameter gradient magnitudes at every step, and a plot of them.

``GradFlowMonitor(model, optimizer=opt)`` records, just before every
``optimizer.step()``, the mean and max absolute gradient and the norm of each named
parameter. Without an optimizer it hooks each parameter's gradient accumulation
instead (one row per backward pass). ``flags()`` lists layers whose gradients vanish
(mean |g| below ``vanish``) or explode (max |g| above ``explode``, or not finite);
``plot('grad_flow.png')`` draws magnitude per layer over training with those layers
marked (matplotlib, the ``demo`` extra).

Example:
    >>> import retrograd as torch
    >>> from retrograd.viz import GradFlowMonitor
    >>> w = torch.ones(3, requires_grad=True)
    >>> mon = GradFlowMonitor({"w": w})
    >>> for k in range(3):
    ...     w.grad = None
    ...     (w * (k + 1)).sum().backward()
    >>> mon.history["w"]["max"]
    [1.0, 2.0, 3.0]
"""

from __future__ import annotations

import math

import numpy as np

from ._walk import named_tensors

__all__ = ["GradFlowMonitor"]


def _named(params) -> list:
    """The ``(name, tensor)`` pairs that require grad (Note [Naming parameters] in _walk.py)."""
    out = [(n, p) for n, p in named_tensors(params, "GradFlowMonitor") if p._rg]
    if not out:
        raise ValueError("GradFlowMonitor got no parameters that require grad (note that "
                         "model.parameters() is a generator that can be read only once: "
                         "pass a fresh one, or the model itself)")
    return out


def _colors(n: int) -> list:
    """``n`` distinct colours from input side (dark purple) to output side (yellow)."""
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    return [cmap(0.05 + 0.85 * i / max(1, n - 1)) for i in range(n)]


def _smooth_log(y: np.ndarray, k: int) -> np.ndarray:
    """Centred running mean of log10(y) over ``k`` steps (NaNs skipped), back in y units."""
    ly = np.log10(y)
    out = np.full_like(ly, np.nan)
    h = k // 2
    for i in range(len(ly)):
        w = ly[max(0, i - h): i + h + 1]
        w = w[np.isfinite(w)]
        if w.size:
            out[i] = w.mean()
    return 10.0 ** out


def _stats(g) -> tuple:
    """(mean |g|, max |g|, L2 norm, all finite) of a gradient, computed in float64."""
    a = np.asarray(g._data, dtype=np.float64)
    if a.size == 0:
        return 0.0, 0.0, 0.0, True
    finite = bool(np.isfinite(a).all())
    ab = np.abs(a)
    with np.errstate(over="ignore", invalid="ignore"):
        return float(ab.mean()), float(ab.max()), float(np.sqrt((a * a).sum())), finite


class GradFlowMonitor:
    """Records gradient magnitudes per named parameter at every step.

    ``params``: a Module, ``model.parameters()``, ``model.named_parameters()``, a list of
    tensors or of ``(name, tensor)`` pairs, or a ``{name: tensor}`` dict (unnamed tensors
    get their module's dotted names when ``model.parameters()`` is given, else
    ``param0``, ``param1``, ...).
    ``optimizer``: record just before each of its ``step()`` calls (the final,
    accumulated gradients); without it, record after every backward pass.
    ``vanish``/``explode``: thresholds on mean |g| and max |g| for ``flags()``.
    ``writer``: a ``retrograd.utils.tensorboard.SummaryWriter`` (or anything with its
    ``add_scalar``/``add_histogram``); each step's mean |g|, max |g| and norm are logged
    to it as ``grad_flow/mean_abs/<name>``, ``grad_flow/max_abs/<name>`` and
    ``grad_flow/norm/<name>``, and with ``histograms=True`` each gradient's histogram as
    ``grad/<name>`` (finite gradients only).

    ``history[name]`` holds lists ``'mean'``, ``'max'``, ``'norm'`` (NaN where the
    parameter had no gradient that step) and ``steps`` the step numbers.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.viz import GradFlowMonitor
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = torch.optim.SGD([w], lr=0.1)
        >>> mon = GradFlowMonitor({"w": w}, optimizer=opt, vanish=1e-3)
        >>> for _ in range(2):
        ...     opt.zero_grad(); (w * 1e-6).sum().backward(); opt.step()
        >>> mon.steps, [f["kind"] for f in mon.flags()]
        ([1, 2], ['vanishing', 'vanishing'])
        >>> mon
        <GradFlowMonitor: 1 parameters, 2 steps (a row per optimizer step), 1 flagged, hooked>
    """

    def __init__(self, params, *, optimizer=None, vanish: float = 1e-7, explode: float = 1e3,
                 writer=None, histograms: bool = False):
        self.params = _named(params)
        self.writer = writer
        self.histograms = bool(histograms)
        self.names = [n for n, _ in self.params]
        self.vanish = float(vanish)
        self.explode = float(explode)
        self._steps: list = []
        self._history: dict = {n: {"mean": [], "max": [], "norm": []} for n in self.names}
        self._finite: dict = {n: [] for n in self.names}
        self._handles: list = []
        self._current: dict = {}
        self.marks: list = []  # (step, label) drawn as vertical lines, e.g. epoch ends
        #: 'optimizer' (a row per step()) or 'backward' (a row per backward pass)
        self.mode = "optimizer" if optimizer is not None else "backward"
        if optimizer is not None:
            self._handles.append(optimizer.register_step_pre_hook(self._on_step))
        else:
            for name, p in self.params:
                self._handles.append(p.register_post_accumulate_grad_hook(
                    self._make_hook(name)))

    def __repr__(self) -> str:
        self._flush_hooks()
        flagged = self.flagged_layers()
        hooks = "hooked" if self._handles else "removed"
        writer = f", writer={self.writer!r}" if self.writer is not None else ""
        return (f"<GradFlowMonitor: {len(self.names)} parameters, {len(self._steps)} steps "
                f"(a row per {self.mode} step), {len(flagged)} flagged, {hooks}{writer}>")

    # recording ---------------------------------------------------------------------
    def _on_step(self, optimizer, args, kwargs) -> None:
        self.record()

    @property
    def history(self) -> dict:
        """``{name: {'mean': [...], 'max': [...], 'norm': [...]}}``, one entry per step."""
        self._flush_hooks()
        return self._history

    @property
    def steps(self) -> list:
        """The step numbers recorded so far (1, 2, ...)."""
        self._flush_hooks()
        return self._steps

    def _make_hook(self, name: str):
        def hook(p):
            if name in self._current:  # a new backward pass began: close the last row
                self._commit()
            self._observe(name, p._grad)
        return hook

    def _observe(self, name: str, grad) -> None:
        """Take ``grad``'s stats into the row being built, and log them to the writer."""
        stats = self._current[name] = _stats(grad)
        if self.writer is None:
            return
        step = len(self._steps) + 1  # the row being built
        for key, value in zip(("mean_abs", "max_abs", "norm"), stats[:3]):
            self.writer.add_scalar(f"grad_flow/{key}/{name}", value, step)
        if self.histograms and stats[3] and grad.numel():
            self.writer.add_histogram(f"grad/{name}", grad, step)

    def _commit(self) -> None:
        if not self._current:
            return
        self._steps.append(len(self._steps) + 1)
        for n in self.names:
            m, x, nrm, fin = self._current.get(n, (math.nan, math.nan, math.nan, True))
            h = self._history[n]
            h["mean"].append(m)
            h["max"].append(x)
            h["norm"].append(nrm)
            self._finite[n].append(fin)
        self._current = {}

    def record(self) -> dict:
        """Record the current ``.grad`` of every parameter as one step; returns its stats.

        Example:
            >>> import retrograd as torch
            >>> from retrograd.viz import GradFlowMonitor
            >>> w = torch.ones(2, requires_grad=True)
            >>> mon = GradFlowMonitor({"w": w}, optimizer=torch.optim.SGD([w], lr=1.0))
            >>> w.grad = torch.tensor([3.0, -4.0])
            >>> mon.record()["w"]
            {'mean': 3.5, 'max': 4.0, 'norm': 5.0}
        """
        self._flush_hooks()
        self._current = {}
        for name, p in self.params:
            if p._grad is not None:
                self._observe(name, p._grad)
        row = {n: dict(zip(("mean", "max", "norm"), self._current[n][:3]))
               for n in self._current}
        self._commit()
        return row

    def _flush_hooks(self) -> None:
        if self._current:
            self._commit()

    def mark(self, label: str) -> None:
        """Mark the current step (an epoch boundary, a learning-rate change) on the plot."""
        self.marks.append((len(self.steps), str(label)))

    def remove(self) -> None:
        """Unregister the hooks (the history is kept)."""
        self._flush_hooks()
        for h in self._handles:
            h.remove()
        self._handles = []

    # reading -------------------------------------------------------------------------
    def flags(self) -> list:
        """Every (parameter, step) whose gradient vanished, exploded or was not finite.

        Each item is ``{'name', 'step', 'kind', 'value'}``; ``kind`` is ``'non-finite'``,
        ``'exploding'`` (max |g| > explode) or ``'vanishing'`` (mean |g| < vanish).
        """
        self._flush_hooks()
        out = []
        for n in self.names:
            h = self.history[n]
            for i, step in enumerate(self.steps):
                m, x = h["mean"][i], h["max"][i]
                if math.isnan(m) and self._finite[n][i]:
                    continue  # no gradient this step
                if not self._finite[n][i]:
                    out.append({"name": n, "step": step, "kind": "non-finite", "value": x})
                elif x > self.explode:
                    out.append({"name": n, "step": step, "kind": "exploding", "value": x})
                elif m < self.vanish:
                    out.append({"name": n, "step": step, "kind": "vanishing", "value": m})
        return out

    def flagged_layers(self) -> dict:
        """``{name: kind}`` for parameters flagged at any step (the worst kind wins)."""
        rank = {"non-finite": 3, "exploding": 2, "vanishing": 1}
        out: dict = {}
        for f in self.flags():
            if rank[f["kind"]] > rank.get(out.get(f["name"]), 0):
                out[f["name"]] = f["kind"]
        return out

    def summary(self) -> str:
        """A table: each parameter's mean |g| at the first and last step, and its flag.

        Example:
            >>> import retrograd as torch
            >>> from retrograd.viz import GradFlowMonitor
            >>> w = torch.ones(2, requires_grad=True)
            >>> mon = GradFlowMonitor({"w": w}); (w * 2).sum().backward()
            >>> print(mon.summary().splitlines()[1].split())
            ['w', '2', '2', '2', 'ok']
        """
        self._flush_hooks()
        flagged = self.flagged_layers()
        width = max(9, max(len(n) for n in self.names))
        lines = [f"{'parameter':<{width}}  {'mean|g| first':>13}  {'mean|g| last':>12}  "
                 f"{'max|g| last':>11}  flag"]
        for n in self.names:
            h = self.history[n]
            first = next((v for v in h["mean"] if not math.isnan(v)), math.nan)
            last = h["mean"][-1] if h["mean"] else math.nan
            mx = h["max"][-1] if h["max"] else math.nan
            lines.append(f"{n:<{width}}  {first:>13.4g}  {last:>12.4g}  {mx:>11.4g}  "
                         f"{flagged.get(n, 'ok')}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Steps, per-parameter history and flags as plain data."""
        self._flush_hooks()
        return {"steps": list(self.steps), "vanish": self.vanish, "explode": self.explode,
                "history": {n: {k: list(v) for k, v in h.items()}
                            for n, h in self.history.items()},
                "flags": self.flags()}

    def save_csv(self, path: str) -> str:
        """One row per (step, parameter): mean, max, norm. Returns ``path``."""
        import csv

        self._flush_hooks()
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "parameter", "mean_abs", "max_abs", "norm"])
            for i, step in enumerate(self.steps):
                for n in self.names:
                    h = self.history[n]
                    w.writerow([step, n, h["mean"][i], h["max"][i], h["norm"][i]])
        return path

    # plotting --------------------------------------------------------------------------
    # Note [Labels outside the plot]
    # Text drawn inside the axes sooner or later sits on a curve: the threshold band
    # labels sat on the band edges, where a layer whose gradients are about to vanish
    # runs. So nothing is written inside the top axes: the shaded bands are explained
    # in the legend (outside, on the right) next to the layers, the running-mean note is
    # the legend's title, and marks (epoch ends) are labelled as ticks on a second x axis
    # above the plot, their dotted lines alone crossing it. The bar chart's legend sits
    # outside too, off its threshold lines.
    def _legend(self, ax, n: int, smooth: bool) -> None:
        """The legend beside the top axes: the layers, then the two shaded bands."""
        from matplotlib.patches import Patch

        handles, labels = ax.get_legend_handles_labels()
        handles += [Patch(facecolor="#e8544e", alpha=0.25, edgecolor="#e8544e"),
                    Patch(facecolor="#5b8def", alpha=0.25, edgecolor="#5b8def")]
        labels += [f"exploding zone (> {self.explode:g})",
                   f"vanishing zone (< {self.vanish:g})"]
        ax.legend(handles, labels, fontsize=7.5, ncol=2 if n > 8 else 1, loc="center left",
                  bbox_to_anchor=(1.01, 0.5), frameon=False,
                  title="bold: running mean; faint: every step" if smooth else None,
                  title_fontsize=7.5)

    def _draw_marks(self, ax) -> None:
        """Each mark as a dotted vertical line, labelled above the axes (at most 12
        labels, evenly spread, so they stay readable)."""
        if not self.marks:
            return
        for step, _ in self.marks:
            ax.axvline(step + 0.5, color="#999999", lw=0.7, ls=":")
        every = max(1, math.ceil(len(self.marks) / 12))
        shown = self.marks[::every]
        top = ax.secondary_xaxis("top")
        top.set_xticks([step + 0.5 for step, _ in shown], labels=[t for _, t in shown])
        top.tick_params(axis="x", labelsize=7.5, labelcolor="#666666", length=2,
                        color="#999999")

    def plot(self, path: str | None = None, *, title: str | None = None, dpi: int = 120):
        """Draw gradient magnitude per layer over training; save to ``path`` if given.

        Top: mean |g| of each parameter per step (log scale), with the vanishing and
        exploding zones shaded and flagged layers drawn bold. Bottom: mean and max |g|
        per layer at the last step. Labels stay off the curves (Note [Labels outside the
        plot]). Returns the matplotlib Figure, so that a Jupyter cell ending in
        ``monitor.plot()`` shows it (once: no pyplot figure is left open to be shown
        again). Needs matplotlib (``pip install 'retrograd[demo]'``).

        Example:
            >>> import retrograd as torch
            >>> from retrograd.viz import GradFlowMonitor
            >>> w = torch.ones(2, requires_grad=True)
            >>> mon = GradFlowMonitor([w]); (w * 2).sum().backward()
            >>> fig = mon.plot()
            >>> type(fig).__name__, fig.axes[0].get_legend().get_texts()[0].get_text()
            ('Figure', 'param0')
        """
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError:
            raise ImportError("GradFlowMonitor.plot needs matplotlib: pip install "
                              "'retrograd[demo]' (or pip install matplotlib). The numbers "
                              "are in monitor.history / monitor.summary().") from None
        self._flush_hooks()
        flagged = self.flagged_layers()
        n = len(self.names)
        fig = Figure(figsize=(10, 7.2), constrained_layout=True)
        FigureCanvasAgg(fig)
        ax, bx = fig.subplots(2, 1, gridspec_kw={"height_ratios": [3, 2]})
        cmap = _colors(n)
        steps = np.asarray(self.steps, dtype=float)
        allv = [v for h in self.history.values() for v in h["mean"] + h["max"]
                if v > 0 and math.isfinite(v)]
        lo = min(allv + [self.vanish]) / 3 if allv else self.vanish / 10
        hi = max(allv + [self.explode]) * 3 if allv else self.explode * 10
        ax.axhspan(lo, self.vanish, color="#5b8def", alpha=0.10, lw=0)
        ax.axhspan(self.explode, hi, color="#e8544e", alpha=0.10, lw=0)
        ax.axhline(self.vanish, color="#5b8def", lw=0.8, ls="--")
        ax.axhline(self.explode, color="#e8544e", lw=0.8, ls="--")
        smooth = len(steps) > 40
        for i, name in enumerate(self.names):
            y = np.asarray(self.history[name]["mean"], dtype=float)
            y = np.where(y > 0, y, np.nan)
            kind = flagged.get(name)
            label = name + (f"  [{kind}]" if kind else "")
            ls = "-" if "bias" not in name else (0, (4, 1.5))
            if smooth:  # raw values faint, a running mean (in log space) on top
                ax.plot(steps, y, color=cmap[i], lw=0.6, alpha=0.25)
                y = _smooth_log(y, max(3, len(steps) // 25))
            ax.plot(steps, y, color=cmap[i], lw=2.4 if kind else 1.4, ls=ls, label=label,
                    marker="o" if len(steps) <= 25 else None, ms=3)
            bad = [k for k, fin in enumerate(self._finite[name]) if not fin]
            if bad:
                ax.scatter(steps[bad], np.full(len(bad), hi / 2), marker="x", color="#b8332e",
                           zorder=5)
        self._draw_marks(ax)
        ax.set_yscale("log")
        ax.set_ylim(lo, hi)
        ax.set_xlabel("optimizer step" if self.mode == "optimizer" else "backward pass")
        ax.set_ylabel("mean |gradient|")
        ax.set_title(title or "Gradient flow: mean |grad| per layer over training")
        ax.grid(True, which="major", alpha=0.3)
        self._legend(ax, n, smooth)
        # bottom: last step, per layer (the classic gradient-flow bar chart)
        xs = np.arange(n)
        means = np.asarray([self.history[k]["mean"][-1] if self.steps else np.nan
                            for k in self.names], dtype=float)
        maxes = np.asarray([self.history[k]["max"][-1] if self.steps else np.nan
                            for k in self.names], dtype=float)
        bx.bar(xs, np.where(maxes > 0, maxes, np.nan), color="#9ecae1", label="max |grad|",
               width=0.8)
        bx.bar(xs, np.where(means > 0, means, np.nan), color="#2171b5", label="mean |grad|",
               width=0.45)
        bx.set_yscale("log")
        bx.axhline(self.vanish, color="#5b8def", lw=0.8, ls="--")
        bx.axhline(self.explode, color="#e8544e", lw=0.8, ls="--")
        bx.set_xticks(xs)
        bx.set_xticklabels(self.names, rotation=35, ha="right", fontsize=8)
        for lab, name in zip(bx.get_xticklabels(), self.names):
            if name in flagged:
                lab.set_color("#b8332e")
                lab.set_fontweight("bold")
        finite_vals = [v for v in np.concatenate([means, maxes]) if v > 0 and math.isfinite(v)]
        if finite_vals:
            bx.set_ylim(min(finite_vals + [self.vanish]) / 3,
                        max(finite_vals + [self.explode]) * 3)
        last = self.steps[-1] if self.steps else 0
        note = ("red labels: flagged layers" if flagged
                else "no layer flagged as vanishing or exploding")
        bx.set_title(f"per layer at step {last} ({note})", fontsize=10)
        bx.set_ylabel("|gradient|")
        bx.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        bx.grid(True, axis="y", alpha=0.3)
        if path is not None:
            fig.savefig(path, dpi=dpi)
        return fig
