"""A Deep Agents assistant with long-term memory.

    python examples/deepagents_assistant.py              # offline: a scripted model plays the assistant
    python examples/deepagents_assistant.py --live       # the Anthropic model (ANTHROPIC_API_KEY)

Two conversations with the same user: in the first the user states a preference (the model saves
it with memory_write) and mentions their timezone (session-end extraction picks it up); in the
second, a fresh thread, the memory comes back (through the host's search in hybrid/auto mode, or
the model's own memory_search).
"""

from __future__ import annotations

import _common
from deepagents import create_deep_agent
from langgraph.checkpoint.memory import InMemorySaver

from memory_core.adapters.deepagents import DeepAgentsMemory
from memory_core.adapters.script import Call, Say, Script

CONVERSATIONS = [
    ("thread-1", [
        ("Hi! Please keep your answers short. Also, my timezone is CET.", [
            Call(("memory_write", {"type": "semantic", "content": "The user wants short answers.", "attribute": "answer_style",
                                   "source_kind": "user_statement", "evidence": "Please keep your answers short"})),
            Say("Will do: short answers."),
        ]),
    ]),
    ("thread-2", [
        ("Can you suggest a time for a call tomorrow? Keep it short.", [
            Call(("memory_search", {"query": "user's timezone"})),
            Say("10:00 CET."),
        ]),
    ]),
]


def scripted_model(script: Script):
    from memory_core.adapters.scripted_langchain import ScriptedChatModel

    return ScriptedChatModel(script=script)


def main() -> None:
    args = _common.arguments(__doc__.strip().splitlines()[0])
    service = _common.open_store(args)
    memory = DeepAgentsMemory(service, trigger_mode=args.mode)
    script = Script()
    if args.live:
        from langchain_anthropic import ChatAnthropic

        model = ChatAnthropic(model=service.settings.anthropic.model, max_tokens=1024)
    else:
        model = scripted_model(script)
    agent = create_deep_agent(model=model, system_prompt="You are a friendly personal assistant.",
                              middleware=[memory.middleware()], checkpointer=InMemorySaver())
    for thread_id, turns in CONVERSATIONS:
        config = {"configurable": {"thread_id": thread_id, "agent_id": "assistant", "user_id": "alice"}}
        print(f"\n== conversation {thread_id} ({args.mode} mode)")
        for text, replies in turns:
            script.extend(replies)
            result = agent.invoke({"messages": [{"role": "user", "content": text}]}, config)
            for message in result["messages"]:
                if message.type == "tool" and message.name.startswith("memory_"):
                    who = "host" if message.tool_call_id.startswith("memory_auto_") else "model"
                    print(f"   [{who}: {message.name} → {message.text[:150]}{'…' if len(message.text) > 150 else ''}]")
            print(f"user: {text}\nassistant: {result['messages'][-1].text}")
        run_id = memory.end_session(config)
        _common.show_memories(service, run_id)
    service.close()


if __name__ == "__main__":
    main()
