{{/* The release's base name, at most 63 characters (a DNS label). */}}
{{- define "xq.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "xq.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "xq.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "xq.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: call with (list . "node") */}}
{{- define "xq.selector" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ include "xq.name" $ }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "xq.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "xq.webhookName" -}}{{ include "xq.fullname" . }}-webhook{{- end -}}
{{- define "xq.metricsSecret" -}}{{ .Values.metrics.existingSecret | default (printf "%s-metrics" (include "xq.fullname" .)) }}{{- end -}}

{{/* Where things are inside the images' containers (deploy/image/Dockerfile). */}}
{{- define "xq.java" -}}/opt/xq/.jre/bin/java{{- end -}}
{{- define "xq.k8sJar" -}}/opt/xq/k8s/target/xq-k8s.jar{{- end -}}
{{/* The node's socket folder inside every container: fixed, since the node tells its processes
     where its shared memory lies beside the socket, and the device plugin mounts it at /run/xq. */}}
{{- define "xq.containerRun" -}}/run/xq{{- end -}}
