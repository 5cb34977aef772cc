// Package agent is the node side of orch: it joins a node to the cluster and
// runs the pods bound to it on containerd, programming the host's network and
// cgroups itself. It arrives with the agent issue; `orch server` runs one for
// its own node unless --disable-agent.
package agent
