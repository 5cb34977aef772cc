// Package envvars computes a container's environment the way the kubelet
// does: envFrom first (configMapRef/secretRef with prefix and optional), then
// env in declaration order (value with $(VAR) expansion, or valueFrom
// configMapKeyRef/secretKeyRef/fieldRef/resourceFieldRef), a later definition
// of a name replacing an earlier one. It also expands $(VAR) references in a
// container's command, args and subPathExpr, and resolves the downward API
// fields that agent/volumes writes into downwardAPI volumes, and builds the
// service link variables (KUBERNETES_SERVICE_HOST...) with ServiceEnv.
//
// Everything here is pure: objects come through the small Sources interface,
// node facts through Inputs. Values (secrets!) are never logged.
package envvars
