"""Whole programs in the style of the code bases people learn from (makemore, nanoGPT,
d2l.ai, the PyTorch tutorials and examples, DDPM, ViT, llama2.c), shrunk to a few training
steps: each script in scripts/ is run unchanged with PyTorch and, with ``import torch``
resolving to retrograd (tests/support/torch_alias.py), with retrograd, in fresh processes;
what they print must agree: the words exactly, every number to 1e-4 relative."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
SCRIPTS = sorted((HERE / "scripts").glob("*.py"))
ALIAS = HERE.parents[0] / "support" / "torch_alias.py"
NUMBER = re.compile(r"(-?\d+(?:\.\d*)?(?:e[-+]?\d+)?)")


def _run(args: list, cwd: pathlib.Path) -> str:
    env = dict(os.environ, PYTHONHASHSEED="0")
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def _same(a: str, b: str, rel: float = 1e-4, abs_: float = 1e-6) -> str | None:
    """None when ``a`` and ``b`` agree (words exactly, numbers to ``rel``), else the first
    line that differs."""
    la, lb = a.splitlines(), b.splitlines()
    if len(la) != len(lb):
        return f"{len(la)} lines against {len(lb)}"
    for x, y in zip(la, lb):
        px, py = NUMBER.split(x), NUMBER.split(y)
        if len(px) != len(py) or px[0::2] != py[0::2]:
            return f"torch:     {x}\nretrograd: {y}"
        for u, v in zip(px[1::2], py[1::2]):
            fu, fv = float(u), float(v)
            if abs(fu - fv) > max(abs_, rel * max(abs(fu), abs(fv))):
                return f"torch:     {x}\nretrograd: {y}"
    return None


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_program_prints_what_it_prints_under_torch(script, tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "r").mkdir()
    want = _run([str(script)], tmp_path / "t")
    got = _run([str(ALIAS), str(script)], tmp_path / "r")
    assert want.strip(), "the program printed nothing"
    diff = _same(want, got)
    assert diff is None, diff


def test_the_comparison_catches_a_difference():
    assert _same("loss 1.00000 [ok]", "loss 1.00000 [ok]") is None
    assert _same("loss 1.00000", "loss 1.00020") is not None
    assert _same("loss 1.0", "lost 1.0") is not None
    assert _same("a\nb", "a") is not None
