"""Which packages the wheel carries; everything else about the project is in pyproject.toml.

The admin app's page scripts live in pages/ at the top of the repository, where Streamlit does not
mistake them for an old-style multipage app (docs/admin-app.md); in the wheel they are installed as
admin_ui/pages/, beside the rest of the app. pyproject.toml can find packages or list them, but not
find them and map one more folder, so the list is built here.
"""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["memory_core*", "admin_ui*"]), "admin_ui.pages"],
    package_dir={"admin_ui.pages": "pages"},
)
