"""The stage stepper's line on how the gate judged a question naming a known entity."""

from admin_ui.data.search import known_name_line


def test_no_line_without_a_judged_name():
    assert known_name_line({}) is None
    assert known_name_line({"known_names": [], "name_model": {"probability": 0.1, "floor": 0.5, "features": {}}}) is None


def test_the_model_line_shows_probability_floor_verdict_and_features():
    outputs = {"known_names": ["Priya"], "name_model": {"probability": 0.2134, "floor": 0.45, "features": {
        "rest_cosine": 0.21, "rest_lexical": None, "rest_both": 0.21, "cosine": 0.62, "lexical": 0.2}}}
    assert known_name_line(outputs) == ("Known-name model for Priya: p 0.213 vs floor 0.45 (refuses); rest_cosine 0.21, "
                                        "rest_lexical none, rest_both 0.21, cosine 0.62, lexical 0.20")
    outputs["name_model"]["probability"] = 0.45
    assert "(passes)" in known_name_line(outputs)


def test_the_two_floor_rule_line_when_the_model_is_off():
    line = known_name_line({"known_names": ["Priya"], "best_rest_cosine": 0.3, "best_rest_lexical": None})
    assert line == "Known names Priya: best cosine without the names 0.30, best lexical on the other words none"


def test_the_short_list_rule_line_shows_the_name_stripped_values():
    line = known_name_line({"known_names": ["Alice"], "known_names_short": True, "best_rest_cosine": 0.32,
                            "best_rest_cover_joint": 0.32, "best_rest_lexical": 0.0})
    assert line == ("Short-list rule for Alice (a name linking few records needs the rest of the question): best cosine "
                    "without the names 0.32, with half its coverage of the other words 0.32, best lexical on the other words 0.00")
