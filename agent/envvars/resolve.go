package envvars

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
)

// envList is an ordered set of variables: a name keeps the position of its
// first definition and the value of its last.
type envList struct {
	order []string
	vals  map[string]string
}

func (l *envList) set(k, v string) {
	if _, ok := l.vals[k]; !ok {
		l.order = append(l.order, k)
	}
	l.vals[k] = v
}

// resolver caches the objects fetched for one container.
type resolver struct {
	ctx        context.Context
	pod        *corev1.Pod
	container  *corev1.Container
	src        Sources
	in         Inputs
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

// Resolve returns container's environment as KEY=VALUE entries, resolved as
// the kubelet's makeEnvironmentVariables does: envFrom first, then env
// (a later definition wins), then in.ServiceEnv for names not defined.
// Values set literally get $(VAR) expansion against earlier variables and
// the service env; undefined references stay as written, "$$" is "$".
// envFrom keys that are not valid variable names (empty, containing '=' or
// non-printable/non-ASCII characters) are skipped.
// Order: envFrom sources in order (each source's keys sorted), then env in
// declaration order, then service variables sorted by name.
func Resolve(ctx context.Context, pod *corev1.Pod, container *corev1.Container, src Sources, in Inputs) ([]string, error) {
	r := &resolver{ctx: ctx, pod: pod, container: container, src: src, in: in,
		configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	env := &envList{vals: map[string]string{}}
	for i := range container.EnvFrom {
		if err := r.envFrom(env, &container.EnvFrom[i]); err != nil {
			return nil, fmt.Errorf("container %q envFrom[%d]: %w", container.Name, i, err)
		}
	}
	mapping := MappingFuncFor(env.vals, in.ServiceEnv)
	for i := range container.Env {
		ev := &container.Env[i]
		val, ok, err := r.value(ev, mapping)
		if err != nil {
			return nil, fmt.Errorf("container %q env %q: %w", container.Name, ev.Name, err)
		}
		if ok {
			env.set(ev.Name, val)
		}
	}
	return env.render(in.ServiceEnv), nil
}

func (l *envList) render(service map[string]string) []string {
	out := make([]string, 0, len(l.order)+len(service))
	for _, k := range l.order {
		out = append(out, k+"="+l.vals[k])
	}
	for _, k := range sortedKeys(service) {
		if _, ok := l.vals[k]; !ok {
			out = append(out, k+"="+service[k])
		}
	}
	return out
}

func (r *resolver) envFrom(env *envList, ef *corev1.EnvFromSource) error {
	var data map[string]string
	switch {
	case ef.ConfigMapRef != nil:
		cm, err := r.configMap(ef.ConfigMapRef.Name)
		if err != nil {
			return skipIfOptional(err, ef.ConfigMapRef.Optional)
		}
		data = cm.Data
	case ef.SecretRef != nil:
		s, err := r.secret(ef.SecretRef.Name)
		if err != nil {
			return skipIfOptional(err, ef.SecretRef.Optional)
		}
		data = make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			data[k] = string(v)
		}
	}
	for _, k := range sortedKeys(data) {
		name := ef.Prefix + k
		if len(validation.IsRelaxedEnvVarName(name)) != 0 {
			continue // the kubelet skips invalid keys too (formerly with an event)
		}
		env.set(name, data[k])
	}
	return nil
}

// value resolves one env entry; ok=false means "skip" (optional and missing).
func (r *resolver) value(ev *corev1.EnvVar, mapping func(string) string) (string, bool, error) {
	if ev.Value != "" || ev.ValueFrom == nil {
		return Expand(ev.Value, mapping), true, nil
	}
	vf := ev.ValueFrom
	switch {
	case vf.FieldRef != nil:
		v, err := FieldValue(r.pod, vf.FieldRef, r.in)
		return v, err == nil, err
	case vf.ResourceFieldRef != nil:
		v, err := ResourceValue(r.pod, r.container, vf.ResourceFieldRef, r.in.Allocatable)
		return v, err == nil, err
	case vf.ConfigMapKeyRef != nil:
		return r.configMapKey(vf.ConfigMapKeyRef)
	case vf.SecretKeyRef != nil:
		return r.secretKey(vf.SecretKeyRef)
	}
	return "", false, fmt.Errorf("unsupported valueFrom source")
}

func (r *resolver) configMapKey(ref *corev1.ConfigMapKeySelector) (string, bool, error) {
	cm, err := r.configMap(ref.Name)
	if err != nil {
		return "", false, skipIfOptional(err, ref.Optional)
	}
	v, ok := cm.Data[ref.Key]
	if !ok && !isTrue(ref.Optional) {
		return "", false, fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ref.Key, r.pod.Namespace, ref.Name)
	}
	return v, ok, nil
}

func (r *resolver) secretKey(ref *corev1.SecretKeySelector) (string, bool, error) {
	s, err := r.secret(ref.Name)
	if err != nil {
		return "", false, skipIfOptional(err, ref.Optional)
	}
	v, ok := s.Data[ref.Key]
	if !ok && !isTrue(ref.Optional) {
		return "", false, fmt.Errorf("couldn't find key %v in Secret %v/%v", ref.Key, r.pod.Namespace, ref.Name)
	}
	return string(v), ok, nil
}

func (r *resolver) configMap(name string) (*corev1.ConfigMap, error) {
	if cm, ok := r.configMaps[name]; ok {
		return cm, nil
	}
	if r.src == nil {
		return nil, fmt.Errorf("couldn't get configMap %v/%v: no source", r.pod.Namespace, name)
	}
	cm, err := r.src.GetConfigMap(r.ctx, r.pod.Namespace, name)
	if err != nil {
		return nil, fmt.Errorf("get configMap %s/%s: %w", r.pod.Namespace, name, err)
	}
	r.configMaps[name] = cm
	return cm, nil
}

func (r *resolver) secret(name string) (*corev1.Secret, error) {
	if s, ok := r.secrets[name]; ok {
		return s, nil
	}
	if r.src == nil {
		return nil, fmt.Errorf("couldn't get secret %v/%v: no source", r.pod.Namespace, name)
	}
	s, err := r.src.GetSecret(r.ctx, r.pod.Namespace, name)
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", r.pod.Namespace, name, err)
	}
	r.secrets[name] = s
	return s, nil
}

// skipIfOptional turns a NotFound of an optional reference into "skip".
func skipIfOptional(err error, optional *bool) error {
	if apierrors.IsNotFound(err) && isTrue(optional) {
		return nil
	}
	return err
}

func isTrue(b *bool) bool { return b != nil && *b }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
