"""``agent-memory serve``: make sure the store exists, then exec ``streamlit run admin_ui/entry/app.py``.

The command line and environment are built here, without importing streamlit or ``admin_ui``:
the CLI and the notebook launcher start the app as a separate process, so the library never
depends on the app it serves.

With ``demo=True`` a missing store is built from ``seed_data/`` first (progress printed), the
demo accounts file is used unless another is configured, and demo mode is switched on; the app
signs in a demo operator automatically only because the server is bound to localhost.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .resources import seed_root

ROOT = Path(__file__).resolve().parent.parent
# The server script, beside admin_ui's other modules in a checkout and in an installed wheel alike.
APP = ROOT / "admin_ui" / "entry" / "app.py"
# Where the server runs: the top of a checkout (so its .streamlit/ folder is read), else beside the script.
RUN_FROM = ROOT if (ROOT / "pyproject.toml").is_file() else APP.parent
DEMO_ACCOUNTS = seed_root() / "demo_accounts.toml"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
# The environment the app reads in admin_ui/runtime.py (documented there).
STORE_ENV = "MEMORY_STORE"
CLOCK_ENV = "MEMORY_UI_CLOCK"
EMBEDDER_ENV = "MEMORY_UI_EMBEDDER"


def streamlit_command(port: int, host: str) -> list[str]:
    """The headless ``streamlit run`` command line for the app."""
    return [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.headless", "true",
        "--server.address", host,
        "--server.port", str(port),
        "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false",
        # Streamlit's table toolbar exports cells verbatim; the app's own CSV export is the safe one.
        "--client.disableDataExport", "true",
        # the checkout's .streamlit/config.toml says the same; an installed app has no such file beside it
        "--client.toolbarMode", "minimal",
        "--client.showErrorDetails", "type",
    ]


def app_environment(store: Path | str, demo: bool, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the app runs with: the store, offline model loading, demo settings."""
    env = dict(os.environ if base is None else base)
    env[STORE_ENV] = str(store)
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        env.setdefault(key, "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    if demo:
        env["MEMORY_UI__DEMO_MODE"] = "true"
        if not env.get("MEMORY_UI__ACCOUNTS_FILE") and DEMO_ACCOUNTS.is_file():
            env["MEMORY_UI__ACCOUNTS_FILE"] = str(DEMO_ACCOUNTS)
    return env


def ensure_store(store: Path, demo: bool, out=print) -> None:
    """Build the demo store if it is missing (demo mode); otherwise say what will happen."""
    if store.exists():
        out(f"using the store at {store}")
        return
    if not demo:
        out(f"no store at {store}: the app will create an empty one")
        return
    from .demo import build_demo_store

    out(f"building the demo store at {store} from seed_data/ (first run only)…")
    build_demo_store(store, progress=lambda message: out(f"  {message}"))


def serve(store: str, port: int, demo: bool, host: str, *, execute: bool = True) -> int:
    """Prepare the store and exec the Streamlit server; returns only when ``execute`` is False.

    Raises MissingExtraError (naming the ``app`` extra) before anything else when the app's
    packages are not installed."""
    from .extras import require_extra
    from .store.backend import is_postgres_url, redact_url

    require_extra("app", "the admin app")

    if is_postgres_url(store):  # a PostgreSQL store: passed through as it is (docs/scaling.md)
        if demo:
            from .errors import InvalidInputError

            raise InvalidInputError("demo mode builds its demo store as an SQLite file; give --path a file", field="path")
        print(f"using the PostgreSQL store at {redact_url(store)}", flush=True)
        target: Path | str = store
    else:
        from .store.urls import file_path

        target = file_path(store, what="a store file or a postgresql:// URL").resolve()
        ensure_store(target, demo, out=lambda message: print(message, flush=True))
    env = app_environment(target, demo)
    command = streamlit_command(port, host)
    shown = "localhost" if host in LOCAL_HOSTS or host in ("0.0.0.0", "::") else host
    print(f"\nagent-memory admin app: http://{shown}:{port}", flush=True)
    if demo:
        if host in LOCAL_HOSTS:
            print("demo mode: you are signed in as the demo operator; sign out to use a demo account "
                  "of another role (usernames and passwords in docs/demo.md)", flush=True)
        else:
            print(f"demo mode: automatic sign-in is OFF because the server is bound to {host}, not localhost", flush=True)
    if not execute:
        return 0
    os.chdir(RUN_FROM)
    os.execvpe(command[0], command, env)
    return 0  # not reached
