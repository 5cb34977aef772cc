//go:build tools

// Package bench pins the programs the benchmark builds (kube-apiserver and
// kine) so that `go build` resolves them from this module's go.sum.
package bench

import (
	_ "github.com/k3s-io/kine"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
