"""``retrograd check FILE.py``: run a PyTorch script with ``torch`` mapped to retrograd.

While the script runs, ``import torch`` (and ``import torch.nn``, ``from torch.optim
import SGD``, ``torch.utils.data``, ...) gives retrograd's modules, so a script written
for PyTorch runs unchanged. A part of PyTorch retrograd does not have fails with a
clear ``ModuleNotFoundError`` naming it.

Example:
    >>> import sys
    >>> from retrograd._cli.check import torch_alias
    >>> with torch_alias():
    ...     import torch.nn.functional as F
    ...     print(F.__name__, sys.modules["torch"].__name__)
    retrograd.nn.functional retrograd
    >>> after = getattr(sys.modules.get("torch"), "__name__", "no torch")
    >>> after in ("torch", "no torch")  # afterwards, torch is what it was before
    True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import time
import traceback

__all__ = ["torch_alias", "run_check"]


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module) -> None:  # already executed as the retrograd module
        return None


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch`` and ``torch.*`` as ``retrograd`` and ``retrograd.*``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        real = "retrograd" + fullname[len("torch"):]
        try:
            found = importlib.util.find_spec(real)
        except (ImportError, ValueError):
            found = None
        if found is None:
            parent, _, attr = real.rpartition(".")
            mod = sys.modules.get(parent)
            if mod is not None and hasattr(mod, attr) and isinstance(
                    getattr(mod, attr), type(sys)):
                real = getattr(mod, attr).__name__
            else:
                raise ModuleNotFoundError(
                    f"No module named '{fullname}': retrograd has no {real} (the part of "
                    f"PyTorch this script imports). retrograd covers autograd and the "
                    "training stack: torch, torch.nn, torch.optim, torch.utils.data, "
                    "torch.autograd, torch.amp, torch.utils.checkpoint.", name=fullname)
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


class torch_alias:
    """Context manager: ``import torch`` gives retrograd inside the block.

    ``sys.modules`` entries for ``torch`` and ``torch.*`` are added on import and
    removed (with the finder) on exit, so a real PyTorch is untouched afterwards.

    Example:
        >>> from retrograd._cli.check import torch_alias
        >>> with torch_alias():
        ...     import torch
        ...     print(torch.tensor([1.0, 2.0]).sum())
        tensor(3.)
    """

    def __init__(self):
        self._finder = _TorchFinder()
        self._saved: dict = {}

    def __enter__(self):
        for name in list(sys.modules):
            if name == "torch" or name.startswith("torch."):
                self._saved[name] = sys.modules.pop(name)
        sys.meta_path.insert(0, self._finder)
        return self

    def __exit__(self, *exc) -> bool:
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        for name in list(sys.modules):
            if name == "torch" or name.startswith("torch."):
                del sys.modules[name]
        sys.modules.update(self._saved)
        return False


def run_check(path: str, args: list | None = None) -> int:
    """Run the script at ``path`` (with ``args`` as its argv) under ``torch_alias``.

    Returns the exit status: 0 when the script finished, 1 when it raised (the
    traceback is printed with a hint when the cause is a missing PyTorch feature).
    """
    if not os.path.isfile(path):
        print(f"retrograd check: no such file: {path}", file=sys.stderr)
        return 2
    typed, path = path, os.path.abspath(path)  # __file__ is absolute, as in Python 3.9+
    args = list(args or [])
    if args and args[0] == "--":
        args = args[1:]
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [typed] + args
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    t = time.perf_counter()
    status = 0
    try:
        with torch_alias():
            runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception as e:
        print(format_user_traceback(e, path), end="", file=sys.stderr)
        hint = _hint(e)
        if hint:
            print(f"\nretrograd check: {hint}", file=sys.stderr)
        status = 1
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path
    took = time.perf_counter() - t
    verdict = "ran to the end" if status == 0 else f"stopped (exit status {status})"
    print(f"\nretrograd check: {os.path.basename(path)} {verdict} with torch = retrograd "
          f"in {took:.1f} s", file=sys.stderr)
    return status


# Note [User tracebacks]
# A script's error is printed from the script's own first frame: the frames above it
# (run_check, runpy) are how the script was started, not where it failed, so they
# are cut. Inside the traceback, a frame of a pure forwarding wrapper (autocast's
# ``autocast_entry``, which only calls the function it wraps) is left out when a
# deeper frame follows, so the wrapped function's frame still shows where it failed;
# a wrapper frame that raised itself is kept. Only the printed text changes: the
# exception and its ``__traceback__`` are untouched (pdb and logging see every frame).
# Plain ``python script.py`` keeps CPython's own printing: hiding frames there would
# need a global ``sys.excepthook``, and ``__tracebackhide__`` is a pytest/IPython
# convention that plain Python ignores.

_FORWARDING_WRAPPERS = {"autocast_entry"}


def format_user_traceback(exc: BaseException, path: str) -> str:
    """``exc``'s traceback as Python prints it, from the first frame in the script at
    ``path`` (Note [User tracebacks]); without such a frame (a syntax error) it starts
    at the error itself.

    Example:
        >>> import os, tempfile
        >>> from retrograd._cli.check import format_user_traceback
        >>> with tempfile.TemporaryDirectory() as d:
        ...     path = os.path.join(d, "script.py")
        ...     with open(path, "w") as f:
        ...         _ = f.write("1 / 0")
        ...     try:
        ...         exec(compile("1 / 0", path, "exec"), {})
        ...     except ZeroDivisionError as e:
        ...         text = format_user_traceback(e, path)
        >>> print(text, end="")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
          File ".../script.py", line 1, in <module>
            1 / 0...
        ZeroDivisionError: division by zero
    """
    target = os.path.realpath(path)
    tb = exc.__traceback__
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) != target:
        tb = tb.tb_next
    if tb is None and not isinstance(exc, SyntaxError):
        tb = exc.__traceback__  # the script was never entered: show every frame
    te = traceback.TracebackException(type(exc), exc, tb)
    todo, seen = [te], set()
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        frames = list(t.stack)
        kept = [f for i, f in enumerate(frames)
                if not (f.name in _FORWARDING_WRAPPERS and i + 1 < len(frames))]
        if len(kept) != len(frames):
            t.stack = traceback.StackSummary.from_list(kept)
        todo.extend(c for c in (t.__cause__, t.__context__) if c is not None)
    return "".join(te.format())


def _hint(e: Exception) -> str:
    msg = str(e)
    if isinstance(e, AttributeError) and "retrograd" in msg:
        return ("the script uses a part of PyTorch that retrograd does not provide "
                f"({msg}). See docs/compatibility.md for what is covered.")
    if isinstance(e, ModuleNotFoundError) and (e.name or "").startswith("torch"):
        return msg
    if "cuda" in msg.lower():
        return "retrograd runs on the CPU only: use device='cpu' (torch.cuda.is_available() " \
               "is False)."
    return ""
