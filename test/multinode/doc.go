// Package multinode holds end-to-end tests on a multi-node cluster built by
// scripts/testcluster.sh (test/cluster), one cluster per network backend
// (vxlan and host-gw):
//
//   - the pod network: pods on different nodes reach each other by pod IP
//     without NAT, and routes follow nodes that leave;
//   - Services: ClusterIP and the Service's DNS name from a client on every
//     node reach backends on every node and spread over them; NodePort,
//     LoadBalancer and externalIPs answer a client namespace outside the
//     cluster; a backend failing readiness leaves the endpoints and gets no
//     traffic; headless and StatefulSet names resolve to pod IPs;
//     NetworkPolicy blocks and then allows; deleting a Service removes its
//     rules on every node;
//   - nothing is left on the host afterwards.
//
// Run as root: go test -count=1 -run TestMultinode ./test/multinode/
package multinode
