"""A loopback TCP proxy that delays every chunk by half a round-trip time in each direction, so each
request/response exchange with the server behind it costs one stated round trip (a host in the same
datacentre as its database: about 1 ms).

    proxy = DelayProxy(unix_socket="/tmp/.../.s.PGSQL.5432", rtt_ms=1.0); proxy.start(); ...; proxy.stop()

The proxy runs in a process of its own (so the benchmark's processes do not share its event loop),
listens on 127.0.0.1 on a free port and forwards to the server's Unix socket (or TCP address).
Bytes keep their order; a chunk is released at its arrival time plus the delay, so a burst of
pipelined statements costs one delay, not one per statement. Each direction of a connection is a
reader thread and a delivering thread sleeping until each chunk is due: precise to tens of
microseconds on an idle machine, worse under load (so the load is reported; the benchmark also
times ``SELECT 1`` through the proxy, the round trip as delivered).
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import socket
import threading
import time

# Threads, not asyncio: asyncio's selector rounds every timeout up to a whole millisecond, so a
# 0.5 ms hold became 1 ms or more in each direction and a stated 1 ms round trip measured 2.3 ms
# (SELECT 1 through the old proxy, 2 Dec 2026). time.sleep is precise to tens of microseconds here.


def _pipe(source: socket.socket, sink: socket.socket, delay_s: float) -> None:
    """Copy ``source`` to ``sink``, each chunk released ``delay_s`` after it arrived."""
    chunks: queue.SimpleQueue = queue.SimpleQueue()

    def deliver() -> None:
        try:
            while True:
                due, data = chunks.get()
                if not data:
                    break
                wait = due - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (sink, source):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    threading.Thread(target=deliver, daemon=True).start()
    try:
        while True:
            data = source.recv(65536)
            chunks.put((time.perf_counter() + delay_s, data))
            if not data:
                return
    except OSError:
        chunks.put((0.0, b""))


def _serve(listener: socket.socket, unix_socket: str | None, tcp: tuple[str, int] | None, rtt_ms: float) -> None:
    delay = rtt_ms / 2000.0
    while True:
        client, _ = listener.accept()
        if unix_socket is not None:
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(unix_socket)
        else:
            server = socket.create_connection(tcp)
            server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for source, sink in ((client, server), (server, client)):
            threading.Thread(target=_pipe, args=(source, sink, delay), daemon=True).start()


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
