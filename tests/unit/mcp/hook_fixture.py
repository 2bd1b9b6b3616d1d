"""The hand-written Claude Code hook fixture (tests/data/hooks): replay its calls in order."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data" / "hooks"
FIXTURE_TRANSCRIPT = DATA / "claude_code_transcript.jsonl"
FIXTURE_SESSION = DATA / "claude_code_session.json"
SESSION_ID = "5b9f0c3e-8d2a-4f61-9a7e-2c4d6e8f0a1b"


def fixture_events() -> list[dict]:
    """The recorded hook calls: event, payload (with the {transcript_path} placeholder), transcript lines."""
    return json.loads(FIXTURE_SESSION.read_text())["events"]


def replay(events: list[dict], transcript: Path, call) -> list:
    """For each event: grow ``transcript`` to the lines that existed then, and ``call(event, payload)``."""
    lines = FIXTURE_TRANSCRIPT.read_bytes().split(b"\n")
    out = []
    for item in events:
        n = item["transcript_lines"]
        transcript.write_bytes(b"".join(line + b"\n" for line in lines[:n]))
        payload = {k: (str(transcript) if v == "{transcript_path}" else v) for k, v in item["payload"].items()}
        out.append(call(item["event"], payload))
    return out
