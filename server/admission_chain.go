package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/admission"
	csradmission "github.com/orch/orch/server/admission/certificates"
	"github.com/orch/orch/server/admission/defaultingressclass"
	"github.com/orch/orch/server/admission/policy"
	"github.com/orch/orch/server/admission/rbacescalation"
	"github.com/orch/orch/server/admission/runtimeclass"
	saadmission "github.com/orch/orch/server/admission/serviceaccount"
	"github.com/orch/orch/server/admission/webhook"
	"github.com/orch/orch/server/apf"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/auth/satoken"
)

// newAdmissionChain builds the API server's admission chain in upstream's
// order (see server/admission): ServiceAccount, RuntimeClass, LimitRanger,
// DefaultStorageClass, Priority, DefaultTolerationSeconds, ResourceQuota,
// MutatingAdmissionPolicies, mutating webhooks, then validating policies
// and webhooks. Plug-ins not
// yet moved into the chain (LimitRanger, DefaultStorageClass, Priority in
// server/apiserver; DefaultTolerationSeconds in the pod strategy;
// ResourceQuota in the write transaction) still run where they were.
func newAdmissionChain(store datastore.Store, parts *parts) (*admission.Chain, error) {
	return admission.NewChain(
		saadmission.New(satoken.StoreObjects{Store: store}),
		runtimeclass.New(store),
		defaultingressclass.New(store),
		rbacescalation.New(parts.authz.authz, parts.authz.resolver),
		csradmission.NewApproval(parts.authz.authz),
		csradmission.NewSigning(parts.authz.authz),
		csradmission.SubjectRestriction{},
		csradmission.NewAttest(parts.authz.authz),
		csradmission.NewPCRSigning(parts.authz.authz),
		csradmission.NewPCRNodeRestriction(store, parts.authz.authz),
		parts.mutatingPolicies,
		parts.hooks.Mutating(),
		parts.policies,
		parts.hooks.Validating(),
	)
}

// parts are the pieces of the API server that in-process caches feed once
// the loopback client exists: authorization (node graph, RBAC), custom
// resources, and the webhook configurations.
type parts struct {
	authz    *authorization
	crds     *customResources
	hooks    *webhook.Dispatcher
	policies *policy.Plugin
	// mutatingPolicies run before the mutating webhooks, as upstream's
	// plug-in order has it.
	mutatingPolicies *policy.Mutating
	// apf classifies requests (API Priority and Fairness).
	apf *apf.Classifier
	// metrics is the built-in metrics.k8s.io (nil: --disable metrics-server).
	metrics *metricsAPI
	// prom is the /metrics registry (server/prometheus.go).
	prom *prometheus.Registry
}

// policyPlugin is an admission policy plug-in fed by the loopback clients.
type policyPlugin interface {
	Start(client kubernetes.Interface, dyn dynamic.Interface, f informers.SharedInformerFactory, authz auth.Authorizer, stop <-chan struct{}) error
}
