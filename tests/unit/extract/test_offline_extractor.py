from datetime import datetime, timedelta, timezone

import pytest

from memory_core.extract.candidates import Transcript, Turn
from memory_core.extract.offline import OfflineExtractor, enclosing_sentences, offline_summary

T0 = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)


def transcript(*turns: tuple[str, str]) -> Transcript:
    return Transcript(
        session_id="ses_test", agent_id="assistant", user_id="alice", project_id=None,
        write_targets={"personal": "user:alice"}, started_at=T0,
        turns=[Turn(i, role, text, T0 + timedelta(minutes=i)) for i, (role, text) in enumerate(turns)],
    )


def extract(*user_lines: str):
    turns = []
    for line in user_lines:
        turns += [("user", line), ("assistant", "Okay.")]
    output, info = OfflineExtractor().extract(transcript(*turns))
    return output.candidates, info


@pytest.mark.parametrize(
    "line, content, attribute, category",
    [
        ("I prefer concise technical answers.", "The user prefers concise technical answers.", "answer_preference", "preference"),
        ("Please always reply in British English.", "The user wants the assistant to always reply in British English.", None, "preference"),
        ("I live in Lisbon.", "The user lives in Lisbon.", "home_location", "fact"),
        ("I work at Acme Corp.", "The user works at Acme Corp.", "employer", "fact"),
        ("My favourite editor is Helix.", "The user's favourite editor is Helix.", "favourite_editor", "fact"),
        ("I'm vegetarian.", "The user is vegetarian.", "diet", "fact"),
        ("We decided to use SQLite for the store.", "The user said: we decided to use SQLite for the store.", None, "decision"),
        ("Let's go with Postgres.", "The user decided to go with Postgres.", None, "decision"),
        ("I'm flying to Tokyo next Tuesday.", "The user is flying to Tokyo next Tuesday.", None, "plan"),
        ("Call me Ishmael.", "The user wants to be called Ishmael.", "preferred_name", "fact"),
        ("My email is jo@example.com.", "The user's email is jo@example.com.", "email", "fact"),
        ("Before we start: I prefer tabs.", "The user prefers tabs.", "tab_preference", "preference"),
    ],
)
def test_plain_first_person_statement_becomes_one_candidate(line, content, attribute, category):
    candidates, _ = extract(line)
    assert len(candidates) == 1
    candidate = candidates[0]
    assert candidate.content == content
    assert candidate.attribute == attribute
    assert category in candidate.tags
    assert candidate.source_kind == "user_statement"
    assert candidate.evidence_turn == 0


def test_evidence_is_an_exact_slice_of_the_turn():
    text = "Hi! I'm Bob, I work on the Atlas backend. I use Neovim as my editor, so please give me terminal commands."
    output, _ = OfflineExtractor().extract(transcript(("user", text)))
    assert output.candidates
    for candidate in output.candidates:
        assert candidate.evidence in text
    assert [c.evidence for c in output.candidates] == ["I'm Bob", "I work on the Atlas backend.", "I use Neovim as my editor"]


def test_plan_carries_its_temporal_expression():
    candidates, _ = extract("I'm on vacation from March 20 until March 27.")
    assert candidates[0].valid_from.expression == "from March 20"
    assert candidates[0].valid_until.expression == "until March 27"
    plan, = extract("My dentist appointment is next Tuesday.")[0]
    assert plan.review_at.expression == "next Tuesday"


def test_correction_is_tagged():
    candidates, _ = extract("Actually, I live in Porto now.")
    assert candidates[0].content == "The user lives in Porto now."
    assert "correction" in candidates[0].tags


@pytest.mark.parametrize(
    "line",
    [
        "Should I move to Berlin?",                              # question
        "Do you think I prefer tea?",                            # question
        "I think I prefer tea.",                                 # hedge
        "Maybe I'll learn Rust next year.",                      # hedge
        "I might be in Berlin in May.",                          # hedge
        "If I got the job, I'd move to Tokyo.",                  # hypothetical / conditional
        "Imagine I lived in Paris.",                             # hypothetical
        "Suppose I prefer long answers.",                        # hypothetical
        "I don't like coffee.",                                  # negation
        "I never work on weekends.",                             # negation
        "I'm not moving to Lisbon.",                             # negation
        "I love Mondays lol",                                    # joke marker
        "Oh sure, I just love waiting on hold for hours, yeah right.",  # sarcasm
        "My sister lives in Paris.",                             # third party
        "My boss says I prefer long reports.",                   # reported speech
        "Sam thinks I work at Globex.",                          # third-party remark
        "My wife is flying to Rome next Tuesday.",               # third-party plan
        "I'm flying to Tokyo someday.",                          # plan without a usable date
        "I'll send it over.",                                    # plan without a date
        "I used to live in Madrid.",                             # past habit
        "I like the second option.",                             # refers to something in the conversation
        "I like Python but hate its packaging.",                 # two claims
        "I love how you explain things.",                        # about the conversation
        "I'd rather die than use Windows.",                      # hyperbole
        "I like to think I'm a good cook.",                      # hedge
        "I'm an engineer, you know.",                            # filler hedge
        "My manager is out today.",                              # a passing state, not who the manager is
        "I'm going to need more coffee today.",                  # same-day plan
        "I'll give it a go tomorrow.",                           # plan about something in the conversation
    ],
)
def test_sentence_that_is_not_a_plain_statement_yields_nothing(line):
    candidates, info = extract(line)
    assert candidates == []


def test_statement_taken_back_in_the_next_user_turn_is_skipped():
    output, info = OfflineExtractor().extract(transcript(
        ("user", "I live in Antarctica."), ("assistant", "Really?"), ("user", "Just kidding, forget that."),
    ))
    assert output.candidates == []
    assert any("took it back" in s["reason"] for s in info["skipped"])


def test_assistant_and_tool_turns_are_not_mined():
    output, _ = OfflineExtractor().extract(transcript(
        ("assistant", "I prefer tabs over spaces."), ("tool", "I live in Oslo."), ("user", "Thanks!"),
    ))
    assert output.candidates == []


def test_skipped_sentences_are_logged_with_a_reason():
    _, info = extract("Should I move to Berlin?", "I don't like coffee.")
    reasons = [s["reason"] for s in info["skipped"]]
    assert "question" in reasons and "negation" in reasons


def test_summary_quotes_the_first_telling_user_sentence():
    t = transcript(("user", "Hi! Can you help me plan the Atlas launch?"), ("assistant", "Sure."), ("user", "Thanks, that helps a lot."))
    summary = offline_summary(t)
    assert summary.evidence == "Can you help me plan the Atlas launch?"
    assert summary.evidence_turn == 0
    assert "5 March 2026" in summary.content and "3 turns, 2 from the user" in summary.content


def test_enclosing_sentence_finds_the_whole_sentence_around_a_partial_quote():
    text = "Sounds good. If I got the job, I'd move to Tokyo. Anyway."
    assert enclosing_sentences(text, "I'd move to Tokyo") == "If I got the job, I'd move to Tokyo."
