"""Overview page: counts, queue sizes, charts; re-embedding only for admins, with progress."""

from tests.ui.conftest import service_for, unescape


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def test_counts_match_the_store(open_page):
    at = open_page("overview.py", "viewer")
    stats = service_for(at).stats()
    assert int(metric(at, "Records")) == stats["records"]
    assert int(metric(at, "Review due")) == 1
    # five dashboard charts, each with a caption, and the three older views in an expander
    assert len(at.get("plotly_chart")) == 8
    captions = " ".join(unescape(c.value) for c in at.caption)
    for phrase in ("live records of each type", "p95", "logged searches returned nothing", "wait for a person",
                   "extraction run(s) by status"):
        assert phrase in captions
    assert "overview_reembed" not in {b.key for b in at.button}


def test_an_admin_can_reembed_with_progress(open_page):
    at = open_page("overview.py", "admin")
    at.button(key="overview_reembed").click().run()
    assert not at.exception
    events = service_for(at).store.query("SELECT actor FROM events WHERE kind = 'store.reembedded'")
    assert [e["actor"] for e in events] == ["ui:ada"]


def test_an_admin_sees_the_doctor_report_and_a_viewer_does_not(open_page):
    viewer = open_page("overview.py", "viewer")
    assert "overview_doctor" not in {b.key for b in viewer.button}
    at = open_page("overview.py", "admin")
    at.button(key="overview_doctor").click().run()
    assert not at.exception
    assert any("No problems found" in s.value for s in at.success), [e.value for e in at.error]
    names = [name for df in at.dataframe if "name" in df.value.columns for name in df.value["name"]]
    assert "fts integrity" in names and "orphan rows" in names
