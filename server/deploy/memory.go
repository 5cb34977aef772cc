package deploy

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// MemoryCluster is an in-memory Applier and Warner for tests.
type MemoryCluster struct {
	mu      sync.Mutex
	Objects map[Ref]*unstructured.Unstructured
	// Unknown kinds fail to apply (a CRD that does not exist yet).
	Unknown  map[string]bool
	Warnings []string
}

var (
	_ Applier = (*MemoryCluster)(nil)
	_ Records = (*MemoryRecords)(nil)
	_ Warner  = (*MemoryCluster)(nil)
)

// NewMemoryCluster returns an empty cluster.
func NewMemoryCluster() *MemoryCluster {
	return &MemoryCluster{Objects: map[Ref]*unstructured.Unstructured{}, Unknown: map[string]bool{}}
}

// Apply stores obj, defaulting the namespace of kinds other than
// Namespace, ClusterRole and CustomResourceDefinition to kube-system.
func (m *MemoryCluster) Apply(_ context.Context, obj *unstructured.Unstructured) (Ref, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Unknown[obj.GetKind()] {
		return Ref{}, fmt.Errorf("no kind %q is registered", obj.GetKind())
	}
	r := refOf(obj)
	switch r.Kind {
	case "Namespace", "ClusterRole", "CustomResourceDefinition":
		r.Namespace = ""
	default:
		if r.Namespace == "" {
			r.Namespace = DefaultNamespace
		}
	}
	m.Objects[r] = obj.DeepCopy()
	return r, nil
}

// Delete removes the object if it carries the file's annotation.
func (m *MemoryCluster) Delete(_ context.Context, ref Ref, file string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.Objects[ref]; ok && o.GetAnnotations()[FileAnnotation] == file {
		delete(m.Objects, ref)
	}
	return nil
}

// MemoryRecords is an in-memory Records for tests.
type MemoryRecords struct {
	mu   sync.Mutex
	Recs map[string]Record
}

// NewMemoryRecords returns no records.
func NewMemoryRecords() *MemoryRecords { return &MemoryRecords{Recs: map[string]Record{}} }

// Get returns a file's record.
func (m *MemoryRecords) Get(_ context.Context, file string) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.Recs[file]
	r.Refs = append([]Ref(nil), r.Refs...)
	return r, ok, nil
}

// Put stores a file's record.
func (m *MemoryRecords) Put(_ context.Context, file string, rec Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec.Refs = append([]Ref{}, rec.Refs...)
	m.Recs[file] = rec
	return nil
}

// Delete removes a file's record.
func (m *MemoryRecords) Delete(_ context.Context, file string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.Recs, file)
	return nil
}

// List returns the files with a record.
func (m *MemoryRecords) List(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for f := range m.Recs {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

// Warn records a warning.
func (m *MemoryCluster) Warn(_ context.Context, file, reason, message string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Warnings = append(m.Warnings, file+": "+reason+": "+message)
}

// Refs returns the objects in the cluster.
func (m *MemoryCluster) Refs() []Ref {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Ref, 0, len(m.Objects))
	for r := range m.Objects {
		out = append(out, r)
	}
	return out
}
