package node

import (
	"context"
	"fmt"
	"net"
	goruntime "runtime"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	watchtools "k8s.io/client-go/tools/watch"
)

// Config describes the node to register.
type Config struct {
	Name            string
	Labels          map[string]string // extra labels (--node-label)
	Taints          []corev1.Taint
	InternalIP      net.IP
	Capacity        corev1.ResourceList
	Allocatable     corev1.ResourceList
	KubeletPort     int
	RuntimeVersion  string // containerd://<version>
	KubeletVersion  string
	OSReleasePath   string        // default /etc/os-release
	HeartbeatPeriod time.Duration // Lease renewal; default 10s
	StatusPeriod    time.Duration // status refresh; default 1m
	// Images lists the node's images for status.images (ImageLocality);
	// nil (an error) keeps what was last reported.
	Images func(ctx context.Context) []corev1.ContainerImage
}

// Build returns the Node object the agent registers.
func Build(cfg Config) *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:   cfg.Name,
		corev1.LabelOSStable:   goruntime.GOOS,
		corev1.LabelArchStable: goruntime.GOARCH,
	}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	osRelease := cfg.OSReleasePath
	if osRelease == "" {
		osRelease = "/etc/os-release"
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: cfg.Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: cfg.Taints},
		Status: corev1.NodeStatus{
			Capacity:    cfg.Capacity,
			Allocatable: cfg.Allocatable,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: cfg.InternalIP.String()},
				{Type: corev1.NodeHostName, Address: cfg.Name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(cfg.KubeletPort)}},
			NodeInfo: corev1.NodeSystemInfo{
				KernelVersion:           KernelVersion(),
				OSImage:                 OSImage(osRelease),
				ContainerRuntimeVersion: cfg.RuntimeVersion,
				KubeletVersion:          cfg.KubeletVersion,
				KubeProxyVersion:        cfg.KubeletVersion,
				OperatingSystem:         goruntime.GOOS,
				Architecture:            goruntime.GOARCH,
			},
		},
	}
	n.Status.Conditions = Conditions(nil, Health{}, metav1.Now())
	return n
}

// Register creates the Node, or brings an existing one's labels, taints and
// status up to date (a restarted agent). It retries until ctx ends.
func Register(ctx context.Context, log *zap.Logger, client kubernetes.Interface, want *corev1.Node) (*corev1.Node, error) {
	var out *corev1.Node
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := registerOnce(ctx, client, want)
		if err != nil {
			log.Warn("registering node failed; retrying", zap.String("node", want.Name), zap.Error(err))
			return false, nil
		}
		out = n
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("registering node %s: %w", want.Name, err)
	}
	log.Info("node registered", zap.String("node", out.Name))
	return out, nil
}

func registerOnce(ctx context.Context, client kubernetes.Interface, want *corev1.Node) (*corev1.Node, error) {
	created, err := client.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
	if err == nil {
		created.Status = want.Status
		return client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	cur, err := client.CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	upd := cur.DeepCopy()
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		upd.Labels[k] = v
	}
	upd.Spec.Taints = mergeTaints(upd.Spec.Taints, want.Spec.Taints)
	if upd, err = client.CoreV1().Nodes().Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	conds := upd.Status.Conditions
	upd.Status = want.Status
	upd.Status.Conditions = conds
	return client.CoreV1().Nodes().UpdateStatus(ctx, upd, metav1.UpdateOptions{})
}

func mergeTaints(have, want []corev1.Taint) []corev1.Taint {
	out := append([]corev1.Taint(nil), have...)
	for _, w := range want {
		found := false
		for _, h := range have {
			if h.Key == w.Key && h.Effect == w.Effect {
				found = true
			}
		}
		if !found {
			out = append(out, w)
		}
	}
	return out
}

// WaitPodCIDR waits with a watch until the server has set spec.podCIDR.
func WaitPodCIDR(ctx context.Context, log *zap.Logger, client kubernetes.Interface, name string) (string, error) {
	lw := nodeListWatch(client, name)
	log.Info("waiting for the server to assign spec.podCIDR", zap.String("node", name))
	ev, err := watchtools.UntilWithSync(ctx, lw, &corev1.Node{}, nil, func(e watch.Event) (bool, error) {
		n, ok := e.Object.(*corev1.Node)
		return ok && n.Spec.PodCIDR != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("waiting for spec.podCIDR of node %s: %w", name, err)
	}
	return ev.Object.(*corev1.Node).Spec.PodCIDR, nil
}
