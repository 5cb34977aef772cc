package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/auth"
)

// Operation is the kind of request being admitted.
type Operation string

// The operations of AdmissionReview.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one request under admission. Mutators may change
// Object in place; nothing else is theirs to change.
type Attributes struct {
	Operation   Operation
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	// Object is the new object (nil for delete); OldObject the stored one
	// (nil for create).
	Object    runtime.Object
	OldObject runtime.Object
	// Options is the CreateOptions, UpdateOptions or DeleteOptions of the request.
	Options runtime.Object
	DryRun  bool
	User    *auth.User
	// Equivalents lists the other served versions of the resource (a
	// custom resource with several versions; nil: none). Webhooks with
	// matchPolicy Equivalent whose rules name one of them see the request
	// in that version.
	Equivalents func() []Equivalent

	mu       sync.Mutex
	warnings []string
	reinvoke reinvocation
}

// Equivalent is another version of a request's resource, and how objects
// are converted to a version of it.
type Equivalent struct {
	Resource schema.GroupVersionResource
	Kind     schema.GroupVersionKind
	// Convert turns objs, in place, into version to.
	Convert func(ctx context.Context, objs []runtime.Object, to schema.GroupVersion) error
}

// InVersion returns a's request as eq sees it: a new Attributes with
// eq's resource and kind, and copies of the objects converted to its
// version; its one Equivalent is a's version, the way back. Warnings and
// reinvocation stay with a.
func (a *Attributes) InVersion(ctx context.Context, eq Equivalent) (*Attributes, error) {
	back := Equivalent{Resource: a.Resource, Kind: a.Kind, Convert: eq.Convert}
	b := &Attributes{Operation: a.Operation, Kind: eq.Kind, Resource: eq.Resource, Subresource: a.Subresource,
		Namespace: a.Namespace, Name: a.Name, Options: a.Options, DryRun: a.DryRun, User: a.User,
		Equivalents: func() []Equivalent { return []Equivalent{back} }}
	var objs []runtime.Object
	if a.Object != nil {
		b.Object = a.Object.DeepCopyObject()
		objs = append(objs, b.Object)
	}
	if a.OldObject != nil {
		b.OldObject = a.OldObject.DeepCopyObject()
		objs = append(objs, b.OldObject)
	}
	if len(objs) > 0 {
		if err := eq.Convert(ctx, objs, eq.Kind.GroupVersion()); err != nil {
			return nil, fmt.Errorf("converting to %s: %w", eq.Kind.GroupVersion(), err)
		}
	}
	return b, nil
}

// AddWarning records a warning for the client (a Warning header).
func (a *Attributes) AddWarning(msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.warnings = append(a.warnings, msg)
}

// Warnings returns the warnings recorded so far.
func (a *Attributes) Warnings() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.warnings...)
}

// Mutator is a mutating admission plug-in.
type Mutator interface {
	// Handles reports whether the plug-in acts on op at all.
	Handles(op Operation) bool
	Admit(ctx context.Context, a *Attributes) error
}

// Validator is a validating admission plug-in.
type Validator interface {
	Handles(op Operation) bool
	Validate(ctx context.Context, a *Attributes) error
}

// Named plug-ins are named in the errors the chain wraps.
type Named interface {
	Name() string
}

// Chain runs mutators, then validators, in the order given to NewChain.
type Chain struct {
	mutators   []Mutator
	validators []Validator
}

// NewChain builds a chain; each plug-in is a Mutator, a Validator or both.
// Anything else is a programming error.
func NewChain(plugins ...any) (*Chain, error) {
	c := &Chain{}
	for i, p := range plugins {
		m, isM := p.(Mutator)
		v, isV := p.(Validator)
		if !isM && !isV {
			return nil, fmt.Errorf("admission: plug-in %d (%T) is neither a Mutator nor a Validator", i, p)
		}
		if isM {
			c.mutators = append(c.mutators, m)
		}
		if isV {
			c.validators = append(c.validators, v)
		}
	}
	return c, nil
}

// Admit runs every mutating plug-in that handles the operation, then the
// Reinvocable ones once more if one of them changed the object. A nil
// chain admits everything.
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
	if c == nil {
		return nil
	}
	for _, m := range c.mutators {
		if !m.Handles(a.Operation) {
			continue
		}
		if err := m.Admit(ctx, a); err != nil {
			return asStatus(m, a, err)
		}
	}
	return c.reinvoke(ctx, a)
}

// Validate runs every validating plug-in that handles the operation.
func (c *Chain) Validate(ctx context.Context, a *Attributes) error {
	if c == nil {
		return nil
	}
	for _, v := range c.validators {
		if !v.Handles(a.Operation) {
			continue
		}
		if err := v.Validate(ctx, a); err != nil {
			return asStatus(v, a, err)
		}
	}
	return nil
}

// asStatus keeps API errors and turns others into 403 as upstream's
// admission.NewForbidden does.
func asStatus(p any, a *Attributes, err error) error {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return err
	}
	name := fmt.Sprintf("%T", p)
	if n, ok := p.(Named); ok {
		name = n.Name()
	}
	gr := a.Resource.GroupResource()
	return apierrors.NewForbidden(gr, a.Name, fmt.Errorf("%s: %w", name, err))
}

// ResetWarnings forgets the warnings already passed on to the client.
func (a *Attributes) ResetWarnings() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.warnings = nil
}
