"""PyTorch's argument errors of the pooling functions, in each one's words.

Note [Pooling errors]
PyTorch's pooling functions check their arguments in different places with different
words (measured with torch 2.13): max_pool1d has its own checks ("max_pool1d() stride
must be greater than zero, but got 0"); the others go through pooling_output_shape,
which refuses a zero stride ("stride should not be zero", also for a zero kernel, the
default stride) and a padding above half the effective kernel ``dilation * (k - 1) + 1``,
then through their shape checks, which refuse a padding above half the kernel itself
("pad should be smaller than or equal to half of kernel size"), an input of the wrong
rank ("non-empty 3D or 4D (batch mode) tensor expected for input", avg_pool1d's and
avg_pool2d's own), an output that would be empty ("Given input size: (1x2x2). Calculated
output size: (1x0x0). Output size is too small"; avg_pool1d is avg_pool2d of an (N, C,
1, L) input, avg_pool3d says "input image ... smaller than kernel size"). Each message is
PyTorch's, then retrograd's sentence naming the call and its shapes.

Example:
    >>> from retrograd.nn.functional.pool_checks import check_window
    >>> try:
    ...     check_window("max_pool2d", (2, 2), (0, 0), (0, 0), (1, 1))
    ... except RuntimeError as e:
    ...     print(str(e).split(" (")[0])
    stride should not be zero
"""

from __future__ import annotations


def check_window(name: str, k: tuple, s: tuple, p: tuple, d: tuple | None) -> None:
    """The kernel, stride, padding and dilation checks of pooling ``name`` (Note [Pooling
    errors])."""
    where = f" ({name} with kernel_size={k}, stride={s}, padding={p})"
    if name == "max_pool1d":
        for what, v, low in (("kernel_size", k[0], 1), ("stride", s[0], 1), ("padding", p[0], 0),
                             ("dilation", d[0], 1)):
            if v < low:
                must = "be greater than zero" if low else "be non-negative"
                raise RuntimeError(f"max_pool1d() {what} must {must}, but got {v}{where}")
        if p[0] > k[0] // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                               f"got padding={p[0]} and kernel_size={k[0]}{where}")
        return
    for i in range(len(k)):
        dil = d[i] if d is not None else 1
        if s[i] == 0:
            raise RuntimeError(f"stride should not be zero{where}")
        if p[i] < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p[i]}{where}")
        if p[i] > (dil * (k[i] - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p[i]}, kernel_size={k[i]} and dilation={dil}{where}")
    if any(p[i] > k[i] // 2 for i in range(len(k))):  # the shape checks' own, without dilation
        if len(k) == 2:
            got = f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}"
        else:
            got = (f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} "
                   f"padH: {p[1]}")
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"{got}{where}")


def rank_error(name: str, nsp: int, shape: tuple) -> Exception:
    """PyTorch's error for a pooling input of the wrong rank (Note [Pooling errors])."""
    nd = len(shape)
    where = (f" ({name} takes ({nsp + 1} dims) or batched ({nsp + 2} dims) input, got shape "
             f"{list(shape)})")
    if name == "max_pool1d":
        return RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                            f"dim batch size for input, but got:{list(shape)}{where}")
    if name == "avg_pool1d":
        return RuntimeError(f"Expected 2 to 3 dimensions, but got {nd}-dimensional tensor for "
                            f"argument #1 'self' (while checking arguments for avg_pool1d)"
                            f"{where}")
    if name == "avg_pool2d":
        if nd >= 3:
            return RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                                f"size for input, but got:{list(shape)}{where}")
        n = max(nd, 1)
        return IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                          f"but got -3){where}")
    return RuntimeError(f"non-empty {nsp + 1}D or {nsp + 2}D (batch mode) tensor expected for "
                        f"input{where}")


def too_small(name: str, shape: tuple, k: tuple, osp: tuple) -> RuntimeError:
    """PyTorch's error for a pooling whose output would be empty; ``shape`` is the batched
    input's (Note [Pooling errors])."""
    where = f" ({name} of input shape {list(shape)} with kernel_size={k})"
    if name == "max_pool1d":
        return RuntimeError(f"max_pool1d() Invalid computed output size: {osp[0]}{where}")
    if name == "avg_pool3d":
        t, h, w = shape[2:]
        return RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: "
                            f"{k[0]} kH: {k[1]} kW: {k[2]}){where}")
    c, sp = shape[1], tuple(shape[2:])
    if name == "avg_pool1d":  # avg_pool2d of an (N, C, 1, L) input
        sp, osp = (1,) + sp, (1,) + tuple(osp)
    given = "x".join(map(str, (c,) + sp))
    calc = "x".join(map(str, (c,) + tuple(osp)))
    return RuntimeError(f"Given input size: ({given}). Calculated output size: ({calc}). Output "
                        f"size is too small{where}")
