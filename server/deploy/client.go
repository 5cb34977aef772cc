package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

const (
	// DefaultNamespace holds namespaced objects whose manifest names no
	// namespace (k3s applies them to kube-system too).
	DefaultNamespace = "kube-system"
	// RecordLabel marks orch's record ConfigMaps (in kube-system).
	RecordLabel  = "orch.io/manifest-record"
	recordPrefix = "orch-manifest-"
)

// ClusterApplier applies through a dynamic client, finding resources by
// discovery; a kind that is not served yet (its CRD is still being set up)
// fails until discovery finds it.
type ClusterApplier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

var _ Applier = (*ClusterApplier)(nil)

// NewClusterApplier returns an Applier talking to the API server of cfg.
func NewClusterApplier(cfg *rest.Config) (*ClusterApplier, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	return &ClusterApplier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

func (a *ClusterApplier) mapping(ref Ref) (*meta.RESTMapping, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", ref.APIVersion, err)
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	m, err := a.mapper.RESTMapping(gk, gv.Version)
	if meta.IsNoMatchError(err) {
		a.mapper.Reset() // a CRD may have appeared since discovery was cached
		m, err = a.mapper.RESTMapping(gk, gv.Version)
	}
	return m, err
}

// Apply server-side applies obj with FieldManager, forcing conflicts.
func (a *ClusterApplier) Apply(ctx context.Context, obj *unstructured.Unstructured) (Ref, error) {
	m, err := a.mapping(refOf(obj))
	if err != nil {
		return Ref{}, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(DefaultNamespace)
		}
	} else {
		obj.SetNamespace("")
	}
	_, err = a.dyn.Resource(m.Resource).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj,
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return Ref{}, err
	}
	return refOf(obj), nil
}

// Delete deletes the object (by UID, so a re-created one is left alone) if
// it still names file in FileAnnotation.
func (a *ClusterApplier) Delete(ctx context.Context, ref Ref, file string) error {
	m, err := a.mapping(ref)
	if meta.IsNoMatchError(err) {
		return nil // the kind is gone, and its objects with it
	}
	if err != nil {
		return err
	}
	res := a.dyn.Resource(m.Resource).Namespace(ref.Namespace)
	cur, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur.GetAnnotations()[FileAnnotation] != file {
		return nil // taken over by someone else: not orch's any more
	}
	uid := cur.GetUID()
	bg := metav1.DeletePropagationBackground
	err = res.Delete(ctx, ref.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &bg})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// ConfigMapRecords keeps one ConfigMap per manifest file in kube-system:
// data.file is the file name, data.objects the JSON list of what it applied,
// data.server the server whose directory it came from.
type ConfigMapRecords struct {
	client kubernetes.Interface
}

var _ Records = (*ConfigMapRecords)(nil)

// NewConfigMapRecords returns Records over client.
func NewConfigMapRecords(client kubernetes.Interface) *ConfigMapRecords {
	return &ConfigMapRecords{client: client}
}

// RecordName is the ConfigMap that records file.
func RecordName(file string) string {
	sum := sha256.Sum256([]byte(file))
	base := labelValue(file)
	if len(base) > 40 {
		base = base[:40]
	}
	name := recordPrefix + base + "-" + hex.EncodeToString(sum[:4])
	b := []byte(name)
	for i, ch := range b {
		if ch >= 'A' && ch <= 'Z' {
			b[i] = ch + 'a' - 'A'
		} else if ch == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}

// Get reads file's record.
func (r *ConfigMapRecords) Get(ctx context.Context, file string) (Record, bool, error) {
	cm, err := r.client.CoreV1().ConfigMaps(DefaultNamespace).Get(ctx, RecordName(file), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("reading record of %s: %w", file, err)
	}
	rec := Record{Server: cm.Data["server"]}
	if err := json.Unmarshal([]byte(cm.Data["objects"]), &rec.Refs); err != nil {
		return Record{}, false, fmt.Errorf("record %s of %s: %w", cm.Name, file, err)
	}
	return rec, true, nil
}

// Put writes file's record.
func (r *ConfigMapRecords) Put(ctx context.Context, file string, rec Record) error {
	refs := rec.Refs
	if refs == nil {
		refs = []Ref{}
	}
	js, err := json.Marshal(refs)
	if err != nil {
		return err
	}
	ac := corev1ac.ConfigMap(RecordName(file), DefaultNamespace).WithLabels(map[string]string{RecordLabel: "true"}).
		WithData(map[string]string{"file": file, "objects": string(js), "server": rec.Server})
	_, err = r.client.CoreV1().ConfigMaps(DefaultNamespace).Apply(ctx, ac, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("writing record of %s: %w", file, err)
	}
	return nil
}

// Delete removes file's record.
func (r *ConfigMapRecords) Delete(ctx context.Context, file string) error {
	err := r.client.CoreV1().ConfigMaps(DefaultNamespace).Delete(ctx, RecordName(file), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting record of %s: %w", file, err)
	}
	return nil
}

// List returns the files that have a record.
func (r *ConfigMapRecords) List(ctx context.Context) ([]string, error) {
	list, err := r.client.CoreV1().ConfigMaps(DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: RecordLabel + "=true"})
	if err != nil {
		return nil, fmt.Errorf("listing manifest records: %w", err)
	}
	var files []string
	for _, cm := range list.Items {
		if f := cm.Data["file"]; f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// EventWarner reports problems as Warning Events about a file's record
// ConfigMap (kubectl -n kube-system get events).
type EventWarner struct {
	client kubernetes.Interface
	log    *zap.Logger
}

var _ Warner = (*EventWarner)(nil)

// NewEventWarner returns a Warner over client.
func NewEventWarner(client kubernetes.Interface, log *zap.Logger) *EventWarner {
	return &EventWarner{client: client, log: log}
}

// Warn creates one Event; failing to is not an error of the manifest.
func (w *EventWarner) Warn(ctx context.Context, file, reason, message string) {
	if len(message) > 1000 {
		message = message[:1000] + "…"
	}
	now := metav1.NewTime(time.Now())
	name := RecordName(file)
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", name, now.UnixNano()), Namespace: DefaultNamespace}, // as client-go's recorder names them
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: DefaultNamespace, Name: name},
		Reason:         reason, Message: message, Type: corev1.EventTypeWarning, Count: 1,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: FieldManager},
	}
	_, err := w.client.CoreV1().Events(DefaultNamespace).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil && ctx.Err() == nil {
		w.log.Warn("creating manifest event", zap.String("file", file), zap.Error(err))
	}
}
