package testutil

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"testing"
)

// FreePorts looks in [lowestPort, highestPort): above the ports most
// daemons use and below the default NodePort range (30000-32767), whose
// ports the test clusters' service proxies DNAT on every local address.
const (
	lowestPort  = 10000
	highestPort = 30000
)

// FreePorts returns n distinct TCP ports that were free on every address a
// moment ago. They are taken below the NodePort range and the kernel's
// ephemeral range (net.ipv4.ip_local_port_range), so the outgoing
// connections of the tests running beside this one cannot take them before
// the process that is handed the port binds it (a busy client such as an
// informer can hold a connection's local port for minutes). The listeners
// are held until all n are picked so no port repeats.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	low := min(ephemeralLow(), highestPort)
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		addr := ":0" // no room below the ephemeral range: the kernel picks
		if low-lowestPort > 1000 && tries < 1000 {
			addr = fmt.Sprintf(":%d", lowestPort+rand.IntN(low-lowestPort))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if addr != ":0" {
				continue
			}
			t.Fatalf("picking a free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768
// when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var low, high int
	if _, err := fmt.Sscan(string(b), &low, &high); err != nil || low <= 0 {
		return 32768
	}
	return low
}
