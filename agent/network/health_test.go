package network

import (
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
)

func TestCheckHost(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.CheckHost(); err == nil || !strings.Contains(err.Error(), "bridge "+e.cfg.BridgeName+" is missing") {
		t.Fatalf("before EnsureHost: %v", err)
	}
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	if err := e.m.CheckHost(); err != nil {
		t.Fatalf("after EnsureHost: %v", err)
	}
	br, err := netlink.LinkByName(e.cfg.BridgeName)
	if err != nil {
		t.Fatal(err)
	}
	if err := netlink.AddrDel(br, &netlink.Addr{IPNet: e.m.cfg.gateway}); err != nil {
		t.Fatal(err)
	}
	if err := e.m.CheckHost(); err == nil || !strings.Contains(err.Error(), "lacks the gateway") {
		t.Errorf("without the gateway: %v", err)
	}
	if err := netlink.LinkSetDown(br); err != nil {
		t.Fatal(err)
	}
	if err := e.m.CheckHost(); err == nil || !strings.Contains(err.Error(), "is down") {
		t.Errorf("bridge down: %v", err)
	}
	if err := e.m.EnsureHost(); err != nil { // the repair
		t.Fatal(err)
	}
	if err := e.m.CheckHost(); err != nil {
		t.Errorf("after the repair: %v", err)
	}
}
