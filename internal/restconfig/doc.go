// Package restconfig holds the client-go settings orch's own clients share:
// typed clientsets prefer protobuf, as kube-controller-manager's and
// kubelet's do, because it is several times cheaper to encode and decode
// than JSON for the server and for the small boards agents run on.
package restconfig
