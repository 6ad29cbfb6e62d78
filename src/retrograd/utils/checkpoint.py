"""Activation checkpointing: keep a segment's inputs, recompute its insides in backward.

Note [Two checkpoints]
``checkpoint(fn, *args, use_reentrant=...)`` has PyTorch's two implementations.

* Non-reentrant (``use_reentrant=False``, recommended) records the forward as usual,
  but inside the segment every tensor a node saves for backward goes through a
  saved-tensor pack hook (_graph/saved_hooks.py) that stores a small ``_Holder``
  instead of the tensor. The first time backward unpacks a holder, the segment's
  function is rerun once (same inputs, same RNG state, same autocast state) under a
  second pack hook that fills every live holder, in order, with the recomputed
  tensor; each unpack then hands one back and forgets it, so recomputed activations
  live only until their node has run. Recomputation stops as soon as the last holder
  is filled (``early_stop``). The unpacked data takes the saved tensor's place in the
  original graph (Note [Saved inputs through hooks]), so ``autograd.grad``,
  ``backward(inputs=...)`` and ``create_graph=True`` all work. The determinism check
  compares shape and dtype of what was saved and what was recomputed.
* Reentrant (``use_reentrant=True``, PyTorch's default when the argument is
  omitted, with PyTorch's warning) is a custom ``autograd.Function``: forward runs
  under ``no_grad`` and saves only the inputs; its backward reruns the segment with
  grad on and calls ``backward()`` on it from inside the outer backward. As in
  PyTorch this works only for a plain ``backward()`` (no ``inputs=``, not
  ``autograd.grad``): the engine's graph-task record (Note [Graph tasks]) lets it
  raise PyTorch's error otherwise.

Both restore the RNG state of the forward before recomputing (``preserve_rng_state``),
so dropout masks are identical and gradients equal those of the plain run.

Example:
    >>> import retrograd as torch
    >>> from retrograd.utils.checkpoint import checkpoint
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False)
    >>> y.backward()
    >>> bool(torch.allclose(x.grad, x.detach().sin() + x.detach() * x.detach().cos()))
    True
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .._core.grad_mode import enable_grad, is_grad_enabled, no_grad
from .._graph.engine import is_checkpoint_valid
from .._graph.saved_hooks import saved_tensors_hooks
from .._random.rng import fork_rng, get_rng_state, set_rng_state
from .._tensor.tensor import Tensor
from ..amp.autocast_mode import autocast
from ..amp.state import AMP
from ..autograd import backward as autograd_backward
from ..autograd.function import Function
from ..ops.op import _next_seq
from .checkpoint_device_states import (
    DefaultDeviceType,
    GraphExecGroup,
    _debug_override,
    get_device_states,
    set_checkpoint_debug_enabled,
    set_device_states,
)
from .checkpoint_selective import (
    SAC_IGNORED_OPS,
    CheckpointPolicy,
    SelectiveCheckpointContext,
    _Kept,
    _sac_keep,
    create_selective_checkpoint_contexts,
)

if TYPE_CHECKING:  # Note [Type hints]: a name for the hints only (modules by duck typing)
    from ..nn import Module


__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "set_checkpoint_early_stop", "detach_variable", "check_backward_validity",
           "noop_context_fn", "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts", "SAC_IGNORED_OPS", "DefaultDeviceType",
           "GraphExecGroup", "get_device_states", "set_device_states",
           "set_checkpoint_debug_enabled"]


class CheckpointError(RuntimeError):
    """Raised when the recomputation does not match the original forward.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import CheckpointError, checkpoint
        >>> calls = []
        >>> def f(t):
        ...     calls.append(1)
        ...     return (t * t * t).sum() if len(calls) == 1 else (t * t).sum()
        >>> y = checkpoint(f, torch.ones(2, requires_grad=True), use_reentrant=False)
        >>> try:
        ...     y.backward()
        ... except CheckpointError as e:
        ...     print(str(e).splitlines()[0][:70])
        torch.utils.checkpoint: A different number of tensors was saved during
    """


def noop_context_fn() -> tuple[contextlib.AbstractContextManager,
                                contextlib.AbstractContextManager]:
    """The default ``context_fn``: two null context managers.

    Example:
        >>> from retrograd.utils.checkpoint import noop_context_fn
        >>> len(noop_context_fn())
        2
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


_enable_checkpoint_early_stop: bool | None = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Within this block, non-reentrant checkpoints decide early stopping by ``enable``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import checkpoint, set_checkpoint_early_stop
        >>> x = torch.ones(2, requires_grad=True)
        >>> with set_checkpoint_early_stop(False):
        ...     y = checkpoint(lambda t: t.exp().sum(), x, use_reentrant=False)
        >>> y.backward(); x.grad
        tensor([2.7183, 2.7183])
    """
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def detach_variable(inputs: tuple) -> tuple:
    """Detach each tensor of a tuple, keeping its ``requires_grad``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import detach_variable
        >>> a, = detach_variable((torch.ones(1, requires_grad=True) * 2,))
        >>> a.is_leaf, a.requires_grad
        (True, True)
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn (as PyTorch) when no tensor input requires grad.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import check_backward_validity
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     check_backward_validity([torch.ones(1)])
        >>> str(w[0].message)[:40]
        'None of the inputs have requires_grad=Tr'
    """
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def _autocast_state() -> dict:
    return {"enabled": AMP.enabled["cpu"], "dtype": AMP.dtype["cpu"],
            "cache_enabled": AMP.cache_enabled}


def _rerun_context(preserve: bool, rng_state, autocast_kwargs: dict):
    """RNG and autocast as they were when the segment first ran."""

    stack = contextlib.ExitStack()
    stack.enter_context(fork_rng(enabled=preserve))
    if preserve:
        set_rng_state(rng_state)
    stack.enter_context(autocast("cpu", **autocast_kwargs))
    return stack


# -----------------------------------------------------------------------------------
# reentrant: a custom Function


class CheckpointFunction(Function):
    """Reentrant checkpoint (Note [Two checkpoints]): a custom Function that reruns the
    segment in its backward.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import CheckpointFunction
        >>> x = torch.ones(2, requires_grad=True)
        >>> CheckpointFunction.apply(lambda t: (t * 3).sum(), True, x).backward()
        >>> x.grad
        tensor([3., 3.])
    """
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.autocast_kwargs = _autocast_state()
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        if not is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with "
                ".grad() or passing an `inputs` parameter to .backward(). To resolve this "
                "error, you can either set use_reentrant=False, or call .backward() "
                "without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = tensors[i]
        with _rerun_context(ctx.preserve_rng_state, getattr(ctx, "fwd_cpu_state", None),
                            ctx.autocast_kwargs):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outs_with_grad, args_with_grad = [], []
        for i in range(len(outputs)):
            if isinstance(outputs[i], Tensor) and outputs[i].requires_grad:
                outs_with_grad.append(outputs[i])
                args_with_grad.append(args[i])
        if len(outs_with_grad) == 0:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        autograd_backward(outs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached)
        return (None, None) + grads


# -----------------------------------------------------------------------------------
# non-reentrant: saved-tensor hooks


class _Holder:
    """What the graph keeps in place of a saved tensor inside a checkpointed segment
    (``frame``: its segment, so memory tools can count the inputs kept to rerun it)."""

    __slots__ = ("frame", "__weakref__")

    def __init__(self, frame):
        self.frame = frame


def _no_holder():
    """The weak-holder slot of a tensor selective checkpointing kept: always dead."""
    return None


class _StopRecomputationError(Exception):
    pass


def _default_meta(x) -> dict:
    return {"shape": tuple(x.shape), "dtype": x.dtype, "device": "cpu"}


_DETERMINISM = {"default": _default_meta, "none": lambda _: None}

_DEBUG_TIP = ("\nTip: this means the function did different work when it was rerun in "
              "backward (Python control flow on random numbers or on global state, or an "
              "input changed in place). Make the checkpointed function deterministic given its "
              "inputs, or pass determinism_check='none' if the difference is intended.")


class _CheckpointFrame:
    """One checkpointed segment: its inputs, holders, and the recomputed tensors.

    ``seq_range``: ``(first, last)`` node sequence numbers around its forward, so that a
    picture of the graph can box the nodes the segment made (viz.draw_graph)."""

    def __init__(self, recompute_fn, early_stop: bool, metadata_fn):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.inputs: list = []
        self.versions: list = []
        self.weak_holders: list = []
        self.x_metadatas: list = []
        self.recomputed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.recomp_counter = 0
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        self.seq_range: tuple | None = None

    def save_inputs(self, args) -> None:
        self.inputs = list(args)
        self.versions = [a._vc[0] if isinstance(a, Tensor) else None for a in args]

    def get_inputs(self) -> list:
        for i, (a, v) in enumerate(zip(self.inputs, self.versions)):
            if isinstance(a, Tensor) and a._vc[0] != v:
                from .._graph.node import legacy_type_name

                shape = ", ".join(str(s) for s in a.shape)
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{legacy_type_name(a)} [{shape}]], is at "
                    f"version {a._vc[0]}; expected version {v} instead. Hint: input {i} of a "
                    "checkpointed function is kept to rerun it in backward, and an in-place "
                    "op changed it afterwards; .clone() it before modifying it.")
        return self.inputs

    def recompute(self) -> None:
        args = self.get_inputs()
        self.recomp_counter = 0
        try:
            with _recomputation_hook(self), enable_grad():
                self.recompute_fn(*args)
        except _StopRecomputationError:
            pass
        self.check_recomputed_tensors_match()

    def check_recomputed_tensors_match(self) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter}.\n"
                + _DEBUG_TIP)
        bad = []
        for idx, wh in enumerate(self.weak_holders):
            holder = wh()
            if holder is None or holder not in self.recomputed:
                continue
            meta = self.x_metadatas[idx]
            got = self.metadata_fn(self.recomputed[holder])
            if meta != got:
                bad.append((idx, meta, got))
        if bad:
            lines = "".join(f"tensor at position {i}:\nsaved metadata: {m}\n"
                            f"recomputed metadata: {g}\n" for i, m, g in bad)
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{lines}.\n" + _DEBUG_TIP)


def _recomputation_hook(frame: _CheckpointFrame):
    def pack_hook(x):
        x = x.detach() if x.requires_grad else x
        idx = frame.recomp_counter
        frame.recomp_counter += 1
        if idx >= len(frame.weak_holders):
            if not frame.forward_completed:  # backward inside the checkpointed forward
                frame.ignore_saved_mismatch = True
                return x
            raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during "
                                  "recomputation than during the original forward pass.\n"
                                  + _DEBUG_TIP)
        holder = frame.weak_holders[idx]()
        if holder is not None:  # None: its node already ran and released it
            frame.recomputed[holder] = x
        if frame.early_stop and frame.recomp_counter == len(frame.weak_holders):
            raise _StopRecomputationError
        return x

    return saved_tensors_hooks(pack_hook, lambda x: x)


def _checkpoint_hook(frame: _CheckpointFrame):
    def pack_hook(x):
        if frame.metadata_fn is not None:
            frame.x_metadatas.append(frame.metadata_fn(x))
        kept = _sac_keep(x)  # Note [Selective checkpointing]: the policy kept its producer
        if kept is not None:
            frame.weak_holders.append(_no_holder)  # recomputation skips this position
            return kept
        holder = _Holder(frame)
        frame.weak_holders.append(weakref.ref(holder))
        return holder

    def unpack_hook(holder):
        if holder.__class__ is _Kept:
            return holder.get()
        if holder not in frame.recomputed:
            frame.recompute()
        if holder not in frame.recomputed:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                "make sure to do so only once. Otherwise please open an issue with details "
                "on your use case.")
        return frame.recomputed.pop(holder)

    return saved_tensors_hooks(pack_hook, unpack_hook)


def _checkpoint_without_reentrant(fn, preserve: bool, context_fn, determinism_check: str,
                                  early_stop: bool, args: tuple, kwargs: dict):

    if determinism_check not in _DETERMINISM:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM)}, but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    autocast_kwargs = _autocast_state()
    rng_state = get_rng_state() if preserve else None

    def recompute_fn(*inputs) -> None:
        with _rerun_context(preserve, rng_state, autocast_kwargs), recompute_context:
            fn(*inputs, **kwargs)

    if _enable_checkpoint_early_stop is not None:
        early_stop = _enable_checkpoint_early_stop
    frame = _CheckpointFrame(recompute_fn, early_stop, _DETERMINISM[determinism_check])
    if not is_grad_enabled():
        return fn(*args, **kwargs)
    frame.save_inputs(args)
    first = _next_seq()
    with _checkpoint_hook(frame), forward_context:
        out = fn(*args, **kwargs)
    frame.forward_completed = True
    frame.seq_range = (first, _next_seq())
    return out


# -----------------------------------------------------------------------------------
# public API


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs) -> Any:
    """Run ``function(*args)`` without keeping its activations; recompute them in backward.

    ``use_reentrant`` should be given (``False`` is recommended; omitted means ``True``
    with PyTorch's warning). ``preserve_rng_state=True`` (default) replays the forward's
    random numbers, so dropout masks match. See Note [Two checkpoints].

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import checkpoint
        >>> w = torch.tensor([3.0], requires_grad=True)
        >>> out = checkpoint(lambda x: (x * w).tanh(), torch.ones(1), use_reentrant=False)
        >>> out.backward(); w.grad
        tensor([0.0099])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    debug = _debug_override(debug)
    if debug:
        raise ValueError("checkpoint(debug=True) is not supported by retrograd: its operator "
                         "logs need PyTorch's dispatcher. Leave debug=False; a mismatch "
                         "still raises CheckpointError with the counts and shapes.")
    if use_reentrant:
        if context_fn is not noop_context_fn:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         early_stop, args, kwargs)


def checkpoint_sequential(functions: Sequence[Callable] | Module, segments: int, input: Tensor,
                          use_reentrant: bool | None = None, **kwargs) -> Tensor:
    """Split a sequence of modules/functions into ``segments`` and checkpoint all but the last.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import checkpoint_sequential
        >>> fs = [lambda t: t * 2, torch.sin, torch.exp, lambda t: t.sum()]
        >>> x = torch.tensor([0.5], requires_grad=True)
        >>> checkpoint_sequential(fs, 2, x, use_reentrant=False).backward()
        >>> round(x.grad.item(), 4)
        2.5068
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    if _is_sequential(functions):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


def _is_sequential(obj) -> bool:
    try:
        from ..nn import Sequential
    except ImportError:
        return False
    return isinstance(obj, Sequential)
