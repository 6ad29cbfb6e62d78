"""Note [Optional modes]: autocast, forward-mode AD, anomaly mode and saved-tensor hooks
each set their bit of one thread-local flag, the only thing the op path tests while they
are off; each still works when on, alone or together."""

from __future__ import annotations

import threading
import warnings

import pytest

import retrograd as torch
from retrograd._graph.modes import ANOMALY, AUTOCAST, FORWARD_AD, MODES, SAVED_HOOKS
from retrograd.autograd import forward_ad as fwAD


def test_off_by_default():
    assert MODES.bits == 0


@pytest.mark.parametrize("bit, enter", [
    (AUTOCAST, lambda: torch.autocast("cpu")),
    (FORWARD_AD, fwAD.dual_level),
    (ANOMALY, lambda: torch.autograd.detect_anomaly(check_nan=False)),
    (SAVED_HOOKS, lambda: torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)),
])
def test_each_mode_sets_its_bit_while_on(bit, enter):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with enter():
            assert MODES.bits == bit
            with enter() if bit != FORWARD_AD else torch.no_grad():  # nested: still on
                assert MODES.bits & bit
            assert MODES.bits == bit
    assert MODES.bits == 0


def test_modes_together_and_each_still_acts():
    x = torch.ones(2, 2, requires_grad=True)
    packed = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(check_nan=False), torch.autocast("cpu"), \
                torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t,
                                                         lambda t: t):
            with fwAD.dual_level():
                d = fwAD.make_dual(torch.ones(2), torch.full((2,), 3.0))
                tangent = fwAD.unpack_dual(d.exp()).tangent
                assert MODES.bits == AUTOCAST | FORWARD_AD | ANOMALY | SAVED_HOOKS
            y = x @ x  # autocast: bfloat16; hooks: what mm saves is packed
            assert MODES.bits == AUTOCAST | ANOMALY | SAVED_HOOKS
    assert y.dtype == torch.bfloat16
    assert packed
    assert getattr(y.grad_fn, "_trace", None)  # anomaly mode kept the forward trace
    assert torch.allclose(tangent, torch.ones(2).exp() * 3)
    assert MODES.bits == 0


def test_autocast_handled_op_turns_the_bit_off_inside_and_back_on(monkeypatch):
    from retrograd.ops.records import table as T

    seen = []
    mm = T.mm_ops["mm"]
    kernel = mm.fwd

    def spy(a, b):
        seen.append(MODES.bits)  # while autocast runs the op: its inner ops are not cast
        return kernel(a, b)

    monkeypatch.setattr(mm, "fwd", spy)
    with torch.autocast("cpu"):
        seen.append(MODES.bits)
        torch.ones(2, 2) @ torch.ones(2, 2)
        seen.append(MODES.bits)
    assert seen == [AUTOCAST, 0, AUTOCAST]


def test_modes_are_per_thread():
    inside = threading.Event()
    release = threading.Event()
    other = []

    def worker():
        with torch.autograd.detect_anomaly(check_nan=False):
            inside.set()
            release.wait(5)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = threading.Thread(target=worker)
        t.start()
        inside.wait(5)
        other.append(MODES.bits)
        y = torch.ones(2, requires_grad=True) * 2
        release.set()
        t.join()
    assert other == [0]
    assert getattr(y.grad_fn, "_trace", None) is None  # no anomaly trace on this thread
