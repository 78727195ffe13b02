#!/usr/bin/env bash
# The browser test of the AG-UI dojo's features through the chain: the
# dojo page of examples/copilotkit/dojo (CopilotKit's v2 hooks, built with
# Vite, served by its CopilotKit runtime) uses each feature of the AG-UI
# all-features server starter (cmd/dojoagent) twice, in Debian's Chromium
# driven by playwright-core: straight to the starter (the control) and
# through agui2aap in front of aap2agui (--agent-config
# examples/dojo-agents.yaml, every feature an agent) in front of the same
# starter. Every check that passes direct must pass through the chain
# (dojo/test.mjs prints the table of both).
#
# Installs Debian's chromium if /usr/bin/chromium is missing (as root, as CI
# is); nothing downloads a browser or a binary of its own. The npm packages
# are examples/copilotkit's, pinned in its package-lock.json (installed
# when missing or older than the lock file). Screenshots and the logs of
# every process go to ci-artifacts/dojo/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
started=$SECONDS

export COPILOTKIT_TELEMETRY_DISABLED=true
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
export SCARF_ANALYTICS=false
export DO_NOT_TRACK=1

artifacts="$root/ci-artifacts/dojo"
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
		for log in dojoagent.log aap2agui.log agui2aap.log runtime.log; do
			if [ -f "$artifacts/$log" ]; then
				echo "---- $log (last 30 lines) ----"
				tail -n 30 "$artifacts/$log" | cut -c1-400
			fi
		done
		echo "dojo browser test FAILED after $((SECONDS - started))s; artifacts in ci-artifacts/dojo/"
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

ck=examples/copilotkit
if [ ! -f "$ck/node_modules/.package-lock.json" ] || [ "$ck/package-lock.json" -nt "$ck/node_modules/.package-lock.json" ]; then
	echo "== npm ci (examples/copilotkit, pinned in its package-lock.json)"
	# --ignore-scripts: no install script runs, so nothing can download anything.
	(cd "$ck" && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error)
fi

echo "== vite build (examples/copilotkit/dojo)"
(cd "$ck" && node node_modules/vite/bin/vite.js build --config dojo/vite.config.js --logLevel warn)
echo "   $((SECONDS - started))s"

echo "== go build ./cmd/dojoagent ./cmd/aap2agui ./cmd/agui2aap"
go build -o "$work/" ./cmd/dojoagent ./cmd/aap2agui ./cmd/agui2aap

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

# The starter with a tenth of its pauses (the agentic generative UI's steps
# 100 ms apart), logging what each run was sent.
starter_port=$(free_port)
"$work/dojoagent" --listen "127.0.0.1:$starter_port" --pause 100ms --log-inputs >"$artifacts/dojoagent.log" 2>&1 &
pids+=($!)
wait_healthy dojoagent "http://127.0.0.1:$starter_port/healthz" "${pids[-1]}"

# aap2agui serving every feature as an agent (examples/dojo-agents.yaml,
# its upstream moved to the starter's port), behind an API key, which
# agui2aap sends; agui2aap asks the runtime for a key of its own.
aap_port=$(free_port)
aap_key="dojo-aap-$RANDOM$RANDOM"
agui_key="dojo-agui-$RANDOM$RANDOM"
sed "s#http://127.0.0.1:8000/#http://127.0.0.1:$starter_port/#" examples/dojo-agents.yaml >"$work/agents.yaml"
grep -q "127.0.0.1:$starter_port" "$work/agents.yaml"
"$work/aap2agui" --agent-config "$work/agents.yaml" --store memory: --listen "127.0.0.1:$aap_port" \
	--api-key "$aap_key" --shutdown-delay 0 >"$artifacts/aap2agui.log" 2>&1 &
pids+=($!)
wait_healthy aap2agui "http://127.0.0.1:$aap_port/healthz" "${pids[-1]}"

agui_port=$(free_port)
"$work/agui2aap" --upstream "http://127.0.0.1:$aap_port" --upstream-api-key "$aap_key" --store memory: \
	--listen "127.0.0.1:$agui_port" --api-key "$agui_key" --shutdown-delay 0 >"$artifacts/agui2aap.log" 2>&1 &
pids+=($!)
wait_healthy agui2aap "http://127.0.0.1:$agui_port/healthz" "${pids[-1]}"

rt_port=$(free_port)
(
	cd "$ck"
	STARTER_URL="http://127.0.0.1:$starter_port" AGUI2AAP_URL="http://127.0.0.1:$agui_port" AGUI2AAP_API_KEY="$agui_key" \
		PORT="$rt_port" LOG_RUNS="$artifacts/runs.log" exec node dojo/server.mjs
) >"$artifacts/runtime.log" 2>&1 &
pids+=($!)
wait_healthy runtime "http://127.0.0.1:$rt_port/healthz" "${pids[-1]}"
echo "== starter on :$starter_port, aap2agui on :$aap_port, agui2aap on :$agui_port, the dojo page on :$rt_port ($((SECONDS - started))s)"

echo "== browser test (Chromium, playwright-core): every feature direct, then through the chain"
browser_started=$SECONDS
(cd "$ck" && BASE_URL="http://127.0.0.1:$rt_port" STARTER_LOG="$artifacts/dojoagent.log" ARTIFACTS="$artifacts" timeout 300 node dojo/test.mjs)
echo "   the browser steps took $((SECONDS - browser_started))s"
echo "== dojo browser test passed in $((SECONDS - started))s; screenshots in ci-artifacts/dojo/"
