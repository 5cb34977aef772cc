// Package multinode holds end-to-end tests on a multi-node cluster built by
// scripts/testcluster.sh (test/cluster): pods on different nodes reaching
// each other over the pod network (vxlan and host-gw backends), routes
// following nodes that leave, and nothing left on the host afterwards.
// Run as root: go test -count=1 -run TestMultinode ./test/multinode/
package multinode
