package apiserver

import (
	"net/http"
	"runtime"

	"k8s.io/apimachinery/pkg/version"

	orchversion "github.com/orch/orch/internal/version"
)

// Kubernetes version orch answers when Config.Version leaves it empty
// (orch's own build identity is added by the caller: version.Kubernetes).
const (
	defaultGitVersion = "v" + orchversion.KubernetesMajor + "." + orchversion.KubernetesMinor + "." +
		orchversion.KubernetesPatch + "+orch"
	defaultMajor = orchversion.KubernetesMajor
	defaultMinor = orchversion.KubernetesMinor
)

// serveVersion answers /version with Config.Version, empty fields filled in.
func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) error {
	return writeDiscovery(w, r, "application/json", versionInfo(s.cfg.Version))
}

// versionInfo fills what v leaves empty: the Kubernetes version orch
// implements and the build's Go version and platform.
func versionInfo(v version.Info) *version.Info {
	if v.GitVersion == "" {
		v.GitVersion, v.Major, v.Minor = defaultGitVersion, defaultMajor, defaultMinor
	}
	if v.GitTreeState == "" {
		v.GitTreeState = "clean"
	}
	if v.BuildDate == "" {
		v.BuildDate = "1970-01-01T00:00:00Z"
	}
	if v.GoVersion == "" {
		v.GoVersion = runtime.Version()
	}
	if v.Compiler == "" {
		v.Compiler = runtime.Compiler
	}
	if v.Platform == "" {
		v.Platform = runtime.GOOS + "/" + runtime.GOARCH
	}
	return &v
}
