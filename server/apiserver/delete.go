package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/orch/orch/datastore"
)

// returnsDeletedObject lists the resources whose DELETE answers with the
// object rather than a Status, as upstream's registries do.
var returnsDeletedObject = map[string]bool{"pods": true, "services": true, "namespaces": true, "podtemplates": true}

// deleteResult is what one delete did.
type deleteResult struct {
	obj     runtime.Object
	deleted bool // removed from the store (else deletion is pending)
}

// handleDelete serves DELETE of one object.
func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	opts, err := s.deleteOptions(w, r, rc)
	if err == nil && rc.res == s.namespaces {
		err = namespaceDeleteForbidden(rc.name)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	dryRun := len(opts.DryRun) > 0
	res, err := s.deleteObject(r.Context(), rc, rc.name, opts, dryRun)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	code := http.StatusOK
	//nolint:staticcheck // OrphanDependents=false asks for 202 on pending deletions, as upstream.
	if !res.deleted && opts.OrphanDependents != nil && !*opts.OrphanDependents {
		code = http.StatusAccepted
	}
	if res.deleted && !returnsDeletedObject[rc.res.Resource] {
		m := objectMeta(res.obj)
		s.writeJSON(w, r, code, successStatus(code, &metav1.StatusDetails{
			Name: m.GetName(), Group: rc.gr.Group, Kind: rc.res.Resource, UID: m.GetUID(),
		}))
		return
	}
	s.writeObject(w, r, rc, code, res.obj)
}

// deleteOptions reads DeleteOptions from the body and the query.
func (s *Server) deleteOptions(w http.ResponseWriter, r *http.Request, rc *reqCtx) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	if r.Body != nil && r.ContentLength != 0 {
		if err := s.readDeleteOptions(w, r, opts); err != nil {
			return nil, err
		}
	}
	if err := deleteOptionsFromQuery(rc, opts); err != nil {
		return nil, err
	}
	if err := validateDeleteOptions(opts); err != nil {
		return nil, err
	}
	defaultPropagation(w, rc, opts)
	return opts, nil
}

// jobDeleteWarning is kube-apiserver's warning for deleting batch/v1 Jobs
// without a propagation policy.
const jobDeleteWarning = "child pods are preserved by default when jobs are deleted; " +
	"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"

// defaultPropagation applies a resource's default garbage collection
// policy: batch/v1 Jobs and core/v1 ReplicationControllers orphan their
// pods unless told otherwise (for backward compatibility, as upstream;
// only Jobs warn), everything else is Background.
func defaultPropagation(w http.ResponseWriter, rc *reqCtx, opts *metav1.DeleteOptions) {
	//nolint:staticcheck // the legacy field still selects a policy
	if opts.PropagationPolicy != nil || opts.OrphanDependents != nil || !rc.res.OrphanDependents {
		return
	}
	p := metav1.DeletePropagationOrphan
	opts.PropagationPolicy = &p
	if rc.gr.Group == "batch" && rc.gr.Resource == "jobs" {
		addWarning(w, jobDeleteWarning)
	}
}

// readDeleteOptions decodes a JSON, YAML or protobuf DeleteOptions body.
func (s *Server) readDeleteOptions(w http.ResponseWriter, r *http.Request, opts *metav1.DeleteOptions) error {
	format, err := requestFormat(r)
	if err != nil {
		return err
	}
	data, err := s.readBody(w, r)
	if err != nil || len(data) == 0 {
		return err
	}
	switch format {
	case formatProtobuf:
		_, _, err = s.dec.protobuf.Decode(data, nil, opts)
	case formatYAML:
		err = yaml.Unmarshal(data, opts)
	default:
		err = json.Unmarshal(data, opts)
	}
	if err != nil {
		return badRequestf("invalid DeleteOptions in the body: %v", err)
	}
	return nil
}

func deleteOptionsFromQuery(rc *reqCtx, opts *metav1.DeleteOptions) error {
	q := rc.query
	if v := q.Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return badRequestf("gracePeriodSeconds: invalid value %q", v)
		}
		opts.GracePeriodSeconds = &n
	}
	if v := q.Get("propagationPolicy"); v != "" {
		p := metav1.DeletionPropagation(v)
		opts.PropagationPolicy = &p
	}
	if v := q.Get("orphanDependents"); v != "" {
		b := isTrue(v)
		opts.OrphanDependents = &b //nolint:staticcheck // still sent by old clients
	}
	if _, ok := q["dryRun"]; ok {
		if _, err := parseDryRun(rc); err != nil {
			return err
		}
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return nil
}

func validateDeleteOptions(o *metav1.DeleteOptions) error {
	for _, d := range o.DryRun {
		if d != metav1.DryRunAll {
			return badRequestf("dryRun: unsupported value %q (only All is supported)", d)
		}
	}
	if o.PropagationPolicy != nil {
		switch *o.PropagationPolicy {
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan:
		default:
			return apierrors.NewBadRequest(fmt.Sprintf("propagationPolicy: unsupported value %q (must be Orphan, Background or Foreground)", *o.PropagationPolicy))
		}
		if o.OrphanDependents != nil { //nolint:staticcheck // as upstream
			return badRequestf("orphanDependents and propagationPolicy cannot both be set")
		}
	}
	if o.GracePeriodSeconds != nil && *o.GracePeriodSeconds < 0 {
		zero := int64(0)
		o.GracePeriodSeconds = &zero
	}
	return nil
}

// deleteObject deletes name with kube's rules: preconditions, GC
// finalizers for Orphan/Foreground, graceful deletion of bound pods,
// deferred deletion while finalizers remain, namespace termination.
func (s *Server) deleteObject(ctx context.Context, rc *reqCtx, name string, opts *metav1.DeleteOptions, dryRun bool) (*deleteResult, error) {
	synced := false
	for attempt := 0; ; attempt++ {
		cur, kv, err := s.getStored(ctx, rc.res, rc.ns, name)
		if err != nil {
			if s.resync(ctx, &synced, &err) {
				continue
			}
			return nil, err
		}
		if err := checkPreconditions(rc, name, opts, cur, kv); err != nil {
			if s.resync(ctx, &synced, &err) {
				continue
			}
			return nil, err
		}
		if err := s.admitDelete(ctx, rc, name, cur, opts, dryRun); err != nil {
			return nil, err
		}
		obj := cur.DeepCopyObject()
		pending := markDeletion(obj, opts)
		if dryRun {
			return &deleteResult{obj: obj, deleted: !pending}, nil
		}
		res, err := s.writeDeletion(ctx, rc, name, obj, cur, kv, pending)
		if errors.Is(err, datastore.ErrConflict) && attempt < maxUpdateAttempts {
			continue
		}
		if err != nil {
			return nil, storeError(err, rc.gr, name)
		}
		return res, nil
	}
}

func checkPreconditions(rc *reqCtx, name string, opts *metav1.DeleteOptions, cur runtime.Object, kv *datastore.KV) error {
	p := opts.Preconditions
	if p == nil {
		return nil
	}
	m := objectMeta(cur)
	if p.UID != nil && *p.UID != m.GetUID() {
		return apierrors.NewConflict(rc.gr, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != strconv.FormatInt(kv.ModRevision, 10) {
		return apierrors.NewConflict(rc.gr, name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, kv.ModRevision))
	}
	return nil
}

// writeDeletion removes the object, or stores obj with its deletion marks.
func (s *Server) writeDeletion(ctx context.Context, rc *reqCtx, name string, obj, cur runtime.Object, kv *datastore.KV, pending bool) (*deleteResult, error) {
	key := rc.res.Key(rc.ns, name)
	if !pending {
		ops := append(releaseOps(rc.res, cur), datastore.Op{Type: datastore.OpDelete, Key: key, ExpectedRev: kv.ModRevision})
		rev, err := s.store.Txn(ctx, ops)
		if err != nil {
			return nil, err
		}
		return &deleteResult{obj: cur, deleted: true}, setResourceVersion(cur, rev)
	}
	data, err := encodeStored(rc.res, obj)
	if err != nil {
		return nil, err
	}
	if string(data) == string(kv.Value) {
		return &deleteResult{obj: cur}, nil
	}
	rev, err := s.store.Update(ctx, key, data, kv.ModRevision)
	if err != nil {
		return nil, err
	}
	return &deleteResult{obj: obj}, setResourceVersion(obj, rev)
}

// markDeletion sets the deletion marks on obj and tells whether the deletion
// is pending (finalizers, graceful pod termination, namespace termination).
func markDeletion(obj runtime.Object, opts *metav1.DeleteOptions) bool {
	m := objectMeta(obj)
	addGCFinalizer(m, opts)
	if ns, ok := obj.(*corev1.Namespace); ok {
		return markNamespaceDeletion(ns)
	}
	grace := gracePeriod(obj, opts)
	now := time.Now().Truncate(time.Second)
	if grace > 0 { // a pod running on a node: its agent deletes it with grace 0
		cur := m.GetDeletionGracePeriodSeconds()
		if m.GetDeletionTimestamp() == nil || cur == nil || grace < *cur {
			bumpGenerationOnDeletion(m)
			t := metav1.NewTime(now.Add(time.Duration(grace) * time.Second))
			m.SetDeletionTimestamp(&t)
			m.SetDeletionGracePeriodSeconds(&grace)
		}
		return true
	}
	if len(m.GetFinalizers()) == 0 {
		return false
	}
	if m.GetDeletionTimestamp() == nil {
		bumpGenerationOnDeletion(m)
		t := metav1.NewTime(now)
		m.SetDeletionTimestamp(&t)
	}
	zero := int64(0)
	m.SetDeletionGracePeriodSeconds(&zero)
	return true
}

// bumpGenerationOnDeletion bumps the generation (when the type keeps one)
// of an object whose deletion starts now, as rest.BeforeDelete does for a
// graceful deletion and the generic store for one held by finalizers:
// controllers of the object see that it changed.
func bumpGenerationOnDeletion(m metav1.Object) {
	if m.GetDeletionTimestamp() == nil && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
}

func markNamespaceDeletion(ns *corev1.Namespace) bool {
	if ns.DeletionTimestamp == nil {
		t := metav1.NewTime(time.Now().Truncate(time.Second))
		ns.DeletionTimestamp = &t
		zero := int64(0)
		ns.DeletionGracePeriodSeconds = &zero
	}
	if len(ns.Spec.Finalizers) == 0 && len(ns.Finalizers) == 0 {
		return false
	}
	ns.Status.Phase = corev1.NamespaceTerminating
	return true
}

// addGCFinalizer adds "orphan" or "foregroundDeletion" for those
// propagation policies, as upstream; the garbage collector removes them.
func addGCFinalizer(m metav1.Object, opts *metav1.DeleteOptions) {
	policy := metav1.DeletePropagationBackground
	if opts.PropagationPolicy != nil {
		policy = *opts.PropagationPolicy
	} else if opts.OrphanDependents != nil && *opts.OrphanDependents { //nolint:staticcheck // legacy field
		policy = metav1.DeletePropagationOrphan
	}
	add, drop := "", ""
	switch policy {
	case metav1.DeletePropagationOrphan:
		add, drop = metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents
	case metav1.DeletePropagationForeground:
		add, drop = metav1.FinalizerDeleteDependents, metav1.FinalizerOrphanDependents
	default:
		return
	}
	var out []string
	has := false
	for _, f := range m.GetFinalizers() {
		if f == drop {
			continue
		}
		has = has || f == add
		out = append(out, f)
	}
	if !has {
		out = append(out, add)
	}
	m.SetFinalizers(out)
}

// gracePeriod is the effective grace period: only pods bound to a node and
// not finished terminate gracefully (default from the pod spec, else 30s).
func gracePeriod(obj runtime.Object, opts *metav1.DeleteOptions) int64 {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0
	}
	if opts.GracePeriodSeconds != nil {
		return *opts.GracePeriodSeconds
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// handleDeleteCollection deletes every object matching the selectors.
func (s *Server) handleDeleteCollection(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	opts, err := s.deleteOptions(w, r, rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	lo, err := s.parseListOptions(rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	lo.limit, lo.cont = 0, nil
	items, _, err := s.listItems(r.Context(), rc, lo)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, it := range items {
		m := objectMeta(it)
		sub := *rc
		sub.ns = m.GetNamespace()
		if _, err := s.deleteObject(r.Context(), &sub, m.GetName(), opts, len(opts.DryRun) > 0); err != nil && !apierrors.IsNotFound(err) {
			s.writeError(w, r, err)
			return
		}
	}
	s.writeJSON(w, r, http.StatusOK, successStatus(http.StatusOK, &metav1.StatusDetails{Group: rc.gr.Group, Kind: rc.res.Resource}))
}
