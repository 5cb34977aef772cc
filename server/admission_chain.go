package server

import (
	"github.com/orch/orch/server/admission"
)

// newAdmissionChain builds the API server's admission chain in upstream's
// order (see server/admission): ServiceAccount, LimitRanger,
// DefaultStorageClass, Priority, DefaultTolerationSeconds, ResourceQuota,
// mutating webhooks, then validating webhooks and policies. Plug-ins not
// yet moved into the chain still run inside server/apiserver.
func newAdmissionChain() (*admission.Chain, error) {
	return admission.NewChain()
}
