// Package admission is the API server's admission chain, shaped like
// k8s.io/apiserver/pkg/admission: an ordered list of plug-ins behind two
// small interfaces. Mutating plug-ins (Mutator) run first, in order, on the
// defaulted object before the strategy prepares and validates it; then
// validating plug-ins (Validator) run, in order, on the final object just
// before it is written. The create, update and delete handlers of
// server/apiserver call the Chain, never a plug-in directly.
//
// Upstream's order, which orch's wiring follows: ServiceAccount,
// LimitRanger, DefaultStorageClass, Priority, DefaultTolerationSeconds,
// ResourceQuota, then MutatingAdmissionPolicies and mutating webhooks,
// schema validation, ValidatingAdmissionPolicies and validating webhooks.
//
// Reinvocation: mutators that are Reinvocable (the webhook and policy
// plug-ins) run once more when one of them changed the object
// (Attributes.SetShouldReinvoke), and then call again only their
// webhooks or policies with reinvocationPolicy IfNeeded, as upstream's
// reinvocation handler does.
//
// A plug-in rejects a request by returning an error; an
// apimachinery APIStatus error (apierrors.NewForbidden, NewInvalid, …) is
// sent to the client as it is, any other error becomes a 403 Forbidden
// naming the plug-in. Warnings for the client go through Attributes.AddWarning.
package admission
