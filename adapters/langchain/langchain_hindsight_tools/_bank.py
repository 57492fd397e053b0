"""Which bank a call uses: the bound one, or the run config's ``configurable["bank_id"]``."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig, ensure_config

from hindsight_tools.tools import resolve_bank_id


def bank_for_call(bound: str | None, config: RunnableConfig | None) -> str:
    # ensure_config also picks up the config of an enclosing chain run
    configurable = ensure_config(config).get("configurable") or {}
    return resolve_bank_id(bound, configurable.get("bank_id"))
