package integration

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/orch/orch/internal/version"
	"github.com/orch/orch/test/testutil"
)

func init() { register("version", testVersionCommand) }

// testVersionCommand checks that `orch version` of the server's binary and
// the server's /version name the same orch version, commit and Kubernetes
// version (one source: internal/version).
func testVersionCommand(t *testing.T, s *testutil.Server) {
	v, err := s.Clientset.Discovery().ServerVersion()
	must(t, err, "server version")
	k8s, orch, ok := strings.Cut(v.GitVersion, "+orch-")
	if !ok || k8s != version.KubernetesVersion() {
		t.Fatalf("/version gitVersion %q, want %s+orch-<orch version>", v.GitVersion, version.KubernetesVersion())
	}
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(testutil.Binary(t), arg).Output()
		must(t, err, "orch %s", arg)
		for _, want := range []string{"orch version " + orch + " (", "git commit " + v.GitCommit + "\n",
			"kubernetes version " + k8s + "\n", "go version " + v.GoVersion + " " + v.Platform + "\n"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("orch %s printed\n%s\nwant it to contain %q (from /version %+v)", arg, out, want, v)
			}
		}
	}
}
