// Package kubectl drives a real upstream kubectl (built by
// scripts/build-kubectl.sh, or $ORCH_KUBECTL) against a real `orch server`
// and checks what kubectl prints, not only its exit codes.
//
// Run: go test ./test/kubectl/
package kubectl
