package main

import (
	"testing"
	"time"
)

func TestParseDatastoreBench(t *testing.T) {
	out := []byte(`goos: linux
goarch: amd64
pkg: github.com/orch/orch/datastore
BenchmarkCreateParallel/writers=16-2         	    8000	    93457 ns/op	        10.70 p50-ms	        3.200 p99-ms	     10700 creates/s
BenchmarkCreateParallel/writers=1-2         	    3000	    93457 ns/op	         0.5 p50-ms	        1.300 p99-ms	      1870 creates/s
PASS
`)
	res, err := parseDatastoreBench(out, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.PerSecond != 1870 || res.Latency.P99 != 1300*time.Microsecond || res.Latency.P50 != 500*time.Microsecond || res.Clients != 1 {
		t.Fatalf("parsed %+v", res)
	}
	if _, err := parseDatastoreBench(out, 64); err == nil {
		t.Fatal("a level that did not run parsed")
	}
}
