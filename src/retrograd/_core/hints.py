"""The type aliases public signatures share (PyTorch's ``torch/types.py``): a number, a
device, a shape, one int or several.

Example:
    >>> from retrograd._core.hints import Number, ShapeLike
    >>> isinstance(2.5, Number), ShapeLike
    (True, int | collections.abc.Sequence[int])
"""

from __future__ import annotations

from collections.abc import Sequence

from .device import device

__all__ = ["Number", "DeviceLike", "Shape", "ShapeLike", "FloatOrFloats"]

# Note [Type hints]
# Every public function carries hints on its parameters and its return (the test
# tests/test_type_hints.py says which functions are public and checks it). Every module
# has ``from __future__ import annotations``: the hints are strings, never evaluated at
# import or per call, so they cost nothing on the hot path. They name real types, which
# ``typing.get_type_hints`` resolves in the module's globals: a module that binds ``bool``,
# ``int`` or ``float`` to a retrograd dtype (``retrograd/__init__.py``, ``_core/dtype.py``)
# writes ``builtins.bool`` for Python's. A hint is an import like any other: it points down
# the layers, ``if TYPE_CHECKING:`` or not (tests/test_layout.py holds both to it). So a
# module below the class it would name says what it uses of it instead, with a Protocol:
# the graph layer's ``GraphTensor`` (``_graph/graph_tensor.py``), ``_functorch``'s
# ``ModuleLike``, viz's ``HasNamedParameters``; retrograd's Tensor and Module are such
# objects. ``if TYPE_CHECKING:`` serves only names a runtime import would make circular
# within a layer (the test evaluates those too). The aliases shared by many signatures
# live here, as PyTorch's ``torch/types.py`` has them.

#: a Python number where PyTorch takes a Scalar (torch.types.Number)
Number = int | float | bool
#: what ``device=`` accepts: a device, ``"cpu"``, ``"cuda:0"``, or an index (torch.types.Device)
DeviceLike = device | str | int
#: a shape: ``torch.Size``, a tuple or a list of ints (torch.types._size)
Shape = Sequence[int]
#: one int for every dimension, or one per dimension (``kernel_size=3``, ``dim=(0, 1)``)
ShapeLike = int | Sequence[int]
#: one float for every dimension, or one per dimension (``scale_factor``)
FloatOrFloats = float | Sequence[float]
