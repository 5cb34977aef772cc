// Package version holds orch's build identity: its own version, the git
// commit, the build date and the Kubernetes version it serves
// (KubernetesVersion, the one source /version, the Node's kubeletVersion
// and `orch version` use). The Makefile and scripts/release.sh set Version,
// GitCommit and BuildDate at link time (-ldflags -X); a plain `go build .`
// leaves them empty and Get reads the module version and VCS stamp the Go
// toolchain wrote into the binary instead.
package version
