"""Anomaly mode against PyTorch: detect_anomaly / set_detect_anomaly, the NaN check with
the forward traceback, "created" versus "passed on", and the forward traceback warning
for any error raised by a node.
"""

from __future__ import annotations

import warnings

import pytest

import retrograd
from _autograd_compare import same, same_error, tensor

torch = pytest.importorskip("torch")


def _quiet(fn):
    def run(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(m)
    return run


def test_modes_and_flags():
    def f(m):
        states = [m.is_anomaly_enabled()]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                states.append((m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()))
                with m.autograd.set_detect_anomaly(False):
                    states.append(m.is_anomaly_enabled())
                states.append(m.is_anomaly_enabled())
            with m.autograd.detect_anomaly(check_nan=False):
                states.append(m.is_anomaly_check_nan_enabled())
        states.append([str(x.message) for x in w])
        m.autograd.set_detect_anomaly(True)
        states.append(m.is_anomaly_enabled())
        m.autograd.set_detect_anomaly(False)
        states.append((m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()))
        return states

    same(f)


def test_state_restored_after_exception():
    def f(m):
        try:
            with m.autograd.detect_anomaly():
                raise ValueError
        except ValueError:
            pass
        return m.is_anomaly_enabled()

    same(_quiet(f))
    same_error(_quiet(lambda m: m.autograd.detect_anomaly()(lambda: None)))  # not a decorator


def _sqrt_nan(m):
    x = tensor(m, [0.0, 1.0], requires_grad=True)
    with m.autograd.detect_anomaly():
        y = x.sqrt() * 0.0
        y.sum().backward()


def test_nan_created_by_a_node():
    e = same_error(_quiet(_sqrt_nan))
    msg = str(e)
    assert msg.startswith("Function 'SqrtBackward0' returned nan values in its 0th output.")
    assert "created the NaN" in msg
    assert "y = x.sqrt() * 0.0" in msg  # the forward traceback names the user's line
    assert "test_anomaly.py" in msg


def test_nan_passed_on_from_the_output_gradient():
    def f(m):
        x = tensor(m, [1.0, 2.0], requires_grad=True)
        with m.autograd.detect_anomaly():
            a = x * 2
            a.backward(tensor(m, [float("nan"), 1.0]))

    e = same_error(_quiet(f))
    assert str(e).startswith("Function 'MulBackward0' returned nan values in its 0th output.")
    assert "only passed the NaN on" in str(e)


def test_custom_function_nan():
    def f(m):
        class Log(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.log()

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g / x * (x * 0 + 1).log()  # 0 * inf at x = 0 -> nan

        x = tensor(m, [0.0, 1.0], requires_grad=True)
        with m.autograd.detect_anomaly():
            Log.apply(x).sum().backward()

    e = same_error(_quiet(f))
    assert "LogBackward" in str(e)


def test_no_check_without_anomaly_mode_or_with_check_nan_false():
    def f(m):
        x = tensor(m, [0.0, 1.0], requires_grad=True)
        (x.sqrt() * 0.0).sum().backward()
        first = x.grad.clone()
        x.grad = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.set_detect_anomaly(True, check_nan=False):
                (x.sqrt() * 0.0).sum().backward()
        return first, x.grad

    same(f)


def test_forward_trace_warning_for_other_errors():
    def f(m):
        x = tensor(m, [1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                y = x.exp()
                y.add_(1)
                try:
                    y.sum().backward()
                except RuntimeError as e:
                    err = str(e).split(";")[0]
        detected = [str(x.message).split("\n")[:2] for x in w
                    if "Error detected in" in str(x.message)]
        return err, detected[0][0], "y = x.exp()" in "\n".join(detected[0])

    r = same(f)
    assert r[1] == ("Error detected in ExpBackward0. Traceback of forward call that caused the "
                    "error:")


def test_traces_recorded_only_in_anomaly_mode():
    x = retrograd.ones(2, requires_grad=True)
    assert (x * 2).grad_fn._trace is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with retrograd.autograd.detect_anomaly():
            y = x * 2
    assert "y = x * 2" in y.grad_fn._trace
