package apiserver

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/quota"
	"github.com/orch/orch/server/registry"
)

var (
	quotaGVR      = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	limitRangeGVR = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}
)

// admitLimitRanges is the LimitRanger admission plugin on create: pods get
// their namespace's default requests and limits, then pods and claims are
// checked against min, max and maxLimitRequestRatio (403 otherwise).
func (s *Server) admitLimitRanges(ctx context.Context, rc *reqCtx, obj runtime.Object) error {
	pod, isPod := obj.(*corev1.Pod)
	claim, isClaim := obj.(*corev1.PersistentVolumeClaim)
	if !isPod && !isClaim {
		return nil
	}
	ranges, err := s.limitRanges(ctx, rc.ns)
	if err != nil || len(ranges) == 0 {
		return err
	}
	name := objectMeta(obj).GetName()
	if isClaim {
		if err := quota.ValidateClaim(claim, ranges); err != nil {
			return apierrors.NewForbidden(rc.gr, name, err)
		}
		return nil
	}
	quota.DefaultPod(pod, ranges)
	if err := quota.ValidatePod(pod, ranges); err != nil {
		return apierrors.NewForbidden(rc.gr, name, err)
	}
	return nil
}

func (s *Server) limitRanges(ctx context.Context, ns string) ([]*corev1.LimitRange, error) {
	res := s.byGVR[limitRangeGVR]
	if res == nil {
		return nil, nil
	}
	page, err := s.store.List(ctx, res.Prefix(ns), res.Prefix(ns), 0)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.LimitRange, 0, len(page.KVs))
	for i := range page.KVs {
		obj, err := decodeStored(res, &page.KVs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, obj.(*corev1.LimitRange))
	}
	return out, nil
}

// quotaOps is the ResourceQuota admission plugin on create: for every
// quota of the namespace that covers what obj consumes, it checks
// used+usage against hard (403 with upstream's "exceeded quota" message)
// and returns compare-and-swap updates of the quotas' status.used, to be
// committed in the same transaction as obj. A concurrent charge makes the
// transaction fail with ErrConflict and the create is retried.
func (s *Server) quotaOps(ctx context.Context, res *registry.Resource, obj runtime.Object) ([]datastore.Op, error) {
	qres := s.byGVR[quotaGVR]
	m := objectMeta(obj)
	if qres == nil || !res.Namespaced || res == qres {
		return nil, nil
	}
	page, err := s.store.List(ctx, qres.Prefix(m.GetNamespace()), qres.Prefix(m.GetNamespace()), 0)
	if err != nil || len(page.KVs) == 0 {
		return nil, err
	}
	gr := groupResource(res)
	usage := quota.Usage(gr, obj)
	var ops []datastore.Op
	for i := range page.KVs {
		kv := &page.KVs[i]
		o, err := decodeStored(qres, kv)
		if err != nil {
			return nil, err
		}
		q := o.(*corev1.ResourceQuota)
		if !quota.Matches(q, obj) {
			continue
		}
		used, err := quota.Check(q, obj, usage)
		if err != nil {
			return nil, apierrors.NewForbidden(gr, m.GetName(), err)
		}
		if used == nil {
			continue
		}
		q.Status.Used = used
		data, err := encodeStored(qres, q)
		if err != nil {
			return nil, err
		}
		ops = append(ops, datastore.Op{Type: datastore.OpUpdate, Key: kv.Key, Value: data, ExpectedRev: kv.ModRevision})
	}
	return ops, nil
}
