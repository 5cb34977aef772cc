// Package version holds orch's build identity. The values are set at link
// time by the Makefile (-ldflags -X); the defaults describe a dev build.
package version

import (
	"fmt"
	"runtime"

	k8sversion "k8s.io/apimachinery/pkg/version"
)

// Build-time identity. These are link-time constants, not runtime state.
var (
	// Version is orch's own release version.
	Version = "v0.1.0-dev"
	// GitCommit is the commit the binary was built from.
	GitCommit = "unknown"
	// BuildDate is when the binary was built (RFC 3339).
	BuildDate = "1970-01-01T00:00:00Z"
)

// KubernetesMajor and KubernetesMinor are the Kubernetes API version orch
// serves (the k8s.io/api release it is built against).
const (
	KubernetesMajor = "1"
	KubernetesMinor = "37"
)

// Kubernetes returns the version.Info that /version reports, in the form
// clients expect ("v1.37.1+orch-<version>").
func Kubernetes() k8sversion.Info {
	return k8sversion.Info{
		Major:        KubernetesMajor,
		Minor:        KubernetesMinor,
		GitVersion:   fmt.Sprintf("v%s.%s.1+orch-%s", KubernetesMajor, KubernetesMinor, Version),
		GitCommit:    GitCommit,
		GitTreeState: "clean",
		BuildDate:    BuildDate,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String is the one-line version `orch version` prints.
func String() string {
	return fmt.Sprintf("orch %s (commit %s, built %s, kubernetes v%s.%s, %s %s/%s)",
		Version, GitCommit, BuildDate, KubernetesMajor, KubernetesMinor,
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
