package proxy

import (
	"os"
	"testing"
)

func TestZZDump(t *testing.T) {
	if os.Getenv("ZZDUMP") == "" {
		t.Skip()
	}
	cfg := Config{Prefix: "ORCH-", ClusterCIDR: "10.244.0.0/16", MasqMark: 0x4000}
	g := newGenerator(cfg, true)
	want := g.render(scalePorts(1000, 10, 0))
	p := makePlan(want, applied{}, nil)
	os.WriteFile(os.Getenv("ZZDUMP"), p.input, 0o644)
}
