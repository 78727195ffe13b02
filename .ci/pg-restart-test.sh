#!/usr/bin/env bash
# The database-fault loads of aap2agui (TestAcknowledgedTurnsSurviveDatabaseFaults)
# and agui2aap (TestFinishedRunsSurviveDatabaseFaults), one package at a
# time, with PostgreSQL restarts: a cluster of its own (fsync on), which the test
# restarts with -m fast and -m immediate mid-load. The other PostgreSQL
# tests share .ci/run's cluster, which must not restart under them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pgtemp.sh
PGTEMP_FSYNC=on pgtemp_start
export AAPAGUI_REQUIRE_POSTGRES=1
export AAPAGUI_TEST_PG_RESTART="cd $PGTEMP_DIR && ${PGTEMP_AS[*]} $PGTEMP_BIN/pg_ctl -D $PGTEMP_DIR/data -l $PGTEMP_DIR/server.log -w -t 60 restart -m"
go test -race -count=1 -p 1 -run '^(TestAcknowledgedTurnsSurviveDatabaseFaults|TestFinishedRunsSurviveDatabaseFaults)$' -v ./bridge/aap2agui/ ./bridge/agui2aap/ |
	grep -E '^(=== RUN|--- |PASS|FAIL|ok)|acknowledged|finished|restarted|dropped|Error|Messages'
