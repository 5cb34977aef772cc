package admission

import (
	"context"
	"errors"
	"slices"
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

// reinvocable asks for a second run on its first call when change is set.
type reinvocable struct {
	*plugin
	change bool
}

func (r reinvocable) Reinvocable() {}
func (r reinvocable) Admit(ctx context.Context, a *Attributes) error {
	if a.IsReinvoke() {
		*r.log = append(*r.log, "again:"+r.name)
		return nil
	}
	if r.change {
		a.SetShouldReinvoke()
	}
	return r.plugin.Admit(ctx, a)
}

func TestChainReinvocation(t *testing.T) {
	for _, c := range []struct {
		name   string
		change bool
		want   []string
	}{
		{"no change: one run", false, []string{"admit:x", "admit:plain", "admit:y"}},
		{"a change: the reinvocable run again", true, []string{"admit:x", "admit:plain", "admit:y", "again:x", "again:y"}},
	} {
		var log []string
		x := reinvocable{&plugin{name: "x", ops: []Operation{Create}, log: &log}, false}
		plain := &plugin{name: "plain", ops: []Operation{Create}, log: &log}
		y := reinvocable{&plugin{name: "y", ops: []Operation{Create}, log: &log}, c.change}
		ch, err := NewChain(x, plain, y)
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.Admit(context.Background(), &Attributes{Operation: Create}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(log, c.want) {
			t.Errorf("%s: %v, want %v", c.name, log, c.want)
		}
	}
}
