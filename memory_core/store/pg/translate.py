"""The SQL dialect layer: the store's SQLite-dialect statements rewritten for PostgreSQL.

The store's modules write one SQL dialect (SQLite's). The differences that are purely a matter of
spelling are rewritten here, mechanically and in one place, so the ~40 modules that hold SQL need
no second copy; everything that differs in *capability* (full-text search, vector search,
erasure, the event log's guard, write locking) is a real PostgreSQL implementation elsewhere in
this package, never a rewrite. The rewrites, each tested in ``tests/unit/store/test_pg_translate.py``:

==============================================  ==================================================
SQLite                                          PostgreSQL
==============================================  ==================================================
``?`` placeholders                              ``%s`` (a literal ``%`` becomes ``%%``)
``:name`` placeholders                          ``%(name)s``
``INSERT OR IGNORE INTO t ...``                 ``INSERT INTO t ... ON CONFLICT DO NOTHING``
``INSERT OR REPLACE INTO t (c..) ...``          ``... ON CONFLICT (primary key) DO UPDATE SET c = EXCLUDED.c``
``json_extract(x, '$.a')``                      ``(x::jsonb ->> 'a')``
``group_concat(x)`` / ``group_concat(x, s)``    ``string_agg((x)::text, ',')`` / ``string_agg((x)::text, s)``
``instr(a, b)``                                 ``strpos(a, b)``
``IFNULL(``                                     ``COALESCE(``
``+r.col`` (unary plus: "use no index here")    ``r.col`` (PostgreSQL has no such hint)
``x LIKE y``                                    ``x ILIKE y`` (SQLite's LIKE ignores ASCII case)
``BEGIN IMMEDIATE``                             ``BEGIN`` (writers are serialised by per-scope advisory locks)
an ``INSERT`` into a table with a sequence      ``... RETURNING <key>`` so ``cursor.lastrowid`` works
==============================================  ==================================================

Quoted strings and identifiers are never touched. Anything else is passed through as written: a
statement PostgreSQL does not understand fails loudly instead of being guessed at.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Columns a table's sequence fills (SQLite's INTEGER PRIMARY KEY AUTOINCREMENT / rowid).
SEQUENCE_COLUMNS = {
    "records": "seq", "events": "seq", "write_log": "seq", "search_log": "seq", "index_changes": "version",
    "record_entities": "rowid", "sessions": "rowid", "extraction_runs": "rowid",
    "ambient_decisions": "seq", "host_memory_decisions": "rowid", "fitness_results": "rowid",
}

# Primary keys, for INSERT OR REPLACE (PostgreSQL must name the conflict it resolves).
PRIMARY_KEYS = {
    "store_meta": ("key",), "entities": ("id",), "entity_aliases": ("entity_id", "alias_norm"),
    "records": ("seq",), "record_entities": ("record_id", "entity_id"), "grants": ("agent_id", "scope_kind", "scope_id"),
    "sessions": ("id",), "turns": ("session_id", "turn"), "extraction_runs": ("id",),
    "extraction_candidates": ("run_id", "attempt", "idx"), "extraction_attempts": ("run_id", "attempt"),
    "procedures": ("record_id",), "search_settings": ("id",), "search_log": ("seq",), "events": ("seq",),
    "write_log": ("seq",), "index_changes": ("version",), "ambient_decisions": ("seq",),
    "session_context": ("session_id",), "host_memory_decisions": ("id",), "fitness_results": ("id",),
}

_TOKENS = re.compile(r"""('(?:[^']|'')*')|("(?:[^"]|"")*")|(\?)|(%)|([^'"?%]+)""", re.S)
_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO\s", re.I)
_OR_REPLACE = re.compile(r"^\s*INSERT\s+OR\s+REPLACE\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.I)
_INSERT_INTO = re.compile(r"^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+(\w+)", re.I)
_JSON_EXTRACT = re.compile(r"json_extract\(\s*([\w.]+)\s*,\s*'\$\.(\w+)'\s*\)", re.I)
_GROUP_CONCAT = re.compile(r"group_concat\(", re.I)
_INSTR = re.compile(r"\binstr\(", re.I)
_IFNULL = re.compile(r"\bifnull\(", re.I)
_LIKE = re.compile(r"(?<![\w])(NOT\s+)?LIKE(?![\w])", re.I)
_UNARY_PLUS = re.compile(r"(^|[\s(,=])\+(?=[A-Za-z_])")
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_BEGIN = re.compile(r"^\s*BEGIN(\s+(IMMEDIATE|DEFERRED|EXCLUSIVE))?\s*;?\s*$", re.I)


def _group_concat(code: str) -> str:
    """``group_concat(args)`` → ``string_agg((first)::text, sep)``, with balanced parentheses."""
    out, at = [], 0
    for match in _GROUP_CONCAT.finditer(code):
        if match.start() < at:
            continue
        depth, i, args, start = 1, match.end(), [], match.end()
        while i < len(code) and depth:
            ch = code[i]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == "," and depth == 1:
                args.append(code[start:i])
                start = i + 1
            i += 1
        args.append(code[start:i - 1])
        separator = args[1].strip() if len(args) > 1 else "','"
        out.append(code[at:match.start()])
        out.append(f"string_agg(({args[0].strip()})::text, {separator})")
        at = i
    out.append(code[at:])
    return "".join(out)


def _rewrite_code(code: str) -> str:
    """Rewrite function names and operators in SQL text that holds no quoted string."""
    code = _JSON_EXTRACT.sub(lambda m: f"({m.group(1)}::jsonb ->> '{m.group(2)}')", code)
    code = _INSTR.sub("strpos(", code)
    code = _IFNULL.sub("COALESCE(", code)
    code = _UNARY_PLUS.sub(lambda m: m.group(1), code)
    code = _NAMED.sub(lambda m: f"%({m.group(1)})s", code)
    code = _LIKE.sub(lambda m: f"{m.group(1) or ''}ILIKE", code)
    return code


@lru_cache(maxsize=4096)
def translate(sql: str) -> tuple[str, str | None]:
    """(PostgreSQL statement, column whose value ``lastrowid`` should report, or None)."""
    if _BEGIN.match(sql):
        return "BEGIN", None
    # json_extract's path is a quoted string: rewrite it before splitting into quoted/unquoted parts.
    sql = _JSON_EXTRACT.sub(lambda m: f"({m.group(1)}::jsonb ->> '{m.group(2)}')", sql)
    parts: list[str] = []
    code_buffer: list[str] = []

    def flush() -> None:
        if code_buffer:
            parts.append(_rewrite_code("".join(code_buffer)))
            code_buffer.clear()

    for quoted, ident, mark, percent, code in _TOKENS.findall(sql):
        if quoted or ident:
            flush()
            parts.append((quoted or ident).replace("%", "%%"))  # psycopg reads % everywhere
        elif mark:
            code_buffer.append("%s")
        elif percent:
            code_buffer.append("%%")
        else:
            code_buffer.append(code)
    flush()
    out = _group_concat("".join(parts))
    returning = None
    insert = _INSERT_INTO.match(out)
    replace = _OR_REPLACE.match(out)
    if _OR_IGNORE.match(out):
        out = _OR_IGNORE.sub("INSERT INTO ", out, count=1).rstrip().rstrip(";") + " ON CONFLICT DO NOTHING"
    elif replace:
        table, columns = replace.group(1), [c.strip() for c in replace.group(2).split(",")]
        key = PRIMARY_KEYS[table.lower()]
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c not in key)
        action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
        out = re.sub(r"^\s*INSERT\s+OR\s+REPLACE\s+INTO\s", "INSERT INTO ", out, count=1, flags=re.I)
        out = out.rstrip().rstrip(";") + f" ON CONFLICT ({', '.join(key)}) {action}"
    if insert and "RETURNING" not in out.upper():
        returning = SEQUENCE_COLUMNS.get(insert.group(1).lower())
        if returning:
            out = out.rstrip().rstrip(";") + f" RETURNING {returning}"
    return out, returning
