#!/usr/bin/env bash
# The XQ node's start in its Kubernetes pod (charts/xq): the node's .cfg files from the chart's
# ConfigMap and its API token from a Secret into a hot-deploy folder of the node's own (0700, files
# 0600: the node refuses a folder others may write, and sets aside a token others may read), the
# interposers onto the host, then ./xq serve. The files are copied again whenever the ConfigMap or
# Secret changes (the kubelet updates their volumes): FileInstall hands the change to Config Admin
# and the node applies it without a restart.
#
# When the pod stops (SIGTERM: `helm uninstall`, an upgrade, a drain), the node is stopped first,
# then what this script put on the host is removed: the interposers, their folder and the folders
# made for it up to the mounted base (e.g. /opt/xq/lib and /opt/xq under /opt), so that removing
# the chart leaves nothing behind on the host. The next pod makes and copies them again at its start.
#
# Environment (the chart sets it): XQ_CONFIG_DIR (the ConfigMap's folder), XQ_TOKEN_FILE (optional,
# the token's file), XQ_HOT_DEPLOY (the hot-deploy folder), XQ_INTERPOSERS_OUT (optional, the host's
# interposer folder as seen here, made here if missing), XQ_INTERPOSERS_BASE (the mounted host
# folder above it: the folders between are removed at the stop when empty), XQ_HOME (where the
# image has XQ, /opt/xq), XQ_SYNC_SECONDS (10).
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
libs="libxq-cuda.so libxq-hip.so"
if [ -n "${XQ_INTERPOSERS_OUT:-}" ]; then
  mkdir -p "$XQ_INTERPOSERS_OUT"
  chmod 0755 "$XQ_INTERPOSERS_OUT"
  for lib in $libs; do
    cp "$home/interpose/target/$lib" "$XQ_INTERPOSERS_OUT/.$lib.new"
    chmod 0755 "$XQ_INTERPOSERS_OUT/.$lib.new"
    mv -f "$XQ_INTERPOSERS_OUT/.$lib.new" "$XQ_INTERPOSERS_OUT/$lib"
  done
  say "interposers copied to the host's $XQ_INTERPOSERS_OUT"
fi

if [ "$every" != 0 ]; then
  ( while sleep "$every"; do sync || say "copying the configuration failed; tried again in $every s"; done ) &
  syncer=$!
fi

# What this pod put on the host goes when it stops. A process that has the interposer loaded keeps
# it (its mapping outlives the file); one starting before the next pod has copied it runs without
# XQ, as with no node.
cleanup() {
  [ -n "${XQ_INTERPOSERS_OUT:-}" ] || return 0
  local lib
  for lib in $libs; do rm -f "$XQ_INTERPOSERS_OUT/$lib" "$XQ_INTERPOSERS_OUT/.$lib.new"; done
  local d=$XQ_INTERPOSERS_OUT base=${XQ_INTERPOSERS_BASE:-}
  # the folder and the empty ones above it, never the base (a mount point here) or above
  while [ -n "$base" ] && [ "${d#"$base"/}" != "$d" ] && rmdir "$d" 2>/dev/null; do
    d=$(dirname "$d")
  done
  say "interposers removed from the host${base:+; folders below $base removed while empty}"
}

# The node runs as a child (not exec'd), so that the removal can follow its stop.
"$home/xq" serve --bundles "$hot" "$@" &
node=$!
trap 'say "stopping the node"; kill -TERM "$node" 2>/dev/null || true' TERM INT
rc=0
while kill -0 "$node" 2>/dev/null; do
  wait "$node" && rc=0 || rc=$?
done
[ -z "${syncer:-}" ] || kill "$syncer" 2>/dev/null || true
cleanup
exit "$rc"
