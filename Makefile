# partita: two commands do everything on a fresh machine.
#   make run    bootstrap (.venv + MPI + build), then the quick suite on 2 local ranks
#   make test   bootstrap, then every test (ctest for C, pytest for Python)
# Use a system MPI with:  make run MPICC=/path/to/mpicc
VENV      ?= .venv
BUILD_DIR ?= build
export VENV BUILD_DIR
ifdef MPICC
export MPICC
endif
PARTITA   := $(VENV)/bin/partita
CTEST_J   ?= 2

.PHONY: all bootstrap run test test-c test-python peer-tests sanitize clean distclean help

all: bootstrap

help:
	@sed -n '2,6p' Makefile

bootstrap:
	@bash scripts/bootstrap.sh

run: bootstrap
	@$(PARTITA) run --suite quick --build $(BUILD_DIR)

test: bootstrap
	@bash scripts/run-tests.sh

test-c: bootstrap
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(CTEST_J) --timeout 300

test-python: bootstrap
	$(VENV)/bin/python -m pytest -q tests/python

peer-tests: bootstrap
	@bash tests/peer/run.sh

sanitize: bootstrap
	@bash scripts/sanitize.sh

clean:
	rm -rf $(BUILD_DIR) $(BUILD_DIR)-*

distclean: clean
	rm -rf $(VENV) $(VENV)-* results
