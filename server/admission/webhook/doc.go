// Package webhook calls admission webhooks: a Mutator for the
// MutatingWebhookConfigurations (serially, in name order, applying their
// JSON patches) and a Validator for the ValidatingWebhookConfigurations (in
// parallel), placed last in the admission chain as upstream does. Webhooks
// are matched by rules, scope, namespaceSelector and objectSelector (under
// matchPolicy Equivalent, rules naming another served version of a custom
// resource match too: the webhook sees the objects converted to that
// version, requestKind the request's own, and a patch is converted back),
// called
// with AdmissionReview v1 by URL or through their Service (resolved to a
// ready endpoint, so a server without an agent reaches them too), and their
// failures follow failurePolicy. The configurations come from a Source:
// informers over the loopback client in production, a static twin in tests.
package webhook
