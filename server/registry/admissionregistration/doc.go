// Package admissionregistration serves admissionregistration.k8s.io/v1:
// MutatingWebhookConfiguration and ValidatingWebhookConfiguration,
// ValidatingAdmissionPolicy (with status) and its binding,
// MutatingAdmissionPolicy and its binding, with upstream's v1 defaults and
// validation (CEL expressions are compiled when written). The plug-ins
// that act on them are server/admission/webhook and
// server/admission/policy.
package admissionregistration
