"""nan_provenance / find_nonfinite: the first op whose value or gradient became non-finite,
and the masked-branch case (checked against torch's gradients)."""

import sys
import warnings

import pytest
import torch

import retrograd as rg
from retrograd.viz import find_nonfinite, nan_provenance

# NumPy's "invalid value encountered in sqrt" warnings from the kernels are not the subject
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _line() -> int:
    return sys._getframe(1).f_lineno


def masked_sqrt(lib):
    x = lib.tensor([-1.0, 0.0, 4.0], requires_grad=True)
    y = lib.where(x > 0, x.sqrt(), 0.0)
    y.sum().backward()
    return x.grad


def test_masked_sqrt_forward_and_backward():
    tgrad = masked_sqrt(torch)
    assert torch.isnan(tgrad[0])  # torch gives the same NaN
    x = rg.tensor([-1.0, 0.0, 4.0], requires_grad=True)
    with nan_provenance() as prov:
        y = rg.where(x > 0, x.sqrt(), 0.0)
        line = _line() - 1
    y.sum().backward()
    assert rg.isnan(x.grad).tolist() == torch.isnan(tgrad).tolist()
    f, b = prov.forward, prov.backward
    assert (f["op"], f["kind"], f["count"], f["created"]) == ("sqrt", "nan", 1, True)
    assert f"test_viz_nan.py:{line}" in f["site"]
    assert (b["op"], b["created"], b["masked"], b["mask_op"]) == (
        "SqrtBackward0", True, True, "WhereBackward0")
    assert b["kind"] == "nan" and b["count"] == 2  # x = -1 and x = 0 (0 * inf)
    text = str(prov)
    assert "masked branch" in text and "safe_x = torch.where(x > 0, x, 1.0)" in text


def test_safe_pattern_is_finite_in_both_libraries():
    for lib in (torch, rg):
        x = lib.tensor([-1.0, 0.0, 4.0], requires_grad=True)
        safe = lib.where(x > 0, x, 1.0)
        y = lib.where(x > 0, lib.sqrt(safe), 0.0)
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.25]


def test_unmasked_sqrt_at_zero_is_inf_not_masked():
    x = rg.tensor([0.0, 1.0], requires_grad=True)
    with nan_provenance() as prov:
        y = (x.sqrt() * 3).sum()
    y.backward()
    tx = torch.tensor([0.0, 1.0], requires_grad=True)
    (tx.sqrt() * 3).sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()  # [inf, 1.5]
    assert prov.forward is None
    b = prov.backward
    assert (b["op"], b["kind"], b["masked"], b["created"]) == ("SqrtBackward0", "inf", False,
                                                               True)
    assert "sqrt(x + eps)" in str(prov)


def test_nan_passed_on_from_the_given_gradient():
    x = rg.ones(2, requires_grad=True)
    with nan_provenance() as prov:
        y = x * 2
    y.backward(rg.tensor([float("nan"), 1.0]))
    assert prov.backward["created"] is False and "already" in str(prov)


def test_nan_from_the_data():
    w = rg.ones(2, requires_grad=True)
    data = rg.tensor([float("inf"), 1.0])
    with nan_provenance() as prov:
        y = (w * data - data).sum()
    f = prov.forward
    assert f["op"] == "mul" and f["created"] is False
    assert "check the data" in str(prov)
    assert y.isnan().item()


def test_anomaly_mode_restored_and_clean_block():
    assert not rg.is_anomaly_enabled()
    with nan_provenance() as prov:
        assert rg.is_anomaly_enabled()
        (rg.ones(2, requires_grad=True) * 2).sum().backward()
    assert not rg.is_anomaly_enabled() and prov.ok
    assert str(prov) == "no non-finite values or gradients were seen"


def test_exception_in_block_gets_the_report_as_a_note():
    x = rg.tensor([-1.0], requires_grad=True)
    with pytest.raises(ValueError) as info:
        with nan_provenance():
            x.log()
            raise ValueError("boom")
    notes = getattr(info.value, "__notes__", [])
    assert notes and "log produced 1 nan" in notes[0]


def test_find_nonfinite_after_the_fact():
    x = rg.tensor([0.0, 4.0], requires_grad=True)
    y = rg.where(x > 0, x.log(), x)
    line = _line() - 1
    r = find_nonfinite(y.sum())
    b = r.backward
    assert (b["op"], b["masked"], b["mask_op"]) == ("LogBackward0", True, "WhereBackward0")
    assert f":{line}" in b["site"]
    assert x.grad is None  # find_nonfinite touches no .grad
    y.sum().backward()  # and keeps the graph
    tx = torch.tensor([0.0, 4.0], requires_grad=True)
    torch.where(tx > 0, tx.log(), tx).sum().backward()
    assert rg.isnan(x.grad).tolist() == torch.isnan(tx.grad).tolist()


def test_find_nonfinite_clean_graph():
    x = rg.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert find_nonfinite((x * x).sum()).ok


def test_backward_inside_the_block_completes_and_reports():
    x = rg.tensor([-1.0, 4.0], requires_grad=True)
    with nan_provenance() as prov:
        rg.where(x > 0, x.sqrt(), 0.0).sum().backward()  # anomaly mode does not stop it
    assert prov.backward["masked"] and x.grad is not None
