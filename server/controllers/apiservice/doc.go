// Package apiservice is the leader-only availability controller of
// APIServices: every 30 s (upstream's period) it checks each non-local
// APIService's Service (ServiceNotFound, MissingEndpoints) and fetches
// /apis/<group>/<version> from the backend (FailedDiscoveryCheck), then
// writes the Available condition (True with reason Passed) when it changed.
package apiservice
