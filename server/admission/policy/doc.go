// Package policy is the ValidatingAdmissionPolicy admission plug-in:
// upstream's plug-in (k8s.io/apiserver admission/plugin/policy/validating:
// policies and bindings from informers, matchConstraints, matchConditions,
// variables, params, validations with Deny, Warn and Audit actions,
// auditAnnotations, failurePolicy) behind orch's admission interface, fed
// by the loopback client once the server runs.
package policy
