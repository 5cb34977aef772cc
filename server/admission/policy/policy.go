package policy

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	upstream "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/admission/celcond"
	"github.com/orch/orch/server/auth"
)

// startTimeout bounds how long a request waits for the plug-in to start.
const startTimeout = 10 * time.Second

// Plugin is the ValidatingAdmissionPolicy validator.
type Plugin struct {
	objs    upstream.ObjectInterfaces
	started chan struct{}
	vap     atomic.Pointer[validating.Plugin]
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plug-in; it admits nothing until Start.
func New(scheme *runtime.Scheme) *Plugin {
	return &Plugin{objs: objectInterfaces(scheme), started: make(chan struct{})}
}

// Start builds upstream's plug-in over the loopback clients and the
// informer factory f (shared with the mutating plug-in; the caller starts
// it) until stop closes.
func (p *Plugin) Start(client kubernetes.Interface, dyn dynamic.Interface, f informers.SharedInformerFactory, authz auth.Authorizer, stop <-chan struct{}) error {
	vap, err := validating.NewPlugin(nil)
	if err != nil {
		return fmt.Errorf("ValidatingAdmissionPolicy: %w", err)
	}
	vap.SetExternalKubeInformerFactory(f)
	vap.SetExternalKubeClientSet(client)
	vap.SetDynamicClient(dyn)
	vap.SetRESTMapper(restMapper(client))
	vap.SetDrainedNotification(stop)
	vap.SetUnconditionalAuthorizer(celcond.Authorizer(authz))
	if err := vap.ValidateInitialization(); err != nil {
		return fmt.Errorf("ValidatingAdmissionPolicy: %w", err)
	}
	p.vap.Store(vap)
	close(p.started)
	return nil
}

// Name implements admission.Named.
func (p *Plugin) Name() string { return validating.PluginName }

// Handles implements admission.Validator: every operation.
func (p *Plugin) Handles(admission.Operation) bool { return true }

// Validate runs the policies bound to the request; Warn actions become
// warnings of the response.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	select {
	case <-p.started:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(startTimeout):
		return apierrors.NewServiceUnavailable("ValidatingAdmissionPolicy is not yet ready to handle the request")
	}
	attrs := upstream.NewAttributesRecord(a.Object, a.OldObject, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		upstream.Operation(a.Operation), a.Options, a.DryRun, celcond.UserInfo(a.User))
	ctx = warning.WithWarningRecorder(ctx, recorder{a})
	return p.vap.Load().Validate(ctx, attrs, p.objs)
}

// recorder passes upstream's warnings to the response.
type recorder struct{ a *admission.Attributes }

func (r recorder) AddWarning(_, text string) { r.a.AddWarning(text) }

// restMapper maps kinds to resources from the API server's discovery.
func restMapper(client kubernetes.Interface) meta.RESTMapper {
	return restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
}
