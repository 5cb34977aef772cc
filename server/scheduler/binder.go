package scheduler

import (
	"errors"
	"fmt"
	"sync"
)

// Binder binds a pod (namespace/name) to a node. The server's
// implementation will go through the binding subresource.
type Binder interface {
	Bind(pod, node string) error
}

// Binding is one recorded Bind call.
type Binding struct {
	Pod  string
	Node string
}

// RecordingBinder is an in-memory Binder for tests: it records bindings
// and refuses to bind a pod twice.
type RecordingBinder struct {
	mu       sync.Mutex
	bindings []Binding
	bound    map[string]string
}

var _ Binder = (*RecordingBinder)(nil)

// ErrAlreadyBound: the pod was bound before.
var ErrAlreadyBound = errors.New("pod is already bound")

// Bind records the binding.
func (b *RecordingBinder) Bind(pod, node string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bound == nil {
		b.bound = map[string]string{}
	}
	if prev, ok := b.bound[pod]; ok {
		return fmt.Errorf("bind %s to %s (bound to %s): %w", pod, node, prev, ErrAlreadyBound)
	}
	b.bound[pod] = node
	b.bindings = append(b.bindings, Binding{Pod: pod, Node: node})
	return nil
}

// Bindings returns a copy of the bindings in order.
func (b *RecordingBinder) Bindings() []Binding {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Binding(nil), b.bindings...)
}

// PerNode counts the pods bound to each node.
func (b *RecordingBinder) PerNode() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for _, bd := range b.bindings {
		out[bd.Node]++
	}
	return out
}
