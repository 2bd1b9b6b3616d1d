"""A CrewAI crew with long-term memory.

    python examples/crewai_crew.py              # offline: a scripted model plays the crew's agent
    python examples/crewai_crew.py --live       # the Anthropic model (ANTHROPIC_API_KEY)

Run it in the CrewAI venv (`make crewai-venv`, then `.venv-crewai/bin/python examples/crewai_crew.py`).
Two conversations with the same user, each a series of kickoffs of one chat crew: in the first the
user states a preference (saved with memory_write) and mentions their timezone (picked up by
session-end extraction); in the second the memory comes back.
"""

from __future__ import annotations

import _common
from crewai import LLM, Agent, Crew, Task

from memory_core.adapters.crewai import CrewAIMemory
from memory_core.adapters.script import Call, Say, Script

CONVERSATIONS = [
    ("chat-1", [
        ("Hi! Please keep your answers short. Also, my timezone is CET.", [
            Call(("memory_write", {"type": "semantic", "content": "The user wants short answers.", "attribute": "answer_style",
                                   "source_kind": "user_statement", "evidence": "Please keep your answers short"})),
            Say("Will do: short answers."),
        ]),
    ]),
    ("chat-2", [
        ("Can you suggest a time for a call tomorrow? Keep it short.", [
            Call(("memory_search", {"query": "user's timezone"})),
            Say("10:00 CET."),
        ]),
    ]),
]


def main() -> None:
    args = _common.arguments(__doc__.strip().splitlines()[0])
    service = _common.open_store(args)
    memory = CrewAIMemory(service, trigger_mode=args.mode)
    script = Script()
    if args.live:
        llm = LLM(model=f"anthropic/{service.settings.anthropic.model}", max_tokens=1024)
    else:
        from memory_core.adapters.scripted_crewai import ScriptedLLM

        llm = ScriptedLLM(model="scripted", script=script)
    assistant = Agent(role="Personal assistant", goal="Answer the user helpfully", backstory="You are a friendly personal assistant.",
                      llm=llm, allow_delegation=False)
    memory.equip(assistant, agent_id="assistant")
    crew = memory.attach(Crew(agents=[assistant], tasks=[
        Task(description="The user says: {user_message}", expected_output="Your reply to the user.", agent=assistant)]))
    for session_id, turns in CONVERSATIONS:
        print(f"\n== conversation {session_id} ({args.mode} mode)")
        for text, replies in turns:
            script.extend(replies)
            output = crew.kickoff(inputs={"user_id": "alice", "session_id": session_id, "user_message": text})
            print(f"user: {text}\nassistant: {output.raw}")
        _common.show_memories(service, memory.end_session(session_id))
    service.close()


if __name__ == "__main__":
    main()
