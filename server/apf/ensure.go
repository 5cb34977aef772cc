package apf

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/informers"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	flowcontrollisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"

	registryfc "github.com/orch/orch/server/registry/flowcontrol"
)

// fieldManager is upstream's for the bootstrap configuration.
const fieldManager = "api-priority-and-fairness-config-producer-v1"

// EnsureInterval is how often the leader checks the bootstrap objects
// again (upstream's ensurer runs every minute too).
const EnsureInterval = time.Minute

// object is a FlowSchema or a PriorityLevelConfiguration.
type object interface {
	*flowcontrolv1.FlowSchema | *flowcontrolv1.PriorityLevelConfiguration
	metav1.Object
}

// ops are the calls Ensure makes for one kind.
type ops[T object] struct {
	get    func(ctx context.Context, name string) (T, error)
	list   func(ctx context.Context) ([]T, error)
	create func(ctx context.Context, obj T) error
	update func(ctx context.Context, obj T) error
	delete func(ctx context.Context, name string) error
	// revise returns cur with the spec of boot when the (defaulted) specs
	// differ, nil when they are equal.
	revise   func(cur, boot T) T
	deepCopy func(T) T
}

// RunEnsurer keeps the bootstrap configuration until ctx ends (leader
// only). It reads the objects from f's informers (as upstream's ensurer
// reads listers), once they have synced, and writes with client; f's
// Shutdown is called at the end (a term's view of a shared cache).
func RunEnsurer(ctx context.Context, client flowcontrolclient.FlowcontrolV1Interface, f informers.SharedInformerFactory, log *zap.Logger) error {
	log = log.Named("apf-bootstrap")
	defer f.Shutdown()
	fc := f.Flowcontrol().V1()
	l := &Listers{FlowSchemas: fc.FlowSchemas().Lister(), Levels: fc.PriorityLevelConfigurations().Lister()}
	f.StartWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), fc.FlowSchemas().Informer().HasSynced, fc.PriorityLevelConfigurations().Informer().HasSynced) {
		return nil
	}
	for {
		if err := Ensure(ctx, client, l); err != nil && ctx.Err() == nil {
			log.Warn("ensuring the API priority and fairness configuration", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(EnsureInterval):
		}
	}
}

// Listers are where Ensure reads the current objects when given: a
// stale read only costs a refused write (AlreadyExists, Conflict), which
// the next round sets right.
type Listers struct {
	FlowSchemas flowcontrollisters.FlowSchemaLister
	Levels      flowcontrollisters.PriorityLevelConfigurationLister
}

// Ensure creates missing bootstrap objects, resets the spec of changed
// mandatory ones (and of suggested ones that are auto-updated) and removes
// auto-updated objects that are not bootstrap objects any more. It reads
// with l, or with client when l is nil.
func Ensure(ctx context.Context, client flowcontrolclient.FlowcontrolV1Interface, l *Listers) error {
	pl, fs := levelOps(client.PriorityLevelConfigurations()), schemaOps(client.FlowSchemas())
	if l != nil {
		pl.get, pl.list = listerReads[*flowcontrolv1.PriorityLevelConfiguration](l.Levels)
		fs.get, fs.list = listerReads[*flowcontrolv1.FlowSchema](l.FlowSchemas)
	}
	return errors.Join(
		ensureAll(ctx, pl, bootstrap.MandatoryPriorityLevelConfigurations, true),
		ensureAll(ctx, pl, bootstrap.SuggestedPriorityLevelConfigurations, false),
		ensureAll(ctx, fs, bootstrap.MandatoryFlowSchemas, true),
		ensureAll(ctx, fs, bootstrap.SuggestedFlowSchemas, false),
		removeUnwanted(ctx, fs, slices.Concat(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas)),
		removeUnwanted(ctx, pl, slices.Concat(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations)),
	)
}

// listerReads are ops' get and list over a lister.
func listerReads[T object](l interface {
	Get(name string) (T, error)
	List(labels.Selector) ([]T, error)
}) (func(context.Context, string) (T, error), func(context.Context) ([]T, error)) {
	return func(_ context.Context, name string) (T, error) { return l.Get(name) },
		func(context.Context) ([]T, error) { return l.List(labels.Everything()) }
}

func ensureAll[T object](ctx context.Context, o ops[T], boots []T, mandatory bool) error {
	var errs []error
	for _, b := range boots {
		errs = append(errs, ensureOne(ctx, o, b, mandatory))
	}
	return errors.Join(errs...)
}

func ensureOne[T object](ctx context.Context, o ops[T], boot T, mandatory bool) error {
	cur, err := o.get(ctx, boot.GetName())
	if apierrors.IsNotFound(err) {
		if err := o.create(ctx, o.deepCopy(boot)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s: %w", boot.GetName(), err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", boot.GetName(), err)
	}
	auto := mandatory || autoUpdate(cur)
	var revised T
	if auto {
		revised = o.revise(cur, boot)
	}
	annotationOK := hasAnnotation(cur, auto)
	if revised == nil && annotationOK {
		return nil
	}
	if revised == nil {
		revised = o.deepCopy(cur)
	}
	setAnnotation(revised, auto)
	if err := o.update(ctx, revised); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("updating %s: %w", boot.GetName(), err)
	}
	return nil
}

// autoUpdate is upstream's shouldUpdateSpec: the annotation says so, or,
// without a valid one, nobody changed the object since it was created.
func autoUpdate(m metav1.Object) bool {
	if v, err := strconv.ParseBool(m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return v
	}
	return m.GetGeneration() == 1
}

func hasAnnotation(m metav1.Object, want bool) bool {
	v, ok := m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]
	got, err := strconv.ParseBool(v)
	return ok && err == nil && got == want
}

func setAnnotation(m metav1.Object, v bool) {
	a := m.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[flowcontrolv1.AutoUpdateAnnotationKey] = strconv.FormatBool(v)
	m.SetAnnotations(a)
}

// removeUnwanted deletes the objects marked auto-updated that are not
// bootstrap objects.
func removeUnwanted[T object](ctx context.Context, o ops[T], boots []T) error {
	all, err := o.list(ctx)
	if err != nil {
		return fmt.Errorf("listing: %w", err)
	}
	wanted := sets.New[string]()
	for _, b := range boots {
		wanted.Insert(b.GetName())
	}
	var errs []error
	for _, obj := range all {
		v, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey])
		if wanted.Has(obj.GetName()) || err != nil || !v {
			continue
		}
		if err := o.delete(ctx, obj.GetName()); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s: %w", obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

func levelOps(c flowcontrolclient.PriorityLevelConfigurationInterface) ops[*flowcontrolv1.PriorityLevelConfiguration] {
	type pl = flowcontrolv1.PriorityLevelConfiguration
	return ops[*pl]{
		get: func(ctx context.Context, name string) (*pl, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		list: func(ctx context.Context) ([]*pl, error) {
			l, err := c.List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			out := make([]*pl, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out, nil
		},
		create: func(ctx context.Context, o *pl) error {
			_, err := c.Create(ctx, o, metav1.CreateOptions{FieldManager: fieldManager})
			return err
		},
		update: func(ctx context.Context, o *pl) error {
			_, err := c.Update(ctx, o, metav1.UpdateOptions{FieldManager: fieldManager})
			return err
		},
		delete: func(ctx context.Context, name string) error { return c.Delete(ctx, name, metav1.DeleteOptions{}) },
		revise: func(cur, boot *pl) *pl {
			want := boot.DeepCopy()
			registryfc.DefaultPriorityLevel(want)
			if apiequality.Semantic.DeepEqual(want.Spec, cur.Spec) {
				return nil
			}
			out := cur.DeepCopy()
			out.Spec = want.Spec
			return out
		},
		deepCopy: (*pl).DeepCopy,
	}
}

func schemaOps(c flowcontrolclient.FlowSchemaInterface) ops[*flowcontrolv1.FlowSchema] {
	type fs = flowcontrolv1.FlowSchema
	return ops[*fs]{
		get: func(ctx context.Context, name string) (*fs, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		list: func(ctx context.Context) ([]*fs, error) {
			l, err := c.List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			out := make([]*fs, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out, nil
		},
		create: func(ctx context.Context, o *fs) error {
			_, err := c.Create(ctx, o, metav1.CreateOptions{FieldManager: fieldManager})
			return err
		},
		update: func(ctx context.Context, o *fs) error {
			_, err := c.Update(ctx, o, metav1.UpdateOptions{FieldManager: fieldManager})
			return err
		},
		delete: func(ctx context.Context, name string) error { return c.Delete(ctx, name, metav1.DeleteOptions{}) },
		revise: func(cur, boot *fs) *fs {
			want := boot.DeepCopy()
			registryfc.DefaultFlowSchema(want)
			if apiequality.Semantic.DeepEqual(want.Spec, cur.Spec) {
				return nil
			}
			out := cur.DeepCopy()
			out.Spec = want.Spec
			return out
		},
		deepCopy: (*fs).DeepCopy,
	}
}
