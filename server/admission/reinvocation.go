package admission

import "context"

// Reinvocable mutators take part in reinvocation: when one of them changes
// the object (SetShouldReinvoke), the chain runs every Reinvocable
// mutator once more, and each reruns those of its webhooks or policies
// with reinvocationPolicy IfNeeded that ran before the change (upstream's
// reinvocation handler). Other mutators run once.
type Reinvocable interface {
	Mutator
	Reinvocable()
}

// reinvocation is one request's reinvocation state (upstream's
// ReinvocationContext).
type reinvocation struct {
	is, should bool
	values     map[string]any
}

// IsReinvoke reports that the chain is running the Reinvocable mutators
// a second time.
func (a *Attributes) IsReinvoke() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reinvoke.is
}

// SetShouldReinvoke asks for the second run: a mutator changed the object.
func (a *Attributes) SetShouldReinvoke() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reinvoke.should = true
}

// ReinvocationValue is what a plug-in kept under key for the second run.
func (a *Attributes) ReinvocationValue(key string) any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reinvoke.values[key]
}

// SetReinvocationValue keeps v under key for the second run.
func (a *Attributes) SetReinvocationValue(key string, v any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reinvoke.values == nil {
		a.reinvoke.values = map[string]any{}
	}
	a.reinvoke.values[key] = v
}

// reinvoke runs the Reinvocable mutators again when one asked for it.
func (c *Chain) reinvoke(ctx context.Context, a *Attributes) error {
	a.mu.Lock()
	if !a.reinvoke.should || a.reinvoke.is {
		a.mu.Unlock()
		return nil
	}
	a.reinvoke.is = true
	a.mu.Unlock()
	for _, m := range c.mutators {
		if _, ok := m.(Reinvocable); !ok || !m.Handles(a.Operation) {
			continue
		}
		if err := m.Admit(ctx, a); err != nil {
			return asStatus(m, a, err)
		}
	}
	return nil
}
