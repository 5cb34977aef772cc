#!/usr/bin/env bash
# `make bench`: measures orch against its baselines on this machine, loopback only.
#   suite "api":  orch server vs kube-apiserver v1.37.1 on kine/SQLite (k3s's datastore)
#   suite "pods": orch server with its agent (tools/bench/pods): memory (orch RSS,
#                 whole-node PSS with containerd and shims) and CPU after 3 min with 10
#                 probed pods, 30 pods at once to all Ready, and 30 pods one at a time
#                 vs containerd's own create+start (root, containerd, runc,
#                 busybox-static needed)
#
#   bench/run.sh [pods|api] [extra args]   first argument picks one suite
#
# Env:
#   BENCH_SUITE     "api pods" (default; "pods" is skipped with a note when not root
#                   or containerd/runc/busybox are missing), or just one of them
#   ORCH_BIN        use this orch binary instead of building /work tree's main package
#   BENCH_TARGETS   "orch datastore baseline" (default), or any of: orch (one server),
#                   orch-ha3 (three servers on loopback, clients round-robin over their
#                   API endpoints, so most writes are forwarded by followers),
#                   orch-ha3-leader (three servers, every client on the Raft leader),
#                   datastore (orch's Raft + bbolt store alone, in process: the datastore
#                   package's BenchmarkCreateParallel at the same levels), baseline;
#                   measured in that order (orch setups first), e.g.
#                   BENCH_TARGETS="orch orch-ha3"
#   BENCH_OUT       results directory (default bench/out): results.md, results.json, logs/
#   ORCH_CACHE_DIR  cache root for the baseline binaries (default /var/cache/orch)
#   BENCH_PROFILE=1 also take a Go CPU profile of orch (its --pprof-address, loopback)
#                   during the largest create level: $BENCH_OUT/orch-cpu.pprof and
#                   orch-cpu-top.txt (flat) / orch-cpu-cum.txt (cumulative)
#   BENCH_PERF=1    the same with `perf record -g` instead: $BENCH_OUT/orch-perf.txt
#   BENCH_RUNS=3    run the pods suite that many times (pods-<i>.md/.json) and write
#                   each figure's median to pods-summary.md (`podbench summarize`)
# Extra arguments go to `bench run` (e.g. --duration 5s --idle 10s --levels 1,16),
# or to `podbench` when the pods suite runs alone (e.g. --pods 10 --idle 10s).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
suites="${BENCH_SUITE:-api pods}"
if [[ "${1:-}" == pods || "${1:-}" == api ]]; then
  suites="$1"
  shift
fi
targets="${BENCH_TARGETS:-orch datastore baseline}"
out="${BENCH_OUT:-$root/bench/out}"
work="$(mktemp -d "${TMPDIR:-/tmp}/orch-bench.XXXXXX")"
bench_pid=""

cleanup() {
  local rc=$?
  if [[ -n "$bench_pid" ]] && kill -0 "$bench_pid" 2>/dev/null; then
    # bench stops its servers on SIGTERM; the kernel kills them if it dies (Pdeathsig).
    # podbench also deletes its pods and sweeps the host then: give it time.
    kill -TERM "$bench_pid" 2>/dev/null || true
    for _ in $(seq 1 240); do kill -0 "$bench_pid" 2>/dev/null || break; sleep 1; done
    kill -KILL "$bench_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log() { echo "bench/run: $*" >&2; }

machine() {
  local src fstype disk fsync
  read -r src fstype < <(df -PT "$work" | awk 'NR==2 {print $1, $2}')
  disk="$(lsblk -dno ROTA,SIZE "$src" 2>/dev/null | awk '{print ($1=="1"?"rotational":"non-rotational")", "$2}')"
  # Synchronous 4 KiB writes per second: what a datastore's fsync costs here.
  fsync="$(dd if=/dev/zero of="$work/fsync-probe" bs=4k count=500 oflag=dsync 2>&1 \
    | awk '/copied/ {for (i=1;i<=NF;i++) if ($i ~ /^s,?$/) t=$(i-1); printf "%.0f", 500/t}')"
  rm -f "$work/fsync-probe"
  printf '%s CPUs (%s), %s RAM, kernel %s, %s; %s on %s (%s), %s fsync-ed 4 KiB writes/s (dd oflag=dsync); load average at start %s' \
    "$(nproc)" "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)" \
    "$(free -h | awk '/^Mem:/ {print $2}')" "$(uname -r)" "$(go env GOVERSION)" \
    "$fstype" "$src" "$disk" "$fsync" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

run_api() {
  local start=$SECONDS t orch_targets=()
  declare -A bin
  for t in $targets; do
    case "$t" in
      orch | orch-ha[2-9] | orch-ha[2-9]-leader) orch_targets+=("$t") ;;
      baseline | datastore) ;;
      *) log "unknown target $t (want orch, orch-haN, orch-haN-leader, datastore or baseline)"; exit 2 ;;
    esac
  done
  if [[ " $targets " == *" baseline "* ]]; then
    while IFS='=' read -r k v; do bin[$k]="$v"; done < <("$root/bench/build.sh")
    log "baseline binaries and bench tool ready in $((SECONDS - start)) s"
  else
    # No baseline: only the bench tool (kube-apiserver takes long to build cold).
    mkdir -p "$work/bin"
    (cd "$root/tools/bench" && CGO_ENABLED=0 go build -trimpath -o "$work/bin/bench" ./cmd/bench)
    bin[BENCH]="$work/bin/bench"
    log "bench tool ready in $((SECONDS - start)) s"
  fi

  args=(--work-dir "$work")
  if ((${#orch_targets[@]} > 0)); then
    orch="$(orch_bin)"
    args+=(--orch "$orch" --orch-targets "$(IFS=,; echo "${orch_targets[*]}")")
  fi
  if [[ " $targets " == *" datastore "* ]]; then
    # The store alone: the datastore package's own BenchmarkCreateParallel.
    mkdir -p "$work/bin"
    (cd "$root" && go test -c -o "$work/bin/datastore.test" ./datastore/)
    args+=(--datastore-test "$work/bin/datastore.test")
  fi
  if [[ " $targets " == *" baseline "* ]]; then
    args+=(--kube-apiserver "${bin[KUBE_APISERVER]}" --kine "${bin[KINE]}")
  fi

  mkdir -p "$out/logs"
  rm -f "$out"/results.* "$out"/logs/orch*.log "$out"/logs/baseline*.log "$out"/logs/kine*.log "$out"/logs/kube*.log "$out"/orch.perf.data "$out"/orch-perf*.txt "$out"/orch-cpu*
  if [[ "${BENCH_PROFILE:-0}" == 1 && -n "${orch:-}" ]]; then
    args+=(--pprof-out "$out/orch-cpu.pprof")
  fi
  if [[ "${BENCH_PERF:-0}" == 1 && -n "${orch:-}" ]]; then
    args+=(--perf-out "$out/orch.perf.data")
  fi
  "${bin[BENCH]}" run "${args[@]}" \
    --machine "$(machine)" \
    --out-json "$out/results.json" --out-md "$out/results.md" --keep-logs "$out/logs" \
    "$@" &
  bench_pid=$!
  wait "$bench_pid"
  bench_pid=""
  if [[ -s "$out/orch-cpu.pprof" ]]; then
    go tool pprof -top -nodecount=45 "$orch" "$out/orch-cpu.pprof" > "$out/orch-cpu-top.txt" 2>&1 || true
    go tool pprof -top -cum -nodecount=60 "$orch" "$out/orch-cpu.pprof" > "$out/orch-cpu-cum.txt" 2>&1 || true
    log "CPU profile: $out/orch-cpu-top.txt, $out/orch-cpu-cum.txt"
  fi
  if [[ -s "$out/orch.perf.data" ]]; then
    perf report -i "$out/orch.perf.data" --stdio --no-children -g none --percent-limit 0.7 \
      --sort symbol 2>/dev/null | grep -v '^$' | head -120 > "$out/orch-perf.txt" || true
    perf report -i "$out/orch.perf.data" --stdio --children --percent-limit 3 \
      --sort symbol -g none 2>/dev/null | grep -v '^$' | head -80 > "$out/orch-perf-children.txt" || true
    log "CPU profile: $out/orch-perf.txt, $out/orch-perf-children.txt"
  fi
  log "results: $out/results.md (and results.json, logs/)"
}

# orch_bin: ORCH_BIN, or orch built from this tree into the work dir (once).
orch_bin() {
  if [[ -n "${ORCH_BIN:-}" ]]; then
    echo "$ORCH_BIN"
    return
  fi
  if [[ ! -x "$work/bin/orch" ]]; then
    mkdir -p "$work/bin"
    log "building orch"
    # shellcheck disable=SC2046 # the flags are words
    (cd "$root" && CGO_ENABLED=0 go build $("$root/scripts/lib/go-build-flags.sh") -o "$work/bin/orch" .)
  fi
  echo "$work/bin/orch"
}

pods_missing() {
  [[ "$(id -u)" == 0 ]] || { echo "not root"; return; }
  local b
  for b in containerd runc containerd-shim-runc-v2 iptables; do
    command -v "$b" >/dev/null 2>&1 || { echo "$b not in PATH"; return; }
  done
  [[ -x /bin/busybox ]] || echo "/bin/busybox missing (apt-get install busybox-static)"
}

run_pods() {
  local why
  why="$(pods_missing)"
  if [[ -n "$why" ]]; then
    log "pods suite skipped: $why (scripts/install-deps.sh installs containerd and runc)"
    return
  fi
  local orch
  orch="$(orch_bin)"
  mkdir -p "$work/bin" "$out/logs"
  log "building tools/bench/pods"
  (cd "$root/tools/bench/pods" && CGO_ENABLED=0 go build -trimpath -o "$work/bin/podbench" .)
  rm -f "$out"/logs/podbench-*.log "$out"/pods*.md "$out"/pods*.json
  local runs="${BENCH_RUNS:-1}" i jsons=()
  for ((i = 1; i <= runs; i++)); do
    local name=pods
    ((runs > 1)) && name="pods-$i"
    "$work/bin/podbench" --orch "$orch" --work-dir "$work/pods" --machine "$(machine)" \
      --out-md "$out/$name.md" --out-json "$out/$name.json" --keep-logs "$out/logs" "$@" &
    bench_pid=$!
    wait "$bench_pid"
    bench_pid=""
    jsons+=("$out/$name.json")
    log "pod results: $out/$name.md (and $name.json, logs/podbench-*.log)"
  done
  if ((runs > 1)); then
    "$work/bin/podbench" summarize "${jsons[@]}" > "$out/pods-summary.md"
    log "medians of the $runs runs: $out/pods-summary.md"
  fi
}

api_args=() pods_args=()
if [[ "$suites" == api ]]; then api_args=("$@"); fi
if [[ "$suites" == pods ]]; then pods_args=("$@"); fi
if [[ "$suites" != api && "$suites" != pods ]]; then api_args=("$@"); fi
for suite in $suites; do
  case "$suite" in
    api) run_api ${api_args[@]+"${api_args[@]}"} ;;
    pods) run_pods ${pods_args[@]+"${pods_args[@]}"} ;;
    *) log "unknown suite $suite (want api or pods)"; exit 2 ;;
  esac
done
