package agent

import (
	"testing"

	"github.com/orch/orch/internal/hostnames"
)

// TestDefaultsHostNames checks that the default data dir keeps orch's
// historic names, another data dir gets its derived ones, and the hidden
// knobs tests set still win.
func TestDefaultsHostNames(t *testing.T) {
	var def Config
	def.Defaults()
	want := names{BridgeName: "orch0", ContainerdStateDir: "/run/orch/containerd", ContainerdNS: "orch", CgroupRoot: "orch",
		NetnsPrefix: "orch-", ChainPrefix: "ORCH-", FIFODir: "/run/orch/fifo", VXLANDevice: "orch.1"}
	if got := hostFields(def); got != want {
		t.Errorf("default data dir: %+v, want %+v", got, want)
	}

	other := Config{DataDir: "/srv/orch-b"}
	other.Defaults()
	n := hostnames.For("/srv/orch-b")
	want = names{BridgeName: n.Bridge, ContainerdStateDir: n.ContainerdStateDir, ContainerdNS: "orch", CgroupRoot: n.CgroupRoot,
		NetnsPrefix: n.NetnsPrefix, ChainPrefix: n.ChainPrefix, FIFODir: n.FIFODir, VXLANDevice: n.VXLANDevice}
	if got := hostFields(other); got != want || n.Bridge == "orch0" {
		t.Errorf("other data dir: %+v, want %+v", got, want)
	}

	knobs := Config{BridgeName: "b1", ContainerdStateDir: "/run/t/c", ContainerdNS: "t", CgroupRoot: "t",
		NetnsPrefix: "t-", ChainPrefix: "T-", FIFODir: "/run/t/f", VXLANDevice: "t.1"}
	set := knobs
	set.DataDir = "/srv/orch-b"
	set.Defaults()
	if got := hostFields(set); got != hostFields(knobs) {
		t.Errorf("explicit knobs overridden: %+v, want %+v", got, knobs)
	}
}

// names are the host-global fields of a Config.
type names struct {
	BridgeName, ContainerdStateDir, ContainerdNS, CgroupRoot, NetnsPrefix, ChainPrefix, FIFODir, VXLANDevice string
}

func hostFields(c Config) names {
	return names{BridgeName: c.BridgeName, ContainerdStateDir: c.ContainerdStateDir, ContainerdNS: c.ContainerdNS,
		CgroupRoot: c.CgroupRoot, NetnsPrefix: c.NetnsPrefix, ChainPrefix: c.ChainPrefix, FIFODir: c.FIFODir,
		VXLANDevice: c.VXLANDevice}
}
