package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/utils/clock"
)

// scaler reads and writes the scale subresource of an HPA's target.
type scaler interface {
	// Get returns the target's Scale and the group-resource that served it.
	Get(ctx context.Context, namespace string, ref autoscalingv2.CrossVersionObjectReference) (*autoscalingv1.Scale, schema.GroupResource, error)
	// Update writes s (spec.replicas) back.
	Update(ctx context.Context, namespace string, gr schema.GroupResource, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error)
}

// minMapperReset is how often at most an unknown kind resets the cached
// discovery behind the RESTMapper.
const minMapperReset = 10 * time.Second

// restScaler resolves kinds with a RESTMapper over cached discovery (reset
// when a kind is unknown, so CRDs created later work) and talks to the
// scale subresource with client-go's scale client.
type restScaler struct {
	mapper *restmapper.DeferredDiscoveryRESTMapper
	scales scale.ScalesGetter
	clock  clock.PassiveClock

	mu        sync.Mutex
	lastReset time.Time
}

var _ scaler = (*restScaler)(nil)

// newRESTScaler builds the mapper and the scale client over cfg.
func newRESTScaler(cfg *rest.Config, disco discovery.DiscoveryInterface, clk clock.PassiveClock) (*restScaler, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	scales, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(disco))
	if err != nil {
		return nil, fmt.Errorf("scale client: %w", err)
	}
	return &restScaler{mapper: mapper, scales: scales, clock: clk}, nil
}

// Get tries each REST mapping of the reference's kind in turn, as
// upstream's scaleForResourceMappings does; the first error is returned.
func (r *restScaler) Get(ctx context.Context, namespace string, ref autoscalingv2.CrossVersionObjectReference) (*autoscalingv1.Scale, schema.GroupResource, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, schema.GroupResource{}, fmt.Errorf("invalid API version in scale target reference: %w", err)
	}
	mappings, err := r.mappings(schema.GroupKind{Group: gv.Group, Kind: ref.Kind})
	if err != nil {
		return nil, schema.GroupResource{}, err
	}
	var first error
	for _, m := range mappings {
		gr := m.Resource.GroupResource()
		s, err := r.scales.Scales(namespace).Get(ctx, gr, ref.Name, metav1.GetOptions{})
		if err == nil {
			return s, gr, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = errors.New("unrecognized resource")
	}
	return nil, schema.GroupResource{}, first
}

// mappings resolves gk, resetting the cached discovery once when the kind
// is unknown (at most every minMapperReset).
func (r *restScaler) mappings(gk schema.GroupKind) ([]*apimeta.RESTMapping, error) {
	ms, err := r.mapper.RESTMappings(gk)
	if err == nil && len(ms) > 0 {
		return ms, nil
	}
	if r.resetAllowed() {
		r.mapper.Reset()
		ms, err = r.mapper.RESTMappings(gk)
	}
	if err == nil && len(ms) == 0 {
		err = &apimeta.NoKindMatchError{GroupKind: gk}
	}
	return ms, err
}

func (r *restScaler) resetAllowed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	if !r.lastReset.IsZero() && now.Sub(r.lastReset) < minMapperReset {
		return false
	}
	r.lastReset = now
	return true
}

// Update writes the scale.
func (r *restScaler) Update(ctx context.Context, namespace string, gr schema.GroupResource, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
	return r.scales.Scales(namespace).Update(ctx, gr, s, metav1.UpdateOptions{})
}
