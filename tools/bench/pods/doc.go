// Command podbench measures pod start latency and idle memory of orch
// (`orch server --disable-agent` plus an isolated `orch agent` on this host)
// against containerd's own create+start of the same busybox image, in one
// run, loopback only. See docs/benchmarks.md ("Pod benchmarks").
package main
