// Package serverlb is the agent's client-side load balancer over the
// cluster's API servers, like k3s's agent load balancer: the agent's
// client dials through Balancer, which connects to the server it currently
// uses and fails over to the others when that one cannot be reached or
// stops answering /readyz. The server list starts with the --join URL and
// follows the `kubernetes` Service's EndpointSlice, which the leader keeps
// pointed at the live servers. On a switch, the connections to the old
// server are closed so long-running watches move too.
package serverlb
