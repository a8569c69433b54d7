{{/* The name of the chart, or nameOverride. */}}
{{- define "servicewatch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The prefix of every object's name: the release name, with the chart's
name unless it already holds it. */}}
{{- define "servicewatch.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "servicewatch.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "servicewatch.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: servicewatch
{{- end }}

{{/* The manager's pods; the instance tells shards apart. */}}
{{- define "servicewatch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "servicewatch.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end }}

{{- define "servicewatch.serviceAccountName" -}}
{{ include "servicewatch.fullname" . }}-controller-manager
{{- end }}

{{- define "servicewatch.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The rules of a Role or ClusterRole of config/rbac, copied into files/rbac
by `make chart-sync`, so the chart grants exactly what config/ does. */}}
{{- define "servicewatch.rulesOf" -}}
{{- $role := .Files.Get (printf "files/rbac/%s" .file) | fromYaml }}
{{- if not $role.rules }}
{{- fail (printf "files/rbac/%s has no rules: run make chart-sync" .file) }}
{{- end }}
{{- toYaml $role.rules }}
{{- end }}

{{/* The manager's subject in every binding. */}}
{{- define "servicewatch.subjects" -}}
- kind: ServiceAccount
  name: {{ include "servicewatch.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
