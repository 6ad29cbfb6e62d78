r"""mkdocs hook: the pages show doctest examples without their ``# doctest:`` directives.

The guide's examples are run by the test suite as doctests (``tests/docs/test_examples.py``),
so their source keeps the directives that make them pass (``# doctest: +ELLIPSIS``,
``+IGNORE_EXCEPTION_DETAIL``, ...). A reader has no use for them: this hook removes them
from every ``>>>`` and ``...`` line of a page's Markdown before it is rendered (so from
the search index too), as Griffe's ``trim_doctest_flags`` does for the API reference's
docstrings. Loaded by ``mkdocs.yml`` (``hooks:``).

Example:
    >>> strip_doctest_flags(">>> f(x)  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE")
    '>>> f(x)'
"""

from __future__ import annotations

import re

_FLAGS = re.compile(
    r"^([ \t]*(?:>>>|\.\.\.)(?:[ \t].*?)?)[ \t]*#[ \t]*doctest:[ \t]*[+-]\w+"
    r"(?:[ \t]*,[ \t]*[+-]\w+)*[ \t]*$", re.M)


def strip_doctest_flags(markdown: str) -> str:
    """``markdown`` with the doctest directive comments cut from its example lines."""
    return _FLAGS.sub(r"\1", markdown)


def on_page_markdown(markdown: str, **kwargs) -> str:
    return strip_doctest_flags(markdown)
