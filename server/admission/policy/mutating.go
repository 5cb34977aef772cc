package policy

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	upstream "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/admission/celcond"
	"github.com/orch/orch/server/auth"
)

// Mutating is the MutatingAdmissionPolicy mutator.
type Mutating struct {
	objs    upstream.ObjectInterfaces
	started chan struct{}
	mp      atomic.Pointer[mutating.Plugin]
	paths   PathsFunc // nil: the type converters GET /openapi/v3
}

var _ admission.Mutator = (*Mutating)(nil)

// NewMutating returns the plug-in; it admits nothing until Start.
func NewMutating(scheme *runtime.Scheme) *Mutating {
	return &Mutating{objs: objectInterfaces(scheme), started: make(chan struct{})}
}

// SetOpenAPIPaths lists the OpenAPI v3 documents in process for the type
// converters of ApplyConfiguration merges (call before Start).
func (p *Mutating) SetOpenAPIPaths(paths PathsFunc) { p.paths = paths }

// Start builds upstream's plug-in over the loopback clients (policies,
// bindings and params from the informers of f, which the caller starts;
// the OpenAPI v3 documents of the API server for ApplyConfiguration
// merges) until stop closes.
func (p *Mutating) Start(client kubernetes.Interface, dyn dynamic.Interface, f informers.SharedInformerFactory, authz auth.Authorizer, stop <-chan struct{}) error {
	mp, err := mutating.NewPlugin(nil)
	if err != nil {
		return fmt.Errorf("MutatingAdmissionPolicy: %w", err)
	}
	mp.SetEnabled(true) // GA since 1.36
	if p.paths != nil {
		client = withOpenAPI{Interface: client, paths: p.paths}
	}
	mp.SetExternalKubeInformerFactory(f)
	mp.SetExternalKubeClientSet(client)
	mp.SetDynamicClient(dyn)
	mp.SetRESTMapper(restMapper(client))
	mp.SetDrainedNotification(stop)
	mp.SetUnconditionalAuthorizer(celcond.Authorizer(authz))
	if err := mp.ValidateInitialization(); err != nil {
		return fmt.Errorf("MutatingAdmissionPolicy: %w", err)
	}
	p.mp.Store(mp)
	close(p.started)
	return nil
}

// Name implements admission.Named.
func (p *Mutating) Name() string { return mutating.PluginName }

// Handles implements admission.Mutator: there is nothing to mutate on
// DELETE.
func (p *Mutating) Handles(op admission.Operation) bool { return op != admission.Delete }

// Reinvocable implements admission.Reinvocable.
func (p *Mutating) Reinvocable() {}

// Admit applies the mutations of the policies bound to the request. A
// policy that changes the object asks the chain for a second run, in
// which the policies with reinvocationPolicy IfNeeded run again if the
// object changed since they last did. Both runs share one upstream
// attributes record, which holds upstream's reinvocation state.
func (p *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Object == nil {
		return nil
	}
	select {
	case <-p.started:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(startTimeout):
		return apierrors.NewServiceUnavailable("MutatingAdmissionPolicy is not yet ready to handle the request")
	}
	attrs, ok := a.ReinvocationValue(mutating.PluginName).(upstream.Attributes)
	if !ok {
		attrs = upstream.NewAttributesRecord(a.Object, a.OldObject, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
			upstream.Operation(a.Operation), a.Options, a.DryRun, celcond.UserInfo(a.User))
		a.SetReinvocationValue(mutating.PluginName, attrs)
	}
	rc := attrs.GetReinvocationContext()
	if a.IsReinvoke() {
		rc.SetIsReinvoke()
	}
	ctx = warning.WithWarningRecorder(ctx, recorder{a})
	if err := p.mp.Load().Admit(ctx, attrs, p.objs); err != nil {
		return err
	}
	if rc.ShouldReinvoke() {
		a.SetShouldReinvoke()
	}
	return nil
}

// objectInterfaces are the scheme's, with a convertor that copies between
// objects of the same type: orch's objects are the versioned types
// themselves, where upstream converts to and from an internal version.
func objectInterfaces(scheme *runtime.Scheme) upstream.ObjectInterfaces {
	return objects{upstream.NewObjectInterfacesFromScheme(scheme), sameTypeConvertor{scheme}}
}

type objects struct {
	upstream.ObjectInterfaces
	conv runtime.ObjectConvertor
}

func (o objects) GetObjectConvertor() runtime.ObjectConvertor { return o.conv }

type sameTypeConvertor struct{ runtime.ObjectConvertor }

// Convert copies in into out when both are the same typed object.
func (c sameTypeConvertor) Convert(in, out, context interface{}) error {
	src, ok := in.(runtime.Object)
	if ok && reflect.TypeOf(in) == reflect.TypeOf(out) && reflect.TypeOf(in).Kind() == reflect.Pointer {
		if _, unstructured := in.(runtime.Unstructured); !unstructured {
			reflect.ValueOf(out).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
			return nil
		}
	}
	return c.ObjectConvertor.Convert(in, out, context)
}
