package hostnames

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orch/orch/agent/dns"
)

func TestDefaultKeepsHistoricNames(t *testing.T) {
	want := Names{DataDir: "/var/lib/orch", RunDir: "/run/orch", ContainerdStateDir: "/run/orch/containerd",
		FIFODir: "/run/orch/fifo", Bridge: "orch0", DNSLink: "orch-dns", VXLANDevice: "orch.1",
		NetnsPrefix: "orch-", ChainPrefix: "ORCH-", CgroupRoot: "orch"}
	for _, dir := range []string{"", "/var/lib/orch", "/var/lib/orch/", "/var/lib//orch", "/var/lib/x/../orch"} {
		if got := For(dir); !reflect.DeepEqual(got, want) || !got.IsDefault() {
			t.Errorf("For(%q) = %+v, want %+v", dir, got, want)
		}
	}
}

func TestDerivedNames(t *testing.T) {
	n := For("/tmp/orch-a")
	if n.IsDefault() || len(n.Suffix) != suffixLen {
		t.Fatalf("suffix %q", n.Suffix)
	}
	s, up := n.Suffix, strings.ToUpper(n.Suffix)
	want := Names{DataDir: "/tmp/orch-a", Suffix: s, RunDir: "/run/orch-" + s, ContainerdStateDir: "/run/orch-" + s + "/containerd",
		FIFODir: "/run/orch-" + s + "/fifo", Bridge: "orch" + s, DNSLink: "orch" + s + "-dns", VXLANDevice: "orch" + s + ".1",
		NetnsPrefix: "orch" + s + "-", ChainPrefix: "ORCH" + up + "-", CgroupRoot: "orch-" + s}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("For = %+v\nwant %+v", n, want)
	}
	if again := For("/tmp/orch-a/"); !reflect.DeepEqual(again, n) {
		t.Errorf("not deterministic: %+v vs %+v", again, n)
	}
	if other := For("/tmp/orch-b"); other.Suffix == n.Suffix {
		t.Errorf("two data dirs share names: %+v %+v", other, n)
	}
}

func TestRelativeDataDir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := For("x/y"), For(filepath.Join(wd, "x", "y")); !reflect.DeepEqual(got, want) {
		t.Errorf("relative %+v != absolute %+v", got, want)
	}
}

// TestLimits checks the kernel's and orch's limits over many data dirs,
// that the DNS link is the one agent/dns derives from the bridge, and
// that no derived name falls under a default name's pattern (which
// orch-killall.sh for the default instance would then clean up).
func TestLimits(t *testing.T) {
	def := For("")
	for i := 0; i < 2000; i++ {
		n := For("/srv/orch-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + filepath.Join("/", strings.Repeat("d", i)))
		for _, l := range []string{n.Bridge, n.DNSLink, n.VXLANDevice} {
			if len(l) > 15 {
				t.Fatalf("interface name %q longer than 15", l)
			}
		}
		if len(n.ChainPrefix) > 14 || len(n.ChainPrefix+"POSTROUTING") > 28 {
			t.Fatalf("chain prefix %q too long", n.ChainPrefix)
		}
		if n.DNSLink != dns.LinkName(n.Bridge) {
			t.Fatalf("DNS link %q, agent/dns derives %q", n.DNSLink, dns.LinkName(n.Bridge))
		}
		for _, p := range [][2]string{{n.NetnsPrefix, def.NetnsPrefix}, {n.ChainPrefix, def.ChainPrefix},
			{n.CgroupRoot + "/", def.CgroupRoot + "/"}, {n.RunDir + "/", def.RunDir + "/"}} {
			if strings.HasPrefix(p[0], p[1]) {
				t.Fatalf("%q falls under the default %q", p[0], p[1])
			}
		}
	}
}

func TestEnv(t *testing.T) {
	if got := For("").Shell(); got != "ORCH_DATA_DIR=/var/lib/orch\nORCH_RUN_DIR=/run/orch\nORCH_BRIDGE=orch0\n"+
		"ORCH_DNS_LINK=orch-dns\nORCH_VXLAN_DEVICE=orch.1\nORCH_NETNS_PREFIX=orch-\nORCH_CHAIN_PREFIX=ORCH-\nORCH_CGROUP_ROOT=orch\n" {
		t.Errorf("default:\n%s", got)
	}
	n := For("/srv/my orch's")
	sh := n.Shell()
	if !strings.Contains(sh, `ORCH_DATA_DIR='/srv/my orch'\''s'`+"\n") || !strings.HasSuffix(sh, "ORCH_SERVICES=\n") {
		t.Errorf("quoting:\n%s", sh)
	}
	if env := n.Env(); env[0] != "ORCH_DATA_DIR=/srv/my orch's" || len(env) != 9 {
		t.Errorf("env %q", env)
	}
}
