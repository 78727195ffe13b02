{{/* The release's name, cut to what Kubernetes names allow. */}}
{{- define "aapagui.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Values.program .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "aapagui.selectorLabels" -}}
app.kubernetes.io/name: {{ .Values.program }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "aapagui.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "aapagui.selectorLabels" . }}
app.kubernetes.io/version: {{ default .Chart.AppVersion .Values.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: aapagui
{{- end -}}

{{/* The program's environment variable prefix: AAP2AGUI or AGUI2AAP. */}}
{{- define "aapagui.env" -}}
{{- upper .Values.program -}}
{{- end -}}

{{/* The Secret of the API keys: the user's, or the chart's. */}}
{{- define "aapagui.apiKeysSecret" -}}
{{- default (printf "%s-api-keys" (include "aapagui.fullname" .)) .Values.apiKeys.existingSecret -}}
{{- end -}}

{{/* The Secret of the PostgreSQL DSN: the user's, or the chart's. */}}
{{- define "aapagui.postgresSecret" -}}
{{- default (printf "%s-postgres" (include "aapagui.fullname" .)) .Values.store.postgres.existingSecret -}}
{{- end -}}

{{- define "aapagui.hasKeys" -}}
{{- if or .Values.apiKeys.existingSecret .Values.apiKeys.values }}true{{ end -}}
{{- end -}}

{{- define "aapagui.hasPostgres" -}}
{{- if or .Values.store.postgres.existingSecret .Values.store.postgres.dsn }}true{{ end -}}
{{- end -}}

{{/* Checks of values that no schema can express. */}}
{{- define "aapagui.check" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not (include "aapagui.hasPostgres" .)) -}}
{{- fail "replicaCount above 1 needs the PostgreSQL store: set store.postgres.existingSecret (or store.postgres.dsn); SQLite serves one replica" -}}
{{- end -}}
{{- if and .Values.agentConfig (ne .Values.program "aap2agui") -}}
{{- fail "agentConfig is aap2agui's --agent-config: agui2aap has no agents file" -}}
{{- end -}}
{{- if and .Values.upstreamApiKey.existingSecret (ne .Values.program "agui2aap") -}}
{{- fail "upstreamApiKey is agui2aap's --upstream-api-key: aap2agui sends upstream headers from agentConfig" -}}
{{- end -}}
{{- end -}}

{{/*
A file of files/ for the program's metrics: AAPAGUI_UNIT becomes the
program and its unit (aap2agui_turn, agui2aap_run), AAPAGUI_ the program's
prefix (aap2agui_, agui2aap_).
*/}}
{{- define "aapagui.metricsFile" -}}
{{- $unit := ternary "turn" "run" (eq .ctx.Values.program "aap2agui") -}}
{{- .ctx.Files.Get .file | replace "AAPAGUI_UNIT" (printf "%s_%s" .ctx.Values.program $unit) | replace "AAPAGUI_" (printf "%s_" .ctx.Values.program) -}}
{{- end -}}
