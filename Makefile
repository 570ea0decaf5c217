# ZeroNF: the two commands are `make demo` and `make test`.
BUILD ?= build
PY := .venv/bin/python
BENCH ?=

.PHONY: all setup build demo test unit pytest bench dpi-report clean

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

# make dpi-report PCAP=in.pcap OUT=flows.out: the capture through a manager
# and the dpi NF; its flow report in ndpiReader's -w format.
dpi-report: build
	@test -n "$(PCAP)" -a -n "$(OUT)" || { echo "usage: make dpi-report PCAP=in.pcap OUT=flows.out"; exit 2; }
	ZERONF_BUILD=$(abspath $(BUILD)) $(PY) scripts/dpi_report.py $(abspath $(PCAP)) $(abspath $(OUT))

clean:
	rm -rf $(BUILD)
