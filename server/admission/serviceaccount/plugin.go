package serviceaccount

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/admission"
)

// Upstream's names and defaults.
const (
	DefaultName         = "default"
	MountPath           = "/var/run/secrets/kubernetes.io/serviceaccount"
	VolumePrefix        = "kube-api-access-"
	tokenExpiration     = int64(3607)
	rootCAConfigMap     = "kube-root-ca.crt"
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
)

// Getter reads a ServiceAccount; (nil, nil) when it does not exist.
type Getter interface {
	ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
}

// Plugin is the ServiceAccount admission plug-in.
type Plugin struct {
	sas Getter
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plug-in reading ServiceAccounts through sas.
func New(sas Getter) *Plugin { return &Plugin{sas: sas} }

// Name implements admission.Named.
func (p *Plugin) Name() string { return "ServiceAccount" }

// Handles implements admission.Mutator: pod creates.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok || a.Subresource != "" || a.Resource.Resource != "pods" || pod.Annotations[mirrorPodAnnotation] != "" {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultName
	}
	// The v1 API mirrors the name in the deprecated field (as defaulting does).
	pod.Spec.DeprecatedServiceAccount = pod.Spec.ServiceAccountName
	sa, err := p.sas.ServiceAccount(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err)
	}
	if sa == nil && pod.Spec.ServiceAccountName != DefaultName {
		return fmt.Errorf("error looking up service account %s/%s: serviceaccount %q not found",
			a.Namespace, pod.Spec.ServiceAccountName, pod.Spec.ServiceAccountName)
	}
	if sa != nil && len(pod.Spec.ImagePullSecrets) == 0 {
		for _, s := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s.Name})
		}
	}
	if automount(sa, pod) {
		mountToken(pod)
	}
	return nil
}

// automount: the pod's setting wins, then the ServiceAccount's, then true.
func automount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa != nil && sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountToken adds the kube-api-access volume and mounts it in every
// container that mounts nothing at MountPath yet.
func mountToken(pod *corev1.Pod) {
	name := ""
	needed := false
	each := func(cs []corev1.Container) {
		for i := range cs {
			if hasMountAt(cs[i].VolumeMounts, MountPath) {
				continue
			}
			if name == "" {
				name = volumeName(pod)
			}
			needed = true
			cs[i].VolumeMounts = append(cs[i].VolumeMounts, corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: MountPath})
		}
	}
	each(pod.Spec.InitContainers)
	each(pod.Spec.Containers)
	if needed && !hasVolume(pod, name) {
		pod.Spec.Volumes = append(pod.Spec.Volumes, tokenVolume(name))
	}
}

// volumeName reuses an existing kube-api-access volume, else makes a name.
func volumeName(pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		if len(v.Name) > len(VolumePrefix) && v.Name[:len(VolumePrefix)] == VolumePrefix && v.Projected != nil {
			return v.Name
		}
	}
	return VolumePrefix + utilrand.String(5)
}

func hasMountAt(ms []corev1.VolumeMount, path string) bool {
	for _, m := range ms {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

func hasVolume(pod *corev1.Pod, name string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}

// tokenVolume is upstream's projected volume, field for field.
func tokenVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(tokenExpiration)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: rootCAConfigMap},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}
