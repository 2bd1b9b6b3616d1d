import pytest

from .chat_server import ChatServer


@pytest.fixture
def chat_server():
    """A chat-completions server on a free loopback port, closed (and its hung replies released) after the test."""
    server = ChatServer()
    yield server
    server.close()
