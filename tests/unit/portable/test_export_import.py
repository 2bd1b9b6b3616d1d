"""Export and import of our own format: lossless round trip, grants, ranks, and bad input refused whole."""

import json
import os
from pathlib import Path

import jsonschema
import pytest

from memory_core import MemoryService
from memory_core.cli import main
from memory_core.errors import InvalidInputError, PermissionDeniedError
from memory_core.portable.export import export_lines, export_to
from memory_core.portable.importer import import_file
from tests.fakes import HashingEmbedder
from tests.helpers import write_result as write

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "docs" / "export.schema.json").read_text())


def _lines(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def _body(path):
    """The file without its header (which holds the export time)."""
    return _lines(path)[1:]


def _counts(svc):
    return {t: svc.store.scalar(f"SELECT COUNT(*) FROM {t}") for t in ("records", "entities", "entity_aliases", "sessions", "turns", "write_log")}


@pytest.fixture
def fresh(make_target, clock, settings):
    opened = []

    def make(name):
        svc = MemoryService.open(make_target(name), settings, clock=clock, embedder=HashingEmbedder())
        opened.append(svc)
        return svc
    yield make
    for svc in opened:
        svc.close()


@pytest.fixture
def filled(alice, service):
    """alice's store with a revision, a supersession, a conflict, a procedure, mentions, an episode and hostile text
    (a NUL only on SQLite: PostgreSQL text cannot hold one, and its store refuses it on input)."""
    nul = "\u0000" if service.store.backend == "sqlite" else ""
    alice.record_turn("user", f"The user lives in Porto now, I said. Kl\u00e4r\u00e9 \u202eRTL\u202c and a NUL {nul} here.")
    write(alice, type="semantic", content="The user lives in Lisbon.", attribute="home_city")
    write(alice, type="semantic", content="The user lives in Porto.", attribute="home_city", source_kind="user_statement",
          evidence="The user lives in Porto now")
    write(alice, type="semantic", content="The user lives in Braga.", attribute="home_city")  # lower rank: a conflict
    made = write(alice, type="semantic", content=f"The user drinks tea \u202eRTL\u202c with NUL {nul} inside.", attribute="drink")
    alice.call_tool("memory_revise", {"record_id": made["record_id"], "action": "update", "reason": "milder",
                                      "content": f"The user drinks green tea \u202eRTL\u202c with NUL {nul} inside."})
    write(alice, type="episodic", content="Met Dana and Omar at the Kyoto conference.", mentions=["Dana", "Omar"])
    write(alice, type="procedural", content="How the user files expenses.",
          procedure={"name": "file expenses", "trigger": "after a trip", "steps": ["collect receipts", "scan them"], "pitfalls": ["late"]})
    return service


def test_export_validates_against_the_schema_and_names_every_part(filled, tmp_path):
    info = export_to(filled, tmp_path / "out.jsonl", sessions=True)
    lines = _lines(tmp_path / "out.jsonl")
    for line in lines:
        jsonschema.validate(line, SCHEMA)
    assert lines[0]["format"] == "agent-memory-export" and lines[0]["format_version"] == 1
    assert lines[-1] == {"kind": "end", "records": info["records"], "sessions": 1}
    records = [line for line in lines if line["kind"] == "record"]
    drink = next(r for r in records if r["record"]["attribute"] == "drink")
    assert drink["record"]["version"] == 2 and drink["versions"][0]["status"] == "superseded"
    nul = "\u0000" if filled.store.backend == "sqlite" else ""
    assert f"\u202eRTL\u202c with NUL {nul} inside" in drink["record"]["content"]
    home = [r for r in records if r["record"]["attribute"] == "home_city"]
    assert any(r["record"]["conflicts_with"] for r in home)
    episode = next(r for r in records if r["record"]["type"] == "episodic")
    assert sorted(e["name"] for e in episode["entities"]) == ["Dana", "Omar"]
    assert next(r for r in records if r["record"]["type"] == "procedural")["record"]["procedure"]["steps"] == ["collect receipts", "scan them"]


def test_round_trip_into_an_empty_store_gives_an_equal_export_and_equal_answers(filled, fresh, tmp_path):
    export_to(filled, tmp_path / "a.jsonl", sessions=True)
    target = fresh("target.sqlite")
    report = import_file(target, tmp_path / "a.jsonl")
    assert set(report["counts"]) == {"create"}, [i for i in report["lines"] if i["action"] != "create"]
    export_to(target, tmp_path / "b.jsonl", sessions=True)
    assert _body(tmp_path / "b.jsonl") == _body(tmp_path / "a.jsonl")
    target.grant("assistant", "user:alice", read=True, write=True, actor="t")
    for query in ("where does the user live", "tea", "Dana Kyoto", "expenses"):
        mine = filled.search(agent_id="assistant", user_id="alice", query=query)
        theirs = target.search(agent_id="assistant", user_id="alice", query=query)
        assert [r.record.id for r in theirs.results] == [r.record.id for r in mine.results], query


def test_import_again_reinforces_by_the_claim_rules_and_dry_run_writes_nothing(filled, tmp_path):
    export_to(filled, tmp_path / "a.jsonl")
    before = _counts(filled)
    dry = import_file(filled, tmp_path / "a.jsonl", dry_run=True)
    assert _counts(filled) == before
    assert dry["counts"].get("create", 0) == 0 and dry["counts"]["reinforce"] >= 4, dry["counts"]
    assert all(item["line"] > 1 for item in dry["lines"])


def test_a_principal_imports_only_where_it_may_write_and_never_above_its_rank(fresh, tmp_path, filled):
    export_to(filled, tmp_path / "a.jsonl")
    target = fresh("target.sqlite")
    target.grant("bot", "user:zed", read=True, write=True, actor="t")
    report = import_file(target, tmp_path / "a.jsonl", agent_id="bot", user_id="zed")
    assert set(report["counts"]) == {"refuse"}  # every line is in user:alice, where bot may not write
    assert report["lines"][0]["error"]["code"] == "permission_denied"
    assert target.store.scalar("SELECT COUNT(*) FROM records") == 0
    target.grant("bot", "user:alice", read=True, write=True, actor="t")
    report = import_file(target, tmp_path / "a.jsonl", agent_id="bot", user_id="alice")
    kinds = {item["source_kind"] for item in report["lines"] if item["action"] != "refuse"}
    assert kinds == {"agent_inference"}  # the user_statement's transcript is not in this store: downgraded, never kept


def test_export_as_a_principal_reads_through_its_grants(filled, tmp_path):
    filled.grant("other", "user:bob", read=True, actor="t")
    with pytest.raises(PermissionDeniedError):
        export_to(filled, tmp_path / "x.jsonl", agent_id="other", user_id="bob", scopes=["user:alice"])
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "x.jsonl.partial").exists()
    export_to(filled, tmp_path / "bob.jsonl", agent_id="other", user_id="bob")
    assert [line["kind"] for line in _lines(tmp_path / "bob.jsonl")] == ["header", "end"]
    mine = list(export_lines(filled, agent_id="assistant", user_id="alice"))
    assert len(mine) > 5


def _file(tmp_path, lines, name="in.jsonl"):
    path = tmp_path / name
    path.write_bytes(b"".join(line if isinstance(line, bytes) else (json.dumps(line) + "\n").encode() for line in lines))
    return path


@pytest.mark.parametrize("case", ["broken_json", "not_utf8", "unknown_version", "not_ours", "cut_short", "wrong_counts", "bad_session"])
def test_a_broken_file_is_refused_whole_and_writes_nothing(filled, tmp_path, fresh, case):
    export_to(filled, tmp_path / "a.jsonl", sessions=True)
    raw = (tmp_path / "a.jsonl").read_bytes().splitlines(keepends=True)
    if case == "broken_json":
        raw[3] = raw[3][:40] + b"\n"
    elif case == "not_utf8":
        raw[2] = b'{"kind": "record", "x": "\xff\xfe"}\n'
    elif case == "unknown_version":
        raw[0] = raw[0].replace(b'"format_version":1', b'"format_version":99')
    elif case == "not_ours":
        raw[0] = b'{"kind": "header", "format": "something-else"}\n'
    elif case == "cut_short":
        raw = raw[:-2]
    elif case == "wrong_counts":
        del raw[2]
    elif case == "bad_session":
        session = next(i for i, line in enumerate(raw) if line.startswith(b'{"kind":"session"'))
        obj = json.loads(raw[session])
        obj["session"]["turns"].append(obj["session"]["turns"][0])  # a repeated turn number
        raw[session] = (json.dumps(obj) + "\n").encode()
    path = _file(tmp_path, raw)
    target = fresh("target.sqlite")
    with pytest.raises(InvalidInputError) as caught:
        import_file(target, path)
    assert "line" in caught.value.message or "end line" in caught.value.message or "format" in caught.value.message
    assert _counts(target) == {k: 0 for k in _counts(target)}


def test_hostile_text_is_refused_per_line_by_the_store_rules(filled, tmp_path, fresh):
    export_to(filled, tmp_path / "a.jsonl")
    lines = _lines(tmp_path / "a.jsonl")
    lines[1]["record"]["content"] = "lone \ud800 surrogate"  # json.dumps writes it as an escape; the store refuses it
    lines[2]["record"]["scope"] = "nonsense"
    lines[3]["record"]["status"] = "deleted"
    lines[4]["record"]["extra"] = "field"
    path = _file(tmp_path, lines)
    target = fresh("target.sqlite")
    report = import_file(target, path)
    refused = {item["line"]: item["error"]["code"] for item in report["lines"] if item["action"] == "refuse"}
    assert refused == {2: "invalid_input", 3: "invalid_input", 4: "invalid_input", 5: "invalid_input"}
    assert target.store.scalar("SELECT COUNT(*) FROM records WHERE content LIKE 'lone%'") == 0
    assert report["counts"]["create"] == len(lines) - 2 - 4


def test_a_file_over_the_limit_is_refused_before_it_is_read(fresh, tmp_path):
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as handle:  # sparse: 1 GiB and one byte, with nothing written
        handle.truncate((1 << 30) + 1)
    target = fresh("target.sqlite")
    with pytest.raises(InvalidInputError, match="import limit"):
        import_file(target, path)
    assert target.store.scalar("SELECT COUNT(*) FROM records") == 0


def test_the_cli_exports_and_imports_with_a_report_and_no_traceback(tmp_path, capsys, make_target, clock, settings):
    source = make_target("cli-source.sqlite")
    with MemoryService.open(source, settings, clock=clock) as svc:  # the packaged embedder, as the CLI opens it
        svc.write_system_fact(scope="user:alice", content="The user's employee number is 4711.", attribute="employee_number")
        svc.write_system_fact(scope="project:apollo", content="Apollo ships in May.", about="Apollo", attribute="ship")
    assert main(["export", "--path", str(source), str(tmp_path / "out.jsonl")]) == 0
    assert main(["export", "--path", str(source), str(tmp_path / "out.jsonl")]) == 2  # exists: refused
    capsys.readouterr()
    target = make_target("cli-target.sqlite")
    assert main(["import", "--path", str(target), "--dry-run", str(tmp_path / "out.jsonl")]) == 0
    out = capsys.readouterr().out
    assert out.count("would create") == 2 and '"dry_run": true' in out
    assert main(["import", "--path", str(target), str(tmp_path / "out.jsonl")]) == 0
    assert main(["import", "--path", str(target), str(tmp_path / "out.jsonl")]) == 0
    assert capsys.readouterr().out.count(": reinforce (reinforced") == 2
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    assert main(["import", "--path", str(target), str(tmp_path / "bad.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error [invalid_input]") and "Traceback" not in err


def test_an_import_streams_its_records_one_batch_at_a_time(filled, fresh, tmp_path):
    info = export_to(filled, tmp_path / "a.jsonl", sessions=True)
    target = fresh("streamed.sqlite")
    sizes = []
    real = target.write_many

    def counting(requests, access, **options):
        sizes.append(len(requests))
        return real(requests, access, **options)

    target.write_many = counting
    seen = []
    report = import_file(target, tmp_path / "a.jsonl", batch_size=2, progress=lambda done, total: seen.append((done, total)))
    assert set(report["counts"]) == {"create"} and len(report["lines"]) == info["records"]
    assert sum(sizes) == info["records"] and max(sizes) <= 2 and len(sizes) == -(-info["records"] // 2), sizes
    assert seen[-1] == (info["records"], info["records"]) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    export_to(target, tmp_path / "b.jsonl", sessions=True)
    assert _body(tmp_path / "b.jsonl") == _body(tmp_path / "a.jsonl")


def test_a_file_changed_after_its_check_is_refused_before_a_write(filled, fresh, tmp_path):
    from memory_core.portable.reading import record_lines, scan_export

    export_to(filled, tmp_path / "a.jsonl")
    scan = scan_export(tmp_path / "a.jsonl")
    with open(tmp_path / "a.jsonl", "a", encoding="utf-8") as handle:
        handle.write("\n")
    with pytest.raises(InvalidInputError, match="changed after it was checked"):
        next(record_lines(tmp_path / "a.jsonl", scan))


def test_a_broken_last_line_refuses_the_file_even_when_batches_are_small(filled, fresh, tmp_path):
    export_to(filled, tmp_path / "a.jsonl")
    text = (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "cut.jsonl").write_text("\n".join(text[:-1]) + "\n", encoding="utf-8")  # no end line
    target = fresh("cut.sqlite")
    before = _counts(target)
    with pytest.raises(InvalidInputError, match="no end line"):
        import_file(target, tmp_path / "cut.jsonl", batch_size=1)
    assert _counts(target) == before
