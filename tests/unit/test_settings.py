from pathlib import Path

from memory_core import load_settings
from memory_core.docgen.settings_doc import render

DOC = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def test_every_setting_is_documented():
    assert DOC.read_text() == render(), "regenerate: python -m memory_core.docgen.settings_doc > docs/settings.md"


def test_settings_read_nested_environment_variables(monkeypatch):
    monkeypatch.setenv("MEMORY_RETRIEVAL__RRF_K", "42")
    monkeypatch.setenv("MEMORY_WRITE__DUPLICATE_THRESHOLD", "0.97")
    settings = load_settings()
    assert settings.retrieval.rrf_k == 42 and settings.write.duplicate_threshold == 0.97


def test_anthropic_key_falls_back_to_the_standard_variable(monkeypatch):
    monkeypatch.delenv("MEMORY_ANTHROPIC__API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert load_settings().anthropic.api_key.get_secret_value() == "sk-test"


def test_every_field_has_a_description():
    from pydantic import BaseModel

    from memory_core.settings import Settings

    def walk(model):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
                walk(field.annotation)

    walk(Settings)


def test_the_settings_fixture_ignores_the_environment(monkeypatch, settings):
    from memory_core.settings import default_settings

    monkeypatch.setenv("MEMORY_RETRIEVAL__MAX_LIMIT", "7")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-a-developer-shell")
    fresh = default_settings()
    assert fresh.retrieval.max_limit == settings.retrieval.max_limit != 7
    assert fresh.anthropic.api_key is None
    assert default_settings(retrieval={"max_limit": 9}).retrieval.max_limit == 9
