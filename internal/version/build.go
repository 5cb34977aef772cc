package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Build is orch's resolved build identity.
type Build struct {
	Version    string // orch's version, e.g. v0.3.0 or v0.0.0-5b01678a9c2d-dirty
	GitCommit  string // full commit hash, "-dirty" when built from a modified tree
	BuildDate  string // RFC 3339
	GoVersion  string // e.g. go1.26.8
	Platform   string // GOOS/GOARCH, e.g. linux/arm
	Kubernetes string // the Kubernetes version served, e.g. v1.37.1
}

// Get returns the running binary's build identity: the -X values where
// given, else what the Go toolchain stamped into the binary.
func Get() Build {
	bi, _ := debug.ReadBuildInfo()
	return resolve(Version, GitCommit, BuildDate, bi)
}

// resolve fills what the -X values leave empty from bi (nil: no build info).
func resolve(version, commit, date string, bi *debug.BuildInfo) Build {
	vcs := vcsInfo(bi)
	if commit == "" {
		commit = vcs.commit()
	}
	if version == "" {
		version = vcs.version(bi)
	}
	if date == "" {
		date = vcs.time
	}
	if date == "" {
		date = epochString
	}
	goVersion := runtime.Version()
	if bi != nil && bi.GoVersion != "" {
		goVersion = bi.GoVersion
	}
	return Build{Version: version, GitCommit: commit, BuildDate: date, GoVersion: goVersion,
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Kubernetes: KubernetesVersion()}
}

// String prints b as k3s does, one fact a line.
func (b Build) String() string {
	return fmt.Sprintf("orch version %s (%s)\ngit commit %s\nkubernetes version %s\ngo version %s %s\nbuilt %s\n",
		b.Version, short(b.GitCommit), b.GitCommit, b.Kubernetes, b.GoVersion, b.Platform, b.BuildDate)
}

// short is the first 8 characters of a commit hash ("-dirty" kept).
func short(commit string) string {
	hash, dirty := strings.CutSuffix(commit, "-dirty")
	if len(hash) > 8 {
		hash = hash[:8]
	}
	if dirty {
		return hash + "-dirty"
	}
	return hash
}

// vcs is what `go build` stamps from git (-buildvcs, on by default in a
// checkout; absent in `go test` binaries).
type vcs struct {
	revision, time string
	modified       bool
}

func vcsInfo(bi *debug.BuildInfo) vcs {
	var v vcs
	if bi == nil {
		return v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.revision = s.Value
		case "vcs.time":
			v.time = s.Value
		case "vcs.modified":
			v.modified = s.Value == "true"
		}
	}
	return v
}

func (v vcs) commit() string {
	switch {
	case v.revision == "":
		return unknown
	case v.modified:
		return v.revision + "-dirty"
	}
	return v.revision
}

// version is the main module's version the toolchain derived from git
// tags (a tag, or a pseudo-version, "+dirty" when modified), else
// v0.0.0-<12 hex of the commit>, else v0.0.0-dev.
func (v vcs) version(bi *debug.BuildInfo) string {
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	if v.revision == "" {
		return devVersion
	}
	rev := v.revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if v.modified {
		return "v0.0.0-" + rev + "-dirty"
	}
	return "v0.0.0-" + rev
}
