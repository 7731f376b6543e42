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


def test_the_reference_page_shows_rounds_and_says_which_ratios_hold():
    """Every result on the page was measured in rounds on labs deployed afresh; a ratio whose rounds fall on both
    sides of 1.0 is written as no difference measurable here, never as a figure."""
    import json

    page = (ROOT / "docs" / "reference-experiments.md").read_text()
    for path in sorted((ROOT / "docs" / "experiments").glob("*.experiment.json")):
        result = json.loads(path.read_text())
        if "rounds" not in result:  # one run, from before rounds: the page does not show it
            assert f"`{result['lab']}`" not in page or result["cells"][0]["name"] not in page, path.name
            continue
        assert result["rounds"] >= 2, f"{path.name}: run make reference-experiments (ROUNDS >= 2)"
        for ratio in result["ratios"]:
            rounds = [value for value in ratio["rounds"] if value == value]
            if ratio["not_measurable"]:
                assert f"| {ratio['name']} | not measurable here: {ratio['not_measurable']} |" in page
            elif min(rounds) <= 1.0 <= max(rounds):
                assert f"| {ratio['name']} | no difference measurable here (" in page, ratio["name"]
            else:
                assert f"| {ratio['name']} | {ratio['value']:.3f} (" in page, ratio["name"]
    assert "veth ports" not in page and "line rate of the reference setup's two 10 GbE ports" in page
