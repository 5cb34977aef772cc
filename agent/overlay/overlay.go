package overlay

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/internal/cachetrim"
)

// resyncEvery re-applies the whole state even without Node changes,
// repairing what someone else removed.
const resyncEvery = 5 * time.Minute

// retryAfter is the delay before a failed sync is retried.
const retryAfter = 2 * time.Second

// Overlay keeps this node's routes to the other nodes' pod subnets in step
// with the Node objects.
type Overlay struct {
	cfg     *parsed
	dp      *dataplane
	log     *zap.Logger
	trigger chan struct{}
	lister  corelisters.NodeLister
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	applied string // signature of the last state applied without error
	// patchedRV is the Node's resourceVersion when we last patched it: the
	// cache may still hold that version (without our annotations) for a moment.
	patchedRV string
}

// New validates cfg; Start programs the host.
func New(cfg Config) (*Overlay, error) {
	p, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	h, err := netlink.NewHandle()
	if err != nil {
		return nil, fmt.Errorf("overlay: netlink handle: %w", err)
	}
	return newWithHandle(p, h), nil
}

// newWithHandle programs the namespace of h (tests: a throwaway netns).
func newWithHandle(p *parsed, h *netlink.Handle) *Overlay {
	log := p.Log.Named("overlay")
	return &Overlay{cfg: p, dp: &dataplane{h: h, cfg: p, log: log}, log: log, trigger: make(chan struct{}, 1)}
}

// Start sets up the backend's device (an error here stops the agent), then
// watches Nodes and programs routes until Stop.
func (o *Overlay) Start(ctx context.Context) error {
	if o.cfg.NodeIP.IsLoopback() {
		// Only reachable at loopback: no other node can be a peer (the
		// single-host tests run like this, several agents beside each other).
		o.log.Info("node IP is a loopback address: no pod network overlay", zap.Stringer("nodeIP", o.cfg.NodeIP))
		return nil
	}
	if _, err := o.ensureBackend(); err != nil {
		o.dp.h.Close()
		return err
	}
	ctx, o.cancel = context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(o.cfg.Client, 0, cachetrim.Option())
	inf := f.Core().V1().Nodes()
	o.lister = inf.Lister()
	poke := func(any) { o.poke() }
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: poke,
		UpdateFunc: func(_, n any) { o.poke() }, DeleteFunc: poke}); err != nil {
		o.cancel()
		o.dp.h.Close()
		return fmt.Errorf("overlay: node informer: %w", err)
	}
	f.StartWithContext(ctx)
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer f.Shutdown()
		if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
			return
		}
		o.loop(ctx)
	}()
	o.log.Info("pod network overlay started", zap.String("backend", o.cfg.Backend), zap.String("podCIDR", o.cfg.PodCIDR))
	return nil
}

// Stop stops watching; the routes stay (pods keep their network across
// agent restarts).
func (o *Overlay) Stop() {
	if o.cancel != nil {
		o.cancel()
	}
	o.wg.Wait()
	o.dp.h.Close()
}

func (o *Overlay) poke() {
	select {
	case o.trigger <- struct{}{}:
	default:
	}
}

func (o *Overlay) loop(ctx context.Context) {
	tick := time.NewTicker(resyncEvery)
	defer tick.Stop()
	force := true
	for {
		if err := o.sync(ctx, force); err != nil {
			o.log.Warn("programming the pod network overlay failed; retrying", zap.Error(err))
			time.AfterFunc(retryAfter, o.poke)
		}
		force = false
		select {
		case <-ctx.Done():
			return
		case <-o.trigger:
		case <-tick.C:
			force = true
		}
	}
}

// ensureBackend sets up the VXLAN device (vxlan) or removes it (host-gw,
// e.g. after a backend switch); it returns the device for vxlan.
func (o *Overlay) ensureBackend() (netlink.Link, error) {
	if o.cfg.Backend == BackendHostGW {
		return nil, o.dp.removeVXLAN()
	}
	return o.dp.ensureVXLAN()
}

// sync publishes this node's backend data and applies the desired state
// for the current Node list.
func (o *Overlay) sync(ctx context.Context, force bool) error {
	link, err := o.ensureBackend()
	if err != nil {
		o.applied = ""
		return err
	}
	nodes, err := o.lister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	if err := o.publish(ctx, nodes, link); err != nil {
		return err
	}
	peers := PeersFromNodes(o.cfg.NodeName, o.cfg.podNet, nodes)
	want := DesiredHostGW(peers)
	if link != nil {
		want = DesiredVXLAN(peers)
	}
	sig := fmt.Sprint(link != nil, want)
	if !force && sig == o.applied {
		return nil
	}
	o.applied = ""
	if err := o.dp.apply(link, want); err != nil {
		return err
	}
	o.applied = sig
	o.log.Debug("pod network overlay programmed", zap.Int("peers", len(peers)), zap.Int("routes", len(want.Routes)))
	return nil
}

// publish patches this node's backend annotations when they differ (the
// Node may have been re-created without them).
func (o *Overlay) publish(ctx context.Context, nodes []*corev1.Node, link netlink.Link) error {
	var self *corev1.Node
	for _, n := range nodes {
		if n.Name == o.cfg.NodeName {
			self = n
		}
	}
	if self == nil {
		return nil // not registered (yet, or again): its Add event brings us back
	}
	want := map[string]*string{AnnotationBackend: &o.cfg.Backend, AnnotationVXLANMAC: nil}
	if link != nil {
		mac := link.Attrs().HardwareAddr.String()
		want[AnnotationVXLANMAC] = &mac
	}
	if annotationsMatch(self.Annotations, want) || (o.patchedRV != "" && self.ResourceVersion == o.patchedRV) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": want}})
	if err != nil {
		return err
	}
	if _, err := o.cfg.Client.CoreV1().Nodes().Patch(ctx, o.cfg.NodeName, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "orch-overlay"}); err != nil {
		return fmt.Errorf("publishing the overlay annotations on node %s: %w", o.cfg.NodeName, err)
	}
	o.patchedRV = self.ResourceVersion
	o.log.Info("published the node's overlay data", zap.String("backend", o.cfg.Backend), zap.Any("annotations", want))
	return nil
}

func annotationsMatch(have map[string]string, want map[string]*string) bool {
	for k, v := range want {
		cur, ok := have[k]
		if (v == nil) != !ok || (v != nil && cur != *v) {
			return false
		}
	}
	return true
}
