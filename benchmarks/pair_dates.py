"""The date a cross-encoder pair carries, in the forms the benchmarks compare.

A recall hands the cross-encoder ``[Date: May 08, 2023 (2023-05-08)] {text}``
(:func:`hindsight_tools.recall.rerank.base.rerank_document`). On LoCoMo that prefix is 17 of
a pair's 67 tokens, and a pair's cost grows with its tokens, so the date's form is a lever on
how many pairs a recall can afford. ``short`` writes the date in words alone
(``May 8, 2023: {text}``, 6 tokens); ``none`` leaves it out.

:func:`date_form` puts one form in place of the engine's for the duration of a ``with``
block, process-wide: the benchmarks run one form at a time, or switch between calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from unittest import mock

import hindsight_tools.recall.pipeline as pipeline
from hindsight_tools.recall.rerank.base import rerank_document

DATE_FORMS = ("full", "short", "none")
Document = Callable[[str, "str | None", "datetime | None"], str]


def _short(text: str, context: str | None, occurred_start: datetime | None) -> str:
    document = rerank_document(text, context, None)
    if occurred_start is None:
        return document
    return f"{occurred_start:%B} {occurred_start.day}, {occurred_start.year}: {document}"


def _none(text: str, context: str | None, occurred_start: datetime | None) -> str:
    return rerank_document(text, context, None)


def dated_document(form: str) -> Document:
    """The document builder of ``form`` (one of :data:`DATE_FORMS`)."""
    builders: dict[str, Document] = {"full": rerank_document, "short": _short, "none": _none}
    if form not in builders:
        raise ValueError(f"date form must be one of {', '.join(DATE_FORMS)}, got {form!r}")
    return builders[form]


@contextmanager
def date_form(form: str) -> Iterator[None]:
    """Recalls inside the block give the cross-encoder documents dated in ``form``."""
    with mock.patch.object(pipeline, "rerank_document", dated_document(form)):
        yield
