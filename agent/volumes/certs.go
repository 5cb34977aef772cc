package volumes

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrustBundleSource may also be implemented by the Sources passed in: it
// reads ClusterTrustBundles for clusterTrustBundle projections (upstream's
// pkg/kubelet/clustertrustbundle Manager). The anchors come back as
// concatenated PEM CERTIFICATE blocks, each anchor once. With allowMissing
// a missing bundle (or a selector matching none) is an empty result, not
// an error.
type TrustBundleSource interface {
	TrustAnchorsByName(ctx context.Context, name string, allowMissing bool) ([]byte, error)
	// TrustAnchorsBySigner: a nil selector matches nothing, an empty one
	// everything.
	TrustAnchorsBySigner(ctx context.Context, signer string, selector *metav1.LabelSelector, allowMissing bool) ([]byte, error)
}

// PodCertificateSource may also be implemented by the Sources passed in:
// it hands out the private key (PEM) and certificate chain of a
// podCertificate projection, the source index of volume of pod
// (upstream's pkg/kubelet/podcertificate Manager). Until a signer issued
// it, the error wraps ErrCertificatePending.
type PodCertificateSource interface {
	PodCertificate(ctx context.Context, pod *corev1.Pod, volume string, index int, proj *corev1.PodCertificateProjection) (key, chain []byte, err error)
}

// ErrCertificatePending: the pod's certificate is not issued yet.
var ErrCertificatePending = errors.New("credential bundle is not issued yet")

// certMode is the mode of trust anchors and credentials: the volume's
// default mode, 0600 when the files belong to the pod's fsGroup (as
// upstream's projected volume does for these two sources).
func certMode(defMode int32, fsGroup *int64) int32 {
	if fsGroup != nil {
		return 0o600
	}
	return defMode
}

func trustBundlePayload(ctx context.Context, p *corev1.ClusterTrustBundleProjection, mode int32, src Sources, fsGroup *int64) (map[string]FileProjection, error) {
	ts, ok := src.(TrustBundleSource)
	if !ok {
		return nil, fmt.Errorf("%w: clusterTrustBundle (no trust bundle source on this node)", ErrUnsupported)
	}
	optional := isTrue(p.Optional)
	var (
		data []byte
		err  error
	)
	switch {
	case p.Name != nil:
		data, err = ts.TrustAnchorsByName(ctx, *p.Name, optional)
	case p.SignerName != nil:
		data, err = ts.TrustAnchorsBySigner(ctx, *p.SignerName, p.LabelSelector, optional)
	default:
		err = errors.New("ClusterTrustBundle projection requires either name or signerName to be set")
	}
	if err != nil {
		return nil, fmt.Errorf("clusterTrustBundle: %w", err)
	}
	return map[string]FileProjection{p.Path: {Data: data, Mode: mode, FsGroup: fsGroup}}, nil
}

// podCertificatePayload writes the credential bundle (key, then chain),
// the key and the chain to whichever of the three paths are set.
func podCertificatePayload(ctx context.Context, pod *corev1.Pod, ref sourceRef, p *corev1.PodCertificateProjection, mode int32, src Sources, fsGroup *int64) (map[string]FileProjection, error) {
	ps, ok := src.(PodCertificateSource)
	if !ok {
		return nil, fmt.Errorf("%w: podCertificate (no pod certificate source on this node)", ErrUnsupported)
	}
	key, chain, err := ps.PodCertificate(ctx, pod, ref.volume, ref.index, p)
	if err != nil {
		return nil, fmt.Errorf("podCertificate for signer %q: %w", p.SignerName, err)
	}
	out := map[string]FileProjection{}
	file := func(path string, data []byte) {
		if path != "" {
			out[path] = FileProjection{Data: data, Mode: mode, FsGroup: fsGroup}
		}
	}
	file(p.CredentialBundlePath, append(append([]byte{}, key...), chain...))
	file(p.KeyPath, key)
	file(p.CertificateChainPath, chain)
	return out, nil
}
