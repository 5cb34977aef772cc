// Package manifests will hold the objects orch deploys by itself at start
// (auto-deploy manifests, as k3s does from <data-dir>/server/manifests).
// The bootstrap objects every cluster needs from its first second (system
// namespaces, the `kubernetes` Service) are created by server/apiserver.
package manifests
