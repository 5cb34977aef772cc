package kubectl

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultAdminKubeconfig is where `orch server` writes the admin kubeconfig
// unless --write-kubeconfig says otherwise.
const DefaultAdminKubeconfig = "/etc/orch/orch.yaml"

// Env is what ChooseKubeconfig needs from the process: environment variables
// and whether a file can be read. OSEnv is the real one.
type Env interface {
	Getenv(key string) string
	// CanRead returns nil if path can be opened for reading.
	CanRead(path string) error
}

// OSEnv is the process environment and file system.
type OSEnv struct{}

// Getenv returns the environment variable key.
func (OSEnv) Getenv(key string) string { return os.Getenv(key) }

// CanRead opens path for reading and closes it.
func (OSEnv) CanRead(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// Choice is the outcome of ChooseKubeconfig.
type Choice struct {
	// Path is the kubeconfig to set as $KUBECONFIG; empty leaves kubectl's
	// own rules alone (the user chose, or ~/.kube/config applies).
	Path string
	// Denied is set when the admin kubeconfig exists but may not be read
	// (typically: not root, mode 0600) and there is no readable
	// ~/.kube/config either, so the caller can print a hint.
	Denied bool
}

// ChooseKubeconfig applies k3s's rule to kubectl's arguments: an explicit
// --kubeconfig flag or a non-empty $KUBECONFIG wins; otherwise the admin
// kubeconfig if readable; otherwise nothing (kubectl then reads
// ~/.kube/config).
func ChooseKubeconfig(args []string, env Env, admin string) Choice {
	if hasKubeconfigFlag(args) || env.Getenv("KUBECONFIG") != "" {
		return Choice{}
	}
	err := env.CanRead(admin)
	if err == nil {
		return Choice{Path: admin}
	}
	home := env.Getenv("HOME")
	homeOK := home != "" && env.CanRead(filepath.Join(home, ".kube", "config")) == nil
	return Choice{Denied: errors.Is(err, fs.ErrPermission) && !homeOK}
}

// hasKubeconfigFlag reports whether kubectl's arguments set --kubeconfig
// (as "--kubeconfig x" or "--kubeconfig=x"), before any "--".
func hasKubeconfigFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--kubeconfig" || strings.HasPrefix(a, "--kubeconfig=") {
			return true
		}
	}
	return false
}
