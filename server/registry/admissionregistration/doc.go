// Package admissionregistration serves admissionregistration.k8s.io/v1
// MutatingWebhookConfiguration and ValidatingWebhookConfiguration with
// upstream's v1 defaults and validation. server/admission/webhook calls the
// webhooks they describe.
package admissionregistration
