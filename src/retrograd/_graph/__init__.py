"""The graph layer, below the op layer: nodes and edges (node.py), the backward engine
(engine.py) and the state of what it serves: saved-tensor hooks, provenance cut markers,
forward-mode AD's tangents, anomaly mode's reports, and the entry points
``backward``/``grad`` (entry_points.py). ``retrograd.autograd`` is the public face.
"""
