package server

import (
	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/admission/rbacescalation"
	saadmission "github.com/orch/orch/server/admission/serviceaccount"
	"github.com/orch/orch/server/auth/satoken"
)

// newAdmissionChain builds the API server's admission chain in upstream's
// order (see server/admission): ServiceAccount, LimitRanger,
// DefaultStorageClass, Priority, DefaultTolerationSeconds, ResourceQuota,
// mutating webhooks, then validating webhooks and policies. Plug-ins not
// yet moved into the chain (LimitRanger, DefaultStorageClass, Priority in
// server/apiserver; DefaultTolerationSeconds in the pod strategy;
// ResourceQuota in the write transaction) still run where they were.
func newAdmissionChain(store datastore.Store, authz *authorization) (*admission.Chain, error) {
	return admission.NewChain(
		saadmission.New(satoken.StoreObjects{Store: store}),
		rbacescalation.New(authz.authz, authz.resolver),
	)
}
