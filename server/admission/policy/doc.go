// Package policy holds the admission policy plug-ins, upstream's plug-ins
// (k8s.io/apiserver admission/plugin/policy) behind orch's admission
// interfaces, fed by the loopback client once the server runs:
//
//   - Plugin, ValidatingAdmissionPolicy (validating: policies and bindings
//     from informers, matchConstraints, matchConditions, variables, params,
//     validations with Deny, Warn and Audit actions, auditAnnotations,
//     failurePolicy);
//   - Mutating, MutatingAdmissionPolicy (mutating: ApplyConfiguration
//     merges typed by the server's OpenAPI v3 documents and JSONPatch
//     mutations, with reinvocation of IfNeeded policies when a later policy
//     changed the object).
//
// orch's objects are the versioned API types themselves, so the object
// convertor handed to upstream copies between objects of the same type
// where upstream converts to and from its internal version.
package policy
