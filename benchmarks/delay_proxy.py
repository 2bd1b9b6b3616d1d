"""A loopback TCP proxy that delays every chunk by half a round-trip time in each direction, so each
request/response exchange with the server behind it costs one stated round trip (a host in the same
datacentre as its database: about 1 ms).

    proxy = DelayProxy(unix_socket="/tmp/.../.s.PGSQL.5432", rtt_ms=1.0); proxy.start(); ...; proxy.stop()

The proxy runs in a process of its own (so the benchmark's processes do not share its event loop),
listens on 127.0.0.1 on a free port and forwards to the server's Unix socket (or TCP address).
Bytes keep their order; a chunk is released at its arrival time plus the delay, so a burst of
pipelined statements costs one delay, not one per statement. Timer precision is the event
loop's (well under a millisecond on an idle machine; worse under load, so the load is reported).
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import socket


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    async def pump() -> None:
        while True:
            data = await reader.read(65536)
            await queue.put((loop.time() + delay_s, data))
            if not data:
                return

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                writer.close()
                return
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()

    try:
        await asyncio.gather(pump(), deliver())
    except (ConnectionError, OSError):
        writer.close()


def _serve(listener: socket.socket, unix_socket: str | None, tcp: tuple[str, int] | None, rtt_ms: float) -> None:
    delay = rtt_ms / 2000.0

    async def handle(client_r, client_w):
        if unix_socket is not None:
            server_r, server_w = await asyncio.open_unix_connection(unix_socket)
        else:
            server_r, server_w = await asyncio.open_connection(*tcp)
        for w in (client_w, server_w):
            sock = w.get_extra_info("socket")
            if sock is not None and sock.family != socket.AF_UNIX:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(_pipe(client_r, server_w, delay), _pipe(server_r, client_w, delay))

    async def main():
        server = await asyncio.start_server(handle, sock=listener)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


class DelayProxy:
    """The proxy process; ``port`` is where clients connect (127.0.0.1)."""

    def __init__(self, *, rtt_ms: float, unix_socket: str | None = None, tcp: tuple[str, int] | None = None) -> None:
        self.rtt_ms = rtt_ms
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(256)
        self.port = self._listener.getsockname()[1]
        self._process = mp.get_context("fork").Process(target=_serve, args=(self._listener, unix_socket, tcp, rtt_ms),
                                                        daemon=True)

    def start(self) -> "DelayProxy":
        self._process.start()
        self._listener.close()  # the child holds its own copy
        return self

    def stop(self) -> None:
        self._process.terminate()
        self._process.join(timeout=10)
