#!/usr/bin/env bash
# The real-browser test: the CopilotKit page of examples/copilotkit, built
# with Vite and served by its CopilotKit runtime, whose agent is an HttpAgent
# pointed at agui2aap in front of the built-in AAP demo agent; Debian's
# Chromium, driven by playwright-core, chats with it the way a person would,
# signed in as one user, then as two users side by side under one API key.
# The test starts the runtime itself (it restarts it mid-conversation).
#
# Installs Debian's chromium if /usr/bin/chromium is missing (as root, as CI
# is); nothing downloads a browser or a binary of its own. Screenshots and
# the logs of every process go to ci-artifacts/copilotkit/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
started=$SECONDS

export COPILOTKIT_TELEMETRY_DISABLED=true
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
export SCARF_ANALYTICS=false
export DO_NOT_TRACK=1

artifacts="$root/ci-artifacts/copilotkit"
rm -rf "$artifacts"
mkdir -p "$artifacts"
work=$(mktemp -d)
pids=()

cleanup() {
	local status=$?
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [ "$status" -ne 0 ]; then
		for log in agui2aap.log runtime.log; do
			if [ -f "$artifacts/$log" ]; then
				echo "---- $log (last 60 lines) ----"
				tail -n 60 "$artifacts/$log"
			fi
		done
		echo "browser test FAILED after $((SECONDS - started))s; artifacts in ci-artifacts/copilotkit/"
	fi
	rm -rf "$work"
	exit "$status"
}
trap cleanup EXIT

if [ ! -x /usr/bin/chromium ]; then
	echo "== installing Debian's chromium"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
/usr/bin/chromium --version 2>/dev/null | head -n 1 || true

echo "== npm ci (examples/copilotkit, pinned in its package-lock.json)"
# --ignore-scripts: no install script runs, so nothing can download anything.
(cd examples/copilotkit && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error)
echo "   $((SECONDS - started))s"

echo "== vite build"
(cd examples/copilotkit && node node_modules/vite/bin/vite.js build --logLevel warn)
echo "   $((SECONDS - started))s"

echo "== go build ./cmd/agui2aap"
go build -o "$work/agui2aap" ./cmd/agui2aap

free_port() {
	node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

wait_healthy() { # name url pid
	for _ in $(seq 1 150); do
		if curl -fs -o /dev/null "$2"; then
			return 0
		fi
		if ! kill -0 "$3" 2>/dev/null; then
			echo "$1 exited before it became healthy"
			return 1
		fi
		sleep 0.2
	done
	echo "$1 did not become healthy at $2"
	return 1
}

agui_port=$(free_port)
# agui2aap asks for an API key, as in production; the runtime sends it
# (AGUI2AAP_API_KEY, on runs, hydrations and the thread list alike), and
# with it the signed-in user in X-User-Id (AGUI2AAP_USER_HEADER): threads
# are the key's and the user's.
api_key="browser-test-$RANDOM$RANDOM"
"$work/agui2aap" --store memory: --listen "127.0.0.1:$agui_port" --api-key "$api_key" \
	--user-header X-User-Id --on-client-gone finish --demo-long-pace 40ms >"$artifacts/agui2aap.log" 2>&1 &
pids+=($!)
wait_healthy agui2aap "http://127.0.0.1:$agui_port/healthz" "${pids[-1]}"

rt_port=$(free_port)
echo "== agui2aap on :$agui_port; the test starts (and restarts) the CopilotKit runtime and page on :$rt_port ($((SECONDS - started))s)"

echo "== browser test (Chromium, playwright-core)"
browser_started=$SECONDS
(
	cd examples/copilotkit
	AGUI2AAP_URL="http://127.0.0.1:$agui_port" AGUI2AAP_API_KEY="$api_key" AGUI2AAP_USER_HEADER=X-User-Id \
		AGUI2AAP_LOG="$artifacts/agui2aap.log" RUNTIME_PORT="$rt_port" \
		ARTIFACTS="$artifacts" LOG_RUNS="$artifacts/runs.log" timeout 300 node browser-test.mjs
)
echo "   the browser steps took $((SECONDS - browser_started))s"

# agui2aap logs when a thread has to move to a new AAP session seeded with
# the client's history ("seed" > 0): the client's history no longer extended
# what the session had seen. In this conversation that should never happen.
reseeded=$(grep -c '"seed":[1-9]' "$artifacts/agui2aap.log" || true)
if [ "$reseeded" -gt 0 ]; then
	echo "note: agui2aap moved a thread to a new, seeded AAP session $reseeded time(s):"
	grep '"seed":[1-9]' "$artifacts/agui2aap.log" | cut -c1-300
	if [ "${BROWSER_TEST_STRICT_SESSIONS:-0}" = 1 ]; then
		echo "BROWSER_TEST_STRICT_SESSIONS=1: failing"
		exit 1
	fi
fi

echo "== browser test passed in $((SECONDS - started))s; screenshots in ci-artifacts/copilotkit/"
