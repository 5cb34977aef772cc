package testutil

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePortsBelowEphemeralRange(t *testing.T) {
	low := min(ephemeralLow(), highestPort)
	ports := FreePorts(t, 5)
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d returned twice: %v", p, ports)
		}
		seen[p] = true
		if low-lowestPort > 1000 && (p < lowestPort || p >= low) {
			t.Errorf("port %d outside [%d, %d)", p, lowestPort, low)
		}
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		_ = l.Close()
	}
}
