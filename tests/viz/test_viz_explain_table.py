"""explain_grad against a table of scripts: each diagnosis class, the cut on the tensor's
own path named with its line and fix, and no cut from elsewhere in the script mentioned.

Each script runs from a file (so lines can be quoted), with an unrelated ``w.detach()``
first, and leaves its explanation in ``result``."""

import runpy
import textwrap

import pytest

from retrograd._graph.provenance import clear_cuts

PRELUDE = """\
import retrograd as torch
from retrograd import explain_grad
unrelated = torch.ones(3, requires_grad=True)
frozen = unrelated.detach()  # UNRELATED CUT
"""

# (id, script body, cause, reason, op, texts that must appear)
CASES = [
    ("int_cast_chain", """
        a = torch.ones(2, requires_grad=True)
        b = a.int().float()
        result = explain_grad(b, name="b")
        """, "cut", "integer", "to(torch.int32)",
     ["b does not require grad: its path back to the graph was cut by to(torch.int32)",
      "`b = a.int().float()`", "integer tensors carry no gradient", "stay in floating point",
      "applied to a leaf tensor that requires grad"]),
    ("int_cast_direct", """
        a = torch.ones(2, requires_grad=True)
        c = a.long()
        result = explain_grad(c, name="c")
        """, "cut", "integer", "to(torch.int64)", ["c does not require grad: it was made by"]),
    ("int_cast_loss", """
        a = torch.ones(2, requires_grad=True)
        loss = (a.int().float() * 2).sum()
        result = explain_grad(a, loss, name="a")
        """, "cut", "integer", "to(torch.int32)",
     ["the loss does not require grad", "path from the loss to a was cut by to(torch.int32)"]),
    ("int_cast_loss_itself", """
        a = torch.ones(2, requires_grad=True)
        loss = (a.int().float() * 2).sum()
        result = explain_grad(loss, name="loss")
        """, "cut", "integer", "to(torch.int32)", ["loss does not require grad"]),
    ("detach_direct", """
        w = torch.ones(3, requires_grad=True)
        h = w.detach()
        result = explain_grad(h, name="h")
        """, "cut", "detach", "detach()", ["h does not require grad: it was made by detach()"]),
    ("detach_downstream", """
        w = torch.ones(3, requires_grad=True)
        h = w.detach()
        y = (h * 2 + 1).sum()
        result = explain_grad(y, name="y")
        """, "cut", "detach", "detach()", ["`h = w.detach()`", "use the tensor itself"]),
    ("detach_then_used_by_loss", """
        w = torch.ones(3, requires_grad=True)
        v = torch.ones(3, requires_grad=True)
        h = w.detach()
        loss = (h * v).sum()
        loss.backward()
        result = explain_grad(w, loss, name="w")
        """, "cut", "detach", "detach()",
     ["path from the loss to w was cut by detach()", "then used by MulBackward0"]),
    ("data", """
        w = torch.ones(3, requires_grad=True)
        y = w.data * 3
        result = explain_grad(y, name="y")
        """, "cut", "data", ".data", [".data returns the values without history"]),
    ("no_grad", """
        w = torch.ones(3, requires_grad=True)
        with torch.no_grad():
            y = w * 2
        z = y + 1
        result = explain_grad(z, name="z")
        """, "cut", "no_grad", "mul", ["`y = w * 2`", "out of the no_grad() block"]),
    ("comparison", """
        w = torch.ones(3, requires_grad=True)
        mask = (w > 0).float()
        result = explain_grad(mask, name="mask")
        """, "cut", "comparison", "gt", ["torch.where"]),
    ("item_on_the_leaf", """
        w = torch.ones(3, requires_grad=True)
        s = torch.tensor(w.sum().item()) * 2
        result = explain_grad(w, name="w")
        """, "cut", "item", "item()", ["`s = torch.tensor(w.sum().item()) * 2`"]),
    ("requires_grad_false", """
        w = torch.ones(3, requires_grad=True)
        w.requires_grad_(False)
        result = explain_grad(w, name="w")
        """, "cut", "requires_grad_false", None, ["requires_grad_(True)"]),
    ("detach_", """
        w = torch.ones(3, requires_grad=True)
        y = w * 2
        y.detach_()
        result = explain_grad(y, name="y")
        """, "cut", "detach_", "detach_()", ["detach_() removed the tensor"]),
    ("not_requires_grad", """
        z = torch.zeros(2)
        y = z * 3
        result = explain_grad(y, name="y")
        """, "not_requires_grad", None, None, ["created without requires_grad=True"]),
    ("integer_leaf", """
        z = torch.arange(3)
        result = explain_grad(z, name="z")
        """, "not_requires_grad", None, None, ["only floating-point tensors"]),
    ("not_leaf", """
        w = torch.ones(3, requires_grad=True)
        y = w * 2
        y.sum().backward()
        result = explain_grad(y, name="y")
        """, "not_leaf", None, "MulBackward0", ["retain_grad()"]),
    ("not_used", """
        w = torch.ones(3, requires_grad=True)
        result = explain_grad(w, name="w")
        """, "not_used", None, None, ["never entered a graph"]),
    ("not_reached", """
        w = torch.ones(3, requires_grad=True)
        v = torch.ones(3, requires_grad=True)
        other = (w * 2).sum()
        loss = (v * 2).sum()
        loss.backward()
        result = explain_grad(w, loss, name="w")
        """, "not_reached", None, None, ["not by the graph of this loss"]),
    ("no_backward", """
        w = torch.ones(3, requires_grad=True)
        loss = (w * 2).sum()
        result = explain_grad(w, loss, name="w")
        """, "no_backward", None, None, ["backward() has not run on that graph"]),
    ("has_grad", """
        w = torch.ones(3, requires_grad=True)
        (w * 2).sum().backward()
        result = explain_grad(w, name="w")
        """, "has_grad", None, None, ["w.grad is set"]),
]


@pytest.mark.parametrize("script, cause, reason, op, texts",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_diagnosis(tmp_path, script, cause, reason, op, texts):
    path = tmp_path / "script.py"
    path.write_text(PRELUDE + textwrap.dedent(script))
    clear_cuts()
    result = runpy.run_path(str(path))["result"]
    text = str(result)
    assert result.cause == cause, text
    assert result.reason == reason, text
    if op is not None:
        assert result.op == op, text
    for want in texts:
        assert want in text, (want, text)
    # a cut elsewhere in the script is never reported, nor PyTorch's internal node names
    assert "UNRELATED" not in text and "frozen" not in text, text
    unrelated_line = PRELUDE.splitlines().index(
        "frozen = unrelated.detach()  # UNRELATED CUT") + 1
    assert all(c.site is None or c.site[1] != unrelated_line for c in result.cuts)
    assert "torch::autograd" not in text, text
    if cause == "cut":
        assert "created without requires_grad" not in text, text
