"""Read and write the safetensors format (plain dicts of named tensors).

safetensors is the weight format shared by PyTorch, JAX, TensorFlow, MLX and the
Hugging Face hub: an 8-byte little-endian header length, a JSON header mapping each
name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (plus an optional
``"__metadata__"`` dict of strings), then the raw little-endian bytes. It holds no
code. The API mirrors ``safetensors.torch``; the reading and writing is done by the
``safetensors`` package (``pip install 'retrograd[safetensors]'``).

Example:
    >>> import retrograd as torch
    >>> from retrograd import safetensors
    >>> blob = safetensors.save({'w': torch.ones(2, 2), 'b': torch.zeros(2)})
    >>> safetensors.load(blob)['w']
    tensor([[1., 1.],
            [1., 1.]])
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._core import dtype as D
from ._core.device import check_device
from ._core.device import device as _device
from ._serialization.atomic_write import atomic_write
from ._tensor.tensor import Tensor, _make

__all__ = ["save", "save_file", "load", "load_file", "safe_open", "SafetensorError"]

# Note [safetensors through the safetensors package]
# The ``safetensors`` package (Hugging Face's reference implementation, in Rust) parses,
# validates and writes the files; retrograd hands it NumPy arrays and wraps what comes
# back. Its NumPy API serves every dtype retrograd has, bfloat16 (ml_dtypes) included,
# with one exception: ``safetensors.numpy.load(bytes)`` looks dtypes up in a table that
# has no "BF16" entry (``load_file`` and ``safe_open`` do read BF16, through the Rust
# side), so reading bytes calls the package's own parser ``safetensors.deserialize``
# and maps its dtype codes with the table below, the only code of our own. retrograd
# never imports torch, so ``safetensors.torch`` is not an option.

# safetensors dtype codes <-> retrograd dtypes
_CODES = {"F64": D.float64, "F32": D.float32, "BF16": D.bfloat16, "F16": D.float16,
          "I64": D.int64, "I32": D.int32, "I16": D.int16, "I8": D.int8, "U8": D.uint8,
          "BOOL": D.bool}


class SafetensorError(RuntimeError):
    """A safetensors file that breaks the format (the message says how)."""


def _package():
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ModuleNotFoundError(
            "retrograd.safetensors needs the safetensors package, which is not installed: "
            "pip install 'retrograd[safetensors]' (or pip install safetensors)") from None
    return safetensors


def _arrays(tensors: dict[str, Tensor], metadata: dict[str, str] | None) -> dict:
    if not isinstance(tensors, dict):
        raise TypeError(f"safetensors.save expects a dict of name -> Tensor, got "
                        f"{type(tensors).__name__}")
    if metadata is not None and (not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError("metadata must be a dict of str -> str (convert values with str())")
    arrays = {}
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be strings, got {type(name).__name__}")
        if name == "__metadata__":
            raise ValueError("'__metadata__' is reserved for metadata; rename the tensor")
        if not isinstance(t, Tensor):
            raise TypeError(f"safetensors stores tensors only; {name!r} is a "
                            f"{type(t).__name__}")
        arr = t._data
        arrays[name] = arr if arr.flags.c_contiguous else arr.copy(order="C")  # keeps 0-d
    return arrays


def _tensor(name: str, arr: np.ndarray, code: str, where: str) -> Tensor:
    if arr.dtype.newbyteorder("=") not in D.FROM_NP:
        raise SafetensorError(f"{where}: tensor {name!r} has dtype {code}, which retrograd has "
                              f"no dtype for (supported: {', '.join(_CODES)})")
    if not arr.flags.writeable:  # a window on the package's buffer: take our own copy
        arr = arr.copy()
    return _make(arr.astype(arr.dtype.newbyteorder("="), copy=False))


def _errors(where: str):
    """Re-raise the package's errors as ``SafetensorError`` naming the call."""
    pkg = _package()

    class _Ctx:
        def __enter__(self):
            return None

        def __exit__(self, kind, exc, tb):
            if kind is not None and issubclass(kind, pkg.SafetensorError):
                raise SafetensorError(f"{where}: {exc} (the safetensors package refused the "
                                      "data: it is damaged or not a safetensors file)") \
                    from None
            return False

    return _Ctx()


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of a dict of tensors.

    Example:
        >>> import retrograd as torch
        >>> from retrograd import safetensors
        >>> blob = safetensors.save({'x': torch.tensor([1, 2], dtype=torch.int32)})
        >>> blob[8:9], len(blob) % 8
        (b'{', 0)
    """
    arrays = _arrays(tensors, metadata)
    with _errors("safetensors.save"):
        return _package().numpy.save(arrays, metadata=metadata)


def save_file(tensors: dict[str, Tensor], filename: str | os.PathLike,
              metadata: dict[str, str] | None = None) -> None:
    """Write a dict of tensors to ``filename`` in the safetensors format (atomically: a
    crash mid-write leaves any previous file intact).

    Example:
        >>> import os, tempfile
        >>> import retrograd as torch
        >>> from retrograd.safetensors import save_file, load_file
        >>> path = os.path.join(tempfile.mkdtemp(), 'model.safetensors')
        >>> save_file({'w': torch.eye(2)}, path, metadata={'format': 'pt'})
        >>> load_file(path)['w']
        tensor([[1., 0.],
                [0., 1.]])
    """

    blob = save(tensors, metadata)
    atomic_write(filename, lambda out: out.write(blob))


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors in safetensors ``data`` (bytes), by name.

    Example:
        >>> import retrograd as torch
        >>> from retrograd import safetensors
        >>> safetensors.load(safetensors.save({'a': torch.arange(3)}))
        {'a': tensor([0, 1, 2])}
    """
    where = "safetensors.load"
    with _errors(where):
        entries = _package().deserialize(bytes(data))
    out = {}
    for name, info in entries:
        code = info["dtype"]
        if code not in _CODES:
            raise SafetensorError(f"{where}: tensor {name!r} has dtype {code}, which retrograd "
                                  f"has no dtype for (supported: {', '.join(_CODES)})")
        dt = np.dtype(_CODES[code].np).newbyteorder("<")
        out[name] = _tensor(name, np.frombuffer(info["data"], dt).reshape(info["shape"]),
                            code, where)
    return out


def _check_device(device) -> None:

    check_device(_device(device) if isinstance(device, str) else device)


def load_file(filename: str | os.PathLike, device: str = "cpu") -> dict[str, Tensor]:
    """The tensors stored in a safetensors file, by name.

    Example:
        >>> import os, tempfile
        >>> import retrograd as torch
        >>> from retrograd.safetensors import save_file, load_file
        >>> path = os.path.join(tempfile.mkdtemp(), 'w.safetensors')
        >>> save_file({'b': torch.zeros(1), 'a': torch.ones(1)}, path)
        >>> sorted(load_file(path))
        ['a', 'b']
    """
    _check_device(device)
    with safe_open(filename, framework="np") as f:
        return {name: f.get_tensor(name) for name in f.keys()}


class safe_open:
    """Open a safetensors file and read tensors one at a time (``keys``, ``get_tensor``,
    ``metadata``), as ``safetensors.safe_open`` does.

    Example:
        >>> import os, tempfile
        >>> import retrograd as torch
        >>> from retrograd.safetensors import save_file, safe_open
        >>> path = os.path.join(tempfile.mkdtemp(), 'w.safetensors')
        >>> save_file({'w': torch.ones(2)}, path, metadata={'step': '7'})
        >>> with safe_open(path, framework='pt') as f:
        ...     f.keys(), f.metadata(), f.get_tensor('w')
        (['w'], {'step': '7'}, tensor([1., 1.]))
    """

    def __init__(self, filename: str | os.PathLike, framework: str = "pt",
                 device: str = "cpu") -> None:
        _check_device(device)
        self._where = f"safe_open({os.fspath(filename)!r})"
        with _errors(self._where):
            self._f: Any = _package().safe_open(os.fspath(filename), framework="np")

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc) -> None:
        self._f.__exit__(*exc)

    def keys(self) -> list[str]:
        return sorted(self._f.keys())

    def metadata(self) -> dict[str, str]:
        return dict(self._f.metadata() or {})

    def get_tensor(self, name: str) -> Tensor:
        if name not in self._f.keys():
            raise SafetensorError(f"{self._where}: no tensor named {name!r} (the file has "
                                  f"{', '.join(self.keys()) or 'none'})")
        with _errors(self._where):
            code = self._f.get_slice(name).get_dtype()
            arr = self._f.get_tensor(name)
        return _tensor(name, arr, code, self._where)
