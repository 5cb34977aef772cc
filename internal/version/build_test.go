package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func stamped(mainVersion, rev, modified, vcsTime string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.99.0", Main: debug.Module{Path: "github.com/orch/orch", Version: mainVersion}}
	if rev != "" {
		bi.Settings = append(bi.Settings,
			debug.BuildSetting{Key: "vcs", Value: "git"},
			debug.BuildSetting{Key: "vcs.revision", Value: rev},
			debug.BuildSetting{Key: "vcs.time", Value: vcsTime},
			debug.BuildSetting{Key: "vcs.modified", Value: modified})
	}
	return bi
}

const rev = "5b01678a9c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f"

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name                              string
		version, commit, date             string
		bi                                *debug.BuildInfo
		wantVersion, wantCommit, wantDate string
	}{
		{name: "ldflags win over build info", version: "v1.2.3", commit: "abc", date: "2026-01-02T03:04:05Z",
			bi:          stamped("v0.0.0-x", rev, "true", "2025-01-01T00:00:00Z"),
			wantVersion: "v1.2.3", wantCommit: "abc", wantDate: "2026-01-02T03:04:05Z"},
		{name: "go build from a tagged clean checkout", bi: stamped("v0.4.0", rev, "false", "2026-11-27T00:00:00Z"),
			wantVersion: "v0.4.0", wantCommit: rev, wantDate: "2026-11-27T00:00:00Z"},
		{name: "go build, pseudo-version, modified", bi: stamped("v0.0.0-20261127000000-5b01678a9c2d+dirty", rev, "true", "2026-11-27T00:00:00Z"),
			wantVersion: "v0.0.0-20261127000000-5b01678a9c2d+dirty", wantCommit: rev + "-dirty", wantDate: "2026-11-27T00:00:00Z"},
		{name: "go build, VCS stamp but no module version", bi: stamped("(devel)", rev, "false", "2026-11-27T00:00:00Z"),
			wantVersion: "v0.0.0-5b01678a9c2d", wantCommit: rev, wantDate: "2026-11-27T00:00:00Z"},
		{name: "modified tree without module version", bi: stamped("(devel)", rev, "true", ""),
			wantVersion: "v0.0.0-5b01678a9c2d-dirty", wantCommit: rev + "-dirty", wantDate: epochString},
		{name: "no VCS stamp (go test, -buildvcs=false, a git worktree)", bi: stamped("(devel)", "", "", ""),
			wantVersion: devVersion, wantCommit: unknown, wantDate: epochString},
		{name: "no build info at all", wantVersion: devVersion, wantCommit: unknown, wantDate: epochString},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := resolve(tc.version, tc.commit, tc.date, tc.bi)
			if b.Version != tc.wantVersion || b.GitCommit != tc.wantCommit || b.BuildDate != tc.wantDate {
				t.Errorf("resolve = %q %q %q, want %q %q %q", b.Version, b.GitCommit, b.BuildDate,
					tc.wantVersion, tc.wantCommit, tc.wantDate)
			}
			if b.Kubernetes != KubernetesVersion() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH {
				t.Errorf("resolve = %+v: wrong Kubernetes version or platform", b)
			}
		})
	}
}

func TestBuildString(t *testing.T) {
	b := Build{Version: "v1.2.3", GitCommit: rev + "-dirty", BuildDate: "2026-11-27T00:00:00Z",
		GoVersion: "go1.99.0", Platform: "linux/arm", Kubernetes: "v1.37.1"}
	want := "orch version v1.2.3 (5b01678a-dirty)\n" +
		"git commit " + rev + "-dirty\n" +
		"kubernetes version v1.37.1\n" +
		"go version go1.99.0 linux/arm\n" +
		"built 2026-11-27T00:00:00Z\n"
	if got := b.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}

// TestKubernetesOneSource checks that /version's gitVersion and `orch
// version` name the same Kubernetes release.
func TestKubernetesOneSource(t *testing.T) {
	if KubernetesVersion() != "v"+KubernetesMajor+"."+KubernetesMinor+"."+KubernetesPatch {
		t.Fatalf("KubernetesVersion() = %q", KubernetesVersion())
	}
	info := Kubernetes()
	if !strings.HasPrefix(info.GitVersion, KubernetesVersion()+"+orch-") {
		t.Errorf("Kubernetes().GitVersion = %q, want prefix %q", info.GitVersion, KubernetesVersion()+"+orch-")
	}
	if !strings.Contains(String(), "kubernetes version "+KubernetesVersion()+"\n") {
		t.Errorf("String() = %q lacks the Kubernetes version", String())
	}
}
