#!/usr/bin/env bash
# The C unit tests and a packet/system subset on an AddressSanitizer +
# UndefinedBehaviorSanitizer build (make sanitize; make test runs it).
#
# The recipe, as found on DPDK 22.11 here: build everything, manager and
# NFs alike, with -Db_sanitize=address,undefined -Db_lundef=false (one
# build: a secondary must load DPDK as its primary does); DPDK's own
# libraries stay uninstrumented. Hugepages, the multi-process channel and
# secondaries mapping the primary's memory work as they are (ASan's shadow
# leaves DPDK's mappings alone). Every process of a test writes its
# sanitizer reports to files (log_path) instead of a stderr the test may
# not read: any report fails the run, whichever process it came from,
# killed ones aside. LeakSanitizer runs at each clean exit.
set -euo pipefail
BUILD=${1:?usage: tests/sanitize.sh BUILD_DIR}
cd "$(dirname "$0")/.."
REPORTS=$(mktemp -d /tmp/zeronf-sanitize.XXXXXX)
trap 'rm -rf "$REPORTS"' EXIT
export ASAN_OPTIONS="log_path=$REPORTS/asan:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="log_path=$REPORTS/ubsan:print_stacktrace=1:halt_on_error=1"

meson test -C "$BUILD" --print-errorlogs
ZERONF_BUILD="$BUILD" .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/pkt/test_chain_pcap.py \
  tests/pkt/test_router.py::test_live_route_changes_while_traffic_flows \
  tests/system/test_control_stress.py tests/system/test_pool_ring_death.py \
  tests/system/test_control_fuzz.py tests/system/test_sdn.py \
  tests/system/test_multihost.py tests/system/test_multihost_deploy.py \
  tests/pkt/test_fabric_input.py \
  tests/system/test_launch.py \
  tests/system/test_pidns.py \
  tests/system/test_lifecycle.py \
  tests/system/test_handoff.py tests/system/test_port_handoff.py \
  tests/system/test_nf_rx.py tests/system/test_bundle.py \
  tests/system/test_nf_objects.py tests/system/test_trust_groups.py \
  tests/pkt/test_trust_copy.py tests/system/test_descriptors.py \
  tests/pkt/test_firewall_ctl.py tests/pkt/test_ratelimit.py \
  tests/pkt/test_nat.py tests/pkt/test_lb_nf.py \
  "tests/pkt/test_malformed.py::test_tcpdump_corpus_through_the_second_suite" \
  tests/system/test_vandal.py tests/pkt/test_tenants.py \
  tests/system/test_tenant_control.py tests/system/test_group_audit.py \
  "tests/system/test_ports_untouched.py::test_port_state_unchanged_while_nfs_come_and_go[pcap]" \
  tests/system/test_ports_untouched.py::test_cut_devargs_name_the_input

if compgen -G "$REPORTS/*" >/dev/null; then
  echo "sanitize: reports from the processes above:" >&2
  for f in "$REPORTS"/*; do echo "== $f" >&2; head -60 "$f" >&2; done
  exit 1
fi
echo "sanitize: no AddressSanitizer/UBSan report"
