# ZeroNF: the two commands are `make demo` and `make test`.
BUILD ?= build
PY := .venv/bin/python
BENCH ?=

.PHONY: all setup build demo test unit pytest bench clean

all: build

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD)

build: setup $(BUILD)/build.ninja
	ninja -C $(BUILD)

demo: build
	$(PY) scripts/demo.py --build $(BUILD)

unit: build
	meson test -C $(BUILD) --print-errorlogs

pytest: build
	ZERONF_BUILD=$(abspath $(BUILD)) $(PY) -m pytest -q tests

test: build
	meson test -C $(BUILD) --print-errorlogs
	ZERONF_BUILD=$(abspath $(BUILD)) $(PY) -m pytest -q -ra tests

bench: build
	ZERONF_BUILD=$(abspath $(BUILD)) $(PY) bench/run.py $(if $(BENCH),--only $(BENCH))

clean:
	rm -rf $(BUILD)
