#!/usr/bin/env bash
# The XQ node's start in its Kubernetes pod (charts/xq): the node's .cfg files from the chart's
# ConfigMap and its API token from a Secret into a hot-deploy folder of the node's own (0700, files
# 0600: the node refuses a folder others may write, and sets aside a token others may read), the
# interposers onto the host, then ./xq serve. The files are copied again whenever the ConfigMap or
# Secret changes (the kubelet updates their volumes): FileInstall hands the change to Config Admin
# and the node applies it without a restart.
#
# Environment (the chart sets it): XQ_CONFIG_DIR (the ConfigMap's folder), XQ_TOKEN_FILE (optional,
# the token's file), XQ_HOT_DEPLOY (the hot-deploy folder), XQ_INTERPOSERS_OUT (optional, the host's
# interposer folder as mounted here), XQ_HOME (where the image has XQ, /opt/xq), XQ_SYNC_SECONDS (10).
set -euo pipefail

home=${XQ_HOME:-/opt/xq}
config=${XQ_CONFIG_DIR:-/etc/xq/config}
hot=${XQ_HOT_DEPLOY:-/var/lib/xq/bundles}
token_file=${XQ_TOKEN_FILE:-}
every=${XQ_SYNC_SECONDS:-10}
staging="$(dirname "$hot")/.staging"

say() { echo "xq node-start: $*" >&2; }

# One .cfg as it should be in the hot-deploy folder: the ConfigMap's, and for dev.xq.http the token.
wanted() {
  local name=$1
  if [ -f "$config/$name" ]; then cat "$config/$name"; fi
  if [ "$name" = dev.xq.http.cfg ] && [ -n "$token_file" ] && [ -s "$token_file" ]; then
    local t; t=$(tr -d '\r\n' < "$token_file")
    [[ "$t" =~ ^[A-Za-z0-9._~+/-]{16,}$ ]] || { say "the token in $token_file is not 16 or more of A-Z a-z 0-9 . _ ~ + / -: not used"; return 0; }
    printf 'token=%s\n' "$t"
  fi
}

# Brings the hot-deploy folder's .cfg files to what the ConfigMap and the token say; a file is
# replaced by a rename (never seen half written) and only when it differs.
sync() {
  local names f n
  names=$( { (cd "$config" && ls -1 -- *.cfg 2>/dev/null) || true; if [ -n "$token_file" ]; then echo dev.xq.http.cfg; fi; } | sort -u)
  for n in $names; do
    (umask 077 && wanted "$n" > "$staging/$n")
    if ! cmp -s "$staging/$n" "$hot/$n"; then
      chmod 0600 "$staging/$n" && mv -f "$staging/$n" "$hot/$n"
      say "$n written"
    else
      rm -f "$staging/$n"
    fi
  done
  for f in "$hot"/*.cfg; do
    [ -e "$f" ] || continue
    n=$(basename "$f")
    if ! grep -qxF -- "$n" <<<"$names"; then rm -f "$f"; say "$n removed"; fi
  done
}

mkdir -p "$hot" "$staging"
chmod 0700 "$hot" "$staging"
sync

# The interposers onto the host, where the device plugin's Allocate mounts them from (replaced by a
# rename, so that a process starting meanwhile loads an old one or the new one, never half of one).
if [ -n "${XQ_INTERPOSERS_OUT:-}" ]; then
  for lib in libxq-cuda.so libxq-hip.so; do
    cp "$home/interpose/target/$lib" "$XQ_INTERPOSERS_OUT/.$lib.new"
    chmod 0755 "$XQ_INTERPOSERS_OUT/.$lib.new"
    mv -f "$XQ_INTERPOSERS_OUT/.$lib.new" "$XQ_INTERPOSERS_OUT/$lib"
  done
  say "interposers copied to the host's $XQ_INTERPOSERS_OUT"
fi

if [ "$every" != 0 ]; then
  ( while sleep "$every"; do sync || say "copying the configuration failed; tried again in $every s"; done ) &
fi

exec "$home/xq" serve --bundles "$hot" "$@"
