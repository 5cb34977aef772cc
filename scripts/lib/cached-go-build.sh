# cached-go-build.sh: sourced by scripts/build-*.sh. cached_go_build builds
# a Go package of a tools module as a static binary, cached under
# $ORCH_CACHE_DIR (default /var/cache/orch) by the hash of the module's
# go.sum, go.mod and the link flags, and prints the binary's path on stdout
# (logs go to stderr through the caller's log function).
#
#   cached_go_build NAME SRC LDFLAGS PKG [OUT]
#     NAME     binary name (the cache file is NAME-<hash>)
#     SRC      the tools module directory
#     PKG      package to build, relative to SRC ("." for its root)
#     OUT      explicit output path (skips the cache naming)
#   FORCE=1 rebuilds even when the cached binary exists.

cached_go_build() {
	_name=$1 _src=$2 _ldflags=$3 _pkg=$4 _out=${5:-}
	if ! command -v go >/dev/null 2>&1; then
		log "go not found in PATH (run scripts/install-deps.sh)"
		exit 1
	fi
	_hash=$(printf '%s\n' "$_ldflags" | cat "$_src/go.sum" "$_src/go.mod" - | sha256sum | cut -d" " -f1)
	[ -n "$_out" ] || _out="${ORCH_CACHE_DIR:-/var/cache/orch}/$_name-$_hash"
	if [ -x "$_out" ] && [ "${FORCE:-0}" != 1 ]; then
		log "reusing $_out"
		printf '%s\n' "$_out"
		return 0
	fi
	mkdir -p "$(dirname -- "$_out")"
	_tmp="$_out.tmp.$$"
	trap 'rm -f "$_tmp"' EXIT INT TERM
	_start=$(date +%s)
	log "building $_name from $_src into $_out"
	(
		cd "$_src"
		CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" \
			go build -trimpath -buildvcs=false -ldflags "$_ldflags" -o "$_tmp" "$_pkg"
	)
	mv -f "$_tmp" "$_out"
	trap - EXIT INT TERM
	log "built in $(($(date +%s) - _start))s"
	printf '%s\n' "$_out"
}
