"""``torch.func.rearrange``: einops-style reordering of a tensor's axes by a pattern
(``"b (h w) c -> b h w c"``), as one reshape, one permute and one reshape.

Example:
    >>> import retrograd as torch
    >>> x = torch.arange(24.).reshape(2, 3, 4)
    >>> torch.func.rearrange(x, "b h w -> b (w h)").shape
    torch.Size([2, 12])
"""

from __future__ import annotations

import keyword
import math
import warnings
from collections.abc import Sequence

from .._functions.namespace import stack
from .._tensor.tensor import Tensor

__all__ = ["rearrange"]

_ELLIPSIS = "\u2026"  # '...' once parsed: one character, so it reads as one axis name


# Note [rearrange patterns]
# A side of a pattern is a list of dims; each dim is a group of axis names (a bare name
# is a group of one, "(h w)" a group of two, "()" or "1" an empty group: a dim of size 1)
# or the ellipsis, standing for the dims no name claims. Both sides must name the same
# axes. The left side's groups are split into single axes (one reshape: a group's
# unknown size is the dim's size over the product of the sizes given as keywords), the
# axes are put in the right side's order (one permute, empty groups dropped), and the
# right side's groups are merged (one reshape, empty groups becoming dims of size 1).
# The pattern language and its ValueErrors are einops' (PyTorch's functorch.einops).


def _check_name(name: str) -> None:
    if not name.isidentifier():
        raise ValueError(f"Invalid axis identifier: {name}\nnot a valid python identifier")
    if name[0] == "_" or name[-1] == "_":
        raise ValueError(f"Invalid axis identifier: {name}\naxis name should should not start "
                         "or end with underscore")  # sic, einops' wording
    if keyword.iskeyword(name):
        warnings.warn(f"It is discouraged to use axes names that are keywords: {name}",
                      RuntimeWarning, stacklevel=4)
    if name == "axis":
        warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error "
                      "in future", FutureWarning, stacklevel=4)


def _parse_side(text: str) -> tuple[list, set, bool]:
    """(dims, names, ellipsis inside brackets) of one side (Note [rearrange patterns])."""
    if "." in text:
        if "..." not in text:
            raise ValueError("Expression may contain dots only inside ellipsis (...)")
        if text.count("...") != 1 or text.count(".") != 3:
            raise ValueError("Expression may contain dots only inside ellipsis (...); only one "
                             "ellipsis for tensor ")
        text = text.replace("...", _ELLIPSIS)
    dims: list = []
    names: set = set()
    group: list | None = None
    in_bracket_ellipsis = False

    def add(word: str) -> None:
        nonlocal in_bracket_ellipsis
        if word in names:
            raise ValueError(f"Indexing expression contains duplicate dimension '{word}'")
        if word == _ELLIPSIS:
            names.add(word)
            if group is None:
                dims.append(word)
            else:
                group.append(word)
                in_bracket_ellipsis = True
            return
        if word.isdecimal():
            if int(word) == 1:
                if group is None:
                    dims.append([])
                return
            if int(word) < 1:
                raise ValueError(f"Anonymous axis should have positive length, not {int(word)}")
            raise ValueError("rearrange only supports unnamed axes of size 1")
        _check_name(word)
        names.add(word)
        if group is None:
            dims.append([word])
        else:
            group.append(word)

    word = ""
    for ch in text + " ":
        if ch in "() ":
            if word:
                add(word)
            word = ""
            if ch == "(":
                if group is not None:
                    raise ValueError("Axis composition is one-level (brackets inside brackets "
                                     "not allowed)")
                group = []
            elif ch == ")":
                if group is None:
                    raise ValueError("Brackets are not balanced")
                dims.append(group)
                group = None
        elif ch.isalnum() or ch in ("_", _ELLIPSIS):
            word += ch
        else:
            raise ValueError(f"Unknown character '{ch}'")
    if group is not None:
        raise ValueError(f"Imbalanced parentheses in expression: '{text}'")
    return dims, names, in_bracket_ellipsis


def _plan(ndim: int, pattern: str, lengths: dict) -> tuple:
    """(left dims, right dims, ellipsis dims count) of a checked pattern."""
    try:
        left_text, right_text = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    if _ELLIPSIS in lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    left, lnames, left_bracket_ellipsis = _parse_side(left_text)
    right, rnames, _ = _parse_side(right_text)
    if _ELLIPSIS in rnames and _ELLIPSIS not in lnames:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left_bracket_ellipsis:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for n in lengths.values():
        if type(n) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(n)}")
    if lnames ^ rnames:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {lnames ^ rnames}")
    if lengths.keys() - lnames:
        raise ValueError(f"Identifiers not found in rearrange expression: "
                         f"{set(lengths.keys() - lnames)}")
    if _ELLIPSIS in lnames:
        if len(left) - 1 > ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left) - 1}) must be less "
                             f"than or equal to the number of dimensions in the tensor ({ndim})")
        return left, right, ndim - (len(left) - 1)
    if len(left) != ndim:
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the "
                         f"number of dimensions in the tensor ({ndim})")
    return left, right, 0


def rearrange(tensor: Tensor | Sequence[Tensor], pattern: str, **axes_lengths: int) -> Tensor:
    """Reorder, split, merge, add or drop (size-1) axes by an einops pattern
    (Note [rearrange patterns]); a list or tuple of tensors is stacked first.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import rearrange
        >>> x = torch.arange(6).reshape(2, 3)
        >>> rearrange(x, "a b -> b a")
        tensor([[0, 3],
                [1, 4],
                [2, 5]])
        >>> rearrange(x, "a (b c) -> a b c", c=1).shape, rearrange(x, "... b -> (... b) 1").shape
        (torch.Size([2, 3, 1]), torch.Size([6, 1]))
    """
    if not isinstance(tensor, Tensor):
        tensor = stack(list(tensor))
    left, right, n_ell = _plan(tensor.dim(), pattern, axes_lengths)
    sizes: dict = {}  # axis name (or ellipsis position) -> size
    split: list = []  # the single axes the left side is split into, in order
    dim = 0
    for d in left:
        if d == _ELLIPSIS:
            for j in range(n_ell):
                sizes[(_ELLIPSIS, j)] = tensor.shape[dim + j]
                split.append((_ELLIPSIS, j))
            dim += n_ell
            continue
        size = tensor.shape[dim]
        known = [axes_lengths[n] for n in d if n in axes_lengths]
        unknown = [n for n in d if n not in axes_lengths]
        if len(unknown) > 1:
            raise ValueError(f"rearrange: cannot infer the sizes of {unknown} in "
                             f"({' '.join(d)}) from dim {dim} of size {size}: give all but one "
                             "of them as keywords, e.g. rearrange(x, pattern, "
                             f"{unknown[0]}=...)")
        rest, left_over = divmod(size, math.prod(known)) if known else (size, 0)
        if left_over or (not unknown and rest != 1) or (not d and size != 1):
            raise ValueError(f"rearrange: dim {dim} of the tensor has size {size}, which "
                             f"({' '.join(d) or '1'}) with {axes_lengths} cannot match")
        for n in d:
            sizes[n] = axes_lengths.get(n, rest)
            split.append(n)
        dim += 1
    order, merged = [], []
    for d in right:
        members = [(_ELLIPSIS, j) for j in range(n_ell)] if d == _ELLIPSIS else [
            m for n in d for m in ([(_ELLIPSIS, j) for j in range(n_ell)] if n == _ELLIPSIS
                                   else [n])]
        order += [split.index(m) for m in members]
        if d == _ELLIPSIS:
            merged += [sizes[m] for m in members]
        else:
            merged.append(math.prod(sizes[m] for m in members))
    out = tensor.reshape([sizes[m] for m in split]).permute(order)
    return out.reshape(merged)
