"""The stdio protocol stream read and written on the event loop itself, without worker threads.

The SDK's stdio transport wraps stdin and stdout in ``anyio.wrap_file``: every line read, every
write and every flush is a round trip to a worker thread, three hand-offs per tool call on top of
the call's own. On a small busy machine each hand-off waits for the scheduler, and together they
were a measurable part of what a call costs over stdio (benchmarks/README.md, MCP section). When
both ends are pipes or sockets (how hosts launch MCP servers) the descriptors are instead made
non-blocking and read and written when the event loop says they are ready; anything else (a file
redirected to stdin, a terminal, Windows) keeps the SDK's own streams.

What the SDK's transport guarantees is kept: while serving, descriptor 0 reads the null device and
descriptor 1 writes to stderr (the null device if there is none), so a library that prints cannot
corrupt the protocol stream; both are put back when serving ends. The wire's own duplicates are
numbered above 2, so they never take a closed standard descriptor's place. Lines are split at ``\\n`` and decoded as UTF-8 with undecodable
bytes replaced, as the SDK does; what is written is encoded strictly, as the SDK does.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

READ_CHUNK = 1 << 16


def _dup_above_std(fd: int) -> int:
    """A close-on-exec duplicate of ``fd`` numbered 3 or above (a plain dup could land on a closed
    descriptor 2, which would then carry the wire where stray output is sent)."""
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def _pollable(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class LineReader:
    """Lines of a non-blocking descriptor, as text, for ``async for``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer already known to hold no newline
        self._eof = False

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end + 1])
                del self._buffer[:end + 1]
                self._scanned = 0
                return line.decode("utf-8", errors="replace")
            self._scanned = len(self._buffer)
            if self._eof:
                if not self._buffer:
                    raise StopAsyncIteration
                line = bytes(self._buffer)
                self._buffer.clear()
                self._scanned = 0
                return line.decode("utf-8", errors="replace")
            try:
                chunk = os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True


class LineWriter:
    """Writes text to a non-blocking descriptor, waiting only while the pipe is full."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                written = os.write(self.fd, data)
            except BlockingIOError:
                await anyio.wait_writable(self.fd)
                continue
            data = data[written:]

    async def flush(self) -> None:
        """Nothing is buffered: every write has reached the descriptor when it returns."""


class JsonRpcWriter:
    """The server's write stream over a :class:`LineWriter`: each message is encoded as the SDK's
    stdio transport encodes it (one JSON line) and written by the task that sends it, so no writer
    task and no memory stream stand between a response and the pipe. A lock keeps two messages
    from interleaving when the pipe is full and a write has to wait."""

    def __init__(self, lines: LineWriter) -> None:
        self._lines = lines
        self._lock = anyio.Lock()
        self._closed = False

    async def send(self, item) -> None:
        """Write one ``SessionMessage``; raises ``anyio.ClosedResourceError`` once closed."""
        if self._closed:
            raise anyio.ClosedResourceError
        text = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        async with self._lock:
            await self._lines.write(text)

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> JsonRpcWriter:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


class JsonRpcReader:
    """The server's read stream over a :class:`LineReader`: each line validated as a JSON-RPC
    message as the SDK's stdio transport validates it, in the task that asks for the next message
    (no reader task, no memory stream). A line that is not a JSON-RPC message gets ``parse_error``
    (a ``SessionMessage``) written back through ``replies`` and is skipped: JSON-RPC 2.0 asks for
    an answer, where the SDK's own loop would drop the line without a word."""

    def __init__(self, lines: LineReader, replies: JsonRpcWriter, parse_error) -> None:
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        self._lines = lines
        self._replies = replies
        self._parse_error = parse_error
        self._validate = jsonrpc_message_adapter.validate_json
        self._message = SessionMessage
        self._closed = False

    async def receive(self):
        """The next ``SessionMessage``; ``anyio.EndOfStream`` when the client has closed its end."""
        while not self._closed:
            try:
                line = await self._lines.__anext__()
            except StopAsyncIteration:
                raise anyio.EndOfStream from None
            try:
                message = self._validate(line, by_name=False)
            except Exception:  # noqa: BLE001 - whatever the validator says, the line is unreadable
                await self._replies.send(self._parse_error)
                continue
            return self._message(message)
        raise anyio.ClosedResourceError

    def __aiter__(self) -> JsonRpcReader:
        return self

    async def __anext__(self):
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> JsonRpcReader:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


@contextmanager
def claimed_stdio() -> Iterator[tuple[LineReader, LineWriter] | None]:
    """Stdin and stdout as event-loop streams, or None when they are not both pipes or sockets
    (then the SDK's own streams are the right ones). Descriptors 0 and 1 point at the null device
    and at stderr meanwhile, and are restored afterwards."""
    if sys.platform == "win32" or not (_pollable(0) and _pollable(1)):
        yield None
        return
    sys.stdout.flush()
    wire_in = _dup_above_std(0)
    wire_out = _dup_above_std(1)
    flags = {fd: os.get_blocking(fd) for fd in (wire_in, wire_out)}
    try:
        sink = os.dup(2)
    except OSError:  # no stderr at all: stray output is dropped rather than reaching the wire
        sink = os.open(os.devnull, os.O_WRONLY)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(sink, 1)
        for fd in (wire_in, wire_out):
            os.set_blocking(fd, False)
        yield LineReader(wire_in), LineWriter(wire_out)
    finally:
        os.close(null)
        os.close(sink)
        for fd, blocking in flags.items():
            try:
                os.set_blocking(fd, blocking)
            except OSError:
                pass
        sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)
