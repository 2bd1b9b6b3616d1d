from memory_core.extract.candidates import Candidate, CandidateRevision, TemporalClaim
from memory_core.extract.revision import apply_revision

BASE = dict(
    type="semantic", content="The user is flying to Tokyo on Tuesday for the Atlas launch.", attribute=None,
    evidence="I'm flying to Tokyo on Tuesday for the Atlas launch", evidence_turn=2, source_kind="agent_inference",
    review_at=TemporalClaim(expression="on Tuesday"), mentions=["Tokyo", "Atlas"],
)


def candidate(**changes) -> Candidate:
    return Candidate(**{**BASE, **changes})


def test_strengthening_the_source_kind_is_overridden():
    result = apply_revision(candidate(), CandidateRevision(source_kind="user_statement"))
    assert result.candidate.source_kind == "agent_inference"
    assert any("strengthen" in o for o in result.overrides)


def test_weakening_the_source_kind_is_allowed():
    result = apply_revision(candidate(source_kind="user_statement"), CandidateRevision(source_kind="agent_inference"))
    assert result.candidate.source_kind == "agent_inference"
    assert not result.overrides


def test_evidence_scope_entity_type_and_attribute_changes_are_overridden():
    revision = CandidateRevision(evidence="I am definitely flying", target="current_project", about="Bob",
                                 type="episodic", attribute="travel", mentions=["Tokyo", "Osaka"])
    result = apply_revision(candidate(), revision)
    kept = result.candidate
    assert (kept.evidence, kept.target, kept.about, kept.type, kept.attribute) == (
        BASE["evidence"], "personal", None, "semantic", None)
    assert kept.mentions == ["Tokyo"]
    assert len(result.overrides) == 6


def test_narrowed_content_and_dropped_date_are_applied():
    result = apply_revision(candidate(), CandidateRevision(content="The user is flying to Tokyo on Tuesday.", drop_temporal=["review_at"]))
    assert result.candidate.content == "The user is flying to Tokyo on Tuesday."
    assert result.candidate.review_at is None
    assert result.refused is None


def test_content_that_adds_a_claim_is_refused():
    result = apply_revision(candidate(), CandidateRevision(content="The user is flying to Tokyo on Tuesday to sign the Globex deal."))
    assert result.candidate is None
    assert "adds terms" in result.refused


def test_content_that_adds_a_number_or_flips_polarity_is_refused():
    assert apply_revision(candidate(), CandidateRevision(content="The user is flying to Tokyo on Tuesday at 9.")).candidate is None
    assert apply_revision(candidate(), CandidateRevision(content="The user is not flying to Tokyo on Tuesday.")).candidate is None


def test_restated_date_is_kept_for_the_validator_to_check():
    result = apply_revision(candidate(), CandidateRevision(review_at=TemporalClaim(expression="Tuesday")))
    assert result.candidate.review_at.expression == "Tuesday"


def test_a_first_person_quote_supports_its_third_person_reading(service):
    from memory_core.extract.support import supports

    assert supports(service.judge, "I live in Oslo.", "The user lives in Oslo.").entailed
    assert not supports(service.judge, "I don't live in Oslo.", "The user lives in Oslo.").entailed
    assert not supports(service.judge, "I live in Oslo.", "The user lives in Bergen.").entailed
