package network

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func TestHostPortRules(t *testing.T) {
	pod := PodNet{Name: "web", Namespace: "ns1"}
	ip := net.ParseIP("10.42.0.5")
	dnat, masq := hostPortRules(pod, ip, []PortMapping{
		{HostPort: 8080, ContainerPort: 80},
		{HostIP: "192.0.2.7", HostPort: 53, ContainerPort: 5353, Protocol: "UDP"},
		{HostIP: "0.0.0.0", HostPort: 9000, ContainerPort: 9000, Protocol: "sctp"},
	})
	want := []string{
		`-p tcp -m tcp --dport 8080 -m comment --comment ns1/web hostPort 8080/tcp -j DNAT --to-destination 10.42.0.5:80`,
		`-d 192.0.2.7/32 -p udp -m udp --dport 53 -m comment --comment ns1/web hostPort 53/udp -j DNAT --to-destination 10.42.0.5:5353`,
		`-p sctp -m sctp --dport 9000 -m comment --comment ns1/web hostPort 9000/sctp -j DNAT --to-destination 10.42.0.5:9000`,
	}
	for i, r := range dnat {
		if got := strings.Join(r, " "); got != want[i] {
			t.Errorf("dnat[%d] = %s\nwant      %s", i, got, want[i])
		}
	}
	if len(masq) != 6 || strings.Join(masq[0], " ") != `-s 10.42.0.5/32 -d 10.42.0.5/32 -p tcp -m tcp --dport 80 -m comment --comment ns1/web hostPort 8080/tcp -j MASQUERADE` ||
		strings.Join(masq[1][:2], " ") != "-s 127.0.0.0/8" {
		t.Errorf("masq = %v", masq)
	}
}

func TestPortMappingValidate(t *testing.T) {
	for _, tc := range []struct {
		p    PortMapping
		want string
	}{
		{PortMapping{HostPort: 80, ContainerPort: 80}, ""},
		{PortMapping{HostPort: 80, ContainerPort: 80, Protocol: "icmp"}, "protocol"},
		{PortMapping{HostPort: 0, ContainerPort: 80}, "1-65535"},
		{PortMapping{HostPort: 80, ContainerPort: 70000}, "1-65535"},
		{PortMapping{HostPort: 80, ContainerPort: 80, HostIP: "fd00::1"}, "IPv4"},
	} {
		err := tc.p.validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("validate(%+v) = %v, want %q", tc.p, err, tc.want)
		}
	}
}

func TestHostPortChainNames(t *testing.T) {
	for _, tc := range []struct{ nat, prefix, want string }{
		{"", "", "ORCH-"},
		{"ORCHTABC123-POSTROUTING", "", "ORCHTABC123-"},
		{"X-POST", "", "ORCH-"},
		{"", "OTx-", "OTx-"},
	} {
		c := Config{NATChain: tc.nat, HostPortPrefix: tc.prefix}.withDefaults()
		if c.HostPortPrefix != tc.want {
			t.Errorf("NATChain %q: prefix %q, want %q", tc.nat, c.HostPortPrefix, tc.want)
		}
	}
	m := &Manager{cfg: &parsed{Config: Config{HostPortPrefix: "ORCHTABC123-"}}}
	d, q := m.hpChains().pod("some-uid")
	if len(d) > 28 || len(q) > 28 || d == q || !strings.HasPrefix(d, "ORCHTABC123-HP-") {
		t.Errorf("pod chains %q %q", d, q)
	}
	if _, err := (Config{PodCIDR: "10.42.0.0/24", IPAMDir: "/x", HostPortPrefix: strings.Repeat("P", 15)}).parse(); err == nil {
		t.Error("a 15-character prefix was accepted")
	}
}

// TestHostPorts publishes a pod port on the node and reaches it from the
// host (a local address and 127.0.0.1), from another pod and from the pod
// itself (hairpin); teardown removes every rule.
func TestHostPorts(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	a, b := e.newPodID(t), e.newPodID(t)
	hp := int32(20000 + e.octet*97%9000)
	ports := []PortMapping{{HostPort: hp, ContainerPort: 8080}}
	sa := e.setup(t, a, ports...)
	sb := e.setup(t, b)
	listenIn(t, sa.NetnsPath, sa.IP.IP.String()+":8080")
	gw := sa.Gateway.String()
	target := net.JoinHostPort(gw, fmt.Sprint(hp))
	local := net.JoinHostPort("127.0.0.1", fmt.Sprint(hp))

	for _, tc := range []struct{ name, ns, addr, seenFrom string }{
		{"host via bridge address", "", target, gw},
		{"host via 127.0.0.1", "", local, gw}, // masqueraded: route_localnet
		{"other pod", sb.NetnsPath, target, sb.IP.IP.String()},
		{"hairpin", sa.NetnsPath, target, gw},
	} {
		seen, err := dialHostOrNetns(tc.ns, tc.addr)
		if err != nil {
			t.Errorf("%s: dial %s: %v", tc.name, tc.addr, err)
			continue
		}
		if !strings.HasPrefix(seen, tc.seenFrom+":") {
			t.Errorf("%s: pod saw %s, want %s", tc.name, seen, tc.seenFrom)
		}
	}

	// Idempotent: the same rules after a second set-up.
	dnatChain, masqChain := e.m.hpChains().pod(a)
	e.setup(t, a, ports...)
	assertRules(t, e, "nat", dnatChain, 1)
	assertRules(t, e, "nat", masqChain, 2)
	assertJumps(t, e, "nat", e.m.hpChains().DNAT, dnatChain, 1)
	rules, _ := e.m.ipt.List("nat", dnatChain)
	if !strings.Contains(strings.Join(rules, "\n"), fmt.Sprintf(`"default/p-%s hostPort %d/tcp"`, a[:4], hp)) {
		t.Errorf("DNAT rule does not name the pod: %v", rules)
	}

	for i := 0; i < 2; i++ {
		if err := e.m.TeardownPod(t.Context(), a); err != nil {
			t.Fatalf("TeardownPod #%d: %v", i, err)
		}
	}
	for _, ch := range []string{dnatChain, masqChain} {
		if ok, _ := e.m.ipt.ChainExists("nat", ch); ok {
			t.Errorf("chain %s left after teardown", ch)
		}
	}
	assertJumps(t, e, "nat", e.m.hpChains().DNAT, dnatChain, 0)
	assertJumps(t, e, "nat", e.m.hpChains().Masq, masqChain, 0)
	if _, err := dialHostOrNetns("", target); err == nil {
		t.Error("the host port still answers after teardown")
	}
}

func TestHostPortsRollback(t *testing.T) {
	e := newTestEnv(t)
	if err := e.m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	id := e.newPodID(t)
	e.m.stepHook = func(step string) error {
		if step == "hostports" {
			return errors.New("injected")
		}
		return nil
	}
	if _, err := e.m.SetupPod(t.Context(), PodNet{ID: id, Name: "x", Namespace: "default",
		Ports: []PortMapping{{HostPort: 20001, ContainerPort: 80}}}); err == nil {
		t.Fatal("SetupPod succeeded despite the injected failure")
	}
	e.m.stepHook = nil
	d, q := e.m.hpChains().pod(id)
	for _, ch := range []string{d, q} {
		if ok, _ := e.m.ipt.ChainExists("nat", ch); ok {
			t.Errorf("chain %s left after rollback", ch)
		}
	}
	e.assertPodGone(t, id)

	// Cleanup removes the shared chains and the hooks in built-in chains.
	if err := e.m.Cleanup(); err != nil {
		t.Fatal(err)
	}
	c := e.m.hpChains()
	for _, ch := range []string{c.DNAT, c.Masq} {
		if ok, _ := e.m.ipt.ChainExists("nat", ch); ok {
			t.Errorf("chain %s left after Cleanup", ch)
		}
	}
	for _, h := range e.m.builtinHooks() {
		if ok, _ := e.m.ipt.Exists(h.table, h.chain, h.r...); ok {
			t.Errorf("rule left in %s/%s: %v", h.table, h.chain, h.r)
		}
	}
}

// dialHostOrNetns dials from the host (ns "") or from inside a namespace.
func dialHostOrNetns(ns, addr string) (string, error) {
	if ns != "" {
		return dialFrom(ns, addr)
	}
	c, err := net.DialTimeout("tcp4", addr, 3*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if n == 0 {
		return "", err
	}
	return strings.TrimSpace(string(buf[:n])), nil
}
