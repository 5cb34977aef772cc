package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/orch/orch/datastore"
)

// allocFixture is a Service resource over a small range and an in-memory store.
type allocFixture struct {
	t     *testing.T
	res   *Resource
	alloc Allocator
	store datastore.Store
}

func newAllocFixture(t *testing.T, cidr string, ports utilnet.PortRange) *allocFixture {
	t.Helper()
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		t.Fatal(err)
	}
	var res *Resource
	for _, r := range All(Config{ServiceCIDR: n, NodePortRange: ports}) {
		if r.Resource == "services" {
			res = r
		}
	}
	store := datastore.NewMemStore(100)
	t.Cleanup(func() { _ = store.Close() })
	return &allocFixture{t: t, res: res, alloc: res.Strategy.(Allocator), store: store}
}

func newService(name string, typ corev1.ServiceType, ports ...int32) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name}}}
	for i, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", i), Port: p})
	}
	return svc
}

// create runs the API layer's create path and commits the allocation ops
// with the object key in one transaction.
func (f *allocFixture) create(svc *corev1.Service) error {
	if errs := prepareCreate(f.t, f.res, svc); len(errs) > 0 {
		return errs.ToAggregate()
	}
	ops, err := f.alloc.AllocateOnCreate(context.Background(), f.store, svc)
	if err != nil {
		return err
	}
	ops = append(ops, datastore.Op{Type: datastore.OpCreate, Key: f.res.Key(svc.Namespace, svc.Name), Value: []byte("{}")})
	_, err = f.store.Txn(context.Background(), ops)
	return err
}

func (f *allocFixture) update(svc, old *corev1.Service) error {
	if errs := prepareUpdate(f.res, svc, old); len(errs) > 0 {
		return errs.ToAggregate()
	}
	ops, err := f.alloc.AllocateOnUpdate(context.Background(), f.store, svc, old)
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	_, err = f.store.Txn(context.Background(), ops)
	return err
}

func (f *allocFixture) count(prefix string) int64 {
	n, err := f.store.Count(context.Background(), prefix)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func TestClusterIPAllocation(t *testing.T) {
	// A /28 has 14 usable addresses; .1 is kept for the kubernetes Service.
	f := newAllocFixture(t, "10.43.0.0/28", utilnet.PortRange{Base: 30000, Size: 10})
	seen := map[string]bool{}
	for i := 0; i < 13; i++ {
		svc := newService(fmt.Sprintf("s%d", i), "", 80)
		if err := f.create(svc); err != nil {
			t.Fatalf("service %d: %v", i, err)
		}
		ip := svc.Spec.ClusterIP
		if seen[ip] || ip == "10.43.0.0" || ip == "10.43.0.15" || ip == "10.43.0.1" {
			t.Fatalf("bad or duplicate IP %s", ip)
		}
		seen[ip] = true
		if len(svc.Spec.ClusterIPs) != 1 || svc.Spec.ClusterIPs[0] != ip || svc.Spec.IPFamilies[0] != corev1.IPv4Protocol ||
			*svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
			t.Fatalf("ip fields: %+v", svc.Spec)
		}
	}
	// Only 10.43.0.1 is left; random allocation does not hand it out.
	err := f.create(newService("full", "", 80))
	if !errors.Is(err, ErrRangeFull) || !apierrors.IsInternalError(err) {
		t.Fatalf("want range full, got %v", err)
	}
	// The kubernetes Service asks for it explicitly.
	k := newService("kubernetes", "", 443)
	k.Spec.ClusterIP = "10.43.0.1"
	if err := f.create(k); err != nil {
		t.Fatalf("explicit .1: %v", err)
	}
	// Asking for a taken IP is a 422 naming the field.
	dup := newService("dup", "", 80)
	dup.Spec.ClusterIP = "10.43.0.1"
	err = f.create(dup)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.clusterIPs[0]") {
		t.Fatalf("want invalid for taken IP, got %v", err)
	}
	// Releasing gives the address back.
	ops := f.alloc.ReleaseOnDelete(k)
	if len(ops) != 1 || ops[0].Type != datastore.OpDelete || ops[0].Key != ServiceIPsPrefix+"10.43.0.1" {
		t.Fatalf("release ops %+v", ops)
	}
	if _, err := f.store.Txn(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	again := newService("again", "", 80)
	again.Spec.ClusterIP = "10.43.0.1"
	if err := f.create(again); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestClusterIPSpecialCases(t *testing.T) {
	f := newAllocFixture(t, "10.43.0.0/24", utilnet.PortRange{Base: 30000, Size: 10})
	headless := newService("h", "", 80)
	headless.Spec.ClusterIP = corev1.ClusterIPNone
	if err := f.create(headless); err != nil {
		t.Fatal(err)
	}
	if headless.Spec.ClusterIPs[0] != corev1.ClusterIPNone || f.count(ServiceIPsPrefix) != 0 {
		t.Fatalf("headless: %+v", headless.Spec)
	}
	ext := newService("e", corev1.ServiceTypeExternalName)
	ext.Spec.ExternalName = "db.example.com"
	if err := f.create(ext); err != nil {
		t.Fatal(err)
	}
	if ext.Spec.ClusterIP != "" || ext.Spec.IPFamilies != nil || f.count(ServiceIPsPrefix) != 0 {
		t.Fatalf("external name got IP fields: %+v", ext.Spec)
	}
	out := newService("o", "", 80)
	out.Spec.ClusterIP = "10.43.1.1"
	if err := f.create(out); err == nil || !strings.Contains(err.Error(), "spec.clusterIPs[0]") {
		t.Fatalf("IP outside CIDR: %v", err)
	}
}

func TestNodePortAllocation(t *testing.T) {
	f := newAllocFixture(t, "10.43.0.0/24", utilnet.PortRange{Base: 30000, Size: 4})
	a := newService("a", corev1.ServiceTypeNodePort, 80, 443)
	if err := f.create(a); err != nil {
		t.Fatal(err)
	}
	p0, p1 := a.Spec.Ports[0].NodePort, a.Spec.Ports[1].NodePort
	if p0 < 30000 || p0 > 30003 || p1 < 30000 || p1 > 30003 || p0 == p1 {
		t.Fatalf("node ports %d %d", p0, p1)
	}
	b := newService("b", corev1.ServiceTypeLoadBalancer, 80)
	b.Spec.Ports[0].NodePort = p0
	if err := f.create(b); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.ports[0].nodePort") {
		t.Fatalf("taken node port: %v", err)
	}
	c := newService("c", corev1.ServiceTypeNodePort, 80, 81)
	if err := f.create(c); err != nil {
		t.Fatal(err)
	}
	if err := f.create(newService("d", corev1.ServiceTypeNodePort, 80)); !errors.Is(err, ErrRangeFull) {
		t.Fatalf("want node ports exhausted, got %v", err)
	}
	if f.count(ServiceNodePortsPrefix) != 4 {
		t.Fatalf("records: %d", f.count(ServiceNodePortsPrefix))
	}

	// NodePort -> ClusterIP releases the ports (they are wiped as upstream does).
	n := a.DeepCopy()
	n.Spec.Type = corev1.ServiceTypeClusterIP
	n.Spec.ExternalTrafficPolicy = a.Spec.ExternalTrafficPolicy
	if err := f.update(n, a); err != nil {
		t.Fatal(err)
	}
	if n.Spec.Ports[0].NodePort != 0 || f.count(ServiceNodePortsPrefix) != 2 || n.Spec.ClusterIP != a.Spec.ClusterIP {
		t.Fatalf("after type change: %+v, %d records", n.Spec, f.count(ServiceNodePortsPrefix))
	}
	// And back: new ports are allocated.
	back := n.DeepCopy()
	back.Spec.Type = corev1.ServiceTypeNodePort
	if err := f.update(back, n); err != nil {
		t.Fatal(err)
	}
	if back.Spec.Ports[0].NodePort == 0 || f.count(ServiceNodePortsPrefix) != 4 {
		t.Fatalf("after type change back: %+v", back.Spec)
	}
}

func TestServiceUpdateKeepsAllocations(t *testing.T) {
	f := newAllocFixture(t, "10.43.0.0/24", utilnet.PortRange{Base: 30000, Size: 100})
	svc := newService("web", corev1.ServiceTypeNodePort, 80)
	if err := f.create(svc); err != nil {
		t.Fatal(err)
	}
	// A replace with the original manifest (no clusterIP, no nodePort) keeps both.
	n := newService("web", corev1.ServiceTypeNodePort, 80)
	n.ObjectMeta = *svc.ObjectMeta.DeepCopy()
	if err := f.update(n, svc); err != nil {
		t.Fatal(err)
	}
	if n.Spec.ClusterIP != svc.Spec.ClusterIP || n.Spec.Ports[0].NodePort != svc.Spec.Ports[0].NodePort {
		t.Fatalf("allocations not carried over: %+v vs %+v", n.Spec, svc.Spec)
	}
	// Changing the clusterIP is refused.
	m := svc.DeepCopy()
	other := "10.43.0.99"
	if svc.Spec.ClusterIP == other { // the random allocation may have picked it
		other = "10.43.0.98"
	}
	m.Spec.ClusterIP, m.Spec.ClusterIPs = other, []string{other}
	if err := f.update(m, svc); err == nil || !strings.Contains(err.Error(), "spec.clusterIPs[0]") {
		t.Fatalf("clusterIP change: %v", err)
	}
	// To ExternalName releases the IP.
	e := svc.DeepCopy()
	e.Spec.Type = corev1.ServiceTypeExternalName
	e.Spec.ExternalName = "x.example.com"
	if err := f.update(e, svc); err != nil {
		t.Fatal(err)
	}
	if e.Spec.ClusterIP != "" || f.count(ServiceIPsPrefix) != 0 || f.count(ServiceNodePortsPrefix) != 0 {
		t.Fatalf("to ExternalName: %+v ips=%d ports=%d", e.Spec, f.count(ServiceIPsPrefix), f.count(ServiceNodePortsPrefix))
	}
}

// The API layer retries a create with a fresh copy of the client's object
// after losing a race on an allocation key: the retry gets other values.
func TestAllocateRetryWithFreshCopy(t *testing.T) {
	f := newAllocFixture(t, "10.43.0.0/24", utilnet.PortRange{Base: 30000, Size: 100})
	svc := newService("web", corev1.ServiceTypeNodePort, 80)
	if errs := prepareCreate(t, f.res, svc); len(errs) > 0 {
		t.Fatal(errs)
	}
	retry := svc.DeepCopy()
	ops, err := f.alloc.AllocateOnCreate(context.Background(), f.store, svc)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else takes our IP and port before our transaction commits.
	if _, err := f.store.Txn(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	first, firstPort := svc.Spec.ClusterIP, svc.Spec.Ports[0].NodePort
	if _, err := f.alloc.AllocateOnCreate(context.Background(), f.store, retry); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if retry.Spec.ClusterIP == first || retry.Spec.Ports[0].NodePort == firstPort {
		t.Fatalf("retry reused taken values %s/%d", first, firstPort)
	}
}

func TestNoDuplicatesUnderConcurrency(t *testing.T) {
	f := newAllocFixture(t, "10.43.0.0/27", utilnet.PortRange{Base: 30000, Size: 40})
	type result struct {
		svc *corev1.Service
		err error
	}
	results := make(chan result)
	for i := 0; i < 29; i++ { // 30 usable addresses minus .1
		go func(i int) {
			base := newService(fmt.Sprintf("s%d", i), corev1.ServiceTypeNodePort, 80)
			var svc *corev1.Service
			var err error
			for attempt := 0; attempt < 50; attempt++ { // a fresh copy per attempt, as the API layer does
				svc = base.DeepCopy()
				err = f.createNoT(svc)
				if !errors.Is(err, datastore.ErrKeyExists) {
					break
				}
			}
			results <- result{svc, err}
		}(i)
	}
	ips, ports := map[string]bool{}, map[int32]bool{}
	for i := 0; i < 29; i++ {
		r := <-results
		if r.err != nil {
			t.Fatalf("%s: %v", r.svc.Name, r.err)
		}
		if ips[r.svc.Spec.ClusterIP] || ports[r.svc.Spec.Ports[0].NodePort] {
			t.Fatalf("duplicate allocation %s/%d", r.svc.Spec.ClusterIP, r.svc.Spec.Ports[0].NodePort)
		}
		ips[r.svc.Spec.ClusterIP], ports[r.svc.Spec.Ports[0].NodePort] = true, true
	}
}

// createNoT is create without testing.T calls (for goroutines).
func (f *allocFixture) createNoT(svc *corev1.Service) error {
	ctx := context.Background()
	if svc.UID == "" {
		svc.UID = "uid-" + metav1TypesUID(svc.Name)
		f.res.Strategy.Default(svc)
		f.res.Strategy.PrepareForCreate(ctx, svc)
		if errs := f.res.Strategy.Validate(ctx, svc); len(errs) > 0 {
			return errs.ToAggregate()
		}
	}
	ops, err := f.alloc.AllocateOnCreate(ctx, f.store, svc)
	if err != nil {
		return err
	}
	ops = append(ops, datastore.Op{Type: datastore.OpCreate, Key: f.res.Key(svc.Namespace, svc.Name), Value: []byte("{}")})
	_, err = f.store.Txn(ctx, ops)
	return err
}

func TestHealthCheckNodePort(t *testing.T) {
	f := newAllocFixture(t, "10.43.0.0/24", utilnet.PortRange{Base: 30000, Size: 100})
	lb := newService("lb", corev1.ServiceTypeLoadBalancer, 80)
	lb.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	if err := f.create(lb); err != nil {
		t.Fatal(err)
	}
	hc := lb.Spec.HealthCheckNodePort
	if hc == 0 || hc == lb.Spec.Ports[0].NodePort || f.count(ServiceNodePortsPrefix) != 2 {
		t.Fatalf("health check port %d, node port %d", hc, lb.Spec.Ports[0].NodePort)
	}
	// Back to Cluster traffic policy: the health check port is released.
	n := lb.DeepCopy()
	n.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	if err := f.update(n, lb); err != nil {
		t.Fatal(err)
	}
	if n.Spec.HealthCheckNodePort != 0 || f.count(ServiceNodePortsPrefix) != 1 {
		t.Fatalf("after policy change: hc %d, %d records", n.Spec.HealthCheckNodePort, f.count(ServiceNodePortsPrefix))
	}
	if ops := f.alloc.ReleaseOnDelete(n); len(ops) != 2 { // IP + node port
		t.Fatalf("release ops %+v", ops)
	}
}

// TestIPAddressObjectsClaimAddresses: an IPAddress someone created keeps
// the allocator off its address (asked for or random); one that mirrors a
// ClusterIP (managed by ipallocator.k8s.io) does not count on its own.
func TestIPAddressObjectsClaimAddresses(t *testing.T) {
	f := newAllocFixture(t, "10.96.0.0/29", utilnet.PortRange{Base: 30000, Size: 10})
	ctx := context.Background()
	put := func(ip, managedBy string) {
		labels := ""
		if managedBy != "" {
			labels = fmt.Sprintf(`,"labels":{"ipaddress.kubernetes.io/managed-by":%q}`, managedBy)
		}
		if _, err := f.store.Create(ctx, ipAddressesPrefix+ip, []byte(`{"metadata":{"name":"`+ip+`"`+labels+`}}`)); err != nil {
			t.Fatal(err)
		}
	}
	put("10.96.0.3", "")
	put("10.96.0.4", ipManagedBy)
	svc := newService("asked", corev1.ServiceTypeClusterIP, 80)
	svc.Spec.ClusterIP = "10.96.0.3"
	if err := f.create(svc); err == nil || !strings.Contains(err.Error(), "already allocated") {
		t.Fatalf("asking for a claimed address: %v", err)
	}
	stale := newService("stale", corev1.ServiceTypeClusterIP, 80)
	stale.Spec.ClusterIP = "10.96.0.4"
	if err := f.create(stale); err != nil {
		t.Fatalf("asking for an address with a stale mirror: %v", err)
	}
	// The range has 6 addresses: .1 is kept for kubernetes, .3 claimed,
	// .4 held; the three left are handed out and the next create fails.
	seen := map[string]bool{}
	for i := range 3 {
		s := newService(fmt.Sprintf("s%d", i), corev1.ServiceTypeClusterIP, 80)
		if err := f.create(s); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if ip := s.Spec.ClusterIP; ip == "10.96.0.3" || ip == "10.96.0.4" || seen[ip] {
			t.Fatalf("handed out %s", ip)
		}
		seen[s.Spec.ClusterIP] = true
	}
	if err := f.create(newService("full", corev1.ServiceTypeClusterIP, 80)); !errors.Is(err, ErrRangeFull) {
		t.Fatalf("create in a full range: %v", err)
	}
}

// TestServiceCIDRRanges: addresses outside every range are refused with
// the ranges named; a ServiceCIDR adds a range for asked-for addresses
// and for random ones once the configured range is full; one being
// deleted adds none.
func TestServiceCIDRRanges(t *testing.T) {
	f := newAllocFixture(t, "10.96.0.0/29", utilnet.PortRange{Base: 30000, Size: 10})
	ctx := context.Background()
	out := newService("out", corev1.ServiceTypeClusterIP, 80)
	out.Spec.ClusterIP = "203.0.113.10"
	if err := f.create(out); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "The range of valid IPs is 10.96.0.0/29") {
		t.Fatalf("outside every range: %v", err)
	}
	put := func(name, body string) {
		if _, err := f.store.Create(ctx, serviceCIDRsPrefix+name, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	put("doc", `{"metadata":{"name":"doc"},"spec":{"cidrs":["203.0.113.0/30","2001:db8::/64"]}}`)
	put("gone", `{"metadata":{"name":"gone","deletionTimestamp":"2026-01-01T00:00:00Z"},"spec":{"cidrs":["198.51.100.0/24"]}}`)
	out = newService("out", corev1.ServiceTypeClusterIP, 80)
	out.Spec.ClusterIP = "203.0.113.1"
	if err := f.create(out); err != nil {
		t.Fatalf("an address of a ServiceCIDR: %v", err)
	}
	leaving := newService("leaving", corev1.ServiceTypeClusterIP, 80)
	leaving.Spec.ClusterIP = "198.51.100.7"
	if err := f.create(leaving); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "10.96.0.0/29,203.0.113.0/30") {
		t.Fatalf("an address of a deleted ServiceCIDR: %v", err)
	}
	// 10.96.0.0/29: .2-.6 random (.1 kept), then 203.0.113.2 (.1 taken).
	var last string
	for i := range 6 {
		s := newService(fmt.Sprintf("s%d", i), corev1.ServiceTypeClusterIP, 80)
		if err := f.create(s); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		last = s.Spec.ClusterIP
	}
	if last != "203.0.113.2" {
		t.Fatalf("the address after the configured range filled: %s", last)
	}
	if err := f.create(newService("full", corev1.ServiceTypeClusterIP, 80)); !errors.Is(err, ErrRangeFull) {
		t.Fatalf("every range full: %v", err)
	}
}
