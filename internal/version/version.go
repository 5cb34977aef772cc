package version

import (
	"runtime"
	"strings"

	k8sversion "k8s.io/apimachinery/pkg/version"
)

// Build-time identity, set with -ldflags -X by the Makefile and
// scripts/release.sh. Left empty (a plain `go build .`), Get fills them in
// from the Go build info (module version and VCS stamp). These are
// link-time constants, not runtime state.
var (
	// Version is orch's own release version.
	Version = ""
	// GitCommit is the commit the binary was built from.
	GitCommit = ""
	// BuildDate is when the binary was built (RFC 3339).
	BuildDate = ""
)

// KubernetesMajor, KubernetesMinor and KubernetesPatch are the Kubernetes
// API version orch serves (the k8s.io/api release it is built against).
// They are the one source of the version /version, the Node's
// kubeletVersion and `orch version` report.
const (
	KubernetesMajor = "1"
	KubernetesMinor = "37"
	KubernetesPatch = "1"
)

// Fallbacks when neither -X nor the build info says anything.
const (
	devVersion  = "v0.0.0-dev"
	unknown     = "unknown"
	epochString = "1970-01-01T00:00:00Z"
)

// KubernetesVersion is the Kubernetes release orch serves, "v1.37.1".
func KubernetesVersion() string {
	return "v" + KubernetesMajor + "." + KubernetesMinor + "." + KubernetesPatch
}

// Kubernetes returns the version.Info that /version reports, in the form
// clients expect ("v1.37.1+orch-<version>").
func Kubernetes() k8sversion.Info {
	b := Get()
	tree := "clean"
	if strings.HasSuffix(b.GitCommit, "-dirty") {
		tree = "dirty"
	}
	return k8sversion.Info{
		Major:        KubernetesMajor,
		Minor:        KubernetesMinor,
		GitVersion:   KubernetesVersion() + "+orch-" + b.Version,
		GitCommit:    b.GitCommit,
		GitTreeState: tree,
		BuildDate:    b.BuildDate,
		GoVersion:    b.GoVersion,
		Compiler:     runtime.Compiler,
		Platform:     b.Platform,
	}
}

// String is what `orch version` and `orch --version` print: orch's
// version, the commit, the Kubernetes version served and the Go version.
func String() string {
	return Get().String()
}
