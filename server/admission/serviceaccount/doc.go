// Package serviceaccount is the ServiceAccount admission plug-in, as
// upstream's plugin/pkg/admission/serviceaccount: on pod create it
// defaults spec.serviceAccountName to "default", refuses a pod whose
// ServiceAccount does not exist (403), copies the ServiceAccount's
// imagePullSecrets to a pod that has none, and — unless
// automountServiceAccountToken is false on the pod or the ServiceAccount —
// adds the projected volume kube-api-access-<5 chars> (a bound token that
// the agent requests and refreshes, ca.crt from the kube-root-ca.crt
// ConfigMap, the namespace from the downward API) mounted read-only at
// /var/run/secrets/kubernetes.io/serviceaccount in every container.
//
// One deliberate difference: a pod naming the "default" ServiceAccount
// before the controller has created it in a brand-new namespace is
// admitted (with the token volume) instead of refused, so creating a
// namespace and a pod back to back never fails; the agent's token request
// succeeds as soon as the ServiceAccount exists.
package serviceaccount
