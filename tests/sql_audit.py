"""Does a SQL statement stay inside one bank? PostgreSQL's own parser (pglast) answers.

Sharding by bank (docs/scaling.md) sends a statement to one shard only when every bank
table it reads or writes is pinned to one bank. :func:`unpinned` names the references
that are not. A reference is pinned when a condition that must hold (a conjunct of its
``WHERE`` or ``JOIN ... ON``, never one side of an ``OR``) equates its ``bank_id`` with a
parameter, or with the ``bank_id`` of a reference that is pinned itself (a join on the
bank, an outer row of a correlated subquery). An ``INSERT`` pins its target by naming
``bank_id`` among its columns: the row goes where its value says.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pglast import ast, parse_sql
from pglast.enums import A_Expr_Kind, BoolExprType

BANK_TABLES = frozenset(
    {
        "banks",
        "documents",
        "chunks",
        "memory_units",
        "memory_token_vectors",
        "entities",
        "unit_entities",
        "memory_links",
        "memory_terms",
        "bank_terms",
    }
)
_PARAM = -1
# statement nodes that open a scope of their own (table aliases, an unqualified bank_id)
_LEVELS = (ast.SelectStmt, ast.UpdateStmt, ast.DeleteStmt, ast.InsertStmt)


@dataclass
class _Level:
    aliases: dict[str, int] = field(default_factory=dict)  # alias -> reference
    quals: list[Any] = field(default_factory=list)
    parent: _Level | None = None

    def resolve(self, alias: str | None) -> int | None:
        if alias is None:  # an unqualified bank_id: the level's only bank table
            return next(iter(self.aliases.values())) if len(self.aliases) == 1 else None
        level: _Level | None = self
        while level is not None:
            if alias in level.aliases:
                return level.aliases[alias]
            level = level.parent
        return None


@dataclass
class _Audit:
    references: list[str] = field(default_factory=list)
    parent: dict[int, int] = field(default_factory=lambda: {_PARAM: _PARAM})

    def add(self, name: str) -> int:
        self.references.append(name)
        ref = len(self.references) - 1
        self.parent[ref] = ref
        return ref

    def find(self, node: int) -> int:
        while self.parent[node] != node:
            node = self.parent[node]
        return node

    def join(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def unpinned(statement: str) -> list[str]:
    """The bank tables of ``statement`` not pinned to one bank (empty: it stays in one)."""
    audit = _Audit()
    for raw in parse_sql(statement):
        _visit(raw.stmt, None, audit)
    return [
        name for ref, name in enumerate(audit.references) if audit.find(ref) != audit.find(_PARAM)
    ]


def touches_bank_tables(statement: str) -> bool:
    return any(
        isinstance(node, ast.RangeVar) and node.relname in BANK_TABLES
        for raw in parse_sql(statement)
        for node in _walk(raw.stmt)
    )


def _children(node: Any) -> Iterator[Any]:
    for name in getattr(node, "__slots__", ()):
        value = getattr(node, name, None)
        if isinstance(value, ast.Node):
            yield value
        elif isinstance(value, tuple | list):
            yield from (v for v in value if isinstance(v, ast.Node))


def _walk(node: Any) -> Iterator[Any]:
    yield node
    for child in _children(node):
        yield from _walk(child)


def _visit(node: Any, enclosing: _Level | None, audit: _Audit) -> None:
    """Audit ``node``'s subtree; a statement node opens a level inside ``enclosing``."""
    if isinstance(node, _LEVELS) and not (isinstance(node, ast.SelectStmt) and node.op):
        level = _open_level(node, enclosing, audit)
        for child in _children(node):
            _visit(child, level, audit)
        _pin(level, audit)
        return
    for child in _children(node):
        _visit(child, enclosing, audit)


def _open_level(node: Any, enclosing: _Level | None, audit: _Audit) -> _Level:
    level = _Level(parent=enclosing)
    sources: list[Any] = []
    if isinstance(node, ast.SelectStmt):
        sources += node.fromClause or ()
    elif isinstance(node, ast.UpdateStmt):
        sources += [node.relation, *(node.fromClause or ())]
    elif isinstance(node, ast.DeleteStmt):
        sources += [node.relation, *(node.usingClause or ())]
    if isinstance(node, ast.SelectStmt | ast.UpdateStmt | ast.DeleteStmt):
        level.quals.append(node.whereClause)
    for source in sources:
        _add_sources(source, level, audit)
    target = _bank_table(node.relation) if isinstance(node, ast.InsertStmt) else None
    if target is not None:
        ref = audit.add(target[0])
        if "bank_id" in {column.name for column in node.cols or ()}:
            audit.join(ref, _PARAM)
        level.aliases[target[1]] = ref
    return level


def _bank_table(node: Any) -> tuple[str, str] | None:
    """(table, alias) of a reference to a bank table, else None."""
    if not isinstance(node, ast.RangeVar) or node.relname not in BANK_TABLES:
        return None
    return str(node.relname), str(node.alias.aliasname if node.alias else node.relname)


def _add_sources(source: Any, level: _Level, audit: _Audit) -> None:
    """The tables of one FROM item; subqueries and functions are levels or no tables."""
    if isinstance(source, ast.JoinExpr):
        _add_sources(source.larg, level, audit)
        _add_sources(source.rarg, level, audit)
        level.quals.append(source.quals)
    elif (table := _bank_table(source)) is not None:
        level.aliases[table[1]] = audit.add(table[0])


def _conjuncts(expr: Any) -> Iterator[Any]:
    if isinstance(expr, ast.BoolExpr) and expr.boolop == BoolExprType.AND_EXPR:
        for arg in expr.args or ():
            yield from _conjuncts(arg)
    elif expr is not None:
        yield expr


def _side(expr: Any, level: _Level) -> int | None:
    """The reference whose bank_id ``expr`` is, _PARAM for a parameter, else None."""
    while isinstance(expr, ast.TypeCast):
        expr = expr.arg
    if isinstance(expr, ast.ParamRef):
        return _PARAM
    if isinstance(expr, ast.ColumnRef):
        names = [getattr(f, "sval", None) for f in expr.fields or ()]
        if names and names[-1] == "bank_id" and len(names) <= 2:
            return level.resolve(names[0] if len(names) == 2 else None)
    return None


def _pin(level: _Level, audit: _Audit) -> None:
    for qual in level.quals:
        for expr in _conjuncts(qual):
            if not (
                isinstance(expr, ast.A_Expr)
                and expr.kind == A_Expr_Kind.AEXPR_OP
                and [getattr(n, "sval", None) for n in expr.name or ()] == ["="]
            ):
                continue
            left, right = _side(expr.lexpr, level), _side(expr.rexpr, level)
            if left is not None and right is not None:
                audit.join(left, right)
