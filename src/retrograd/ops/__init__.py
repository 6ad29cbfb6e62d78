"""The op layer: what an op is, how one runs and is recorded, and every public tensor function.

Read it in this order (docs/how-it-works.md walks the same path with examples):

* ``op.py``: the op record (``Op``): a forward kernel and one derivative rule per input,
  and ``record``, which puts a node on the graph.
* ``dispatch.py``: running an op: dtype promotion, the kernel call, wrapping, recording
  (the hot path); ``inplace.py`` and ``overlap.py``: PyTorch's checks before a write.
* ``records/``: the derivative table, one file a family (``elementwise``, ``shape``,
  ``matmul``, ``linalg``, ``nn``, ``special``, ``scans``, ...): the counterpart of
  PyTorch's derivatives.yaml.
* ``kernels/``: the NumPy kernels that need more than one line (sum, var, pow, linalg).
* ``functions/``: the public functions (``retrograd.add``, ``Tensor.sum``, ...): argument
  parsing and PyTorch's rules, then a record; ``public.py`` says where each shows up and
  ``namespace.py`` gathers them; ``methods.py`` makes them ``Tensor`` methods.
* ``jvp_rules.py`` and ``batch_rules.py``: forward-mode AD and vmap for the records.

Note [Module aliases]
A record module is imported under one alias everywhere, so that ``T.add`` means the same
record in every file: ``T`` the table (``records/table.py``: elementwise, reductions and
the families it gathers), ``TSH`` shape, ``TM`` matmul, ``TL`` linalg,
``TN`` nn, ``TA`` activations, ``TSP`` spatial, ``TSF`` special, ``TSC`` scans, ``TP``
polynomials, ``TPR`` prelu, ``TC`` ctc, ``TD`` distance, ``TG`` gamma, ``TCO``
construction, ``TFS`` fill_split, ``TLO`` losses, ``TNO`` normalization, ``TRS``
resize, ``TAT`` attention; ``K`` is ``kernels/linalg.py``, ``KA``
``kernels/activations.py``. Outside ``ops/``: ``D`` is ``_core/dtype.py``, ``L``
``_core/layouts.py``, ``F`` ``nn/functional``, ``random_dist``
``_random/distributions.py``. tests/project/test_layout.py checks this.

Example:
    >>> from retrograd.ops.records import table as T
    >>> T.mul.name, T.mul.node_name
    ('mul', 'MulBackward0')
"""
