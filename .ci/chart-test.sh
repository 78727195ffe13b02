#!/usr/bin/env bash
# The Helm chart (deploy/helm/aapagui): helm, pinned, from the Go module
# proxy (go install works outside this module's requirements: helm is no
# dependency of go.mod), then helm lint --strict of the defaults and of
# each ci/*-values.yaml, and helm template, whose output is checked: the
# objects the chart promises, the probes, the non-root read-only
# container, secrets by reference only, terminationGracePeriodSeconds from
# the drain settings, and the values it refuses.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
HELM_VERSION=v3.21.4
echo "== go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
gobin=$(go env GOBIN); gobin=${gobin:-$(go env GOPATH)/bin}
helm="$gobin/helm"
chart=deploy/helm/aapagui

fail() { echo "chart-test: $*" >&2; exit 1; }
# has FILE TEXT: the rendered FILE holds the line TEXT (leading spaces aside).
has() { grep -Eq "^[[:space:]-]*$2\$" "$1" || fail "$(basename "$1"): no line '$2'"; }
hasnt() { ! grep -Eq "$2" "$1" || fail "$(basename "$1"): holds '$2'"; }

echo "== helm lint"
"$helm" lint --strict "$chart"
for v in "$chart"/ci/*-values.yaml; do
	"$helm" lint --strict "$chart" -f "$v"
done

echo "== helm template"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$helm" template demo "$chart" >"$out/default.yaml"
"$helm" template prod "$chart" -f "$chart/ci/replicas-values.yaml" >"$out/replicas.yaml"
"$helm" template edge "$chart" -f "$chart/ci/agui2aap-values.yaml" >"$out/agui2aap.yaml"

# The defaults: one aap2agui on SQLite, open (it says so), drain of 5 s.
for kind in Deployment Service PodDisruptionBudget; do has "$out/default.yaml" "kind: $kind"; done
hasnt "$out/default.yaml" "kind: (ServiceMonitor|PrometheusRule|ConfigMap|Secret)$"
has "$out/default.yaml" "terminationGracePeriodSeconds: 40"
has "$out/default.yaml" "--shutdown-delay=5s"
has "$out/default.yaml" "--insecure-open"
has "$out/default.yaml" "value: sqlite:/data/aap2agui.db"

# Replicas on PostgreSQL: every object, secrets by reference, probes,
# the security context, grace = 10 + 60 + 5.
for kind in Deployment Service PodDisruptionBudget ConfigMap ServiceMonitor PrometheusRule; do has "$out/replicas.yaml" "kind: $kind"; done
f=$out/replicas.yaml
has "$f" "aap2agui.json: \|-"
grep -q "sum(aap2agui_turns_in_flight)" "$f" || fail "replicas.yaml: the dashboard does not query aap2agui_turns_in_flight"
has "$f" "alert: aap2agui_RenewalLagHigh"
hasnt "$f" "AAPAGUI_"
has "$f" "replicas: 3"
has "$f" "terminationGracePeriodSeconds: 75"
has "$f" "--shutdown-delay=10s"
has "$f" "--shutdown-timeout=60s"
has "$f" "--agent-config=/etc/aapagui/agents.yaml"
has "$f" "--metrics-listen=0.0.0.0:9464"
has "$f" "path: /healthz"
has "$f" "path: /readyz"
has "$f" "runAsNonRoot: true"
has "$f" "readOnlyRootFilesystem: true"
has "$f" "allowPrivilegeEscalation: false"
has "$f" "name: AAP2AGUI_STORE"
has "$f" "name: aap2agui-postgres"
has "$f" "name: AAP2AGUI_API_KEY"
has "$f" "name: aap2agui-keys"
has "$f" "checksum/agent-config: [0-9a-f]{64}"
has "$f" "memory: 512Mi"
hasnt "$f" "insecure-open|kind: Secret$"

# agui2aap: its own prefix, its upstream key, the Secrets the chart makes.
f=$out/agui2aap.yaml
has "$f" 'command: \["/usr/local/bin/agui2aap"\]'
has "$f" "name: AGUI2AAP_UPSTREAM_API_KEY"
has "$f" "name: AGUI2AAP_STORE"
has "$f" "kind: Secret"
grep -c "^kind: Secret$" "$f" | grep -qx 2 || fail "agui2aap.yaml: want the two Secrets the chart makes"
hasnt "$f" "value: postgres://"

# What the chart refuses, with the reason.
refuses() {
	local want=$1; shift
	if "$helm" template x "$chart" "$@" >/dev/null 2>"$out/err"; then fail "rendered with $*"; fi
	grep -q "$want" "$out/err" || fail "with $*: $(cat "$out/err")"
}
refuses "needs the PostgreSQL store" --set replicaCount=2
refuses "program" --set program=aap2aap
refuses "agui2aap has no agents file" --set program=agui2aap --set agentConfig.agents=x
echo "chart: lint and template checks passed"
