"""Inference tensors (Note [Inference tensors] in _tensor/tensor.py), each rule against torch."""

from __future__ import annotations

import threading

import pytest
import torch

import retrograd
from _autograd_compare import same, same_error


def _inference(m, *shape):
    with m.inference_mode():
        return m.ones(*shape) * 2


def test_made_inside_views_and_detach_are_inference_tensors():
    def f(m):
        x = _inference(m, 3)
        with m.inference_mode():
            n = m.ones(1)
        return (x.is_inference(), n.is_inference(), x[1:].is_inference(),
                x.detach().is_inference(), x.clone().is_inference(), (x * 2).is_inference(),
                m.ones(1).is_inference(), x.requires_grad)
    same(f)


WRITES = {
    "add_": lambda m, x: x.add_(1),
    "setitem": lambda m, x: x.__setitem__(0, 5.0),
    "view_mul_": lambda m, x: x[1:].mul_(2),
    "fill_": lambda m, x: x.fill_(1),
    "zero_": lambda m, x: x.zero_(),
    "copy_": lambda m, x: x.copy_(m.ones(3)),
    "out=": lambda m, x: m.add(m.ones(3), 1, out=x),
    "uniform_": lambda m, x: x.uniform_(),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_in_place_writes_outside_inference_mode_are_refused(write):
    def f(m):
        x = _inference(m, 3)
        WRITES[write](m, x)
    same_error(f)


@pytest.mark.parametrize("write", sorted(WRITES))
def test_in_place_writes_inside_inference_mode_are_fine(write):
    def f(m):
        x = _inference(m, 3)
        with m.inference_mode():
            WRITES[write](m, x)
        return x.shape, x.is_inference()
    same(f)


@pytest.mark.parametrize("case", ["version", "requires_grad_", "saved_by_mul", "saved_by_mm"])
def test_refusals(case):
    def f(m):
        x = _inference(m, 3)
        w = m.ones(3, requires_grad=True)
        {"version": lambda: x._version, "requires_grad_": lambda: x.requires_grad_(),
         "saved_by_mul": lambda: w * x,
         "saved_by_mm": lambda: m.ones(3, 3, requires_grad=True) @ x}[case]()
    same_error(f)


def test_uses_that_save_nothing_or_copy_work():
    def f(m):
        x = _inference(m, 3)
        w = m.ones(3, requires_grad=True)
        y = w + x  # AddBackward0 saves neither operand
        y.sum().backward()
        c = x.clone().requires_grad_()
        (c * c).sum().backward()
        return w.grad, c.grad, m.zeros(3).copy_(x), y.is_inference()
    same(f)


def test_normal_tensors_inside_inference_mode():
    def f(m):
        w = m.ones(3)
        with m.inference_mode():
            w.add_(1)
            v = w[1:]
            version = w._version
        v.mul_(2)  # a view of a normal tensor made inside: written outside, as torch
        return w, version, v.is_inference()
    same(f)


def test_inference_mode_false_turns_grad_mode_on():
    def f(m):
        with m.inference_mode(), m.inference_mode(False):
            t = m.ones(1)
            state = (m.is_inference_mode_enabled(), m.is_grad_enabled(), t.is_inference())
        with m.no_grad(), m.inference_mode(False):
            state += (m.is_grad_enabled(),)
        return state + (m.ones(1).is_inference(), m.is_inference_mode_enabled())
    same(f)


def test_another_thread_outside_inference_mode_makes_normal_tensors():
    # the marking is per thread, as PyTorch's thread-local inference mode
    inside, outside = threading.Event(), threading.Event()
    made = {}

    def worker():
        inside.wait()
        made["t"] = retrograd.ones(2)
        outside.set()

    th = threading.Thread(target=worker)
    th.start()
    with retrograd.inference_mode():
        inside.set()
        outside.wait()
        mine = retrograd.ones(2)
    th.join()
    assert mine.is_inference() and not made["t"].is_inference()
    assert not torch.ones(1).is_inference()


def test_a_custom_function_cannot_save_an_inference_tensor():
    def f(m):
        class Mul(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return g * b, g * a
        Mul.apply(m.ones(2, requires_grad=True), _inference(m, 2))
    same_error(f)
