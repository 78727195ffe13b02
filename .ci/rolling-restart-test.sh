#!/usr/bin/env bash
# A rolling restart as an operator does one: two aap2agui and two agui2aap
# replicas on a PostgreSQL cluster of their own, under load from clients
# that a Service-like balancer spreads over the ready replicas (it probes
# /readyz every 100 ms); each replica in turn gets SIGTERM, must exit 0, and
# is started again. No request may fail, and every acknowledged turn must
# be in history once (cmd/aapload -rolling).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
source scripts/pgtemp.sh
pgtemp_start
bin=$(mktemp -d)
trap 'rm -rf "$bin"; pgtemp_stop' EXIT
go build -o "$bin/" ./cmd/aap2agui ./cmd/agui2aap ./cmd/aapload
# The programs' warnings are passed on by aapload; "no --api-key" is expected here.
"$bin/aapload" -bin "$bin" -rolling -store "$AAPAGUI_TEST_POSTGRES" -c 8 -m 4 -shutdown-delay 2s -settle 2s \
	2> >(grep -v 'no --api-key' >&2)
