"""Small helpers shared by the retrieval tests."""

from memory_core.store.records import fetch_record, update_record
from tests.helpers import write  # noqa: F401  (re-exported for the retrieve tests)


def set_status(service, record_id, status):
    """Move a record to a lifecycle state directly (as a maintenance pass would), bumping the index feed."""
    with service.store.transaction() as conn:
        record = fetch_record(conn, record_id)
        update_record(conn, record_id, status=status)
        service.store.bump(conn, record.seq)


def search(service, session, query, **options):
    return service.search(agent_id=session.agent_id, user_id=session.user_id, query=query, **options)
