// Package kubeletprobes adapts prober.Manager to the Probes interface the
// pod loop (agent/kubelet) declares. Hooks need no adapter:
// *lifecycle.Runner satisfies the loop's Hooks as it is.
package kubeletprobes
