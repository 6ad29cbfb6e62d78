"""``torch.version`` and ``torch.__version__``: the PyTorch API level retrograd follows.

Example:
    >>> import retrograd as torch
    >>> torch.__version__ >= "2.0", torch.__version__ >= (2, 13), torch.version.cuda
    (True, True, None)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# Note [Version seen by user code]
# Scripts gate features on the PyTorch version (``if torch.__version__ >= "2.0"``,
# ``packaging.version.parse(torch.__version__) >= Version("1.12")``, ``tuple(int(x) for x
# in torch.__version__.split(".")[:2])``). retrograd follows PyTorch 2.13's API and is
# tested against it, so ``retrograd.__version__`` is "2.13.0+retrograd.X.Y.Z": the
# PyTorch version it matches, with retrograd's own version as the local label (where
# PyTorch's CPU wheel has "+cpu"). Every such test takes the modern branch, a printout
# still says retrograd, and the distribution's own version (``pip show retrograd``,
# ``importlib.metadata.version("retrograd")``, ``python -m retrograd --version``) stays
# retrograd's: ``retrograd.version.retrograd_version``. As PyTorch's ``TorchVersion``,
# the string compares as a PEP 440 version with strings, Version objects (packaging's)
# and tuples, in PEP 440's order (no dependency: ``_key``), and falls back to plain string
# comparison for what is no version.

#: retrograd's own version (the distribution's)
retrograd_version = "0.1.0"
#: the PyTorch release whose API and numbers retrograd follows
torch_version = "2.13.0"
#: no CUDA, HIP, ROCm or XPU build
cuda = hip = rocm = xpu = None
debug = False


# PEP 440's order, as packaging's Version keys it, for what version gates compare: the
# release (trailing zeros ignored), then a dev-only release < pre-releases (a < b < rc)
# < the release < its post-releases; dev releases of each before it; a local label
# after the release without one. Below/above stand for packaging's -inf/+inf.
_PEP440 = re.compile(
    r"^\s*v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>alpha|beta|preview|pre|rc|a|b|c)[-_.]?(?P<pre_n>\d*))?"
    r"(?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d*))?"
    r"(?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d*))?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$", re.I)
_BELOW, _ABOVE = (0,), (2,)
_PRE = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc",
        "preview": "rc"}


def _key(release: tuple, pre, post, dev, local) -> tuple:
    """packaging's comparison key of a version given by its parts."""
    rel = list(release)
    while len(rel) > 1 and rel[-1] == 0:
        rel.pop()
    if pre is None and post is None and dev is not None:
        pre_k = _BELOW
    else:
        pre_k = _ABOVE if pre is None else (1, pre[0], pre[1])
    post_k = _BELOW if post is None else (1, post)
    dev_k = _ABOVE if dev is None else (1, dev)
    if local is None:
        local_k = _BELOW
    else:
        local_k = (1,) + tuple((1, int(p), "") if str(p).isdigit() else (0, 0, str(p))
                               for p in local)
    return (tuple(rel), pre_k, post_k, dev_k, local_k)


def _parse(text: str):
    """The comparison key of a version string, or None when it is no PEP 440 version."""
    m = _PEP440.match(text)
    if m is None:
        return None
    g = m.groupdict()
    release = tuple(int(x) for x in g["release"].split("."))
    pre = (_PRE[g["pre_l"].lower()], int(g["pre_n"] or 0)) if g["pre_l"] else None
    if g["post_n1"]:
        post = int(g["post_n1"])
    else:
        post = int(g["post_n2"] or 0) if g["post_l"] else None
    dev = int(g["dev_n"] or 0) if g["dev_l"] else None
    local = tuple(re.split(r"[-_.]", g["local"].lower())) if g["local"] else None
    return _key(release, pre, post, dev, local)


def _key_of(other: Any):
    """The key of what a version is compared with: a string, a tuple of numbers, or a
    Version-like object (packaging's: ``release``, ``pre``, ``post``, ``dev``, ``local``)."""
    if isinstance(other, str):
        return _parse(other)
    if hasattr(other, "release") and hasattr(other, "pre"):
        local = other.local
        return _key(tuple(other.release), other.pre, other.post, other.dev,
                    None if local is None else tuple(str(local).split(".")))
    if isinstance(other, Iterable):
        return _parse(".".join(str(x) for x in other))
    return None


class TorchVersion(str):
    """A str that compares as a version with strings, Version objects and tuples
    (PyTorch's ``torch.torch_version.TorchVersion``).

    Example:
        >>> from retrograd.version import TorchVersion
        >>> v = TorchVersion("2.13.0+retrograd.0.1.0")
        >>> v > "2.9", v < (3,), v == "2.13.0+retrograd.0.1.0", v >= "abc"
        (True, True, True, False)
    """

    __slots__ = ()

    def _compare(self, other: Any, method: str) -> bool:
        mine, theirs = _parse(self), _key_of(other)
        if mine is None or theirs is None:
            return getattr(str, method)(self, other)
        return getattr(mine, method)(theirs)

    def __gt__(self, other: Any) -> bool:
        return self._compare(other, "__gt__")

    def __ge__(self, other: Any) -> bool:
        return self._compare(other, "__ge__")

    def __lt__(self, other: Any) -> bool:
        return self._compare(other, "__lt__")

    def __le__(self, other: Any) -> bool:
        return self._compare(other, "__le__")

    def __eq__(self, other: Any) -> bool:
        return self._compare(other, "__eq__")

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


__version__ = TorchVersion(f"{torch_version}+retrograd.{retrograd_version}")
