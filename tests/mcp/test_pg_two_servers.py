"""Many hosts, one memory: two ``agent-memory mcp --http`` processes on one postgresql:// store serve
clients of two users at once; each sees the other server's writes on its next search, and nothing
crosses from one user to the other."""

import anyio
import pytest

from tests import pg_server
from tests.mcp.servers import ServerProcess, http_client, new_key, prepare, run_async

pytestmark = pytest.mark.model


async def _contents(client, query: str) -> list[str]:
    found = await client.call_tool("memory_search", {"query": query})
    assert not found.is_error, found
    return [r["content"] for r in found.structured_content["results"]]


async def _write(client, content: str) -> str:
    wrote = await client.call_tool("memory_write", {"type": "semantic", "content": content})
    assert not wrote.is_error, wrote
    return wrote.structured_content["record_id"]


def test_two_servers_on_one_postgresql_store(tmp_path):
    url = pg_server.create_database()
    try:
        prepare(url)
        _, alice = new_key(url, "assistant", "alice")
        _, bob = new_key(url, "other", "bob")
        with ServerProcess(url) as a, ServerProcess(url) as b:
            async def hosts():
                async with http_client(a.url, alice) as alice_a, http_client(b.url, alice) as alice_b, \
                        http_client(a.url, bob) as bob_a, http_client(b.url, bob) as bob_b:
                    await _write(alice_a, "Alice's locker code is 4471.")
                    assert "Alice's locker code is 4471." in await _contents(alice_b, "locker code")
                    await _write(bob_b, "Bob's locker code is 9020.")
                    assert "Bob's locker code is 9020." in await _contents(bob_a, "locker code")
                    assert await _contents(alice_a, "locker code") == ["Alice's locker code is 4471."]
                    assert await _contents(bob_b, "locker code") == ["Bob's locker code is 9020."]

                    async def burst(client, who: str, n: int):  # both users at once, on both servers
                        for i in range(n):
                            await _write(client, f"{who} parked in bay {i} of level {who[0]}{i}.")

                    async with anyio.create_task_group() as group:
                        for client, who in ((alice_a, "Alice"), (alice_b, "Alice"), (bob_a, "Bob"), (bob_b, "Bob")):
                            group.start_soon(burst, client, who, 3)
                    for client, who, other in ((alice_a, "Alice", "Bob"), (alice_b, "Alice", "Bob"),
                                               (bob_a, "Bob", "Alice"), (bob_b, "Bob", "Alice")):
                        seen = await _contents(client, "parked in bay of level")
                        assert seen and all(c.startswith(who) for c in seen), (who, seen)
                        assert not any(other in c for c in await _contents(client, f"{other} locker code parked"))

            run_async(hosts)
    finally:
        pg_server.drop_database(url)
