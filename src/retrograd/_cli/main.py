"""The ``retrograd`` command (``python -m retrograd``): its parser and its dispatch.

- ``retrograd demo``: train a small CNN on the 8x8 handwritten digits shipped with
  retrograd, check one layer's gradients with gradcheck, and write the gradient-flow
  plot, a picture of one step's backward graph, the graph's memory report and the
  metrics to ``./retrograd-demo/``. Options: ``--epochs``, ``--model mlp|cnn``,
  ``--amp bf16``, ``--checkpoint``, ``--out``, ``--seed``.
- ``retrograd tour``: the core gradient ideas with real numbers, in the terminal.
- ``retrograd check FILE.py [ARGS]``: run a PyTorch script with ``torch`` mapped to
  retrograd.
- ``retrograd run --nproc N FILE.py [ARGS]``: run N ranks of a distributed script under
  mpiexec (torchrun's role; see docs/distributed.md).

Example:
    >>> from retrograd._cli.main import build_parser
    >>> args = build_parser().parse_args(["demo", "--epochs", "2", "--model", "mlp"])
    >>> args.command, args.epochs, args.model, args.out
    ('demo', 2, 'mlp', 'retrograd-demo')
"""

from __future__ import annotations

import argparse
import os
import sys

from .demo import demo
from .tour import tour

__all__ = ["main", "build_parser"]


def _positive(kind):
    """An argparse type: ``kind`` (int or float) parsed, and refused unless positive."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'a whole number' if kind is int else 'a number'}, got "
                f"{text!r}") from None
        if value <= 0 or (kind is int and value < 1):
            raise argparse.ArgumentTypeError(
                f"must be {'at least 1' if kind is int else 'above 0'}, got {text}")
        return value
    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def _version() -> str:
    import platform

    import numpy

    from ..version import retrograd_version

    return (f"retrograd {retrograd_version} (NumPy {numpy.__version__}, Python "
            f"{platform.python_version()})")


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of ``retrograd``.

    Example:
        >>> from retrograd._cli.main import build_parser
        >>> build_parser().parse_args(["check", "train.py", "--lr", "0.1"]).args
        ['--lr', '0.1']
    """
    p = argparse.ArgumentParser(
        prog="retrograd", description="retrograd: PyTorch's autograd and training stack on "
        "NumPy. Subcommands show gradients at work.")
    p.add_argument("--version", action="version", version=_version(),
                   help="print retrograd's version (and NumPy's and Python's) and exit")
    sub = p.add_subparsers(dest="command", metavar="{demo,tour,check}",
                           help="what to run; `retrograd COMMAND -h` lists its options")
    d = sub.add_parser("demo", help="train a small network on handwritten digits and write "
                       "pictures of its gradients (gradient flow, graph, memory report)",
                       description="Train a small network on the 8x8 handwritten digits "
                       "shipped with retrograd and write pictures of its gradients.")
    d.add_argument("--epochs", type=_positive(int), default=5,
                   help="passes over the training set (default 5)")
    d.add_argument("--model", choices=("cnn", "mlp"), default="cnn",
                   help="convolutional network (default) or a multilayer perceptron")
    d.add_argument("--amp", choices=("bf16",), default=None,
                   help="mixed precision: run matmuls and convolutions in bfloat16")
    d.add_argument("--checkpoint", action="store_true",
                   help="gradient checkpointing: recompute the feature layers in backward "
                   "instead of saving their activations")
    d.add_argument("--out", default="retrograd-demo", help="output folder, made if missing "
                   "(default ./retrograd-demo)")
    d.add_argument("--seed", type=int, default=0, help="random seed (default 0); the run is "
                   "deterministic for a seed")
    d.add_argument("--batch-size", type=_positive(int), default=64,
                   help="images per optimizer step (default 64)")
    d.add_argument("--lr", type=_positive(float), default=1e-2,
                   help="Adam learning rate (default 0.01)")
    d.add_argument("--limit", type=_positive(int), default=None,
                   help="use only the first N training images (quick runs)")
    d.add_argument("--no-progress", action="store_true",
                   help="plain lines only; without this flag a progress bar is shown when "
                   "the output is a terminal (and plain lines when it is piped)")
    sub.add_parser("tour", help="the core gradient ideas with numbers (backward, vᵀJ, "
                   "accumulation, detach/no_grad, higher order)",
                   description="The core gradient ideas, step by step, with real numbers.")
    c = sub.add_parser("check", help="run a PyTorch script with torch mapped to retrograd",
                       description="Run a PyTorch script with `import torch` giving "
                       "retrograd, e.g. retrograd check train.py --epochs 3")
    # nargs="?" so a missing script gets our message, not "required: file, args"
    c.add_argument("file", nargs="?", help="the Python script to run")
    c.add_argument("args", nargs=argparse.REMAINDER,
                   help="arguments passed on to the script (its sys.argv[1:])")
    r = sub.add_parser("run", help="run N ranks of a distributed script under mpiexec "
                       "(torchrun's role)",
                       description="Run N ranks of a torch.distributed script under mpiexec, "
                       "with torchrun's environment variables, e.g. retrograd run --nproc 2 "
                       "train.py")
    r.add_argument("--nproc", "--nproc-per-node", "--nproc_per_node", type=_positive(int),
                   default=1, dest="nproc", help="number of ranks (default 1)")
    r.add_argument("--hostfile", default=None, help="Open MPI hostfile: spread the ranks "
                   "over several machines")
    r.add_argument("--mpiexec-arg", action="append", default=[], dest="mpiexec_args",
                   help="extra argument for mpiexec (repeatable)")
    r.add_argument("file", nargs="?", help="the Python script to run")
    r.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    return p

def _usage_error(command: str, message: str) -> int:
    """Report a mistake in the command line as argparse does (no traceback); status 2."""
    print(f"retrograd {command}: error: {message}", file=sys.stderr)
    return 2


def _check_out_dir(out: str) -> str | None:
    """Make the demo's output folder; the reason it cannot be used, or None."""
    try:
        os.makedirs(out, exist_ok=True)
    except FileExistsError:
        return f"argument --out: {out!r} is a file, not a folder; give a folder name"
    except OSError as e:
        return (f"argument --out: cannot make the folder {out!r} ({e.strerror}); give a "
                "folder you can write to")
    if not os.access(out, os.W_OK):
        return f"argument --out: cannot write to the folder {out!r}; give one you can write to"
    return None


def main(argv=None) -> int:
    """Entry point of the ``retrograd`` command; returns the exit status.

    Example:
        >>> from retrograd._cli.main import main
        >>> main(["check"])  # mistakes are reported in a line, without a traceback
        2
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            problem = _check_out_dir(args.out)
            if problem:
                return _usage_error("demo", problem)
            demo(epochs=args.epochs, model=args.model, amp=args.amp,
                 checkpoint=args.checkpoint, out=args.out, seed=args.seed,
                 batch_size=args.batch_size, lr=args.lr, limit=args.limit,
                 progress=False if args.no_progress else None)
            return 0
        if args.command == "tour":
            return tour()
        if args.command == "check":
            if args.file is None:
                return _usage_error("check", "no script given: retrograd check FILE.py "
                                    "[ARGS...] runs FILE.py with `import torch` giving "
                                    "retrograd")
            from .check import run_check

            return run_check(args.file, args.args)
        if args.command == "run":
            if args.file is None:
                return _usage_error("run", "no script given: retrograd run --nproc N FILE.py "
                                    "[ARGS...] runs N ranks of FILE.py under mpiexec")
            from ..distributed.launch import run

            return run(args.nproc, args.file, args.args, args.hostfile, args.mpiexec_args)
    except KeyboardInterrupt:
        print("\nretrograd: interrupted", file=sys.stderr)
        return 130
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
