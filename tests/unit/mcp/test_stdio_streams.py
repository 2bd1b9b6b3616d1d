"""The stdio protocol stream read and written on the event loop (memory_core/mcp/stdio_streams.py),
over real pipes: lines cut anywhere by the reads, bad bytes, a last line without a newline, and a
pipe that fills because nobody reads it yet."""

import json
import os
import subprocess
import sys
import threading

import anyio
import pytest

from memory_core.mcp.stdio_streams import LineReader, LineWriter
from tests.mcp.servers import ROOT, run_async


def _pipe() -> tuple[int, int]:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    return read_end, write_end


def test_lines_come_whole_however_the_bytes_arrive():
    read_end, write_end = _pipe()
    text = '{"a": "caf\u00e9 \u05e9\u05dc\u05d5\u05dd \U0001f600"}\n{"b": 2}\r\n\n{"c": 3}'
    data = text.encode("utf-8")

    async def go():
        reader = LineReader(read_end)
        async with anyio.create_task_group() as group:
            async def trickle():  # one byte at a time: every multi-byte character is cut in two
                for i in range(len(data)):
                    os.write(write_end, data[i:i + 1])
                    await anyio.sleep(0)
                os.close(write_end)

            group.start_soon(trickle)
            return [line async for line in reader]

    lines = run_async(go)
    os.close(read_end)
    assert lines == ['{"a": "caf\u00e9 \u05e9\u05dc\u05d5\u05dd \U0001f600"}\n', '{"b": 2}\r\n', "\n", '{"c": 3}']


def test_undecodable_bytes_are_replaced_not_fatal():
    read_end, write_end = _pipe()
    os.write(write_end, b'{"x": "\xff\xfe"}\n\xed\xa0\x80\n')  # invalid UTF-8, then an encoded lone surrogate
    os.close(write_end)

    async def go():
        return [line async for line in LineReader(read_end)]

    lines = run_async(go)
    os.close(read_end)
    assert lines == ['{"x": "\ufffd\ufffd"}\n', "\ufffd\ufffd\ufffd\n"]


def test_a_line_longer_than_the_pipe_arrives_whole():
    read_end, write_end = _pipe()
    line = ('{"q": "' + "x" * 300_000 + '"}\n').encode()

    def feed():
        os.set_blocking(write_end, True)
        os.write(write_end, line)
        os.close(write_end)

    async def go():
        feeder = threading.Thread(target=feed)
        feeder.start()
        got = [item async for item in LineReader(read_end)]
        feeder.join()
        return got

    got = run_async(go)
    os.close(read_end)
    assert got == [line.decode()]


def test_a_full_pipe_waits_for_the_reader_and_loses_nothing():
    from anyio.lowlevel import checkpoint
    from anyio import wait_all_tasks_blocked

    read_end, write_end = _pipe()
    chunks = [f"{i:05d}:" + "y" * 5000 + "\n" for i in range(100)]  # 500 KB: several times a pipe's buffer
    received = bytearray()
    state = {}

    def drain():
        os.set_blocking(read_end, True)
        while block := os.read(read_end, 65536):
            received.extend(block)

    async def go():
        writer = LineWriter(write_end)

        async def write_all():
            for chunk in chunks:
                await writer.write(chunk)
                await writer.flush()
            state["done"] = True

        async with anyio.create_task_group() as group:
            group.start_soon(write_all)
            await checkpoint()
            await wait_all_tasks_blocked()  # the writer waits: the pipe is full and nobody reads it yet
            state["waited_with_a_full_pipe"] = "done" not in state
            reader = threading.Thread(target=drain)
            reader.start()
        os.close(write_end)
        await anyio.to_thread.run_sync(reader.join)

    run_async(go)
    os.close(read_end)
    assert state["waited_with_a_full_pipe"]
    assert received.decode() == "".join(chunks)


def test_text_that_cannot_be_encoded_is_refused_as_the_sdk_refuses_it():
    read_end, write_end = _pipe()

    async def go():
        try:
            await LineWriter(write_end).write("lone \ud800 surrogate\n")
        except UnicodeEncodeError:
            return "refused"
        return "written"

    assert run_async(go) == "refused"
    os.close(write_end)
    os.set_blocking(read_end, True)
    assert os.read(read_end, 100) == b""  # nothing half-written
    os.close(read_end)


def test_while_serving_stray_output_goes_to_stderr_and_the_descriptors_come_back():
    code = (
        "import os, sys\n"
        "from memory_core.mcp.stdio_streams import claimed_stdio\n"
        "import anyio\n"
        "async def main():\n"
        "    with claimed_stdio() as wire:\n"
        "        assert wire is not None\n"
        "        reader, writer = wire\n"
        "        line = await reader.__anext__()\n"
        "        print('a stray print', flush=True)\n"
        "        os.write(1, b'a stray write to fd 1\\n')\n"
        "        assert os.read(0, 10) == b''  # fd 0 reads the null device meanwhile\n"
        "        await writer.write('echo ' + line)\n"
        "    print('after serving', flush=True)\n"
        "anyio.run(main)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=b"hello\n", capture_output=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"echo hello\nafter serving\n"
    assert done.stderr == b"a stray print\na stray write to fd 1\n"


def test_stdin_that_is_a_file_keeps_the_sdks_own_streams(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    code = (
        "from memory_core.mcp.stdio_streams import claimed_stdio\n"
        "with claimed_stdio() as wire:\n"
        "    print('fallback' if wire is None else 'claimed')\n"
    )
    with source.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-c", code], stdin=stdin, capture_output=True, timeout=120, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.decode().strip() == "fallback", done.stderr.decode()


def test_with_stderr_closed_the_wire_never_lands_where_stray_output_goes():
    """A plain dup of stdin would take the free descriptor 2, and fd 1 (pointed at "stderr") would
    then be the wire's read end; the duplicates are taken above 2 and fd 1 gets the null device."""
    code = (
        "import os, anyio\n"
        "from memory_core.mcp.stdio_streams import claimed_stdio\n"
        "async def main():\n"
        "    os.close(2)  # free when the streams are claimed (anything opened later would take it)\n"
        "    with claimed_stdio() as wire:\n"
        "        reader, writer = wire\n"
        "        assert reader.fd > 2 and writer.fd > 2, (reader.fd, writer.fd)\n"
        "        line = await reader.__anext__()\n"
        "        os.write(1, b'stray\\n')\n"
        "        await writer.write('echo ' + line)\n"
        "anyio.run(main)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=b"hello\n", capture_output=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0
    assert done.stdout == b"echo hello\n"


def _result(request_id: int, size: int):
    """A tool result as the server sends it (a JSON-RPC response in a SessionMessage), about ``size`` bytes."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    text = f"result {request_id}: " + chr(ord("a") + request_id) * size
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={
        "content": [{"type": "text", "text": text}], "structuredContent": {"ok": True, "text": text}, "isError": False}))


@pytest.mark.timeout(120)
def test_concurrent_results_never_interleave_on_the_wire():
    """Six results, each several times a pipe's buffer, sent at once by six tasks while nobody reads:
    the first fills the pipe and waits, the others wait for the write lock, and the reader then gets
    six whole lines, each one JSON-RPC message. Without the lock a second writer either writes into
    the middle of the first's line or, waiting on the same descriptor, fails (anyio's BusyResourceError)."""
    from anyio import wait_all_tasks_blocked
    from anyio.lowlevel import checkpoint

    from memory_core.mcp.stdio_streams import JsonRpcWriter

    read_end, write_end = _pipe()
    messages = [_result(i, 150_000) for i in range(6)]
    received = bytearray()
    reader = threading.Thread(target=_drain, args=(read_end, received), name="wire-reader")
    state: dict = {}

    async def go():
        writer = JsonRpcWriter(LineWriter(write_end))
        async with anyio.create_task_group() as group:
            for message in messages:
                group.start_soon(writer.send, message)
            await checkpoint()
            await wait_all_tasks_blocked()  # every sender is in: one holds the full pipe, the rest the lock
            state["blocked_before_any_read"] = True
            reader.start()

    try:
        run_async(go)
    finally:
        os.close(write_end)  # the reader sees the end of the stream whatever happened
        if reader.ident is not None:  # started
            reader.join(timeout=60)
        os.close(read_end)
    assert state["blocked_before_any_read"]
    lines = bytes(received).split(b"\n")
    assert lines[-1] == b"" and len(lines) == len(messages) + 1
    parsed = [json.loads(line) for line in lines[:-1]]
    assert sorted(p["id"] for p in parsed) == list(range(len(messages)))
    for p in parsed:
        assert p["result"]["content"][0]["text"] == f"result {p['id']}: " + chr(ord("a") + p["id"]) * 150_000


def _drain(fd: int, into: bytearray) -> None:
    os.set_blocking(fd, True)
    while block := os.read(fd, 65536):
        into.extend(block)


def test_the_reader_answers_an_unreadable_line_and_ends_when_stdin_closes():
    """Messages until the client closes its end, then the end of the stream (the server's run ends):
    a line that is not JSON-RPC is answered with the parse error and skipped, not fatal."""
    from memory_core.mcp.stdio_streams import JsonRpcReader, JsonRpcWriter

    in_read, in_write = _pipe()
    out_read, out_write = _pipe()
    os.write(in_write, b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\nnot json\n{"jsonrpc": "2.0", "method": "x"}')
    os.close(in_write)  # the client leaves; its last line has no newline

    async def go():
        replies = JsonRpcWriter(LineWriter(out_write))
        reader = JsonRpcReader(LineReader(in_read), replies, _result(0, 1))
        return [item.message.model_dump(by_alias=True, exclude_unset=True) async for item in reader]

    got = run_async(go)
    os.close(in_read)
    os.close(out_write)
    os.set_blocking(out_read, True)
    answered = os.read(out_read, 65536)
    os.close(out_read)
    assert got == [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "x"}]
    assert [json.loads(line)["id"] for line in answered.splitlines()] == [0]  # the one reply: to the bad line
