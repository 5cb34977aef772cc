package volumes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orch/orch/agent/envvars"
)

func isTrue(b *bool) bool { return b != nil && *b }

// configMapData merges a ConfigMap's data and binaryData into key -> bytes.
func configMapData(cm *corev1.ConfigMap) map[string][]byte {
	out := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		out[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		out[k] = v
	}
	return out
}

// keysPayload projects data as the kubelet's MakePayload does: every key
// with defaultMode, or only the listed items (key -> path, own mode).
// kind names the object in "references non-existent <kind> key" errors.
func keysPayload(data map[string][]byte, items []corev1.KeyToPath, defMode int32, optional bool, kind string, fsGroup *int64) (map[string]FileProjection, error) {
	payload := make(map[string]FileProjection, len(data))
	if len(items) == 0 {
		for k, d := range data {
			payload[k] = FileProjection{Data: d, Mode: defMode, FsGroup: fsGroup}
		}
		return payload, nil
	}
	for _, it := range items {
		d, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			if kind == "configmap" { // the kubelet's exact wording
				return nil, fmt.Errorf("configmap references non-existent config key: %s", it.Key)
			}
			return nil, fmt.Errorf("references non-existent secret key: %s", it.Key)
		}
		mode := defMode
		if it.Mode != nil {
			mode = *it.Mode
		}
		payload[it.Path] = FileProjection{Data: d, Mode: mode, FsGroup: fsGroup}
	}
	return payload, nil
}

func configMapPayload(ctx context.Context, pod *corev1.Pod, s *corev1.ConfigMapVolumeSource, src Sources, fsGroup *int64) (map[string]FileProjection, error) {
	optional := isTrue(s.Optional)
	cm, err := src.GetConfigMap(ctx, pod.Namespace, s.Name)
	if apierrors.IsNotFound(err) && optional {
		return map[string]FileProjection{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("configmap %s/%s: %w", pod.Namespace, s.Name, err)
	}
	return keysPayload(configMapData(cm), s.Items, modeOr(s.DefaultMode), optional, "configmap", fsGroup)
}

func secretPayload(ctx context.Context, pod *corev1.Pod, s *corev1.SecretVolumeSource, src Sources, fsGroup *int64) (map[string]FileProjection, error) {
	optional := isTrue(s.Optional)
	sec, err := src.GetSecret(ctx, pod.Namespace, s.SecretName)
	if apierrors.IsNotFound(err) && optional {
		return map[string]FileProjection{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", pod.Namespace, s.SecretName, err)
	}
	return keysPayload(sec.Data, s.Items, modeOr(s.DefaultMode), optional, "secret", fsGroup)
}

// downwardPayload writes each item's fieldRef or resourceFieldRef value.
func downwardPayload(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, defMode int32, allocatable corev1.ResourceList, fsGroup *int64) (map[string]FileProjection, error) {
	payload := make(map[string]FileProjection, len(items))
	for i := range items {
		it := &items[i]
		var val string
		var err error
		switch {
		case it.FieldRef != nil:
			val, err = envvars.FieldValue(pod, it.FieldRef, envvars.Inputs{})
		case it.ResourceFieldRef != nil:
			val, err = envvars.ResourceValue(pod, nil, it.ResourceFieldRef, allocatable)
		default:
			err = fmt.Errorf("no fieldRef or resourceFieldRef")
		}
		if err != nil {
			return nil, fmt.Errorf("downwardAPI item %q: %w", it.Path, err)
		}
		mode := defMode
		if it.Mode != nil {
			mode = *it.Mode
		}
		payload[it.Path] = FileProjection{Data: []byte(val), Mode: mode, FsGroup: fsGroup}
	}
	return payload, nil
}
