// Package volumes prepares a pod's volumes on the host, as the kubelet's
// volume manager does for the in-tree, node-local volume types, so that the
// runtime can bind-mount them into containers:
//
//   - emptyDir: <PodsDir>/<uid>/volumes/kubernetes.io~empty-dir/<name>, mode
//     0777; medium Memory is a tmpfs sized like the kubelet does (sizeLimit,
//     pod memory limit, node allocatable memory: the smallest that is set).
//   - hostPath: the host path itself, after the kubelet's type checks
//     (DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice,
//     BlockDevice) with the kubelet's error messages.
//   - configMap, secret, downwardAPI, projected: files written with the
//     kubelet's AtomicWriter scheme (a timestamped "..2006_01_02_15_04_05.*"
//     directory, a "..data" symlink swapped by rename, user-visible names as
//     symlinks through ..data), so a reader never sees a half-written set.
//     Secret and projected volumes live on a tmpfs, never on disk. UpdatePod
//     rewrites them in place when the objects change. They are read-only.
//     Projected clusterTrustBundle and podCertificate sources come from the
//     TrustBundleSource and PodCertificateSource the Sources may implement
//     (agent/certs): trust anchors as concatenated PEM (an empty file for
//     an optional source that matches nothing), the credential bundle (key,
//     then chain), key and chain files, 0600 when the pod has an fsGroup;
//     a certificate not issued yet fails the setup (ErrCertificatePending)
//     and the pod's sync retries.
//   - persistentVolumeClaim: the claim's bound volume (Config.Claims reads
//     both): a hostPath volume as above (a local-path volume of
//     agent/localpath inside this node's storage dir is created mode 0777
//     when missing; one labelled for another node is refused) or a local
//     volume (the directory must exist). A claim
//     that is not bound yet fails with ErrClaimNotBound naming it, and the
//     pod's sync retries. The runtime bind-mounts the path, read-only when
//     the pod's volume says so; TeardownPod never touches the data.
//   - image: <PodsDir>/<uid>/volumes/kubernetes.io~image/<name>, the root
//     filesystem of an OCI image mounted read-only from a containerd
//     snapshot view (Config.Images; agent/images.Service.MountView), pulled
//     as the volume's pullPolicy says with the pod's imagePullSecrets. It is
//     mounted once: later syncs never pull again.
//
// TeardownPod unmounts every mount under the pod's directory and removes it,
// then releases the pod's image views.
// File contents (secrets!) are never logged.
package volumes
