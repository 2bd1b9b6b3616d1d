"""A small store for the AppTest and admin_ui tests, written through the service API.

It holds what the pages need to show: two users with grants, evidenced and inferred records,
a supersession, a review-due flag, near-duplicate entities in one scope, the same alias in two
users' scopes, and content that tries markup injection.
"""

from __future__ import annotations

from memory_core import FixedClock, MemoryService, load_settings
from tests.fakes import HashingEmbedder
from tests.helpers import write

NOW = "2026-03-05T10:00:00Z"
INJECTION = "<img src=x onerror=alert(1)> **bold** [link](javascript:x)"


def build(path) -> dict[str, str]:
    """Build the store at ``path``; returns the ids tests refer to."""
    clock = FixedClock("2026-03-01T09:00:00Z")
    ids: dict[str, str] = {}
    with MemoryService.open(path, load_settings(), clock=clock, embedder=HashingEmbedder()) as service:
        service.grant("assistant", "user:alice", read=True, write=True, actor="setup", reason="alice uses the assistant")
        service.grant("assistant", "project:atlas", read=True, write=True, actor="setup", reason="team project")
        service.grant("helper", "user:bob", read=True, write=True, actor="setup", reason="bob uses the helper")

        alice = service.start_session(agent_id="assistant", user_id="alice", session_id="ses_alice1", project_id="atlas")
        alice.record_turn("user", "Please keep answers concise.")
        alice.record_turn("user", "My colleague Sam Lee reviews every pull request.")
        alice.record_turn("user", "I am flying to Lisbon on 2026-03-02 for the offsite.")
        ids["concise"] = write(alice, type="semantic", content="The user prefers concise answers.", attribute="answer_style",
                               source_kind="user_statement", evidence="Please keep answers concise.")
        ids["sam"] = write(alice, type="semantic", content="Sam Lee reviews every pull request.", attribute="reviewer",
                           about="Sam", about_kind="person", source_kind="user_statement",
                           evidence="My colleague Sam Lee reviews every pull request.")
        ids["trip"] = write(alice, type="semantic", content="The user flies to Lisbon on 2026-03-02 for the offsite.",
                            attribute="travel", source_kind="user_statement",
                            evidence="I am flying to Lisbon on 2026-03-02 for the offsite.",
                            valid_until="2026-03-03T00:00:00Z", review_at="2026-03-03T00:00:00Z")
        ids["guess"] = write(alice, type="semantic", content="The user probably works in platform engineering.",
                             attribute="team", source_kind="agent_inference")
        ids["injection"] = write(alice, type="semantic", content=INJECTION, attribute="note", source_kind="agent_inference")
        ids["evil_entity"] = write(alice, type="semantic", content="The user met someone at the conference.",
                                   attribute="contact", about=INJECTION, about_kind="person", source_kind="agent_inference")
        ids["atlas1"] = write(alice, type="semantic", content="Project Atlas ships in April.", attribute="ship_date",
                              target="current_project", about="Project Atlas", about_kind="project", source_kind="agent_inference")
        ids["atlas2"] = write(alice, type="semantic", content="The project-atlas repo uses SQLite.", attribute="database",
                              target="current_project", about="project-atlas", about_kind="project", source_kind="agent_inference")
        clock.advance(days=1)
        alice.record_turn("user", "Actually, I now prefer detailed answers with examples.")
        ids["detailed"] = write(alice, type="semantic", content="The user prefers detailed answers with examples.",
                                attribute="answer_style", source_kind="user_statement",
                                evidence="Actually, I now prefer detailed answers with examples.")
        alice.end()

        bob = service.start_session(agent_id="helper", user_id="bob", session_id="ses_bob1")
        bob.record_turn("user", "Sam is my manager.")
        ids["bob_sam"] = write(bob, type="semantic", content="Sam is the user's manager.", attribute="manager",
                               about="Sam", about_kind="person", source_kind="user_statement", evidence="Sam is my manager.")
        bob.end()

        # A calendar agent alice connected but nobody granted anything: its searches come back empty.
        scheduler = service.start_session(agent_id="scheduler", user_id="alice", session_id="ses_sched1")
        scheduler.record_turn("user", "Put the offsite in my calendar.")
        scheduler.end()

        clock.set(NOW)
        flagged = service.run_maintenance(actor="maintenance")
        assert ids["trip"] in str(flagged), flagged
        ids["entities"] = ",".join(r["id"] for r in service.store.query("SELECT id FROM entities ORDER BY id"))
    return ids
