// Package celrules checks the CEL in a CRD's schemas when the CRD is
// written: every x-kubernetes-validations rule and messageExpression must
// compile (upstream's compiler and environments, from
// k8s.io/apiextensions-apiserver), errors named by their path in the CRD.
// Evaluating the rules on custom resources is server/crd's.
package celrules
