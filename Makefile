# One task entry for people and CI. Every target installs what it needs first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install serve test lint typecheck bench screenshots clean ui-vendor nova-bed neutron-bed keystone-bed tempest-bed heat-bed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## The real Nova the Nova tests start (docs/testing.md): nova 34, placement and glance from PyPI
## in their own venv under $(NOVA_BED_DIR) (default .beds/nova); does nothing when installed.
nova-bed:
	PYTHON=$(PYTHON) scripts/nova-bed/install.sh

## The Nova bed's Neutron (neutron 29, the release of nova 34) in its own venv under
## $(NEUTRON_BED_DIR) (default .beds/neutron); without it the bed serves a stub with no networks.
neutron-bed:
	PYTHON=$(PYTHON) scripts/neutron-bed/install.sh

## Test beds for the OpenStack tests (issue 30), each in its own venv under .beds/ (ignored by git).
## Keystone (from PyPI, on SQLite, under gunicorn) for `herd serve --auth keystone`.
KEYSTONE_BED   := .beds/keystone
KEYSTONE_STAMP := $(KEYSTONE_BED)/.installed
KEYSTONE_PINS  := 'keystone>=30,<31' gunicorn
$(KEYSTONE_STAMP):
	$(PYTHON) -m venv $(KEYSTONE_BED)
	$(KEYSTONE_BED)/bin/pip install -q --upgrade pip
	$(KEYSTONE_BED)/bin/pip install -q $(KEYSTONE_PINS)
	touch $(KEYSTONE_STAMP)

keystone-bed: $(KEYSTONE_STAMP)

## tempest with Senlin's API tests (senlin-tempest-plugin), run against herd by
## tests/e2e/test_senlin_tempest.py.
TEMPEST_BED   := .beds/tempest
TEMPEST_STAMP := $(TEMPEST_BED)/.installed
TEMPEST_PINS  := 'tempest>=47' 'senlin-tempest-plugin==1.8.0'
$(TEMPEST_STAMP):
	$(PYTHON) -m venv $(TEMPEST_BED)
	$(TEMPEST_BED)/bin/pip install -q --upgrade pip
	$(TEMPEST_BED)/bin/pip install -q $(TEMPEST_PINS)
	touch $(TEMPEST_STAMP)

tempest-bed: $(TEMPEST_STAMP)

## Heat (heat-api, heat-engine) for tests/e2e/test_heat_resources.py. 22.0.1 (2024.1), not the
## release of Keystone 30's series: Heat 23.0.0 made every OS::Senlin::* resource a hidden
## NoneResource (Senlin was retired), so 22.x is the last Heat whose Senlin resources call a
## clustering service (docs/heat.md).
HEAT_BED   := .beds/heat
HEAT_STAMP := $(HEAT_BED)/.installed
HEAT_PINS  := 'openstack-heat==22.0.1' python-openstackclient python-heatclient 'psycopg[binary]'
$(HEAT_STAMP):
	$(PYTHON) -m venv $(HEAT_BED)
	$(HEAT_BED)/bin/pip install -q --upgrade pip
	$(HEAT_BED)/bin/pip install -q $(HEAT_PINS)
	touch $(HEAT_STAMP)

heat-bed: $(HEAT_STAMP)

## Start herd on its embedded defaults: SQLite under ./herd-data, process driver, 127.0.0.1:8778.
## A development server: the members it runs are on this machine, so their health poll URLs
## and hook receivers on loopback are allowed (docs/security.md, the outbound guard).
serve: $(STAMP)
	HERD_OUTBOUND_ALLOW='["127.0.0.0/8", "::1"]' $(BIN)/herd serve

## The whole test suite (unit, functional on SQLite and PostgreSQL, end-to-end, against a real
## Nova), plus lint, the import contracts (layering, pure decision code) and types.
test: $(STAMP) nova-bed neutron-bed keystone-bed tempest-bed heat-bed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto --dist loadfile -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

## Retake the dashboard screenshots in docs/images (the browser tests take them on every run).
screenshots: $(STAMP)
	HERD_SCREENSHOTS=docs $(BIN)/python -m pytest -q -p no:cacheprovider tests/e2e/dashboard

## bench/api.py needs wrk (Debian package wrk) and starts PostgreSQL as the tests do (so does
## bench/scale.py: 1, 2 and 4 `herd engine` processes on one database, CPU-bound by default and
## latency-bound with 4 workers per engine); bench/nova_bed.py starts
## the Nova bed (rabbitmq-server); bench/dashboard.py drives Debian's chromium and chromium-driver.
bench: $(STAMP) nova-bed neutron-bed
	$(BIN)/python bench/api.py
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/scale.py --engine-workers 4 --clusters 40
	$(BIN)/python bench/victims.py
	$(BIN)/python bench/health.py
	$(BIN)/python bench/iallocator.py
	$(BIN)/python bench/dashboard.py
	$(BIN)/python bench/nova_bed.py
	$(BIN)/python bench/nova.py

## Refresh the dashboard's vendored chart library (uPlot) from the npm registry.
ui-vendor:
	scripts/vendor-ui.sh $(VERSION)

clean:
	rm -rf $(VENV) herd-data .pytest_cache .mypy_cache
