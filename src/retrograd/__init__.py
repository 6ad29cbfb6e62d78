"""retrograd: PyTorch's autograd and training stack, in Python on NumPy.

``import retrograd as torch`` and gradient code written for PyTorch runs unchanged.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([2.0], requires_grad=True)
    >>> y = torch.tensor([3.0], requires_grad=True)
    >>> z = x**2 + y**3
    >>> z.backward()
    >>> x.grad, y.grad
    (tensor([4.]), tensor([27.]))
"""

from __future__ import annotations

import warnings as _warnings

# Note [Silent kernels]
# PyTorch computes log(0) = -inf, 0/0 = nan and sqrt(-1) = nan silently; NumPy warns.
# The kernels run inside retrograd's modules, so one filter scoped to those modules
# silences exactly these warnings (user code calling NumPy still warns), at no cost
# per op (np.errstate around every kernel would cost ~1 us a call).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"retrograd(\.|$)")

from ._core.deterministic import (
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
from ._core.device import device, get_default_device, set_default_device
from ._core.dtype import (
    bfloat16,
    bool,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
)
from ._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ._core.size import Size
from ._core.tensorless_dtypes import *
from ._core.threads import get_num_threads, set_num_threads
from ._core.type_info import finfo, iinfo
from ._functions import engine_services as _engine_services
from ._functions import methods as _methods
from ._functions.creation import *
from ._functions.methods import addcdiv, addcmul
from ._functions.namespace import *
from ._functions.namespace import abs, all, any, max, min, pow, round, sum
from ._random.rng import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from ._tensor.printing import get_printoptions, set_printoptions
from ._tensor.tensor import Tensor, result_type

_methods.install()
_engine_services.install()  # Note [Engine services] (_graph/engine.py)
globals().update(_methods.inplace_functions())  # torch.sin_ & co (Note [In-place forms])
globals().update(_methods.numpy_named_functions())  # Note [NumPy argument names]

from . import (
    amp,
    autograd,
    backends,
    cpu,
    cuda,
    distributions,
    func,
    jit,
    linalg,
    nn,
    optim,
    special,
    testing,
    utils,
    version,
    viz,
)
from ._cond import cond
from ._core.layouts import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from ._core.runtime_flags import *
from ._core.sym_numbers import *
from ._random import rng as random
from .amp import (
    GradScaler,
    autocast,
)
from .amp.legacy_state import *
from .amp.state import (
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .autograd import forward_ad
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .backends._precision import (
    get_float32_matmul_precision,
    set_float32_matmul_precision,
)
from .nn.functional.activations import rrelu, rrelu_
from .nn.functional.distance import pairwise_distance, pdist
from .nn.functional.losses import cosine_similarity
from .nn.functional.native import *
from .nn.functional.normalization import rms_norm
from .nn.functional.sync_batch_norm import *
from .nn.functional.toplevel import *
from .serialization import load, save
from .storage import (
    BFloat16Storage,
    BoolStorage,
    ByteStorage,
    CharStorage,
    DoubleStorage,
    FloatStorage,
    HalfStorage,
    IntStorage,
    LongStorage,
    ShortStorage,
    TypedStorage,
    UntypedStorage,
    is_storage,
)
from .version import __version__
from .viz import explain_grad

newaxis = None
import builtins as _builtins

inf = _builtins.float("inf")
nan = _builtins.float("nan")
pi = 3.141592653589793
e = 2.718281828459045


# here bool, int and float are dtypes: the hints name Python's as _builtins.* (Note [Type hints])
def is_tensor(obj: object) -> _builtins.bool:
    """True for retrograd tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.is_tensor(torch.ones(1)), torch.is_tensor([1])
        (True, False)
    """
    return isinstance(obj, Tensor)


def typename(obj: object) -> str:
    """The type name PyTorch prints for ``obj``: ``torch.FloatTensor`` for a float32
    tensor, the qualified class name otherwise. (Here, as PyTorch has it in
    ``torch/__init__.py``: it needs the Tensor, which the core layer may not import.)

    Example:
        >>> import retrograd as torch
        >>> torch.typename(torch.ones(1)), torch.typename(1)
        ('torch.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):  # a class or a function names itself
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:  # an instance is named by its class
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_floating_point(t: Tensor) -> _builtins.bool:
    return t.is_floating_point()


def numel(t: Tensor) -> _builtins.int:
    return t.numel()


from . import compiler
from .compiler import compile
from .func import vmap

amp.policy.install()  # Note [Autocast dispatch]: entry checks for the listed public functions

# Note [Lazy submodules]
# PyTorch's `import torch` makes torch.distributed reachable as an attribute. Importing
# retrograd.distributed with the package would add its import (signal, sysconfig, the
# collectives: ~3 ms with cached bytecode, 12-20 ms without, of an ~1.1 s `import
# retrograd`, measured with `python -X importtime`) and its registrations to every
# program, most of which never use it; mpi4py itself is loaded only by
# init_process_group. So the names below are imported on first attribute access (PEP 562)
# and listed by dir(retrograd) all the same.
_LAZY_SUBMODULES = ("distributed",)


def __getattr__(name: str) -> object:
    """Import a lazy submodule on first access (Note [Lazy submodules]).

    Example:
        >>> import retrograd as torch
        >>> torch.distributed.is_initialized()
        False
    """
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The package's names, the lazy submodules included (Note [Lazy submodules]).

    Example:
        >>> import retrograd as torch
        >>> "distributed" in dir(torch), "nn" in dir(torch)
        (True, True)
    """
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
