package volumes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// projectedPayload merges the payloads of every source of a projected
// volume, each file getting the volume's defaultMode unless an item sets one.
func (m *Manager) projectedPayload(ctx context.Context, pod *corev1.Pod, volume string, p *corev1.ProjectedVolumeSource, src Sources, fsGroup *int64) (map[string]FileProjection, error) {
	defMode := modeOr(p.DefaultMode)
	payload := map[string]FileProjection{}
	for i := range p.Sources {
		part, err := m.projectedSource(ctx, pod, sourceRef{volume, i}, &p.Sources[i], defMode, src, fsGroup)
		if err != nil {
			return nil, fmt.Errorf("projected source %d: %w", i, err)
		}
		for path, fp := range part {
			payload[path] = fp
		}
	}
	return payload, nil
}

// sourceRef names one source of a projected volume.
type sourceRef struct {
	volume string
	index  int
}

func (m *Manager) projectedSource(ctx context.Context, pod *corev1.Pod, ref sourceRef, s *corev1.VolumeProjection, defMode int32, src Sources, fsGroup *int64) (map[string]FileProjection, error) {
	switch {
	case s.ConfigMap != nil:
		return configMapPayload(ctx, pod, &corev1.ConfigMapVolumeSource{LocalObjectReference: s.ConfigMap.LocalObjectReference,
			Items: s.ConfigMap.Items, DefaultMode: &defMode, Optional: s.ConfigMap.Optional}, src, fsGroup)
	case s.Secret != nil:
		return secretPayload(ctx, pod, &corev1.SecretVolumeSource{SecretName: s.Secret.Name,
			Items: s.Secret.Items, DefaultMode: &defMode, Optional: s.Secret.Optional}, src, fsGroup)
	case s.DownwardAPI != nil:
		return downwardPayload(pod, s.DownwardAPI.Items, defMode, m.allocatable(), fsGroup)
	case s.ServiceAccountToken != nil:
		return tokenPayload(ctx, pod, s.ServiceAccountToken, defMode, src, fsGroup)
	case s.ClusterTrustBundle != nil:
		return trustBundlePayload(ctx, s.ClusterTrustBundle, certMode(defMode, fsGroup), src, fsGroup)
	case s.PodCertificate != nil:
		return podCertificatePayload(ctx, pod, ref, s.PodCertificate, certMode(defMode, fsGroup), src, fsGroup)
	}
	return nil, fmt.Errorf("%w: empty projection", ErrUnsupported)
}

func tokenPayload(ctx context.Context, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection, mode int32, src Sources, fsGroup *int64) (map[string]FileProjection, error) {
	ts, ok := src.(TokenSource)
	if !ok {
		return nil, fmt.Errorf("%w: serviceAccountToken (no token source on this node)", ErrUnsupported)
	}
	tok, err := ts.ServiceAccountToken(ctx, pod, p)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("service account token for %s/%s: %w", pod.Namespace, pod.Spec.ServiceAccountName, err)
		}
		return nil, fmt.Errorf("service account token: %w", err)
	}
	return map[string]FileProjection{p.Path: {Data: tok, Mode: mode, FsGroup: fsGroup}}, nil
}
