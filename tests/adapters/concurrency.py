"""Several users' conversations at once through one adapter, and the checks that nothing crossed.

:class:`UsersModel` is one scripted model serving every user: its reply is a function of the
request alone (whose message it is, and whether this turn's tool call already came back), so any
interleaving of the users' calls gets the same replies. Each call waits at a barrier for one call
of every other user, so the runs really are interleaved: the users' first model calls happen
together, then their second calls, and so on.

Each user has a name and a bank that no other user's text contains, so a bank in the wrong
place (a request, a transcript, a record, a log row) is a leak.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

from memory_core.adapters.base import AUTO_CALL_PREFIX, MEMORY_TOOL_NAMES
from memory_core.adapters.script import Call, ModelRequest, Say, Script

BARRIER_TIMEOUT_S = 60  # a safety net so a broken run fails instead of hanging; nothing is timed


@dataclass(frozen=True)
class Person:
    user_id: str
    name: str
    bank: str

    @property
    def session_id(self) -> str:
        return f"{self.user_id}-chat"

    def tell(self) -> str:
        return f"I'm {self.name} and I bank with {self.bank}."

    def ask(self) -> str:
        return f"I'm {self.name}: which bank do I use?"

    def noted(self) -> str:
        return f"Noted, {self.name}."

    def answer(self, banks) -> str:
        return f"{self.name}, you bank with {', '.join(banks) or 'no bank I know of'}."

    @property
    def record(self) -> str:
        return f"The user banks with {self.bank}."


PEOPLE = {p.user_id: p for p in (Person("alice", "Alice", "Contoso"), Person("bob", "Bob", "Fabrikam"),
                                 Person("carol", "Carol", "Woodgrove"))}


def grant_everyone(service, agent_id="assistant"):
    for person in PEOPLE.values():
        service.grant(agent_id, f"user:{person.user_id}", read=True, write=True, actor="test")


class UsersModel:
    """The replies of one model serving several users at once (see the module docstring)."""

    def __init__(self, parties: int = 2) -> None:
        self.barrier = threading.Barrier(parties, timeout=BARRIER_TIMEOUT_S) if parties > 1 else None
        self.seen: list[tuple[Person, ModelRequest]] = []
        self._lock = threading.Lock()

    def script(self) -> Script:
        return Script([self] * 400)

    def __call__(self, request: ModelRequest):
        person, text, own_results = whose(request)
        with self._lock:
            self.seen.append((person, request))
        if self.barrier is not None:
            self.barrier.wait()
        if "bank with" in text:
            if not own_results:
                return Call(("memory_write", {"type": "semantic", "content": person.record, "attribute": "bank",
                                              "source_kind": "user_statement", "evidence": f"I bank with {person.bank}"}))
            return Say(person.noted())
        if not own_results:
            return Call(("memory_search", {"query": "which bank the user banks with"}))
        found = own_results[-1]
        banks = [p.bank for p in PEOPLE.values() if p.bank in json.dumps(found, ensure_ascii=False)]
        return Say(person.answer(banks))


def whose(request: ModelRequest) -> tuple[Person, str, list]:
    """The person whose turn ``request`` serves, their message, and this turn's tool results (the
    model's own calls; a host search appended after the message is not one)."""
    last = max(i for i, m in enumerate(request.messages) if m["role"] == "user")
    text = request.messages[last]["content"]
    people = [p for p in PEOPLE.values() if f"I'm {p.name}" in text]
    assert len(people) == 1, f"cannot tell whose request this is: {text!r}"
    results = [json.loads(m["content"].rsplit("\n", 1)[-1]) for m in request.messages[last + 1:]
               if m["role"] == "tool" and not str(m.get("tool_call_id") or "").startswith(AUTO_CALL_PREFIX)]
    return people[0], text, results


def assert_nothing_crossed(service, model: UsersModel, people, *, agents=None):
    """Each person's requests, replies, transcript, records and log rows hold only their own data
    (``agents`` maps a user id to the memory agent serving them; ``assistant`` by default)."""
    people, agents = list(people), agents or {}
    assert {p for p, _ in model.seen} == set(people), "every person's run reached the model"
    for person, request in model.seen:
        shown = request.system + json.dumps(request.messages, ensure_ascii=False)
        for other in people:
            if other != person:
                assert other.bank not in shown and other.name not in shown, f"{person.name}'s model saw {other.name}'s data"
        for message in request.messages:
            if message["role"] == "tool" and message.get("name") in MEMORY_TOOL_NAMES:
                assert json.loads(message["content"].rsplit("\n", 1)[-1]).get("ok"), f"a memory tool failed for {person.name}: {message}"
    sessions = {row["id"]: row for row in service.store.query("SELECT id, agent_id, user_id FROM sessions")}
    records = {}
    for person in people:
        session = sessions.get(person.session_id)
        assert session is not None and (session["agent_id"], session["user_id"]) == (agents.get(person.user_id, "assistant"), person.user_id)
        turns = [(t["role"], t["content"]) for t in service.transcript(person.session_id)]
        assert turns == [("user", person.tell()), ("assistant", person.noted()),
                         ("user", person.ask()), ("assistant", person.answer([person.bank]))], f"{person.name}'s transcript: {turns}"
        rows = service.store.query("SELECT id, scope_kind, scope_id, status, evidence_session_id FROM records "
                                   "WHERE type = 'semantic' AND content = ?", (person.record,))
        assert [(r["scope_kind"], r["scope_id"], r["status"], r["evidence_session_id"]) for r in rows] == [
            ("user", person.user_id, "confirmed", person.session_id)], f"{person.name}'s record: {[dict(r) for r in rows]}"
        records[rows[0]["id"]] = person
    mine = {person.user_id: {rid for rid, p in records.items() if p == person} for person in people}
    searches = service.store.query("SELECT user_id, session_id, result_ids FROM search_log")
    assert {r["session_id"] for r in searches} >= {p.session_id for p in people}, "each person searched in their own session"
    for row in searches:
        assert sessions[row["session_id"]]["user_id"] == row["user_id"]
        assert set(json.loads(row["result_ids"])) <= mine[row["user_id"]], f"a search for {row['user_id']} returned another's record"
    writes = service.store.query("SELECT user_id, session_id, record_id, outcome FROM write_log WHERE session_id IS NOT NULL")
    assert writes and {r["session_id"] for r in writes} == {p.session_id for p in people}
    for row in writes:
        assert sessions[row["session_id"]]["user_id"] == row["user_id"]
        assert row["record_id"] in mine[row["user_id"]], f"{row['user_id']}'s write log names another's record"
