"""Chat messages as memories: one memory per message, dated, saying who spoke."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock
from llama_index.core.bridge.pydantic import TypeAdapter, ValidationError

from hindsight_tools import FieldProblem, InvalidRequestError, MemoryItem
from hindsight_tools.models import FactType, Identifier, Timestamp

# Where a message may carry the time it was said (llama-index messages have no date field).
TIMESTAMP_KEY = "timestamp"
# OpenAI's per-message participant name, which llama-index keeps in additional_kwargs.
NAME_KEY = "name"
SESSION_KEY = "session_id"
SOURCE = "llama-index-chat"
# What the user says is about the world (them included); what the assistant says is the
# agent's own doing.
FACT_TYPES: Mapping[str, FactType] = {"user": "world", "assistant": "experience"}

_TIMESTAMP = TypeAdapter(Timestamp)
_DOCUMENT = TypeAdapter(Identifier)


def session_document(session: str | None) -> str | None:
    """The document a session's messages belong to: the session id, when it can be one (a
    blank, over-long or NUL-bearing id is kept in the metadata only, as before)."""
    if session is None:
        return None
    try:
        return _DOCUMENT.validate_python(session)
    except ValidationError:
        return None


def message_text(message: ChatMessage) -> str:
    """The message's text blocks; images, tool calls and thinking are left out."""
    return "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock)).strip()


def speaker_of(message: ChatMessage, names: Mapping[str, str]) -> str:
    name = message.additional_kwargs.get(NAME_KEY)
    if isinstance(name, str) and name.strip():
        return name.strip()
    return names.get(message.role.value, message.role.value)


def given_timestamp(message: ChatMessage, where: str) -> datetime | None:
    """The message's own timestamp (UTC), ``None`` when it has none."""
    value = message.additional_kwargs.get(TIMESTAMP_KEY)
    if value is None:
        return None
    try:
        return _TIMESTAMP.validate_python(value)
    except ValidationError:
        raise InvalidRequestError(
            [
                FieldProblem(
                    f"{where}.additional_kwargs[{TIMESTAMP_KEY!r}]",
                    f"must be a datetime, an ISO 8601 string or Unix seconds, got {value!r}",
                )
            ]
        ) from None


def memory_id(
    message: ChatMessage, speaker: str, stamp: datetime | None, session_id: str | None
) -> str:
    """The same message always gets the same id, so putting it again (a retry, ``set`` with a
    history already put) updates its memory instead of adding a copy."""
    parts = [
        session_id or "",
        message.role.value,
        speaker,
        stamp.isoformat() if stamp is not None else "",
        message_text(message),
    ]
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    return f"chat-{digest[:32]}"


def session_of(message: ChatMessage, session_id: str | None) -> str | None:
    # llama-index's Memory writes its session id into the messages it flushes to a block
    session = session_id or message.additional_kwargs.get(SESSION_KEY)
    return session if isinstance(session, str) else None


def is_retained(message: ChatMessage, roles: Collection[MessageRole]) -> bool:
    # tool results and tool-call-only turns carry no text of the conversation's own
    return message.role in roles and bool(message_text(message))


def memory_items(
    messages: Sequence[ChatMessage],
    *,
    roles: Collection[MessageRole],
    names: Mapping[str, str],
    session_id: str | None = None,
) -> list[MemoryItem]:
    """One memory per message worth keeping; undated messages are dated now."""
    now = datetime.now(UTC)
    items = []
    for index, message in enumerate(messages):
        if not is_retained(message, roles):
            continue
        role = message.role.value
        speaker = speaker_of(message, names)
        session = session_of(message, session_id)
        stamp = given_timestamp(message, f"messages[{index}]")
        metadata: dict[str, str] = {"source": SOURCE, "role": role, "speaker": speaker}
        if session is not None:
            metadata[SESSION_KEY] = session
        items.append(
            MemoryItem(
                id=memory_id(message, speaker, stamp, session),
                # the speaker in the text: a recalled line must say who said it
                text=f"{speaker}: {message_text(message)}",
                fact_type=FACT_TYPES.get(role, "world"),
                context=f"chat message from {speaker} ({role})",
                mentioned_at=stamp or now,
                # the session is the conversation: each message is also read after the one
                # before it, though put one at a time
                document_id=session_document(session),
                metadata=metadata,
            )
        )
    return items


def visible_ids(
    messages: Sequence[ChatMessage],
    *,
    roles: Collection[MessageRole],
    names: Mapping[str, str],
    session_id: str | None = None,
) -> set[str]:
    """The ids the memories of ``messages`` have (or would have): what the model reads in
    the chat history already, so a recall need not repeat it."""
    ids = set()
    for message in messages:
        if not is_retained(message, roles):
            continue
        try:
            stamp = given_timestamp(message, "message")
        except InvalidRequestError:
            continue  # never retained, so never recalled either
        speaker = speaker_of(message, names)
        ids.add(memory_id(message, speaker, stamp, session_of(message, session_id)))
    return ids


def latest_user_message(messages: Sequence[ChatMessage]) -> ChatMessage | None:
    for message in reversed(messages):
        if message.role == MessageRole.USER and message_text(message):
            return message
    return None
