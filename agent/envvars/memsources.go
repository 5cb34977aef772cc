package envvars

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MemSources is an in-memory Sources for tests and static pods. Objects are
// stored by "namespace/name" and returned as deep copies.
type MemSources struct {
	mu         sync.Mutex
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

var _ Sources = (*MemSources)(nil)

// NewMemSources returns an empty MemSources.
func NewMemSources() *MemSources {
	return &MemSources{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
}

// PutConfigMap stores (or replaces) cm.
func (m *MemSources) PutConfigMap(cm *corev1.ConfigMap) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.configMaps[cm.Namespace+"/"+cm.Name] = cm.DeepCopy()
}

// PutSecret stores (or replaces) s.
func (m *MemSources) PutSecret(s *corev1.Secret) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.secrets[s.Namespace+"/"+s.Name] = s.DeepCopy()
}

// DeleteConfigMap removes a ConfigMap.
func (m *MemSources) DeleteConfigMap(namespace, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.configMaps, namespace+"/"+name)
}

// GetConfigMap implements Sources.
func (m *MemSources) GetConfigMap(_ context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cm, ok := m.configMaps[namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
	}
	return cm.DeepCopy(), nil
}

// GetSecret implements Sources.
func (m *MemSources) GetSecret(_ context.Context, namespace, name string) (*corev1.Secret, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.secrets[namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return s.DeepCopy(), nil
}
