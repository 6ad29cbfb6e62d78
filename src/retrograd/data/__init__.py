"""Small data sets shipped inside retrograd (used by ``retrograd demo`` and the examples).

``load_digits()`` returns the UCI 8x8 handwritten digits (1,797 images, CC BY 4.0; see
``DIGITS_LICENSE.txt`` next to this file for the source and licence).

Example:
    >>> from retrograd.data import load_digits
    >>> images, labels = load_digits()
    >>> tuple(images.shape), images.dtype, int(labels[:10].sum())
    ((1797, 1, 8, 8), torch.float32, 45)
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["load_digits", "DIGITS_PATH"]

#: where the compressed arrays live inside the installed package
DIGITS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "digits.npz")


def load_digits(scaled: bool = True, as_tensors: bool = True):
    """The 8x8 digits as ``(images, labels)``.

    ``images`` has shape (1797, 1, 8, 8) (a channel axis for convolutions); with
    ``scaled`` the pixel counts 0..16 become floats in [0, 1]. ``labels`` are int64
    class indices 0..9. With ``as_tensors=False`` NumPy arrays are returned.

    Example:
        >>> from retrograd.data import load_digits
        >>> x, y = load_digits(scaled=False, as_tensors=False)
        >>> x.shape, x.dtype.name, int(x.max()), y[:5].tolist()
        ((1797, 1, 8, 8), 'uint8', 16, [0, 1, 2, 3, 4])
    """
    with np.load(DIGITS_PATH) as f:
        images = f["images"][:, None, :, :]
        labels = f["labels"].astype(np.int64)
    if scaled:
        images = images.astype(np.float32) / np.float32(16.0)
    if not as_tensors:
        return images, labels
    from .._tensor.tensor import _make

    return _make(np.ascontiguousarray(images)), _make(labels)
