"""Sphinx configuration of the API reference (built by tests/test_docs.py, warnings as errors)."""

project = "hare_opt"
author = "hare_opt developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
napoleon_google_docstring = False
napoleon_numpy_docstring = False
nitpicky = False
html_theme = "alabaster"
html_static_path: list[str] = []
exclude_patterns = ["_build"]
suppress_warnings = ["ref.python"]  # a short type name matching two classes is not an error
