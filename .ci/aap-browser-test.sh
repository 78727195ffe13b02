#!/usr/bin/env bash
# The real-browser CORS test of aap2agui: a page served from one origin, in
# Debian's Chromium driven by playwright-core, holds an AAP conversation
# with aap2agui on another origin through fetch (API key and JSON bodies,
# so every call is preflighted), as the official AAP web client does; a
# page on an origin aap2agui does not list is refused.
#
# Installs Debian's chromium if /usr/bin/chromium is missing (as root, as CI
# is); nothing downloads a browser or a binary of its own. The log of
# aap2agui goes to ci-artifacts/aap-cors/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
started=$SECONDS

export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

artifacts="$root/ci-artifacts/aap-cors"
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
	if [ "$status" -ne 0 ] && [ -f "$artifacts/aap2agui.log" ]; then
		echo "---- aap2agui.log (last 40 lines) ----"
		tail -n 40 "$artifacts/aap2agui.log"
		echo "aap2agui CORS browser test FAILED after $((SECONDS - started))s"
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

echo "== npm ci (interop/browser, pinned in its package-lock.json)"
# --ignore-scripts: no install script runs, so nothing can download anything.
(cd interop/browser && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error)

echo "== go build ./cmd/aap2agui"
go build -o "$work/aap2agui" ./cmd/aap2agui

free_port() {
	node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

aap_port=$(free_port)
page_port=$(free_port)
other_port=$(free_port)
while [ "$page_port" = "$aap_port" ]; do page_port=$(free_port); done
while [ "$other_port" = "$aap_port" ] || [ "$other_port" = "$page_port" ]; do other_port=$(free_port); done
key=browser-test-key

"$work/aap2agui" --store memory: --listen "127.0.0.1:$aap_port" --api-key "$key" \
	--cors-origin "http://127.0.0.1:$page_port" >"$artifacts/aap2agui.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 150); do
	if curl -fs -o /dev/null "http://127.0.0.1:$aap_port/healthz"; then
		break
	fi
	if ! kill -0 "${pids[-1]}" 2>/dev/null; then
		echo "aap2agui exited before it became healthy"
		exit 1
	fi
	sleep 0.2
done
echo "== aap2agui on :$aap_port allows the page on :$page_port, not the one on :$other_port"

(
	cd interop/browser
	AAP_URL="http://127.0.0.1:$aap_port" API_KEY="$key" PAGE_PORT="$page_port" OTHER_PORT="$other_port" \
		timeout 120 node aap-cors.mjs
)
echo "== aap2agui CORS browser test passed in $((SECONDS - started))s"
