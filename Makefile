# The two commands of the README: `make matrix` and `make test`.
# Both create .venv and install lakecompat into it on first use, and reuse it afterwards.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: matrix merge test lint format bench clean browser containers

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --disable-pip-version-check -e '.[dev]'
	touch $@

matrix: $(STAMP)
	$(BIN)/lakecompat run $(ARGS)

# Merge the run folders of a sharded run: make merge ARGS="shard1/runs/<id> shard2/runs/<id>"
merge: $(STAMP)
	$(BIN)/lakecompat merge $(ARGS)

test: lint browser containers
	$(BIN)/python -m pytest -n 2 --durations=25 $(ARGS)

# Headless Chromium for the HTML report's browser test (Debian packages, once).
browser:
	bash scripts/install_packages.sh "The HTML report test" chromium,chromedriver \
		chromium chromium-driver

# Podman, runc and debootstrap for the tests of engines in containers (Debian packages, once).
containers:
	bash scripts/install_packages.sh "The tests of engines in containers" podman,runc,debootstrap \
		podman runc debootstrap

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/bench_run.py $(ARGS)

clean:
	rm -rf reports/runs reports/latest reports/.latest-* reports/.latest.lock
