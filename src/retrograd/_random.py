"""Random number generators: a global default and ``Generator`` objects (NumPy PCG64).

Example:
    >>> import retrograd as torch
    >>> _ = torch.manual_seed(0); a = torch.rand(3)
    >>> _ = torch.manual_seed(0); b = torch.rand(3)
    >>> bool(torch.equal(a, b))
    True
"""

from __future__ import annotations

import json
import os
import time

import numpy as np

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "default_generator", "fork_rng"]


class Generator:
    """A source of random numbers, passed as ``generator=`` to random functions.

    Example:
        >>> import retrograd as torch
        >>> g = torch.Generator().manual_seed(42)
        >>> torch.randn(2, generator=g).shape
        torch.Size([2])
    """

    def __init__(self, device="cpu"):
        self._seed = 67280421310721
        self.np = np.random.Generator(np.random.PCG64(self._seed))

    @property
    def device(self):
        from ._device import CPU

        return CPU

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
        # PyTorch keeps seeds as uint64: negative seeds wrap, larger ones are refused
        if not -(1 << 63) <= seed < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        seed &= 0xFFFFFFFFFFFFFFFF
        self._seed = seed
        self.np = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self) -> int:
        s = int.from_bytes(os.urandom(8), "little") ^ time.time_ns()
        s &= 0xFFFFFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The generator state as a uint8 tensor (round-trips through ``set_state``)."""
        from ._tensor import _make

        raw = json.dumps({"seed": self._seed, "state": self.np.bit_generator.state}).encode()
        return _make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, state) -> Generator:
        if not (hasattr(state, "_data") and state._data.dtype == np.uint8):
            raise TypeError("RNG state must be a torch.ByteTensor (pass what get_rng_state() "
                            "returned)")
        raw = bytes(state._data)
        try:
            d = json.loads(raw.decode())
            self._seed = d["seed"]
            bg = np.random.PCG64()
            bg.state = d["state"]
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError("set_rng_state: this is not a retrograd generator state "
                               f"({e}); pass what get_rng_state() returned") from None
        self.np = np.random.Generator(bg)
        return self

    def clone_state(self):
        return self.np.bit_generator.state


default_generator = Generator()


def gen(generator) -> np.random.Generator:
    """The NumPy generator to draw from (``generator=`` or the default)."""
    return (generator or default_generator).np


def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it.

    Example:
        >>> import retrograd as torch
        >>> torch.manual_seed(0).initial_seed()
        0
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the clock; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed last given to the default generator."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor.

    Example:
        >>> import retrograd as torch
        >>> s = torch.get_rng_state(); a = torch.rand(2)
        >>> torch.set_rng_state(s); bool(torch.equal(a, torch.rand(2)))
        True
    """
    return default_generator.get_state()


def set_rng_state(state) -> None:
    """Restore the default generator's state from ``get_rng_state()``."""
    default_generator.set_state(state)


class fork_rng:
    """Context manager that restores the default generator's state on exit.

    Example:
        >>> import retrograd as torch
        >>> with torch.random.fork_rng():
        ...     _ = torch.rand(1)
    """

    def __init__(self, devices=None, enabled: bool = True, **kwargs):
        self.enabled = enabled
        self.state = None

    def __enter__(self):
        if self.enabled:
            self.state = get_rng_state()

    def __exit__(self, *exc):
        if self.enabled:
            set_rng_state(self.state)
        return False
