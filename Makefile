# vtopo, as root on Debian 12. The two commands of the README:
#   make run    install everything (Debian packages, .venv, guest image) and open the designer
#   make test   install what the tests need if missing, then run the test suite
#   make bench  run the benchmarks (tests/benchmarks) and write their figures into README.md
# The work is done by scripts/ and resources/guest/build.sh; this file only names it.
LAB ?= topologies/l2-vs-l3.vtopo
ARGS ?=

.PHONY: run test bench setup guest docs measure-runs reference-experiments reference-docs

run:
	@bash scripts/run.sh $(LAB)

test:
	@bash scripts/test.sh $(ARGS)

bench:
	@bash scripts/test.sh --bench $(ARGS)
	@.venv/bin/python scripts/bench_readme.py

docs:  # the screenshots in docs/, rendered by the GUI tests (a plain test run writes them to build/screenshots)
	@VTOPO_SCREENSHOT_DIR=$(CURDIR)/docs bash scripts/test.sh tests/gui/test_look.py -k screenshot

measure-runs:  # the two runs docs/measure.png compares, measured on this host (root) into docs/measure/; then make docs
	@bash scripts/measure-screenshot.sh

setup:
	@bash scripts/setup.sh

guest:
	@bash resources/guest/build.sh

# The reference experiments: measure them on this host (root), then write docs/reference-experiments.md
reference-experiments:
	@bash scripts/reference-experiments.sh

reference-docs:
	@.venv/bin/python scripts/reference_doc.py
