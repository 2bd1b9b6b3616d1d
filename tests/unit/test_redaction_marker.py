"""The redaction marker of event reasons has one live home; the schema's triggers keep their own copies."""

from pathlib import Path

from memory_core.store import markers, migrations_hardening
from memory_core.store.pg import schema

ROOT = Path(__file__).resolve().parents[2]


def test_the_live_marker_is_the_one_the_triggers_let_through():
    assert markers.REDACTED_REASON == migrations_hardening.REDACTED_REASON == schema.REDACTED_REASON


def test_no_live_code_outside_the_store_takes_a_constant_from_a_migration():
    importers = [p.relative_to(ROOT).as_posix() for p in (ROOT / "memory_core").rglob("*.py")
                 if "store" not in p.relative_to(ROOT).parts and ".migrations_" in p.read_text(encoding="utf-8")]
    assert not importers, importers
