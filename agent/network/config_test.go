package network

import (
	"strings"
	"testing"
)

func TestConfigParse(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		gateway string
		wantErr string
	}{
		{name: "defaults", cfg: Config{PodCIDR: "10.42.3.0/24", IPAMDir: "/x"}, gateway: "10.42.3.1/24"},
		{name: "no ipam dir", cfg: Config{PodCIDR: "10.42.3.0/24"}, wantErr: "IPAMDir"},
		{name: "bad pod cidr", cfg: Config{PodCIDR: "10.42.3.0", IPAMDir: "/x"}, wantErr: "podCIDR"},
		{name: "ipv6 pod cidr", cfg: Config{PodCIDR: "fd00::/64", IPAMDir: "/x"}, wantErr: "podCIDR"},
		{name: "long bridge", cfg: Config{PodCIDR: "10.42.3.0/24", IPAMDir: "/x", BridgeName: "a-very-long-bridge"}, wantErr: "15"},
		{name: "long chain", cfg: Config{PodCIDR: "10.42.3.0/24", IPAMDir: "/x", NATChain: strings.Repeat("C", 29)}, wantErr: "28"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.cfg.parse()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want mention of %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.gateway.String() != tc.gateway || p.BridgeName != DefaultBridge || p.NATChain != DefaultNATChain {
				t.Fatalf("parsed %+v gateway %s", p.Config, p.gateway)
			}
		})
	}
}

func TestNames(t *testing.T) {
	ids := []string{"0d5c6d2e-7b1e-4d8c-9a51-2f0e6c1b9a77", "a", strings.Repeat("x", 300)}
	seen := map[string]bool{}
	for _, id := range ids {
		n := HostVethName(id)
		if len(n) != 15 || !strings.HasPrefix(n, "veth") || seen[n] {
			t.Errorf("HostVethName(%q) = %q", id, n)
		}
		seen[n] = true
		if HostVethName(id) != n {
			t.Errorf("HostVethName not stable for %q", id)
		}
	}
	m := &Manager{cfg: &parsed{Config: Config{NetnsDir: "/run/netns", NetnsPrefix: "orch-"}}}
	if p := m.NetnsPath(ids[0]); !strings.HasPrefix(p, "/run/netns/orch-") || len(p) != len("/run/netns/orch-")+12 {
		t.Errorf("NetnsPath = %q", p)
	}
}
