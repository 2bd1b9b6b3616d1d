"""Run the admin app for a store from a notebook and show it inline.

::

    app = launch_app(service)   # starts `streamlit run app.py` on a free port, waits until healthy
    app                         # the app in an IFrame (app.show() does the same)
    app.stop()                  # ends the server's whole process group

    with launch_app(service) as app:   # or scoped: stopped when the block ends
        ...

The server is started exactly as ``agent-memory serve`` starts it (``memory_core.app_launch``: headless,
the store in ``MEMORY_STORE``, offline model loading, demo accounts and demo mode for a demo
store), in its own session so that stopping it ends Streamlit and anything it spawned. A server
still running when the kernel exits is stopped then too. The IFrame points at the kernel's
machine (``127.0.0.1``): it works when the browser runs there too; otherwise pass ``browser_url``.
"""

from __future__ import annotations

import html
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path
from typing import Any

from .. import app_launch
from ..errors import MemoryCoreError
from ..store.probes import is_demo_store
from .safe import safe_html


class AppLaunchError(MemoryCoreError):
    """The admin app server did not start or did not become healthy."""

    code = "app_launch_failed"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    """Whether a process other than a zombie is left in process group ``pgid``."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "pid (comm)": state ppid pgrp ...
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _group_gone(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait until nothing is left running in the group led by ``proc`` (reaping the leader)."""
    deadline = time.monotonic() + timeout
    while True:
        proc.poll()
        if not _group_alive(proc.pid):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def _end_group(proc: subprocess.Popen, timeout: float) -> None:
    """SIGTERM the process group led by ``proc``, then SIGKILL whatever is left of it."""
    if os.name != "posix":  # no process groups: end the server process itself
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        if _group_gone(proc, wait):
            break
    # The leader shows as a zombie while its other threads are still being torn down, and only
    # then can it be reaped: wait a moment for that rather than leave it looking alive.
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        pass


class AdminApp:
    """One admin app server for one store. Construct, then :meth:`start` (or use ``launch_app``)."""

    def __init__(
        self, store: str | Path, *, demo: bool | None = None, host: str = "127.0.0.1", port: int | None = None,
        clock: str | None = None, embedder: str | None = None, browser_url: str | None = None,
        startup_timeout: float = 120.0, height: int = 800,
    ) -> None:
        from ..store.backend import is_postgres_url
        from ..store.urls import file_path

        # a PostgreSQL URL is passed to the app as it is; anything else must be a file path
        self.store: Path | str = str(store) if is_postgres_url(store) else file_path(store, field="store").resolve()
        self.demo = is_demo_store(self.store) if demo is None else demo
        self.host = host
        self.port = port
        self.clock = clock
        self.embedder = embedder
        self.browser_url = browser_url
        self.startup_timeout = startup_timeout
        self.height = height
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self._log = None
        self._finalizer: weakref.finalize | None = None

    # -- what is run --------------------------------------------------------------------------

    def command(self) -> list[str]:
        """The ``streamlit run`` command line (``memory_core.app_launch.streamlit_command``)."""
        return app_launch.streamlit_command(self.port, self.host)

    def environment(self) -> dict[str, str]:
        """The server's environment (``memory_core.app_launch.app_environment`` plus this app's options)."""
        env = app_launch.app_environment(self.store, self.demo)
        if self.clock:
            env[app_launch.CLOCK_ENV] = self.clock
        if self.embedder:
            env[app_launch.EMBEDDER_ENV] = self.embedder
        return env

    def working_directory(self) -> Path:
        return app_launch.APP.parent

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def shown_store(self) -> str:
        """The store for display: a URL's password replaced by ``***``."""
        from ..store.urls import redact_url

        return redact_url(str(self.store))

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def healthy(self) -> bool:
        """Whether the server answers ``/_stcore/health`` with 200 right now."""
        try:
            with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                return response.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def start(self) -> "AdminApp":
        """Start the server and wait until it is healthy; raises ``AppLaunchError`` (server stopped) otherwise."""
        if self.running:
            return self
        from ..extras import require_extra

        require_extra("app", "the admin app")
        if self.port is None:
            self.port = free_port(self.host)
        handle, name = tempfile.mkstemp(prefix="agent-memory-app-", suffix=".log")
        os.close(handle)
        self.log_path = Path(name)
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            self.command(), cwd=self.working_directory(), env=self.environment(), stdout=self._log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )
        self._finalizer = weakref.finalize(self, _end_group, self.process, 10.0)
        deadline = time.monotonic() + self.startup_timeout
        while not self.healthy():
            if self.process.poll() is not None:
                code = self.process.returncode
                self.stop()
                raise AppLaunchError(f"the admin app exited with code {code} before it was healthy:\n{self.log_tail()}",
                                     store=self.shown_store)
            if time.monotonic() > deadline:
                self.stop()
                raise AppLaunchError(f"the admin app was not healthy within {self.startup_timeout:.0f} s:\n{self.log_tail()}",
                                     store=self.shown_store)
            time.sleep(0.3)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server and everything in its process group; safe to call twice."""
        if self.process is not None:
            _end_group(self.process, timeout)
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the server's output."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-chars:]

    def __enter__(self) -> "AdminApp":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- display ------------------------------------------------------------------------------

    def iframe(self, width: str | int = "100%", height: int | None = None):
        """An ``IPython.display.IFrame`` of the app."""
        from IPython.display import IFrame

        return IFrame(html.escape(self.browser_url or self.url, quote=True), width=width, height=height or self.height)

    def show(self, width: str | int = "100%", height: int | None = None) -> None:
        """Display the app inline in the current cell's output."""
        from IPython.display import display

        display(self.iframe(width, height))

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"AdminApp({self.shown_store!r}, url={self.url!r}, {state})"

    def _repr_html_(self) -> str:
        return app_html(self)


@safe_html
def app_html(app: AdminApp) -> str:
    """The app's URL and state, and the app itself in an IFrame while it runs."""
    store = html.escape(app.shown_store)
    if not app.running:
        return f"<div>admin app for {store}: stopped</div>"
    link = html.escape(app.browser_url or app.url, quote=True)
    note = " (demo mode: signed in as the demo operator)" if app.demo else ""
    return (f'<div>admin app for {store} at <a href="{link}" target="_blank">{link}</a>{html.escape(note)}; '
            f"stop it with <code>.stop()</code></div>{app.iframe()._repr_html_()}")


def launch_app(store: Any, **options: Any) -> AdminApp:
    """Start the admin app for ``store`` (a ``MemoryService`` or a path) and return it, healthy.

    For a service, the app opens the same file; a demo store opens in demo mode at its demo
    time, and a service with a non-default embedder should pass ``embedder="module:Class"``.
    Options are those of :class:`AdminApp`.
    """
    return AdminApp(store_target(store), **options).start()


def store_target(store: Any) -> str | Path:
    """What the app opens for ``store``: a path or URL as given; for a ``MemoryService``, the same
    store (a PostgreSQL one by its full URL: ``store.path`` shows the URL with its password hidden)."""
    opened = getattr(store, "store", None)
    if opened is None:
        return store
    return getattr(opened, "url", None) or opened.path
