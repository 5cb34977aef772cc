#!/usr/bin/env bash
# Memory of `orch server --disable-agent` after many objects (issue 14):
# the API suite's create load (`bench load --levels 1,16,64`, ~1 KiB
# ConfigMaps for 15 s per level) plus 2,000 Secrets of ~8 KiB applied with
# the embedded kubectl (as Helm's release Secrets), then, after 60 s,
# /proc/<pid>/status and a heap profile (in-use bytes after a GC).
#
#   bench/memafterload.sh ORCH_BINARY OUT_DIR
#
# Loopback only (ports 16443 API, 16444 Raft, 16060 pprof). Writes
# OUT_DIR/{rss-before,rss-after,load,counts,heap-top}.txt and heap.pb.
set -euo pipefail

bin="$(realpath "$1")"
out="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$out"
work="$(mktemp -d /tmp/orch-memafterload.XXXXXX)"
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$root/tools/bench" && CGO_ENABLED=0 go build -trimpath -o "$work/bench" ./cmd/bench)
kc="$work/kubeconfig.yaml"
"$bin" server --data-dir "$work/data" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
  --https-listen-port 16443 --raft-port 16444 --write-kubeconfig "$kc" --disable-agent \
  --pprof-address 127.0.0.1:16060 > "$out/orch.log" 2>&1 &
pid=$!
for _ in $(seq 120); do
  "$bin" kubectl --kubeconfig "$kc" get --raw /readyz > /dev/null 2>&1 && break
  sleep 1
done
sleep 20 # the controllers start and sync
grep -E 'VmRSS|RssAnon|RssFile' "/proc/$pid/status" > "$out/rss-before.txt"
"$work/bench" load --kubeconfig "$kc" --levels 1,16,64 --duration 15s > "$out/load.txt" 2> "$out/load.err"

# 2,000 Secrets of 6 KiB random bytes (8 KiB base64), type helm.sh/release.v1.
{
  echo "apiVersion: v1"
  echo "kind: List"
  echo "items:"
  for i in $(seq 0 1999); do
    printf -- '- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: rel-%d\n    namespace: default\n  type: helm.sh/release.v1\n  data:\n    release: %s\n' \
      "$i" "$(head -c 6144 /dev/urandom | base64 -w0 | base64 -w0)"
  done
} > "$work/secrets.yaml"
"$bin" kubectl --kubeconfig "$kc" apply -f "$work/secrets.yaml" > /dev/null
n="$("$bin" kubectl --kubeconfig "$kc" get --raw '/api/v1/configmaps?limit=1' |
  sed -n 's/.*"remainingItemCount":\([0-9]*\).*/\1/p')"
echo "ConfigMaps: $((n + 1)), Secrets: 2,000 applied" > "$out/counts.txt"

sleep 60
grep -E 'VmRSS|RssAnon|RssFile' "/proc/$pid/status" > "$out/rss-after.txt"
curl -s "http://127.0.0.1:16060/debug/pprof/heap?gc=1" > "$out/heap.pb"
go tool pprof -sample_index=inuse_space -top -nodecount=25 "$out/heap.pb" > "$out/heap-top.txt" 2> /dev/null || true
cat "$out/counts.txt" "$out/rss-after.txt"
grep -m1 'Showing nodes' "$out/heap-top.txt" || true
