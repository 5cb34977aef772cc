package statefulset

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/server/controllers/history"
)

// ordinalOf parses "<set>-<n>"; -1 when pod is not a member of set.
func ordinalOf(set *appsv1.StatefulSet, pod *corev1.Pod) int {
	rest, ok := strings.CutPrefix(pod.Name, set.Name+"-")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return -1
	}
	return n
}

func startOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

func podName(set *appsv1.StatefulSet, ord int) string { return fmt.Sprintf("%s-%d", set.Name, ord) }

func claimName(claim string, set *appsv1.StatefulSet, ord int) string {
	return fmt.Sprintf("%s-%s-%d", claim, set.Name, ord)
}

// templateOf decodes the pod template a revision's patch carries.
func templateOf(cr *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	var d struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cr.Data.Raw, &d); err != nil {
		return nil, fmt.Errorf("decoding controller revision %s: %w", cr.Name, err)
	}
	return &d.Spec.Template, nil
}

// newPod builds the pod at ord from tpl, labelled with revision.
func newPod(set *appsv1.StatefulSet, tpl *corev1.PodTemplateSpec, ord int, revision string) *corev1.Pod {
	tpl = tpl.DeepCopy()
	name := podName(set, ord)
	pod := &corev1.Pod{ObjectMeta: tpl.ObjectMeta, Spec: tpl.Spec}
	pod.Name, pod.GenerateName, pod.Namespace = name, "", set.Namespace
	pod.Labels = maps.Clone(tpl.Labels)
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetPodNameLabel] = name
	pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ord)
	pod.Labels[history.HashLabel] = revision
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(set, Kind)}
	pod.Spec.Hostname = name
	pod.Spec.Subdomain = set.Spec.ServiceName
	pod.Spec.Volumes = claimVolumes(set, pod.Spec.Volumes, ord)
	return pod
}

// claimVolumes points a volume per claim template at the pod's claim,
// replacing template volumes of the same name.
func claimVolumes(set *appsv1.StatefulSet, vols []corev1.Volume, ord int) []corev1.Volume {
	claims := map[string]bool{}
	var out []corev1.Volume
	for _, c := range set.Spec.VolumeClaimTemplates {
		claims[c.Name] = true
		out = append(out, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(c.Name, set, ord)}}})
	}
	for _, v := range vols {
		if !claims[v.Name] {
			out = append(out, v)
		}
	}
	return out
}

// newClaim is the claim of template c for the pod at ord.
func newClaim(set *appsv1.StatefulSet, c *corev1.PersistentVolumeClaim, ord int) *corev1.PersistentVolumeClaim {
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claimName(c.Name, set, ord), Namespace: set.Namespace,
			Labels: maps.Clone(c.Labels), Annotations: maps.Clone(c.Annotations)},
		Spec: *c.Spec.DeepCopy(),
	}
	if claim.Labels == nil {
		claim.Labels = map[string]string{}
	}
	if set.Spec.Selector != nil {
		maps.Copy(claim.Labels, set.Spec.Selector.MatchLabels)
	}
	if p := set.Spec.PersistentVolumeClaimRetentionPolicy; p != nil && p.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		claim.OwnerReferences = []metav1.OwnerReference{ownerRef(set.Name, set.UID, Kind.GroupVersion().String(), Kind.Kind)}
	}
	return claim
}

// ownerRef is a non-controller owner reference.
func ownerRef(name string, uid types.UID, apiVersion, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid}
}

func revisionOf(pod *corev1.Pod) string { return pod.Labels[history.HashLabel] }
