// Package images gets container images into containerd for the agent:
//
//   - EnsureImage acts on a container's imagePullPolicy (Always,
//     IfNotPresent, Never) and pulls with unpack into the runtime's
//     snapshotter; failures are classified (ErrImagePull with the registry's
//     message, ErrImageNeverPull, ErrInvalidImageName) so the pod worker can
//     report ErrImagePull / ImagePullBackOff.
//   - Registries reads /etc/orch/registries.yaml in k3s's format (mirrors
//     with endpoints, per-host TLS and auth configs) and turns it into the
//     resolver's RegistryHosts; plain HTTP is an http:// endpoint.
//   - ImportDir / Watch import OCI-layout and docker-archive tarballs (*.tar,
//     *.tar.gz, *.tgz, and *.tar.zst as the release's air-gap bundles)
//     dropped in <data-dir>/agent/images (air-gap), at start and whenever a
//     file is written or moved there (inotify), skipping files already
//     imported (recorded by size, mtime and SHA-256 in a state file).
package images
