"""``torch.version`` and ``torch.__version__``: the PyTorch API level retrograd follows.

Example:
    >>> import retrograd as torch
    >>> torch.__version__ >= "2.0", torch.__version__ >= (2, 13), torch.version.cuda
    (True, True, None)
"""

from __future__ import annotations

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
# the string compares as a PEP 440 version with strings, ``packaging`` Versions and
# tuples, and falls back to plain string comparison for what is no version.

#: retrograd's own version (the distribution's)
retrograd_version = "0.1.0"
#: the PyTorch release whose API and numbers retrograd follows
torch_version = "2.13.0"
#: no CUDA, HIP, ROCm or XPU build
cuda = hip = rocm = xpu = None
debug = False


class TorchVersion(str):
    """A str that compares as a version with strings, ``packaging`` Versions and tuples
    (PyTorch's ``torch.torch_version.TorchVersion``).

    Example:
        >>> from retrograd.version import TorchVersion
        >>> v = TorchVersion("2.13.0+retrograd.0.1.0")
        >>> v > "2.9", v < (3,), v == "2.13.0+retrograd.0.1.0", v >= "abc"
        (True, True, True, False)
    """

    __slots__ = ()

    def _compare(self, other: Any, method: str) -> bool:
        from packaging.version import InvalidVersion, Version
        try:
            if isinstance(other, Version):
                theirs = other
            elif isinstance(other, str):
                theirs = Version(other)
            elif isinstance(other, Iterable):
                theirs = Version(".".join(str(x) for x in other))
            else:
                raise InvalidVersion(other)
            return getattr(Version(self), method)(theirs)
        except InvalidVersion:
            return getattr(str, method)(self, other)

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
