"""retrograd.viz: see your gradients.

- ``draw_graph``: the backward graph as a picture (DOT text; SVG/PNG with Graphviz).
- ``GradFlowMonitor``: per-parameter gradient magnitudes over training, with a plot
  that flags vanishing and exploding layers (matplotlib optional).
- ``graph_report``: the memory a graph holds, by op, module and line, and a warning
  when one graph spans several optimizer steps (the ``total_loss += loss`` leak).
- ``explain_grad``: why a ``.grad`` is None, naming the op and line that cut the path.
- ``nan_provenance``: the first op whose value or gradient became non-finite.

Nothing here is imported eagerly beyond NumPy; matplotlib and graphviz are loaded
only when a picture is rendered.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([3.0], requires_grad=True)
    >>> y = x.detach()
    >>> print(torch.viz.explain_grad(y, name="y"))  # doctest: +ELLIPSIS
    y does not require grad: it was made by detach() at ...
"""

from __future__ import annotations

from .explain import GradExplanation, explain_grad
from .grad_flow import GradFlowMonitor
from .graph_draw import GraphPicture, draw_graph, graphviz_available, track_modules
from .memory_report import GraphReport, graph_report
from .nan_provenance import NonFiniteReport, find_nonfinite, nan_provenance

__all__ = ["draw_graph", "GraphPicture", "graphviz_available", "track_modules",
           "GradFlowMonitor", "graph_report", "GraphReport", "explain_grad",
           "GradExplanation", "find_nonfinite", "nan_provenance", "NonFiniteReport"]
