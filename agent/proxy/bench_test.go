package proxy

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
)

// scalePorts is n ClusterIP services with eps ready endpoints each
// (endpoint j of service i is 10.244.<i/250>.<...>:8080); shift moves the
// first endpoint of service 0 so a sync has one endpoint change.
func scalePorts(n, eps, shift int) []*servicePort {
	out := make([]*servicePort, 0, n)
	for i := range n {
		svc := testSvc("bench", fmt.Sprintf("svc-%d", i), fmt.Sprintf("10.43.%d.%d", i/250, 1+i%250))
		var list []testEP
		for j := range eps {
			k := i*eps + j
			if i == 0 && j == 0 {
				k += shift * n * eps
			}
			list = append(list, testEP{ip: fmt.Sprintf("10.%d.%d.%d", 100+k/65536, k/256%256, k%256), node: "other", ready: true})
		}
		out = append(out, ports("n", svc, testSlice("bench", svc.Name, "x", 8080, list...))...)
	}
	return out
}

func benchSyncer(b testing.TB, cmd string) (*syncer, *host) {
	be, err := newHost(cmd)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Prefix: "ORCH-", ClusterCIDR: "10.244.0.0/16", MasqMark: 0x4000}
	return newSyncer(zap.NewNop(), be, newGenerator(cfg, be.HasRandomFully()), nil), be
}

// cpuNow is the CPU time (user+system) used so far by this process and
// its waited-for children (iptables-restore): on a busy machine it is a
// steadier measure than the wall clock.
func cpuNow() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

func ruleCount(b *testing.B, cmd string) int {
	n := 0
	for _, l := range strings.Split(save(b, cmd), "\n") {
		if strings.HasPrefix(l, "-A ") {
			n++
		}
	}
	return n
}

// BenchmarkProxySyncFromScratch programs 1,000 services x 10 endpoints into
// empty tables (real iptables, private netns).
func BenchmarkProxySyncFromScratch(b *testing.B) {
	requireRoot(b)
	for _, size := range []int{100, 1000} {
		for _, cmd := range backends(b) {
			b.Run(fmt.Sprintf("%s/services=%d", cmd, size), func(b *testing.B) {
				leave := enterNetns(b)
				defer leave()
				sps := scalePorts(size, 10, 0)
				var cpu time.Duration
				n := 0
				for b.Loop() {
					b.StopTimer()
					s, be := benchSyncer(b, cmd)
					if err := cleanup(be, s.gen.n); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					c0 := cpuNow()
					if _, err := s.sync(sps, true); err != nil {
						b.Fatal(err)
					}
					cpu += cpuNow() - c0
					n++
				}
				b.ReportMetric(float64(cpu.Milliseconds())/float64(n), "cpu-ms/op")
				b.ReportMetric(float64(ruleCount(b, cmd)), "rules")
			})
		}
	}
}

// BenchmarkProxyEndpointChange applies one endpoint change with 1,000
// services x 10 endpoints programmed.
func BenchmarkProxyEndpointChange(b *testing.B) {
	requireRoot(b)
	for _, cmd := range backends(b) {
		b.Run(cmd+"/services=1000", func(b *testing.B) {
			leave := enterNetns(b)
			defer leave()
			s, _ := benchSyncer(b, cmd)
			versions := [][]*servicePort{scalePorts(1000, 10, 0), scalePorts(1000, 10, 1)}
			if _, err := s.sync(versions[0], true); err != nil {
				b.Fatal(err)
			}
			i := 0
			c0 := cpuNow()
			for b.Loop() {
				i++
				st, err := s.sync(versions[i%2], false)
				if err != nil {
					b.Fatal(err)
				}
				if st.Written != 2 || st.Deleted != 1 {
					b.Fatalf("sync wrote %d chains and deleted %d, want 2 and 1", st.Written, st.Deleted)
				}
			}
			b.ReportMetric(float64((cpuNow()-c0).Milliseconds())/float64(i), "cpu-ms/op")
		})
	}
}
