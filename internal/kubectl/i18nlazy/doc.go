// Package i18nlazy keeps kubectl's message translations out of processes
// that do not run kubectl (orch server, orch agent, …).
//
// kubectl's packages call i18n.T in package-level variables, so linking them
// in would parse the embedded translation catalog at start-up of every orch
// command (about 4.4 MB of allocations, kept for the process's life). This
// package's init, which Go runs after k8s.io/kubectl/pkg/util/i18n's and —
// its import path sorting first — before any other kubectl package's (Go
// spec, "Package initialization"), replaces the loader with a no-op unless
// the process was invoked as kubectl, as i18n.SetLoadTranslationsFunc
// documents. Other commands then see kubectl's English default strings.
package i18nlazy
