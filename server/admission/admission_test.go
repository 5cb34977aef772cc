package admission

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type plugin struct {
	name  string
	ops   []Operation
	log   *[]string
	fail  error
	warn  string
	valid bool // also a Validator
}

func (p *plugin) Name() string { return p.name }
func (p *plugin) Handles(op Operation) bool {
	for _, o := range p.ops {
		if o == op {
			return true
		}
	}
	return false
}
func (p *plugin) Admit(_ context.Context, a *Attributes) error {
	*p.log = append(*p.log, "admit:"+p.name)
	if p.warn != "" {
		a.AddWarning(p.warn)
	}
	return p.fail
}

type validator struct{ *plugin }

func (v validator) Validate(_ context.Context, _ *Attributes) error {
	*v.log = append(*v.log, "validate:"+v.name)
	return v.fail
}

func TestChainOrderAndHandles(t *testing.T) {
	var log []string
	a := &plugin{name: "a", ops: []Operation{Create}, log: &log, warn: "careful"}
	b := validator{&plugin{name: "b", ops: []Operation{Create, Update}, log: &log}}
	c := &plugin{name: "c", ops: []Operation{Update}, log: &log}
	ch, err := NewChain(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	attrs := &Attributes{Operation: Create}
	if err := ch.Admit(context.Background(), attrs); err != nil {
		t.Fatal(err)
	}
	if err := ch.Validate(context.Background(), attrs); err != nil {
		t.Fatal(err)
	}
	want := []string{"admit:a", "admit:b", "validate:b"}
	if len(log) != len(want) {
		t.Fatalf("ran %v, want %v", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("ran %v, want %v", log, want)
		}
	}
	if w := attrs.Warnings(); len(w) != 1 || w[0] != "careful" {
		t.Fatalf("warnings %v", w)
	}
}

func TestChainErrors(t *testing.T) {
	var log []string
	gr := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name      string
		err       error
		forbidden bool
		invalid   bool
	}{
		{"plain error becomes 403", errors.New("no"), true, false},
		{"API error kept", apierrors.NewInvalid(gr.WithVersion("").GroupVersion().WithKind("Pod").GroupKind(), "x", nil), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := NewChain(&plugin{name: "p", ops: []Operation{Create}, log: &log, fail: tt.err})
			if err != nil {
				t.Fatal(err)
			}
			got := ch.Admit(context.Background(), &Attributes{Operation: Create, Resource: gr.WithVersion("v1"), Name: "x"})
			if apierrors.IsForbidden(got) != tt.forbidden || apierrors.IsInvalid(got) != tt.invalid {
				t.Fatalf("got %v", got)
			}
		})
	}
	if _, err := NewChain(42); err == nil {
		t.Fatal("a non-plug-in was accepted")
	}
	var nilChain *Chain
	if err := nilChain.Admit(context.Background(), &Attributes{}); err != nil {
		t.Fatal(err)
	}
}
