package reliability

import (
	"context"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"
)

func final(server int, key string, out Output, at int) Op {
	return op(1000+server, get(key), out, at, at+1)
}

func TestLostWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    []Op
		lost int
	}{
		{"latest revision read", []Op{op(0, create("a", "v1"), ok(10), 0, 1), final(1, "a", read("v1", 10), 5)}, 0},
		{"older revision read", []Op{op(0, create("a", "v1"), ok(10), 0, 1), op(0, update("a", "v2", 10), ok(11), 2, 3),
			final(1, "a", read("v1", 10), 5), final(2, "a", read("v2", 11), 5)}, 1},
		{"acknowledged create missing", []Op{op(0, create("a", "v1"), ok(10), 0, 1), final(1, "a", notFound, 5)}, 1},
		{"missing after an unknown delete", []Op{op(0, create("a", "v1"), ok(10), 0, 1), op(1, del("a", 0), unknown, 2, 3),
			final(1, "a", notFound, 5)}, 0},
		{"missing after an acknowledged delete", []Op{op(0, create("a", "v1"), ok(10), 0, 1), op(1, del("a", 0), ok(0), 2, 3),
			final(1, "a", notFound, 5)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lostWrites(tc.h); len(got) != tc.lost {
				t.Fatalf("lost writes %v, want %d", got, tc.lost)
			}
		})
	}
}

func TestOutage(t *testing.T) {
	h := []Op{
		op(0, create("a", "v1"), ok(10), 90, 120), // called before the fault
		op(1, get("a"), read("v1", 10), 101, 102), // a read
		op(2, create("b", "v1"), unknown, 101, 105),
		op(2, create("c", "v1"), ok(11), 103, 140),
		op(3, create("d", "v1"), ok(12), 110, 130),
	}
	if d, ok := outage(h, 100*time.Millisecond); !ok || d != 30*time.Millisecond {
		t.Fatalf("outage %v %v, want 30ms", d, ok)
	}
	if _, ok := outage(h, time.Second); ok {
		t.Fatal("an outage without a write after it")
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 10; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	if p := percentile(ds, 50); p != 5*time.Second {
		t.Errorf("p50 %v", p)
	}
	if p := percentile(ds, 99); p != 10*time.Second {
		t.Errorf("p99 %v", p)
	}
	if p := percentile(nil, 99); p != 0 {
		t.Errorf("empty p99 %v", p)
	}
}

func TestNotSent(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "https://10.0.0.1:6443", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	if !notSent(refused) {
		t.Error("a refused dial was sent")
	}
	reset := &url.Error{Op: "Post", URL: "https://10.0.0.1:6443", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
	if notSent(reset) || notSent(context.DeadlineExceeded) {
		t.Error("a reset or timed-out request counts as not sent")
	}
}
