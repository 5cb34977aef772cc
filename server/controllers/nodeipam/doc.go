// Package nodeipam assigns each Node without spec.podCIDR the next free
// subnet (a /24 by default) of the cluster CIDR (10.42.0.0/16 by default),
// like kube-controller-manager's range allocator. The allocation bitmap is
// rebuilt from the Nodes in the informer cache every time Run starts (so a
// restart or a new Raft leader never hands out a CIDR twice), a single
// worker allocates so concurrently created Nodes get distinct subnets, a
// deleted Node's subnet is released, and when the range is exhausted a
// Warning event CIDRNotAvailable is recorded on the Node.
package nodeipam
