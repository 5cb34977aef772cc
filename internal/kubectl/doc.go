// Package kubectl runs upstream kubectl (k8s.io/kubectl, the same version as
// orch's client-go) inside the orch binary, for `orch kubectl …` and for orch
// invoked through a `kubectl` symlink, as `k3s kubectl` does.
//
// With neither --kubeconfig nor $KUBECONFIG given, kubectl uses the admin
// kubeconfig orch server writes (/etc/orch/orch.yaml by default) when it is
// readable, and otherwise kubectl's own default, ~/.kube/config. The choice is
// the pure function ChooseKubeconfig; Run applies it to the process
// environment, which is acceptable because kubectl is the whole process.
package kubectl
