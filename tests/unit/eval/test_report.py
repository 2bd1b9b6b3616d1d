from memory_core.eval.report import fmt, replace_section, table


def test_replace_section_appends_then_replaces_only_its_own_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Benchmarks\n\nSomeone else's section.\n")
    replace_section(readme, "mine", "first body", "## Mine")
    replace_section(readme, "mine", "second body", "## Mine")
    text = readme.read_text()
    assert "Someone else's section." in text
    assert text.count("## Mine") == 1 and "second body" in text and "first body" not in text


def test_table_formats_numbers_and_missing_values():
    out = table(["a", "b"], [["x", 0.12345], ["y", float("nan")]])
    assert "| x | 0.123 |" in out and "| y | — |" in out
    assert fmt(None) == "—" and fmt(3) == "3"
