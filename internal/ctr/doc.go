// Package ctr runs upstream ctr (github.com/containerd/containerd/v2/cmd/ctr,
// the same containerd version as orch's client) inside the orch binary, for
// `orch ctr …` and for orch invoked through a `ctr` symlink, as `k3s ctr`
// does: a debugging client for the containerd that orch's agent manages.
//
// Only the defaults differ from upstream: --address is the managed
// containerd's socket (/run/orch/containerd/containerd.sock) and --namespace
// is orch's containerd namespace (orch). Flags given by the user, and
// $CONTAINERD_ADDRESS / $CONTAINERD_NAMESPACE, win as they do upstream: the
// defaults are set as the flags' default values, not as arguments.
//
// Linking ctr's packages costs about 3 MB of binary; their init functions
// allocate about 0.25 MB and change three process-wide settings that orch
// itself does not use: gRPC's internal logger (discarded) and urfave/cli's
// --help and --version flag texts.
package ctr
