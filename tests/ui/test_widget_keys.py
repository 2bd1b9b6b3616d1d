"""A house rule the pages and views keep: every widget has a stable key (AppTest and Playwright find it by it)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WIDGETS = {"button", "selectbox", "multiselect", "text_input", "text_area", "checkbox", "number_input", "date_input",
           "file_uploader", "segmented_control", "radio", "slider", "toggle", "form_submit_button", "download_button",
           "pills", "data_editor", "chat_input", "time_input", "color_picker"}
SOURCES = sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("admin_ui/**/*.py")])


def test_every_widget_has_a_key():
    assert len(SOURCES) > 30
    missing = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WIDGETS:
                if not any(k.arg == "key" for k in node.keywords):
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.func.attr}")
    assert not missing, missing
