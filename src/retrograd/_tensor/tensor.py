"""The Tensor: a NumPy array plus what autograd needs (front door of retrograd).

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([2.0], requires_grad=True)
    >>> y = x * 3
    >>> y
    tensor([6.], grad_fn=<MulBackward0>)
    >>> y.backward(); x.grad
    tensor([3.])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from weakref import ref as _weakref

import numpy as np

from .._core import dtype as D
from .._core import grad_mode
from .._core import layouts as L
from .._core.device import CPU, META, device
from .._core.grad_mode import STATE
from .._core.meta import NO_DATA, MetaArray
from .._core.size import Size
from .._graph.node import AccumulateGrad, HookDict, RemovableHandle, register_tensor_type
from .._graph.provenance import mark as _cut_mark

_new = object.__new__
_ndarray = np.ndarray
_FROM_NP = D.FROM_NP


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    ``Tensor(data)`` is the legacy constructor: it always gives the default float
    dtype, as ``torch.Tensor([1, 2])`` does.

    Example:
        >>> import retrograd as torch
        >>> torch.Tensor([1, 2])
        tensor([1., 2.])
    """

    # Note [Tensor fields]
    # Hot fields live in slots: the array, whether it requires grad, its node (``_gfn``,
    # read through the ``grad_fn`` property), and the version counter (a one-element
    # list shared with views and detach()). The rest (output number, view base and
    # recipe, .grad, hooks, retain_grad, the leaf's gradient accumulator) live in
    # __dict__ with class-level defaults, so making a tensor sets four slots and
    # nothing else.
    __slots__ = ("_data", "_rg", "_gfn", "_vc", "__dict__", "__weakref__")
    _base = None  # views: the tensor owning the memory (Note [Views and in-place])
    _vfn = None  # views: the recipe re-creating this view from _base
    _vver = 0  # views: the version at which _gfn was made (Note [View grad_fn regeneration])
    _vmeta = None  # views: None, "no_grad" or "multi": how it was made (check_view_rebase)
    _views = None  # bases: weakrefs to views made while nothing required grad
    _inherits = False  # views: requires grad only through its base (no accumulator)
    _out_nr = 0
    _grad = None
    _acc = None
    _retains = False
    _is_param = False
    _cut = None  # where this tensor's gradient path was cut (Note [Cut markers])
    _fw_grad = None  # forward-AD tangent (Note [Forward AD state] in _graph/forward_state.py)
    __array_priority__ = 1000  # NumPy defers to our operators

    # -- identity and metadata ----------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Size | int:
        """The shape, or its length along ``dim``.

        Example:
            >>> import retrograd as torch
            >>> torch.zeros(2, 3).size(1)
            3
        """
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> D.dtype:
        return _FROM_NP[self._data.dtype]

    @property
    def device(self) -> device:
        return META if self._data.__class__ is MetaArray else CPU  # Note [Meta tensors]

    @property
    def is_meta(self) -> bool:
        """Whether this tensor is on the 'meta' device (a shape and a dtype, no data).

        Example:
            >>> import retrograd as torch
            >>> torch.empty(2, device="meta").is_meta, torch.ones(1).is_meta
            (True, False)
        """
        return self._data.__class__ is MetaArray

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def layout(self) -> L.layout:
        return L.strided

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element (``element_size()``)."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the elements (``numel() * itemsize``)."""
        return self._data.size * self._data.itemsize

    def get_device(self) -> int:
        """-1: the tensor is on the CPU (PyTorch's answer for CPU tensors).

        Example:
            >>> import retrograd as torch
            >>> torch.ones(1).get_device()
            -1
        """
        return -1

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Strides in elements, as PyTorch reports them.

        Example:
            >>> import retrograd as torch
            >>> torch.zeros(2, 3).stride()
            (3, 1)
        """
        st = L.element_strides(self._data)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def is_contiguous(self, memory_format: L.memory_format | None = None) -> bool:
        """Whether the elements lie in memory in ``memory_format``'s order, without gaps
        (row-major by default; size-1 dims may have any stride).

        Example:
            >>> import retrograd as torch
            >>> x = torch.zeros(1, 3, 2, 2)
            >>> x.is_contiguous(), x.is_contiguous(memory_format=torch.channels_last)
            (True, False)
        """
        a = self._data
        if memory_format is None or memory_format is L.contiguous_format or \
                memory_format is L.preserve_format:
            return bool(a.flags.c_contiguous)
        return L.is_contiguous_as(a.shape, L.element_strides(a), memory_format)

    def is_floating_point(self) -> bool:
        return self._data.dtype in _FLOAT_NP

    def is_complex(self) -> bool:
        return False

    def data_ptr(self) -> int:
        if self._data.__class__ is MetaArray:
            return 0
        return self._data.__array_interface__["data"][0]

    @property
    def _version(self) -> int:
        if self._vc.__class__ is not list:  # Note [Inference tensors]
            raise RuntimeError("Inference tensors do not track version counter. (this tensor "
                               "was made inside torch.inference_mode())")
        return self._vc[0]

    def is_inference(self) -> bool:
        """Whether this tensor was made inside ``inference_mode()`` (or is a view of one).

        Example:
            >>> import retrograd as torch
            >>> with torch.inference_mode():
            ...     x = torch.ones(2)
            >>> x.is_inference(), torch.ones(2).is_inference()
            (True, False)
        """
        return self._vc.__class__ is InferenceVersion

    def _is_view(self) -> bool:
        return self._base is not None

    @property
    def grad_fn(self):
        """The node that made this tensor (None for leaves).

        (The op layer installs the full property, which first re-derives a stale view's
        grad_fn: Note [View grad_fn regeneration] in ops/dispatch.py.)

        Example:
            >>> import retrograd as torch
            >>> (torch.ones(1, requires_grad=True) * 2).grad_fn  # doctest: +ELLIPSIS
            <MulBackward0 object at 0x...>
        """
        return self._gfn

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._gfn = node
        if self._base is not None:
            self._vver = self._vc[0]

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._out_nr

    @property
    def requires_grad(self) -> bool:
        # as PyTorch, without re-deriving a stale view's grad_fn (which may raise): a view
        # requires grad when it does itself or its base does
        return self._rg or (self._base is not None and self._base._rg)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` on a leaf (floating dtypes only), in place.

        Example:
            >>> import retrograd as torch
            >>> torch.zeros(2).requires_grad_().requires_grad
            True
        """
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and self._vc.__class__ is not list and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed. (it was made inside "
                               "torch.inference_mode(): use t.clone().requires_grad_())")
        if requires_grad and self._data.dtype not in _FLOAT_NP:
            raise RuntimeError("only Tensors of floating point dtype can require gradients "
                               f"(this one is {self.dtype}); convert it first, e.g. x.float()")
        if not requires_grad and self._base is not None and self._base._rg:
            return self  # as PyTorch: a view requires grad while its base does
        if self._rg and not requires_grad:
            _cut_mark("requires_grad_false", "requires_grad_(False)", self, self)
        self._rg = bool(requires_grad)
        if self._inherits:
            self._inherits = False  # its own flag now: a leaf with an accumulator
        if self._views is not None:
            mark_views_requiring_grad(self, bool(requires_grad))
        return self

    @property
    def grad(self) -> Tensor | None:
        # the raw node, as PyTorch's TensorBase::grad(): reading .grad never regenerates a
        # view's grad_fn (which may raise for a stale multi-output view)
        if self._gfn is not None and not self._retains and self._grad is None and \
                STATE.enabled:  # as PyTorch: no warning once backward(inputs=[t]) filled it
            _warn_nonleaf_grad(self)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size "
                                   f"'{list(value.shape)}' to a tensor of size "
                                   f"'{list(self.shape)}'. Please ensure that the gradient and "
                                   "the tensor are the same size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype "
                                   f"'{_C_NAMES.get(value.dtype.name, value.dtype.name)}' to a "
                                   f"tensor with grad_dtype '{_LEGACY_NAMES[self.dtype.name]}'. "
                                   "The gradient must match the tensor's dtype (convert it: "
                                   "g.to(t.dtype))")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward.

        Example:
            >>> import retrograd as torch
            >>> x = torch.ones(2, requires_grad=True); y = x * 2; y.retain_grad()
            >>> y.sum().backward(); y.grad
            tensor([1., 1.])
        """
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains:
            return
        import weakref

        node = self.grad_fn
        node._hooked = True
        if node._retain is None:
            node._retain = {}
        node._retain[self._out_nr] = weakref.ref(self)
        self._retains = True

    def _grad_accumulator(self) -> AccumulateGrad:
        acc = self._acc
        if acc is None:
            acc = self._acc = AccumulateGrad(self)
        return acc

    # -- hooks ----------------------------------------------------------------------
    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a
        replacement gradient. Returns a handle with ``remove()``.

        Example:
            >>> import retrograd as torch
            >>> x = torch.ones(2, requires_grad=True)
            >>> h = x.register_hook(lambda g: g * 10)
            >>> (x * 1).sum().backward(); x.grad
            tensor([10., 10.])
        """
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self.grad_fn if self.grad_fn is not None else self._grad_accumulator()
        return node._add_tensor_hook(self._out_nr, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]
                                           ) -> RemovableHandle:
        """Call ``hook(tensor)`` after ``.grad`` of this leaf has been accumulated.

        Example:
            >>> import retrograd as torch
            >>> x = torch.ones(2, requires_grad=True)
            >>> seen = []
            >>> h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.sum().item()))
            >>> (x * 3).sum().backward(); seen
            [6.0]
        """
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        acc = self._grad_accumulator()
        if acc._post_acc_hooks is None:
            acc._post_acc_hooks = HookDict()
        h = RemovableHandle(acc._post_acc_hooks)
        acc._post_acc_hooks[h.id] = hook
        return h

    # -- autograd entry points --------------------------------------------------------
    def detach(self) -> Tensor:
        """A tensor sharing data (and version counter) with this one, outside the graph.

        Example:
            >>> import retrograd as torch
            >>> torch.ones(1, requires_grad=True).detach().requires_grad
            False
        """
        t = self._detached()
        if self._rg:
            _cut_mark("detach", "detach()", self, t)
        return t

    def _detached(self) -> Tensor:
        """``detach()`` for the library's own use (a transform dropping its graph, a
        saved-tensor hook's view): no cut marker, which stands for a user's cut (Note
        [Cut markers]) and walks the graph to find its leaves."""
        t = _make(self._data)
        t._vc = self._vc
        return t

    def detach_(self) -> Tensor:
        if self._base is not None and self._base._rg:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        if self._rg:
            _cut_mark("detach_", "detach_()", self, self)
        self.grad_fn = None
        self._rg = False
        return self

    @property
    def data(self) -> Tensor:
        t = _make(self._data)
        if self._rg:
            _cut_mark("data", ".data", self, t)
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError("Tensor.data must be set to a Tensor")
        self._data = value._data

    # -- conversion -----------------------------------------------------------------
    def item(self) -> int | float | bool:
        """The value of a one-element tensor as a Python number.

        Example:
            >>> import retrograd as torch
            >>> torch.tensor([2.5]).item()
            2.5
        """
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        if self._rg:
            _cut_mark("item", "item()", self)
        return self._data.reshape(()).item() if self._data.dtype != D.bfloat16.np else \
            float(self._data.reshape(()))

    def tolist(self) -> list | int | float | bool:
        if self._rg:
            _cut_mark("tolist", "tolist()", self)
        if self._data.dtype == D.bfloat16.np:
            return self._data.astype(np.float32).tolist()
        return self._data.tolist()

    def numpy(self, force: bool = False) -> np.ndarray:
        """The NumPy array behind this tensor (shares memory).

        Example:
            >>> import retrograd as torch
            >>> torch.ones(2).numpy()
            array([1., 1.], dtype=float32)
        """
        if self._rg and not force and STATE.enabled:  # as PyTorch: fine in no_grad/forward()
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._rg:
            _cut_mark("numpy", "numpy(force=True)", self)
        if self._data.__class__ is MetaArray:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        return self._data

    def __array__(self, dtype: np.dtype | None = None, copy: bool | None = None) -> np.ndarray:
        if self._data.__class__ is MetaArray:
            raise NotImplementedError(NO_DATA)
        if self._rg:
            _cut_mark("numpy", "numpy.asarray()", self)
        if dtype is not None:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data  # np.array(t, copy=True) copies

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous "
                               f"(shape {tuple(self.shape)}); use .any() or .all()")
        return bool(self._data.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self._data.reshape(()))

    def __complex__(self) -> complex:
        return complex(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        from .printing import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        # as PyTorch: a 0-d plain tensor formats as its Python number (f"{t}" gives "23.0"),
        # anything else as its repr (a non-empty spec is then a TypeError)
        if self._data.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto: int) -> tuple:
        return (_rebuild, (self._data.copy(), self._rg))

    def __deepcopy__(self, memo: dict) -> Tensor:
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        t = _make(self._data.copy())
        t.__class__ = self.__class__
        t._rg = self._rg
        if self._grad is not None:
            t._grad = self._grad.detach().clone()
        memo[id(self)] = t
        return t

    def __dir__(self) -> list[str]:
        return sorted(set(object.__dir__(self)))


def _rebuild(data, rg):
    t = _make(data)
    if rg:
        t._rg = True
    return t


_FLOAT_NP = frozenset(d.np for d in D.ALL if d.is_floating_point)


def result_type(*args) -> D.dtype:
    """dtype of an elementwise op over tensors and numbers, as ``torch.result_type``.

    Example:
        >>> import retrograd as torch
        >>> torch.result_type(torch.tensor([1, 2]), 1.0)
        torch.float32
    """
    dims, zero, scalars = [], [], []
    for a in args:
        if isinstance(a, Tensor):
            (zero if a._data.ndim == 0 else dims).append(D.FROM_NP[a._data.dtype])
        else:
            scalars.append(a)
    return D.result_type_of(dims, zero, scalars)


_FINISH = None  # the finisher for the modes now on (Note [Tensor finishers])


def _make(arr) -> Tensor:
    """Wrap an ndarray (taken as is, never copied) in a Tensor that needs no grad."""
    t = _new(Tensor)
    t._data = arr
    t._rg = False
    t._gfn = None
    t._vc = [0]
    if _FINISH is not None:  # Note [Tensor finishers]: inference marking or a trace
        _FINISH(t)
    return t


# Note [Inference tensors]
# A tensor made inside inference_mode() is an inference tensor, as in PyTorch: it has
# no version counter (``_version`` raises), it cannot be written in place, require grad
# or be saved for backward outside inference mode, and views and detach() of it are
# inference tensors too. The mark is the class of its version counter (``_vc``, which
# views and detach() share): ``InferenceVersion`` instead of a plain list. The write
# checks compare ``_vc``'s class with ``list``; the mark is made by a finisher (Note
# [Tensor finishers]) while any thread is inside inference mode.
class InferenceVersion(list):
    """The version counter of an inference tensor (Note [Inference tensors])."""

    __slots__ = ()


# Note [Tracing hook]
# While retrograd.compile traces a call (Note [Tracing] in _compile/record.py), every
# array a new tensor takes must be one the tracer follows: a plain ndarray goes through
# the tracer's ``TRACE_ADOPT[0]``, which returns the array it follows in its place.
# ``set_trace_adopt`` installs it (a finisher, Note [Tensor finishers]) and removes it.

# Note [Tensor finishers]
# Two rare modes must see every tensor ``_make`` creates: inference mode marks the
# tensors made inside it (Note [Inference tensors]) and a trace adopts their arrays
# (Note [Tracing hook]). ``_FINISH`` is the function that finishes a new tensor for the
# modes now on, or None while none is (every program that uses neither), so ``_make``
# pays one test of a module global. It changes only when a trace starts or stops and
# when the first thread enters inference mode or the last one leaves it; the finisher
# itself reads the calling thread's mode.
TRACE_ADOPT: list = [None]
_MARKING = [0, None]  # threads inside inference mode; a lock, made on first use


def _mark_inference(t: Tensor) -> None:
    """Finisher while a thread is inside inference mode: mark the tensors it makes."""
    if STATE.inference:
        t._vc = InferenceVersion((0,))


def _adopt_and_mark(t: Tensor) -> None:
    """Finisher while a trace runs: the tracer follows the new array (and inference mode
    marks the tensor, as ``_mark_inference``)."""
    if t._data.__class__ is _ndarray:
        t._data = TRACE_ADOPT[0](t._data)
    if STATE.inference:
        t._vc = InferenceVersion((0,))


def _choose_finisher() -> None:
    """Set ``_FINISH`` for the modes now on (Note [Tensor finishers])."""
    global _FINISH
    if TRACE_ADOPT[0] is not None:
        _FINISH = _adopt_and_mark
    else:
        _FINISH = _mark_inference if _MARKING[0] > 0 else None


def set_trace_adopt(adopt) -> None:
    """Route the arrays of new tensors through ``adopt`` while a trace runs, or stop
    (``None``): Note [Tracing hook].

    Example:
        >>> import retrograd as torch
        >>> from retrograd._tensor.tensor import set_trace_adopt
        >>> seen = []
        >>> set_trace_adopt(lambda a: seen.append(a.shape) or a)
        >>> _ = torch.ones(2) + 1
        >>> set_trace_adopt(None)
        >>> seen[-1]
        (2,)
    """
    TRACE_ADOPT[0] = adopt
    _choose_finisher()


def _set_inference_marking(entering: bool) -> None:
    """Count a thread into (or out of) inference mode; the finisher follows at 0 <-> 1."""
    import threading

    if _MARKING[1] is None:
        _MARKING[1] = threading.Lock()
    with _MARKING[1]:
        _MARKING[0] = _MARKING[0] + (1 if entering else -1)
        _choose_finisher()


def check_inference_write(t: Tensor) -> None:
    """PyTorch's refusal of an in-place write into an inference tensor outside inference
    mode (call only when ``t._vc`` is not a plain list)."""
    if t._vc.__class__ is InferenceVersion and not STATE.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details. (this tensor of shape "
            f"{list(t._data.shape)} was made inside torch.inference_mode(): write into "
            "t.clone(), or do the write inside inference_mode())")


def check_inference_saved(t: Tensor) -> None:
    """PyTorch's refusal to save an inference tensor for backward (outside inference
    mode, where grad mode may be on)."""
    raise RuntimeError(
        "Inference tensors cannot be saved for backward. Please do not use Tensors created "
        "in inference mode in computation tracked by autograd. To work around this, you can "
        "make a clone to get a normal tensor and use it in autograd, or use "
        "`torch.no_grad()` instead of `torch.inference_mode()`. (a tensor of shape "
        f"{list(t._data.shape)} made inside torch.inference_mode() is an operand of an op "
        "that saves it for backward: use t.clone())")


def track_view(base: Tensor, view: Tensor) -> None:
    """Remember ``view`` (made while nothing in its family required grad) on ``base``, so
    that when the family comes to require grad (``requires_grad_()``, or an in-place op
    with an operand that requires grad) the view does too, as in PyTorch."""
    views = base._views
    if views is None:
        views = base._views = []
    views.append(_weakref(view))
    n = len(views)
    if n >= 64 and not n & (n - 1):  # at powers of two: drop the dead ones
        views[:] = [r for r in views if r() is not None]


def mark_views_requiring_grad(base: Tensor, requires_grad: bool = True) -> None:
    """The family of ``base`` now requires grad: so do the views made before. With
    ``requires_grad=False`` (the base's requires_grad_(False)), the views that only
    inherited the flag stop requiring grad again (a view's flag is its base's, in
    PyTorch)."""
    for r in base._views or ():
        v = r()
        if v is None:
            continue
        if requires_grad:
            v._rg = True
            # as PyTorch: until an in-place write re-derives its grad_fn, such a view has
            # no node and no gradient accumulator of its own (its requires_grad flag is
            # its base's), so a gradient reaching it goes nowhere
            v._inherits = True
        elif v._inherits:
            v._rg = v._inherits = False


register_tensor_type(Tensor, _make)  # Note [Graph services] (_graph/node.py)
grad_mode.INFERENCE_HOOKS.append(_set_inference_marking)

#: C++ type names PyTorch uses in messages ("float", "double", "long int")
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
            "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}
_LEGACY_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                 "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool"}


def _wrap_dim(dim: int, ndim: int) -> int:
    n = ndim if ndim > 0 else 1
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def _warn_nonleaf_grad(t) -> None:
    import warnings

    warnings.warn(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
        "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
        "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
        "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
        "instead. (retrograd.explain_grad(t) says why a grad is None.)", UserWarning,
        stacklevel=3)
