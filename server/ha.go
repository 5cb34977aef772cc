package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth/rbac/bootstrap"
)

// Every server keeps a Lease in kube-system (upstream's API server identity
// leases, labelled the same way) naming its address, Raft ID and node; the
// leader points the kubernetes Service at the servers whose lease is live
// and removes a server from Raft when its node is deleted.
const (
	identityLabel     = "apiserver.kubernetes.io/identity"
	identityValue     = "kube-apiserver"
	addressAnnotation = "orch.io/advertise-address"
	raftIDAnnotation  = "orch.io/raft-id"
	nodeAnnotation    = "orch.io/node-name"
	portAnnotation    = "orch.io/https-port"
	leaseDuration     = 30 * time.Second
	leaseRenew        = 10 * time.Second
	staleLeaseAge     = 10 * time.Minute
)

// serverIdentity is what this server's lease says about it.
type serverIdentity struct {
	raftID   string
	address  net.IP
	port     int
	nodeName string
}

func (id serverIdentity) leaseName() string {
	return "orch-apiserver-" + dnsLabel(id.raftID)
}

// dnsLabel lower-cases s and replaces what a DNS label may not hold.
func dnsLabel(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}

// keepServerLease renews this server's lease every leaseRenew until ctx
// ends, while the cluster has more than one server (clustered): a single
// server writes nothing, so an idle one stays idle.
func keepServerLease(ctx context.Context, client kubernetes.Interface, id serverIdentity, clustered func() bool, log *zap.Logger) {
	t := time.NewTicker(leaseRenew)
	defer t.Stop()
	for {
		if !clustered() {
			// nothing to tell anyone
		} else if err := renewServerLease(ctx, client, id); err != nil && ctx.Err() == nil {
			log.Debug("renewing the API server lease", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func renewServerLease(ctx context.Context, client kubernetes.Interface, id serverIdentity) error {
	return renewLease(ctx, client, id.leaseName(), id.raftID,
		map[string]string{identityLabel: identityValue, corev1.LabelHostname: dnsLabel(id.nodeName)},
		map[string]string{addressAnnotation: id.address.String(), raftIDAnnotation: id.raftID, nodeAnnotation: id.nodeName,
			portAnnotation: strconv.Itoa(id.port)})
}

// renewLease creates or renews the kube-system Lease name held by holder,
// setting the labels (on create) and annotations.
func renewLease(ctx context.Context, client kubernetes.Interface, name, holder string, labels, annotations map[string]string) error {
	leases := client.CoordinationV1().Leases(metav1.NamespaceSystem)
	now := metav1.NewMicroTime(time.Now())
	secs := int32(leaseDuration / time.Second)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now}}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	for k, v := range annotations {
		l.Annotations[k] = v
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != holder {
		l.Spec.AcquireTime = &now
		n := int32(1)
		if l.Spec.LeaseTransitions != nil {
			n = *l.Spec.LeaseTransitions + 1
		}
		l.Spec.LeaseTransitions = &n
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &holder, &secs, &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// serverLeases lists the API server leases.
func serverLeases(ctx context.Context, client kubernetes.Interface) ([]coordinationv1.Lease, error) {
	list, err := client.CoordinationV1().Leases(metav1.NamespaceSystem).List(ctx,
		metav1.ListOptions{LabelSelector: identityLabel + "=" + identityValue})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// leaseLive reports whether l was renewed within its duration of now.
func leaseLive(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return false
	}
	return now.Before(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// liveServerIPs are the addresses of the servers with a live lease plus
// self, sorted: the endpoints of the kubernetes Service.
func liveServerIPs(client kubernetes.Interface, self net.IP) func(ctx context.Context) []net.IP {
	return func(ctx context.Context) []net.IP {
		ips := []net.IP{self}
		leases, err := serverLeases(ctx, client)
		if err != nil {
			return ips
		}
		now := time.Now()
		for i := range leases {
			ip := net.ParseIP(leases[i].Annotations[addressAnnotation])
			if ip != nil && leaseLive(&leases[i], now) && !slices.ContainsFunc(ips, ip.Equal) {
				ips = append(ips, ip)
			}
		}
		slices.SortFunc(ips, func(a, b net.IP) int { return strings.Compare(a.String(), b.String()) })
		return ips
	}
}

// reconcileServers runs on the leader: every leaseRenew it points the
// kubernetes Service at the live servers and deletes leases stale for
// staleLeaseAge.
func reconcileServers(ctx context.Context, client kubernetes.Interface, ensure func(context.Context) error, clustered func() bool,
	log *zap.Logger) {
	t := time.NewTicker(leaseRenew)
	defer t.Stop()
	added := watchNewServers(ctx, client)
	was := true // one pass at the start, and one after the last server left
	for {
		now := clustered()
		if !now && !was {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-added:
			}
			continue
		}
		was = now
		if err := ensure(ctx); err != nil && ctx.Err() == nil {
			log.Debug("updating the kubernetes Service endpoints", zap.Error(err))
		}
		if leases, err := serverLeases(ctx, client); err == nil {
			for i := range leases {
				l := &leases[i]
				if l.Spec.RenewTime != nil && time.Since(l.Spec.RenewTime.Time) > staleLeaseAge {
					_ = client.CoordinationV1().Leases(metav1.NamespaceSystem).Delete(ctx, l.Name, metav1.DeleteOptions{})
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-added:
		}
	}
}

// watchNewServers signals when a server lease appears or goes, so a
// joining server is in the kubernetes Service's endpoints (and so known to
// the agents) at once rather than at the next tick.
func watchNewServers(ctx context.Context, client kubernetes.Interface) <-chan struct{} {
	ch := make(chan struct{}, 1)
	poke := func(interface{}) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	leases := client.CoordinationV1().Leases(metav1.NamespaceSystem)
	sel := identityLabel + "=" + identityValue
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return leases.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return leases.Watch(ctx, o)
		},
	}
	_, ctl := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: &coordinationv1.Lease{},
		Handler: cache.ResourceEventHandlerFuncs{AddFunc: poke, DeleteFunc: poke}})
	go ctl.RunWithContext(ctx)
	return ch
}

// removeDeletedNodeServers runs on the leader: when a Node is deleted and a
// server's lease names that node, the server leaves the Raft cluster (as
// deleting an etcd member's node does in k3s). The Nodes come from f, a
// term's view of the server's shared cache; the handler goes with the term.
func removeDeletedNodeServers(ctx context.Context, client kubernetes.Interface, f informers.SharedInformerFactory,
	store *datastore.RaftStore, log *zap.Logger) error {
	defer f.Shutdown()
	if _, err := f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj interface{}) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if n, ok := obj.(*corev1.Node); ok {
			removeNodeServer(ctx, client, store, n.Name, log)
		}
	}}); err != nil {
		return fmt.Errorf("node informer: %w", err)
	}
	f.StartWithContext(ctx)
	<-ctx.Done()
	return nil
}

func removeNodeServer(ctx context.Context, client kubernetes.Interface, store *datastore.RaftStore, node string, log *zap.Logger) {
	leases, err := serverLeases(ctx, client)
	if err != nil {
		log.Warn("node deleted: listing server leases", zap.String("node", node), zap.Error(err))
		return
	}
	for i := range leases {
		l := &leases[i]
		id := l.Annotations[raftIDAnnotation]
		if l.Annotations[nodeAnnotation] != node || id == "" {
			continue
		}
		if err := store.RemoveMember(ctx, id); err != nil {
			log.Warn("node deleted: removing its server from the Raft cluster", zap.String("node", node), zap.Error(err))
			continue
		}
		log.Info("node deleted: removed its server from the Raft cluster", zap.String("node", node), zap.String("raftID", id))
		_ = client.CoordinationV1().Leases(metav1.NamespaceSystem).Delete(ctx, l.Name, metav1.DeleteOptions{})
	}
}

// bootstrapped reports whether the leader's bootstrap has reached this
// server's state: the kubernetes Service (api.Bootstrapped) and the default
// RBAC bindings, without which requests here would be refused.
func bootstrapped(api *apiserver.Server, store datastore.Store) func(context.Context) bool {
	var keys []string
	for _, b := range bootstrap.ClusterRoleBindings() {
		keys = append(keys, "/registry/rbac.authorization.k8s.io/clusterrolebindings/"+b.Name)
	}
	return func(ctx context.Context) bool {
		if !api.Bootstrapped(ctx) {
			return false
		}
		for _, k := range keys {
			if _, err := store.Get(ctx, k); err != nil {
				return false
			}
		}
		return true
	}
}

// awaitBootstrapped marks a server that does not lead ready once the
// leader's bootstrap objects have reached its local state.
func awaitBootstrapped(ctx context.Context, bootstrapped func(context.Context) bool, ready *readyState) {
	for !ready.flag.Load() && !bootstrapped(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-ready.ch:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	ready.set()
}

// liveServers answers the kubernetes Service's endpoints once the loopback
// client exists (the API server is built before it).
type liveServers struct {
	self   net.IP
	client atomic.Pointer[kubernetes.Interface]
}

func (l *liveServers) ips(ctx context.Context) []net.IP {
	c := l.client.Load()
	if c == nil {
		return nil
	}
	return liveServerIPs(*c, l.self)(ctx)
}

// haLoops are the leader-only loops of a cluster of servers; store is nil
// on an external etcd (no Raft membership to watch).
func haLoops(client kubernetes.Interface, views func() informers.SharedInformerFactory, api *apiserver.Server,
	store *datastore.RaftStore, log *zap.Logger) []controller {
	endpoints := controller{"api server endpoints", func(ctx context.Context) error {
		reconcileServers(ctx, client, api.EnsureKubernetesEndpoints, clusteredRaft(store), log)
		return nil
	}}
	if store == nil {
		return []controller{endpoints}
	}
	return []controller{endpoints,
		{"raft leader lease", func(ctx context.Context) error {
			keepLeaderLease(ctx, client, store, log)
			return nil
		}},
		{"raft members of deleted nodes", func(ctx context.Context) error {
			return removeDeletedNodeServers(ctx, client, views(), store, log)
		}},
	}
}

// nodeName is this server's node name: --node-name, else the host name.
func nodeName(cfg Config) string {
	if cfg.NodeName != "" {
		return cfg.NodeName
	}
	h, _ := os.Hostname()
	return strings.ToLower(h)
}

// leaderLeaseName is the Lease the Raft leader renews, naming itself and
// the members it sees (kubectl -n kube-system get lease orch-raft-leader -o yaml).
const (
	leaderLeaseName   = "orch-raft-leader"
	membersAnnotation = "orch.io/raft-members"
)

// keepLeaderLease runs on the leader and renews leaderLeaseName while there
// are several members; alone, it writes only when the members changed.
func keepLeaderLease(ctx context.Context, client kubernetes.Interface, store *datastore.RaftStore, log *zap.Logger) {
	t := time.NewTicker(leaseRenew)
	defer t.Stop()
	written := ""
	for {
		ms, err := store.Members()
		if err == nil && (len(ms) > 1 || membersString(ms) != written) {
			written = membersString(ms)
			var parts []string
			for _, m := range ms {
				role := "nonvoter"
				if m.Voter {
					role = "voter"
				}
				parts = append(parts, m.ID+"="+role+"@"+m.Addr)
			}
			id := serverIdentity{raftID: store.ID()}
			if err = renewLease(ctx, client, leaderLeaseName, id.raftID, nil,
				map[string]string{membersAnnotation: strings.Join(parts, ",")}); err != nil {
				written = ""
			}
		}
		if err != nil && ctx.Err() == nil {
			log.Debug("renewing the raft leader lease", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// peerServerURLs lists the https:// URLs of the other servers with a live
// lease (this server is selfID).
func peerServerURLs(ctx context.Context, client kubernetes.Interface, selfID string) ([]string, error) {
	leases, err := serverLeases(ctx, client)
	if err != nil {
		return nil, err
	}
	var urls []string
	now := time.Now()
	for i := range leases {
		a := leases[i].Annotations
		if a[raftIDAnnotation] == selfID || !leaseLive(&leases[i], now) || a[addressAnnotation] == "" || a[portAnnotation] == "" {
			continue
		}
		urls = append(urls, "https://"+net.JoinHostPort(a[addressAnnotation], a[portAnnotation]))
	}
	return urls, nil
}

// membersString identifies a membership, to notice changes.
func membersString(ms []datastore.Member) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s/%v/%s,", m.ID, m.Voter, m.Addr)
	}
	return b.String()
}

// clusteredRaft reports whether the Raft cluster has more than one member;
// an external etcd (store nil) may be shared by several servers: always.
func clusteredRaft(store *datastore.RaftStore) func() bool {
	return func() bool {
		if store == nil {
			return true
		}
		ms, err := store.Members()
		return err == nil && len(ms) > 1
	}
}
