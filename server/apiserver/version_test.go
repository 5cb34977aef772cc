package apiserver

import (
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/version"
)

func TestVersion(t *testing.T) {
	s, _ := newMetaTestServer(t, func(c *Config) { c.Version = version.Info{GitVersion: "v1.37.1+orch-v0.1.0", Major: "1", Minor: "37"} })
	var v version.Info
	metaDecode(t, metaGet(t, s, "/version", ""), &v)
	if v.GitVersion != "v1.37.1+orch-v0.1.0" || v.Major != "1" || v.Minor != "37" ||
		v.Platform != runtime.GOOS+"/"+runtime.GOARCH || v.GoVersion == "" {
		t.Errorf("version = %+v", v)
	}
}
