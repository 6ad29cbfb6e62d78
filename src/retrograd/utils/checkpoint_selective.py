"""Selective activation checkpointing (SAC): a policy picks, op by op, which outputs of a
checkpointed region are kept from the forward and which are recomputed in backward.

Note [Selective checkpointing]
PyTorch runs the region under two dispatch modes: in the forward one the policy sees
every op (``policy_fn(ctx, op, *args, **kwargs)``) and outputs it marks SAVE are cached;
in the recompute one the cached outputs replace the ops' results. retrograd reaches the
same result at the level where it matters to backward, the tensors a node saves:

* ``create_selective_checkpoint_contexts(policy)`` returns a forward context and a
  recompute context for ``checkpoint(..., use_reentrant=False, context_fn=...)``.
* The forward context registers a record watcher (``HOOKS.watchers``,
  _graph/saved_hooks.py): each op recorded in the region calls the policy once with a
  ``SelectiveCheckpointContext`` (``op_output`` = its result), the op's record (its
  ``.name`` is the op's name, ``"mm"``) and its tensor/number inputs. Outputs marked
  ``MUST_SAVE``/``PREFER_SAVE`` (or ``True``) are remembered.
* When a node in the region saves a tensor for backward, checkpoint's pack hook keeps
  it, as the forward computed it, if the op that produced it was marked SAVE; any other
  saved tensor is dropped and recomputed as in plain checkpointing. A backward that needs
  only kept tensors recomputes nothing.
* The recompute context checks that kept tensors were not modified in place since the
  forward (PyTorch's "Tensor cached during selective activation checkpoint has been
  mutated"), unless ``allow_cache_entry_mutation=True``.

Differences that follow from retrograd having no aten dispatcher: ``op`` is a retrograd
op record, not ``torch.ops.aten.<op>.default`` (an op list may hold records, their names
or the public functions, ``[torch.mm]``); only ops that record a node (an input requires
grad) are seen; keyword and non-tensor parameters (``dim=``) are not passed to the policy;
``*_CPU_OFFLOAD`` keep the tensor (there is no device to offload from).

Example:
    >>> import functools
    >>> import retrograd as torch
    >>> from retrograd.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts
    >>> x = torch.tensor([0.5, 1.0], requires_grad=True)
    >>> ctx_fn = functools.partial(create_selective_checkpoint_contexts, ["sin"])
    >>> y = checkpoint(lambda t: t.sin().exp().sum(), x, use_reentrant=False, context_fn=ctx_fn)
    >>> y.backward(); x.grad
    tensor([1.4174, 1.2534])
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from typing import Any

from .._graph.saved_hooks import HOOKS
from .._tensor.tensor import Tensor

__all__ = ["CheckpointPolicy", "SAC_IGNORED_OPS", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]


class SelectiveCheckpointContext:
    """What the policy function is told about the op (``op_output``: its result).
    ``is_recompute`` is always False, as in PyTorch 2.13 (the policy runs in forward only).

    Example:
        >>> from retrograd.utils.checkpoint import SelectiveCheckpointContext
        >>> SelectiveCheckpointContext(is_recompute=False).is_recompute
        False
    """

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Per op: keep its output from the forward (``*_SAVE``) or recompute it
    (``*_RECOMPUTE``); ``MUST_`` and ``PREFER_`` act alike here (there is no compiler to
    override a preference). ``*_CPU_OFFLOAD`` keeps the output too (retrograd is on CPU).

    Example:
        >>> from retrograd.utils.checkpoint import CheckpointPolicy
        >>> CheckpointPolicy.PREFER_RECOMPUTE.value
        3
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_KEEP = frozenset({CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE,
                   CheckpointPolicy.MUST_CPU_OFFLOAD, CheckpointPolicy.PREFER_CPU_OFFLOAD})

# Ops whose policy is never asked (PyTorch's set holds aten.detach and prim.device:
# metadata ops that recomputation runs a different number of times); by name here.
SAC_IGNORED_OPS = {"detach", "alias", "view_as"}


class _Active(threading.local):
    def __init__(self) -> None:
        self.stack: list = []


_ACTIVE = _Active()


class _Kept:
    """What checkpoint's pack hook stores for a tensor the policy kept."""

    __slots__ = ("tensor", "version", "storage")

    def __init__(self, tensor: Tensor, storage) -> None:
        self.tensor = tensor
        self.version = tensor._vc[0]
        self.storage = storage

    def get(self) -> Tensor:
        if not self.storage.allow_cache_entry_mutation and self.tensor._vc[0] != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been "
                               "mutated (an in-place op changed an output the policy saved "
                               "after the forward; clone it before modifying it, or pass "
                               "allow_cache_entry_mutation=True)")
        return self.tensor


class _Storage:
    """The arrays of outputs the policy marked SAVE, shared by the two contexts."""

    def __init__(self, policy_fn: Callable, allow_cache_entry_mutation: bool) -> None:
        self.policy_fn = policy_fn
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.kept: dict[int, Any] = {}  # id(array) -> array (held so the id stays unique)

    def watch(self, node, outs, inputs) -> None:
        op = node._op
        if op.name in SAC_IGNORED_OPS:
            return
        ctx = SelectiveCheckpointContext(is_recompute=False, op_output=outs)
        policy = self.policy_fn(ctx, op, *inputs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if not isinstance(policy, CheckpointPolicy):
            raise TypeError("selective checkpoint policy must return a CheckpointPolicy (or a "
                            f"bool), but returned {policy!r} for op {op.name}")
        if policy in _KEEP:
            for o in (outs if isinstance(outs, tuple) else (outs,)):
                if isinstance(o, Tensor):
                    self.kept[id(o._data)] = o._data


def _sac_keep(x: Tensor):
    """A ``_Kept`` for ``x`` when the innermost active selective-checkpoint forward
    marked the op that produced it SAVE, else None (checkpoint's pack hook asks)."""
    if not _ACTIVE.stack:
        return None
    storage = _ACTIVE.stack[-1]
    if id(x._data) in storage.kept:
        return _Kept(x, storage)
    return None


class _SACForward:
    """Forward context: asks the policy for each recorded op (Note [Selective checkpointing])."""

    def __init__(self, storage: _Storage) -> None:
        self.storage = storage

    def __enter__(self):
        _ACTIVE.stack.append(self.storage)
        HOOKS.watchers.append(self.storage.watch)
        return self

    def __exit__(self, *exc) -> None:
        HOOKS.watchers.pop()
        _ACTIVE.stack.pop()


class _SACRecompute:
    """Recompute context: nothing to ask the policy again (kept tensors are not recomputed
    at all); marks the storage as in recomputation so ``_sac_keep`` stays off for it."""

    def __init__(self, storage: _Storage) -> None:
        self.storage = storage

    def __enter__(self):
        _ACTIVE.stack.append(_NO_KEEP)
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE.stack.pop()


class _NoKeep:
    kept: dict = {}


_NO_KEEP = _NoKeep()


def _op_key(op: Any) -> str:
    if isinstance(op, str):
        return op
    name = getattr(op, "name", None)  # an op record
    if isinstance(name, str):
        return name
    if callable(op) and hasattr(op, "__name__"):  # a public function: torch.mm
        return op.__name__
    raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type "
                     f"{type(op)}. (retrograd has no aten ops: list op records, op names "
                     "such as 'mm', or public functions such as torch.mm)")


def create_selective_checkpoint_contexts(policy_fn_or_list: Callable | list,
                                         allow_cache_entry_mutation: bool = False) -> tuple:
    """The ``(forward, recompute)`` context managers that make
    ``checkpoint(..., use_reentrant=False, context_fn=...)`` selective: ``policy_fn(ctx,
    op, *args)`` returns a ``CheckpointPolicy`` per op, or a list of ops means
    ``MUST_SAVE`` for those and ``PREFER_RECOMPUTE`` for the rest (Note [Selective
    checkpointing]).

    Example:
        >>> import functools
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import (CheckpointPolicy, checkpoint,
        ...                                         create_selective_checkpoint_contexts)
        >>> seen = []
        >>> def policy(ctx, op, *args):
        ...     seen.append(op.name)
        ...     return CheckpointPolicy.PREFER_RECOMPUTE
        >>> fn = functools.partial(create_selective_checkpoint_contexts, policy)
        >>> x = torch.ones(2, requires_grad=True)
        >>> checkpoint(lambda t: (t * 2).exp().sum(), x, use_reentrant=False, context_fn=fn)
        tensor(14.7781, grad_fn=<SumBackward0>)
        >>> seen
        ['mul', 'exp', 'sum']
    """
    if isinstance(policy_fn_or_list, list):
        names = frozenset(_op_key(op) for op in policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            if op.name in names:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = _Storage(policy_fn, allow_cache_entry_mutation)
    return _SACForward(storage), _SACRecompute(storage)
