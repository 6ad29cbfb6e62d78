"""Random numbers inside vmap: the ``randomness`` modes 'error', 'same' and 'different'.

Example:
    >>> import retrograd as torch
    >>> from retrograd.func import vmap
    >>> _ = torch.manual_seed(0)
    >>> r = vmap(lambda x: torch.rand(2) + x, randomness="same")(torch.zeros(3))
    >>> bool((r[0] == r[1]).all())
    True
"""

from __future__ import annotations

import itertools

from .._random import rng
from ..ops import batch_rules as _rules
from .batched import VMAP_LEVELS, _batched_in, _element, _size_of, _stack_results

__all__ = ["random_call"]


# Note [Randomness under vmap]
# vmap's ``randomness`` says what a random op inside it does, as in torch.func: 'error'
# refuses it (PyTorch's message, raised from the generator itself, so that every draw is
# covered); 'same' gives every batch element the same random numbers; 'different' gives
# each its own. The public random functions are marked ``@random_under_vmap``: they run
# once per batch element over the 'different' levels and over their batched inputs'
# levels, and for 'same' levels the generator is put back to the same state before each
# element, so that its draws repeat (and then left where one element's draws leave it).
_ERROR = ("vmap: called random operation while in randomness error mode. Please either use "
          "the 'same' or 'different' randomness flags on vmap or perform the randomness "
          "operation out of vmap")


def _check() -> None:
    if not _INSIDE[0] and any(lv.randomness == "error" for lv in VMAP_LEVELS.stack):
        raise RuntimeError(_ERROR)


_INSIDE = [0]  # > 0 while random_call runs the function (the check is done)


def random_call(fn, args, kwargs, by_values: bool = False):
    """A random public function called inside vmap (Note [Randomness under vmap])."""
    stack = VMAP_LEVELS.stack
    if any(lv.randomness == "error" for lv in stack):
        raise RuntimeError(_ERROR)
    found = []
    _batched_in((args, kwargs), found)
    batched = {lv for t in found for lv in t._levels}
    if by_values and any(lv.randomness == "same" and lv.level in batched for lv in stack):
        raise RuntimeError("Vmap does not currently support same randomness with a batched "
                           "tensor input. Please file an issue with functorch")
    different = {lv.level for lv in stack if lv.randomness == "different"}
    levels = tuple(sorted(batched | different))
    if not levels:
        return _call(fn, args, kwargs)
    gen = kwargs.get("generator") or rng.default_generator
    sizes = tuple(_size_of(lv) for lv in levels)
    diff_pos = [k for k, lv in enumerate(levels) if lv in different]
    states = {}
    results = []
    for index in itertools.product(*(range(s) for s in sizes)):
        key = tuple(index[k] for k in diff_pos)
        if key in states:
            gen.set_state(states[key])
        else:
            states[key] = gen.get_state()
        a, k = _element((args, kwargs), index, levels)
        results.append(_call(fn, a, k))
    return _stack_results(results, sizes, levels)


def _call(fn, args, kwargs):
    _INSIDE[0] += 1
    try:
        return fn(*args, **kwargs)
    finally:
        _INSIDE[0] -= 1


_rules.RANDOM[0] = random_call
rng.VMAP_DRAW_CHECK[0] = _check  # (called by the generator only while a vmap is open)
