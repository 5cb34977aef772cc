package cluster

import (
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Outside is a client "outside the cluster": a network namespace of its own
// with an address on the test bridge, so it reaches the nodes' IPs (as a
// machine on the nodes' LAN would) and nothing else: no pod or service
// route, no orch process.
type Outside struct {
	c     *Cluster
	Netns string
	IP    string
	veth  string
}

// outsideHost is the host part of the outside client's address on the test
// bridge (nodes are .11 to .19, the bridge .1).
const outsideHost = 250

// Outside creates the outside client's namespace; it is removed in
// t.Cleanup (before the cluster's own tear-down, which runs later), and
// Close may remove it earlier. The names derive from the cluster ID, so
// Leftovers reports them if they stay behind.
func (c *Cluster) Outside() *Outside {
	c.t.Helper()
	prefix, ok := strings.CutSuffix(c.Nodes[0].IP, fmt.Sprintf(".%d", 11))
	if !ok {
		c.t.Fatalf("node 1's IP %s is not 10.199.K.11", c.Nodes[0].IP)
	}
	o := &Outside{c: c, Netns: "otc-" + c.ID + "-x", IP: fmt.Sprintf("%s.%d", prefix, outsideHost), veth: "otc" + c.ID + "x"}
	c.t.Cleanup(func() {
		if err := o.Close(); err != nil {
			c.t.Errorf("removing the outside client: %v", err)
		}
	})
	steps := [][]string{
		{"netns", "add", o.Netns},
		{"link", "add", o.veth, "type", "veth", "peer", "name", "eth0", "netns", o.Netns},
		{"link", "set", o.veth, "master", "otc" + c.ID, "up"},
		{"-n", o.Netns, "addr", "add", o.IP + "/24", "dev", "eth0"},
		{"-n", o.Netns, "link", "set", "eth0", "up"},
		{"-n", o.Netns, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			c.t.Fatalf("ip %s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	return o
}

// Run runs a command in the outside client's namespace.
func (o *Outside) Run(name string, args ...string) (string, error) {
	out, err := exec.Command("nsenter", append([]string{"--net=/run/netns/" + o.Netns, "--", name}, args...)...).CombinedOutput()
	return string(out), err
}

// Close removes the namespace and its veth (idempotent).
func (o *Outside) Close() error {
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil && strings.Contains(string(out), o.Netns) {
		if out, err := exec.Command("ip", "netns", "delete", o.Netns).CombinedOutput(); err != nil {
			return fmt.Errorf("ip netns delete %s: %w\n%s", o.Netns, err, out)
		}
	}
	// Deleting the namespace destroys the pair (asynchronously); this also
	// catches a veth whose peer never reached the namespace.
	for range 50 {
		if exec.Command("ip", "link", "show", o.veth).Run() != nil {
			return nil
		}
		_ = exec.Command("ip", "link", "delete", o.veth).Run()
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the outside client's veth %s is still there", o.veth)
}
