// Command podbench measures a node as a user sees it, against containerd
// on its own, in one run, loopback only (docs/benchmarks.md, "Pod
// benchmarks" and "Steady state, bursts and one pod at a time"):
//
//   - steady state: `orch server` with its own agent (or, with
//     --separate-agent, `orch server --disable-agent` and an isolated `orch
//     agent`) running 10 busybox httpd pods with an HTTP readiness and an
//     exec liveness probe; after 3 min, orch's RSS, the whole node's PSS
//     (orch, its containerd, the containerd's shims) and orch's CPU over the
//     second half;
//   - bursts: 30 pods (--burst) created at once, timed until all are Ready;
//   - one at a time: 30 pods, each created when the last is Ready,
//     interleaved with containerd create+start of the same image.
//
// `podbench summarize a.json b.json ...` prints the medians of several runs.
package main
