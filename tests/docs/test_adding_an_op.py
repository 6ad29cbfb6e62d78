"""docs/adding-an-op.md stays true: each code block that names a file is in that file,
word for word, and the page's session runs and prints what it shows."""

from __future__ import annotations

import doctest
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "adding-an-op.md"
BLOCK = re.compile(r'```(\w+)(?: title="([^"]+)")?\n(.*?)```', re.S)


def _blocks():
    return BLOCK.findall(PAGE.read_text())


def test_the_page_shows_the_three_pieces_of_the_worked_example():
    titled = [path for _, path, _ in _blocks() if path]
    assert titled == ["src/retrograd/ops/records/elementwise.py",
                      "src/retrograd/_functions/pointwise.py",
                      "tests/support/opdb.py"]


def test_each_titled_block_is_in_its_file():
    for _lang, path, code in _blocks():
        if not path:
            continue
        source = (ROOT / path).read_text()
        assert code in source, f"the {path} block of {PAGE.name} is not in {path} as shown"


def test_the_session_on_the_page_runs():
    sessions = [code for lang, _, code in _blocks() if lang == "pycon"]
    assert len(sessions) == 1
    test = doctest.DocTestParser().get_doctest(sessions[0], {}, PAGE.name, str(PAGE), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 8 and result.failed == 0


def test_a_record_no_entry_reaches_is_caught():
    # step 3 cannot be forgotten: the op database covers every record of the table
    import opdb
    from retrograd.ops.op import REGISTRY

    reached = {name for info in opdb.DB for name in info.ops}
    assert "hypot" in reached
    assert any(op.name == "hypot" for op in REGISTRY)
