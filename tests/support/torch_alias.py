"""Run a script written for PyTorch on retrograd: ``import torch`` (and ``torch.nn``,
``torch.nn.functional``, ``torch.utils.data``, ...) resolve to retrograd's modules, as if the
script began with ``import retrograd as torch``.

    python tests/support/torch_alias.py SCRIPT.py       # the script on retrograd
    python SCRIPT.py                                    # the same script on PyTorch
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import runpy
import sys


class _TorchIsRetrograd(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch`` and ``torch.<x>`` as ``retrograd`` and ``retrograd.<x>``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("retrograd" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass


def install() -> None:
    """Make ``import torch`` give retrograd in this process."""
    sys.meta_path.insert(0, _TorchIsRetrograd())


if __name__ == "__main__":
    install()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")
