package network

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
)

// The iptables-legacy backend and the detection are tested inside a
// throwaway network namespace: iptables tables are per namespace, so the
// host (nf_tables here) never gets legacy tables. Commands exec'd from a
// thread inherit its namespace.
func TestLegacyBackendInThrowawayNetns(t *testing.T) {
	e := newTestEnv(t)
	if _, err := exec.LookPath("iptables-legacy"); err != nil {
		t.Skip("skipping: iptables-legacy not installed")
	}
	nsPath := filepath.Join(e.cfg.NetnsDir, "legacy-"+e.suffix)
	if _, err := ensureNetns(nsPath); err != nil {
		t.Fatal(err)
	}
	e.cleanup = append(e.cleanup, func() { _ = removeNetns(nsPath) })
	log := zaptest.NewLogger(t)
	var steps []string
	err := inNetns(nsPath, func() error {
		if got := DetectIPTables(log); got != "iptables-nft" {
			return fmt.Errorf("empty namespace: detected %s, want iptables-nft", got)
		}
		cfg := e.cfg
		cfg.IPTablesPath = "iptables-legacy"
		cfg.IPAMDir = t.TempDir()
		m, err := New(log, cfg)
		if err != nil {
			return err
		}
		defer m.Close()
		for i := 0; i < 2; i++ {
			if err := m.EnsureMasquerade(cfg.ClusterCIDR, cfg.PodCIDR); err != nil {
				return err
			}
		}
		out, err := exec.Command("iptables-legacy-save", "-t", "nat").CombinedOutput()
		if err != nil {
			return err
		}
		if n := strings.Count(string(out), "-A "+cfg.NATChain+" "); n != 2 {
			return fmt.Errorf("legacy nat has %d rules in %s:\n%s", n, cfg.NATChain, out)
		}
		steps = append(steps, "programmed")
		if got := DetectIPTables(log); got != "iptables-legacy" {
			return fmt.Errorf("with ORCH- chains in legacy: detected %s", got)
		}
		steps = append(steps, "detected")
		if err := m.Cleanup(); err != nil {
			return err
		}
		out, _ = exec.Command("iptables-legacy-save").CombinedOutput()
		if strings.Contains(string(out), "ORCHT-") {
			return fmt.Errorf("legacy chains left after Cleanup:\n%s", out)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("after %v: %v", steps, err)
	}
	if n, _ := exec.Command("iptables-nft-save").Output(); strings.Contains(string(n), e.cfg.NATChain) {
		t.Error("legacy test leaked a chain into the host's nft ruleset")
	}
}
