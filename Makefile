# The two commands a newcomer needs: `make demo` and `make test`.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv demo test test-fast migrate clean

$(STAMP): pyproject.toml
	@test -x $(PY) || "$$(bash scripts/find-python.sh)" -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

migrate: venv
	$(PY) manage.py migrate --noinput

demo: venv
	bash scripts/demo.sh

test: venv
	$(PY) -m pytest

clean:
	rm -rf $(VENV) data staticfiles
