// Package tokencleaner deletes expired bootstrap tokens, as
// kube-controller-manager's tokencleaner does: Secrets of type
// bootstrap.kubernetes.io/token in kube-system whose expiration has passed
// (or cannot be parsed) are deleted with a UID precondition. It is
// level-based: every token Secret's key is queued on add and update and
// re-queued for the moment it expires, so no periodic sweep is needed.
// Expired tokens are refused by the join handler even before they are
// deleted.
package tokencleaner
