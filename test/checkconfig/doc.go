// Package checkconfig runs the real `orch check-config` binary against fake
// host trees (its hidden --root flag) and against this host.
package checkconfig
