"""docs/reference-experiments.md and README's VM figures are written from `vtopo experiment` results, never edited by
hand."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_reference_page_is_what_the_generator_writes_from_the_measured_results():
    spec = importlib.util.spec_from_file_location("reference_doc", ROOT / "scripts" / "reference_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "reference-experiments.md").read_text()
    assert page == module.render(), "docs/reference-experiments.md was edited by hand; run make reference-docs"
    assert "seed" not in page.lower()
    readme = (ROOT / "README.md").read_text()
    assert readme == module.readme_with_vm_figures(readme), "README's VM figures were edited; run make reference-docs"
