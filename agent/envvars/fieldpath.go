package envvars

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FieldValue resolves a downward API fieldRef (env or volume) against the
// pod, as the kubelet's podFieldSelectorRuntimeValue does.
func FieldValue(pod *corev1.Pod, fs *corev1.ObjectFieldSelector, in Inputs) (string, error) {
	if fs.APIVersion != "" && fs.APIVersion != "v1" {
		return "", fmt.Errorf("fieldRef %q: unsupported pod version: %s", fs.FieldPath, fs.APIVersion)
	}
	path := fs.FieldPath
	if path == "spec.host" {
		path = "spec.nodeName"
	}
	switch path {
	case "spec.nodeName":
		return firstNonEmpty(pod.Spec.NodeName, in.NodeName), nil
	case "spec.serviceAccountName":
		return firstNonEmpty(pod.Spec.ServiceAccountName, in.ServiceAccount), nil
	case "status.hostIP":
		return first(in.hostIPs(pod)), nil
	case "status.hostIPs":
		return strings.Join(in.hostIPs(pod), ","), nil
	case "status.podIP":
		return first(in.podIPs(pod)), nil
	case "status.podIPs":
		return strings.Join(in.podIPs(pod), ","), nil
	}
	return metadataValue(pod, path)
}

func metadataValue(pod *corev1.Pod, path string) (string, error) {
	if p, sub, ok := splitSubscript(path); ok {
		switch p {
		case "metadata.annotations":
			if errs := validation.IsQualifiedName(strings.ToLower(sub)); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", path, strings.Join(errs, ";"))
			}
			return pod.Annotations[sub], nil
		case "metadata.labels":
			if errs := validation.IsQualifiedName(sub); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", path, strings.Join(errs, ";"))
			}
			return pod.Labels[sub], nil
		default:
			return "", fmt.Errorf("fieldPath %q does not support subscript", path)
		}
	}
	switch path {
	case "metadata.annotations":
		return FormatMap(pod.Annotations), nil
	case "metadata.labels":
		return FormatMap(pod.Labels), nil
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", path)
}

// splitSubscript splits "metadata.labels['key']" into path and key.
func splitSubscript(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	parts := strings.SplitN(strings.TrimSuffix(fieldPath, "']"), "['", 2)
	if len(parts) < 2 || parts[0] == "" {
		return fieldPath, "", false
	}
	return parts[0], parts[1], true
}

// FormatMap renders labels/annotations as the kubelet does: sorted
// key="quoted value" lines.
func FormatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var dst []byte
	for _, k := range keys {
		if len(dst) > 0 {
			dst = append(dst, '\n')
		}
		dst = append(dst, k...)
		dst = append(dst, '=')
		dst = strconv.AppendQuote(dst, m[k])
	}
	return string(dst)
}

// ResourceValue resolves a resourceFieldRef for container (or, when
// fs.ContainerName is set, the named container of pod). Unset or zero
// limits default to the node's allocatable, as in the kubelet.
func ResourceValue(pod *corev1.Pod, container *corev1.Container, fs *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	if fs.ContainerName != "" {
		c, err := findContainer(pod, fs.ContainerName)
		if err != nil {
			return "", err
		}
		container = c
	}
	if container == nil {
		return "", fmt.Errorf("resourceFieldRef %q: no container", fs.Resource)
	}
	limits := mergeLimits(container.Resources.Limits, allocatable)
	return containerResourceValue(fs, limits, container.Resources.Requests)
}

func findContainer(pod *corev1.Pod, name string) (*corev1.Container, error) {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i], nil
			}
		}
	}
	return nil, fmt.Errorf("container %s not found", name)
}

func mergeLimits(limits, allocatable corev1.ResourceList) corev1.ResourceList {
	out := limits.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := out[name]; !ok || q.IsZero() {
			if a, ok := allocatable[name]; ok {
				out[name] = a.DeepCopy()
			}
		}
	}
	return out
}

func containerResourceValue(fs *corev1.ResourceFieldSelector, limits, requests corev1.ResourceList) (string, error) {
	divisor := resource.MustParse("1")
	if !fs.Divisor.IsZero() {
		divisor = fs.Divisor
	}
	kind, name, ok := strings.Cut(fs.Resource, ".")
	list := requests
	if kind == "limits" {
		list = limits
	} else if kind != "requests" {
		ok = false
	}
	rn := corev1.ResourceName(name)
	switch {
	case !ok:
	case rn == corev1.ResourceCPU:
		q := list[rn]
		return ceilDiv(float64(q.MilliValue()), float64(divisor.MilliValue())), nil
	case rn == corev1.ResourceMemory || rn == corev1.ResourceEphemeralStorage ||
		strings.HasPrefix(name, corev1.ResourceHugePagesPrefix):
		q := list[rn]
		return ceilDiv(float64(q.Value()), float64(divisor.Value())), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
}

func ceilDiv(v, d float64) string {
	return strconv.FormatInt(int64(math.Ceil(v/d)), 10)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
