// Package celcond evaluates admission webhooks' matchConditions (CEL) with
// upstream's compiler and matcher (k8s.io/apiserver's admission CEL
// plug-in): object, oldObject, request and authorizer, within the
// match-conditions cost budget; an expression that errs follows the
// webhook's failurePolicy. It also compiles the conditions when a webhook
// configuration is written, so one that cannot compile is refused with its
// path. orch's admission attributes and authorizer are adapted to
// upstream's interfaces here.
package celcond
