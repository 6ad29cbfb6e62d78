"""The differential fuzzer in the suite: random programs, retrograd against torch.

``tests/support/fuzzgen.py`` builds program ``i`` from seed ``i`` (leaves with broadcasting
shapes, float32/float64, views and views of views, in-place ops and setitem on bases
and views, retain_grad, retain_graph, create_graph and second derivatives,
``autograd.grad`` with ``allow_unused``), runs it with both libraries and compares
values, dtypes, shapes, requires_grad, is_leaf, grad_fn presence, gradients and
exception types step by step. A failing seed is shrunk (steps dropped while the
difference persists) and printed as a snippet to paste.

CI runs ``DEFAULT_PROGRAMS`` programs in blocks of ``BLOCK`` seeds (one test case per
block, so ``pytest -n 2`` balances them). A long campaign::

    python -m pytest tests/fuzz/test_fuzz.py --fuzz-programs 20000 -q
    python -m pytest tests/fuzz/test_fuzz.py --fuzz-programs 5000 --fuzz-seed 100000 -q

or, for a summary of the difference classes with one reproducer each::

    python tests/support/fuzzgen.py --programs 20000 --seed 0
"""

from __future__ import annotations

import pytest

import fuzzgen

pytest.importorskip("torch")

# Note [Fuzzer budget]
# 3,000 programs take about 16 s on one core of the 2-core CI machine (about 5 ms a
# program: generation runs torch once, the comparison runs torch and retrograd), which
# keeps the fuzzer well under a minute even when a few failing seeds are shrunk.
DEFAULT_PROGRAMS = 3000
BLOCK = 200
#: failing seeds of a block that are shrunk and printed in full (the rest by seed)
SHOWN = 3


def pytest_generate_tests(metafunc):
    if "seed_block" not in metafunc.fixturenames:
        return
    n = metafunc.config.getoption("--fuzz-programs")
    n = DEFAULT_PROGRAMS if n is None else n
    start = metafunc.config.getoption("--fuzz-seed")
    blocks = [(s, min(BLOCK, start + n - s)) for s in range(start, start + n, BLOCK)]
    metafunc.parametrize("seed_block", blocks, ids=[f"seeds{s}-{s + k - 1}" for s, k in blocks])


def _open_seeds() -> set:
    """Seeds listed in tests/fuzz/data/open_seeds.txt (Note [Open fuzz seeds])."""
    return {seed for seed, _ in fuzzgen.read_seeds("open_seeds.txt")}


# Note [Open fuzz seeds]
# The fuzzer found more differences than one change could fix; those still open are
# listed by seed in tests/fuzz/data/open_seeds.txt (a ratchet, not an exclusion: each is an
# open defect of issue 12, triaged by class in docs/compatibility.md). A program that
# differs and is not listed fails the test (a new difference), and so does a listed
# program that now agrees (delete its seed), so the list can only shrink.
OPEN = _open_seeds()


def test_programs_agree_with_torch(seed_block):
    start, count = seed_block
    failed = []
    fixed = []
    for seed in range(start, start + count):
        outcome = fuzzgen.check_seed(seed, do_shrink=len(failed) < SHOWN and seed not in OPEN)
        if outcome.failed and seed not in OPEN:
            failed.append(outcome)
        elif not outcome.failed and seed in OPEN:
            fixed.append(seed)
    if fixed:
        pytest.fail(f"programs {fixed} now agree with torch: delete these seeds from "
                    "tests/fuzz/data/open_seeds.txt", pytrace=False)
    if failed:
        parts = [f"{len(failed)} of {count} programs differ from torch "
                 f"(seeds {', '.join(str(o.seed) for o in failed)}); reproduce one with "
                 f"`python -m pytest tests/fuzz/test_fuzz.py --fuzz-seed SEED --fuzz-programs 1`"]
        for o in failed[:SHOWN]:
            parts.append(fuzzgen.render(o.program, o.diff))
        for o in failed[SHOWN:]:
            parts.append(f"seed {o.seed}: {fuzzgen.classify(o.diff)}")
        pytest.fail("\n\n".join(parts), pytrace=False)


# ----------------------------------------------------------------------------------
# the fuzzer itself


def test_generation_is_deterministic():
    a, b = fuzzgen.generate(7), fuzzgen.generate(7)
    assert [s.code for s in a.steps] == [s.code for s in b.steps]
    assert [s.code for s in a.steps] != [s.code for s in fuzzgen.generate(8).steps]


def test_programs_cover_the_brief():
    # a bounded sample of programs reaches every family of steps the fuzzer promises
    text = "\n".join(s.code for seed in range(300) for s in fuzzgen.generate(seed).steps)
    for needle in ("requires_grad=True", "T.float32", "T.float64", "T.zeros((0,", "T.tensor(0",
                   "float('nan')", "-0.0", ".view(", "[None]", ".transpose(", ".diagonal(",
                   ".unfold(", ".as_strided(", ".unbind(", ".expand(", ".add_(", ".copy_(",
                   "] = ", ".masked_fill_(", "with T.no_grad():", ".retain_grad()",
                   "retain_graph=True", "create_graph=True", "allow_unused=True",
                   "T.autograd.grad(", ".backward(", " @ ", "T.softmax(", ".std(",
                   ".grad = None"):
        assert needle in text, needle


def test_rendered_program_runs():
    # the snippet printed for a failure is real code: it runs under torch as printed
    import torch

    prog = fuzzgen.generate(3)
    code = fuzzgen.render(prog, module="torch")
    assert code.splitlines()[1] == "import torch as T"
    again = fuzzgen.parse(code)
    assert [s.code for s in again.steps] == [s.code for s in prog.steps]
    assert fuzzgen.run(again, torch)  # no exception escapes


def _torch_with_wrong_exp():
    """torch, except that exp is 0.1% off: a module that differs from torch in one op."""
    import types

    import torch

    fake = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch)
                                    if not k.startswith("__")})
    fake.exp = lambda x: torch.exp(x) * 1.001
    return fake, torch


def test_a_difference_is_found(monkeypatch):
    fake, torch = _torch_with_wrong_exp()
    monkeypatch.setattr(fuzzgen, "_modules", lambda: (fake, torch))
    prog = fuzzgen.parse("x1 = T.tensor([1.0, 2.0], requires_grad=True)\n"
                         "x2 = T.tensor([3.0], requires_grad=True)\n"
                         "v3 = x2 * 2\n"
                         "v4 = T.exp(x1)\n"
                         "v5 = v4.sum() + v3.sum()\n"
                         "v5.backward()\n")
    diff = fuzzgen.compare(prog)
    assert diff is not None and diff.code == "v4 = T.exp(x1)" and diff.kind == "values"
    small, d = fuzzgen.shrink(prog, diff)
    assert [s.code for s in small.steps] == ["x1 = T.tensor([1.0, 2.0], requires_grad=True)",
                                             "v4 = T.exp(x1)"]
    assert "print(v4)" in fuzzgen.render(small, d)
    monkeypatch.setattr(fuzzgen, "_modules", lambda: (torch, torch))
    assert fuzzgen.compare(prog) is None


def test_shrinker_keeps_the_difference(monkeypatch):
    # the shrinker drops every step the difference does not need (compare is faked:
    # "a difference exists while the program still makes x1 and v4")
    prog = fuzzgen.parse("x1 = T.tensor([1.0, 2.0], requires_grad=True)\n"
                         "x2 = T.tensor([3.0], requires_grad=True)\n"
                         "v3 = x2 * 2\n"
                         "v4 = T.exp(x1)\n"
                         "v5 = v4.sum()\n")
    diff = fuzzgen.Difference(3, "v4 = T.exp(x1)", "values", "v4", "a", "b")

    def fake_compare(p):
        codes = [s.code for s in p.steps]
        if codes[0].startswith("x1 =") and "v4 = T.exp(x1)" in codes:
            return fuzzgen.Difference(codes.index("v4 = T.exp(x1)"), "v4 = T.exp(x1)",
                                      "values", "v4", "a", "b")
        return None

    monkeypatch.setattr(fuzzgen, "compare", fake_compare)
    small, d = fuzzgen.shrink(prog, diff)
    assert [s.code for s in small.steps] == ["x1 = T.tensor([1.0, 2.0], requires_grad=True)",
                                             "v4 = T.exp(x1)"]
    assert d.step == 1


def test_values_comparison():
    import numpy as np

    cv = fuzzgen._compare_values
    f32 = "torch.float32"
    assert cv(np.array([1.0, np.nan]), np.array([1.0, np.nan]), f32) is None
    assert cv(np.array([1.0, 0.0]), np.array([1.0, np.nan]), f32) == "values"
    assert cv(np.array([np.inf]), np.array([-np.inf]), f32) == "values"
    assert cv(np.array([1.0 + 1e-6]), np.array([1.0]), f32) is None
    assert cv(np.array([1.0 + 1e-6]), np.array([1.0]), "torch.float64") == "values"
    assert cv(np.array([1.0 + 1e-6]), np.array([1.0]), "torch.float64", low=True) is None
    assert cv(np.array([True]), np.array([False]), "torch.bool") == "values"


@pytest.mark.parametrize("ex", fuzzgen.EXCLUSIONS, ids=lambda e: e.category)
def test_exclusions_are_real_and_matched(ex):
    # Note [Exclusions]: each entry's examples still differ from torch, and the entry
    # (not another) claims the difference; when retrograd changes, the entry goes
    for code in ex.examples:
        prog = fuzzgen.parse(code)
        diff = fuzzgen.compare(prog)
        if diff is None and ex.cpu_dependent:
            continue  # this CPU's NumPy loops round as torch does: the program agrees
        assert diff is not None, f"{ex.category}: no difference any more; drop the entry"
        assert fuzzgen.excluded_by(diff, prog) is ex, str(diff)


def test_exclusions_do_not_hide_other_differences(monkeypatch):
    # a program with leaky_relu whose difference lies elsewhere is not excluded
    fake, torch = _torch_with_wrong_exp()
    monkeypatch.setattr(fuzzgen, "_modules", lambda: (fake, torch))
    prog = fuzzgen.parse("x1 = T.tensor([1.0, -2.0], dtype=T.float64, requires_grad=True)\n"
                         "v2 = T.nn.functional.leaky_relu(x1, 0.1)\n"
                         "v3 = T.exp(v2)\n")
    diff = fuzzgen.compare(prog)
    assert diff is not None and diff.code == "v3 = T.exp(v2)"
    assert fuzzgen.excluded_by(diff, prog) is None
