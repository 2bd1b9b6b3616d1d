"""The suite never sees a developer's API key unless a person gives it on purpose for the live tests."""

from tests.conftest import set_aside_environment


def test_the_key_is_dropped_without_the_flag():
    environ = {"ANTHROPIC_API_KEY": "sk-shell", "MEMORY_STORE": "x.sqlite", "PATH": "/bin"}
    assert set_aside_environment(environ) is None
    assert environ == {"PATH": "/bin"}


def test_with_the_flag_the_key_is_kept_aside_for_the_live_tests_only():
    environ = {"ANTHROPIC_API_KEY": "sk-given", "AGENT_MEMORY_LIVE_TESTS": "1", "MEMORY_RETRIEVAL__LIMIT": "3"}
    assert set_aside_environment(environ) == "sk-given"
    assert "ANTHROPIC_API_KEY" not in environ and "MEMORY_RETRIEVAL__LIMIT" not in environ


def test_the_flag_must_say_1_and_an_empty_key_is_no_key():
    assert set_aside_environment({"ANTHROPIC_API_KEY": "sk", "AGENT_MEMORY_LIVE_TESTS": "yes"}) is None
    assert set_aside_environment({"ANTHROPIC_API_KEY": "", "AGENT_MEMORY_LIVE_TESTS": "1"}) is None

