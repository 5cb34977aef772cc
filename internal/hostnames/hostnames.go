package hostnames

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
)

// DefaultDataDir is orch's default --data-dir; it keeps the default names.
const DefaultDataDir = "/var/lib/orch"

// suffixLen is how many hex characters of the data dir's hash go into the
// names: 24 bits, so two test instances practically never collide, and
// still short enough for every name to fit (the DNS link orch<6>-dns is 14
// characters).
const suffixLen = 6

// Names are the host-global names of one orch instance.
type Names struct {
	// DataDir is the absolute, cleaned data dir the names derive from.
	DataDir string
	// Suffix is "" for the default data dir, else 6 hex characters.
	Suffix string
	// RunDir holds the managed containerd's state and socket
	// (ContainerdStateDir) and the containers' stdio FIFOs (FIFODir).
	RunDir             string
	ContainerdStateDir string
	FIFODir            string
	Bridge             string // pod bridge
	DNSLink            string // dummy interface holding the cluster DNS IP
	// VXLANDevice is the VXLAN device's name. Its VNI stays 1 in every
	// instance: every node of a cluster must use the same VNI, and nodes'
	// data dirs may differ.
	VXLANDevice string
	NetnsPrefix string // pod network namespaces under /run/netns
	ChainPrefix string // iptables chains
	CgroupRoot  string // parent cgroup of the QoS tiers and pods
}

// For returns the names of the instance whose data dir is dataDir (""
// is the default). A relative dataDir is taken from the working directory.
func For(dataDir string) Names {
	dir := Clean(dataDir)
	if dir == DefaultDataDir {
		return named(dir, "", "/run/orch", "orch0", "orch-dns", "orch.1", "orch-", "ORCH-", "orch")
	}
	sum := sha256.Sum256([]byte(dir))
	sfx := hex.EncodeToString(sum[:])[:suffixLen]
	return named(dir, sfx, "/run/orch-"+sfx, "orch"+sfx, "orch"+sfx+"-dns", "orch"+sfx+".1",
		"orch"+sfx+"-", "ORCH"+strings.ToUpper(sfx)+"-", "orch-"+sfx)
}

func named(dir, sfx, run, bridge, dns, vxlan, netns, chain, cgroup string) Names {
	return Names{DataDir: dir, Suffix: sfx, RunDir: run, ContainerdStateDir: filepath.Join(run, "containerd"),
		FIFODir: filepath.Join(run, "fifo"), Bridge: bridge, DNSLink: dns, VXLANDevice: vxlan,
		NetnsPrefix: netns, ChainPrefix: chain, CgroupRoot: cgroup}
}

// Clean is dataDir absolute and cleaned ("" is the default data dir), the
// form the names derive from: /var/lib/orch/ and /var/lib//orch are the
// default instance too.
func Clean(dataDir string) string {
	if dataDir == "" {
		return DefaultDataDir
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		return abs
	}
	return filepath.Clean(dataDir)
}

// IsDefault tells whether the names are the default instance's.
func (n Names) IsDefault() bool { return n.Suffix == "" }

// Env is the names as the KEY=VALUE settings orch-killall.sh reads, in a
// fixed order. A non-default instance also gets ORCH_SERVICES= (empty), so
// the script does not stop the systemd units of the default instance.
func (n Names) Env() []string {
	kv := []string{
		"ORCH_DATA_DIR=" + n.DataDir,
		"ORCH_RUN_DIR=" + n.RunDir,
		"ORCH_BRIDGE=" + n.Bridge,
		"ORCH_DNS_LINK=" + n.DNSLink,
		"ORCH_VXLAN_DEVICE=" + n.VXLANDevice,
		"ORCH_NETNS_PREFIX=" + n.NetnsPrefix,
		"ORCH_CHAIN_PREFIX=" + n.ChainPrefix,
		"ORCH_CGROUP_ROOT=" + n.CgroupRoot,
	}
	if !n.IsDefault() {
		kv = append(kv, "ORCH_SERVICES=")
	}
	return kv
}

// Shell is Env as lines of shell assignments, each value quoted when it
// holds anything but [A-Za-z0-9_./:-]: usable with eval, and with
// `env $(orch host-names)` when the data dir is a plain path.
func (n Names) Shell() string {
	var b strings.Builder
	for _, kv := range n.Env() {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "%s=%s\n", k, quote(v))
	}
	return b.String()
}

func quote(v string) string {
	plain := strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./:-", r))
	}) < 0
	if plain {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
