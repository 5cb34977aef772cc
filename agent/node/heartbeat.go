package node

import (
	"context"
	"time"

	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// LeaseNamespace holds the nodes' Leases.
const LeaseNamespace = "kube-node-lease"

// Health is what the node conditions are computed from.
type Health struct {
	NotReady       string // non-empty: the reason the node is not ready
	MemoryPressure bool
	DiskPressure   bool
	PIDPressure    bool
}

// Conditions returns the node conditions for h, keeping the transition time
// of conditions whose status did not change since old.
func Conditions(old []corev1.NodeCondition, h Health, now metav1.Time) []corev1.NodeCondition {
	type c struct {
		t              corev1.NodeConditionType
		bad            bool
		reasonOK, bad_ string
		msgOK, msgBad  string
	}
	list := []c{
		{corev1.NodeMemoryPressure, h.MemoryPressure, "KubeletHasSufficientMemory", "KubeletHasInsufficientMemory", "kubelet has sufficient memory available", "kubelet has insufficient memory available"},
		{corev1.NodeDiskPressure, h.DiskPressure, "KubeletHasNoDiskPressure", "KubeletHasDiskPressure", "kubelet has no disk pressure", "kubelet has disk pressure"},
		{corev1.NodePIDPressure, h.PIDPressure, "KubeletHasSufficientPID", "KubeletHasInsufficientPID", "kubelet has sufficient PID available", "kubelet has insufficient PID available"},
	}
	var out []corev1.NodeCondition
	for _, x := range list {
		nc := corev1.NodeCondition{Type: x.t, Status: corev1.ConditionFalse, Reason: x.reasonOK, Message: x.msgOK}
		if x.bad {
			nc = corev1.NodeCondition{Type: x.t, Status: corev1.ConditionTrue, Reason: x.bad_, Message: x.msgBad}
		}
		out = append(out, nc)
	}
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "orch agent is posting ready status"}
	if h.NotReady != "" {
		ready = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: h.NotReady}
	}
	out = append(out, ready)
	for i := range out {
		out[i].LastHeartbeatTime = now
		out[i].LastTransitionTime = now
		for _, o := range old {
			if o.Type == out[i].Type && o.Status == out[i].Status {
				out[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	return out
}

// sameConditions compares conditions ignoring heartbeat times.
func sameConditions(a, b []corev1.NodeCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason || a[i].Message != b[i].Message {
			return false
		}
	}
	return true
}

// Heartbeat renews the Lease every cfg.HeartbeatPeriod and posts the node
// conditions from health() when they change or StatusPeriod has passed,
// until ctx ends.
func Heartbeat(ctx context.Context, log *zap.Logger, client kubernetes.Interface, cfg Config, health func(context.Context) Health) {
	period, statusPeriod := cfg.HeartbeatPeriod, cfg.StatusPeriod
	if period <= 0 {
		period = 10 * time.Second
	}
	if statusPeriod <= 0 {
		statusPeriod = time.Minute
	}
	var last []corev1.NodeCondition
	var lastImages []corev1.ContainerImage
	var lastPost time.Time
	lease := &leaseRenewer{client: client, name: cfg.Name, period: period}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if err := lease.renew(ctx); err != nil && ctx.Err() == nil {
			log.Warn("renewing node lease failed", zap.Error(err))
		}
		h := health(ctx)
		imgs := listImages(ctx, cfg)
		if imgs == nil {
			imgs = lastImages
		}
		if conds := Conditions(nil, h, metav1.Now()); !sameConditions(conds, last) || !sameImages(imgs, lastImages) ||
			time.Since(lastPost) >= statusPeriod {
			if err := postConditions(ctx, client, cfg.Name, h, imgs); err != nil {
				if ctx.Err() == nil {
					log.Warn("updating node status failed", zap.Error(err))
				}
			} else {
				last, lastImages, lastPost = conds, imgs, time.Now()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func postConditions(ctx context.Context, client kubernetes.Interface, name string, h Health, imgs []corev1.ContainerImage) error {
	n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n = n.DeepCopy()
	n.Status.Conditions = Conditions(n.Status.Conditions, h, metav1.Now())
	if imgs != nil {
		n.Status.Images = imgs
	}
	_, err = client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

// leaseRenewer renews the node's Lease from the copy its last write
// returned, as upstream's node lease controller does: it reads the Lease
// only when it has no copy yet or the last write failed.
type leaseRenewer struct {
	client kubernetes.Interface
	name   string
	period time.Duration
	last   *coordinationv1.Lease
}

func (r *leaseRenewer) renew(ctx context.Context) error {
	leases := r.client.CoordinationV1().Leases(LeaseNamespace)
	if r.last != nil {
		l, err := leases.Update(ctx, r.renewed(r.last), metav1.UpdateOptions{})
		r.last = nil
		if err == nil {
			r.last = l
			return nil
		}
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	l, err := leases.Get(ctx, r.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		l, err = leases.Create(ctx, r.renewed(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: LeaseNamespace}}), metav1.CreateOptions{})
	case err == nil:
		l, err = leases.Update(ctx, r.renewed(l), metav1.UpdateOptions{})
	}
	if err != nil {
		return err
	}
	r.last = l
	return nil
}

// renewed is a copy of l held by this node and renewed now.
func (r *leaseRenewer) renewed(l *coordinationv1.Lease) *coordinationv1.Lease {
	l = l.DeepCopy()
	now := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity = ptr.To(r.name)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(4 * r.period / time.Second))
	l.Spec.RenewTime = &now
	return l
}
