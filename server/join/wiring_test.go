package join_test

import (
	"context"
	"net"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	agentjoin "github.com/orch/orch/agent/join"
	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/controllers/nodeipam"
	"github.com/orch/orch/server/join"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/all"
)

// TestServerWiring wires the pieces the way orch server does: the join
// handler in front of the real API server over TLS, NodeRule in the
// authorizer with a pod graph fed through the loopback, and nodeipam. A
// node joins, registers, renews its Lease and is kept off other nodes.
func TestServerWiring(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := zaptest.NewLogger(t)
	bundle, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), pki.Options{Hostname: "h", Logger: log,
		HostIPs: func() ([]net.IP, error) { return []net.IP{net.ParseIP("127.0.0.1")}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	token := pki.FormatToken(pki.CAHash(bundle.CAPEM()), "wiring-secret")
	store := datastore.NewMemStore(1000)
	defer store.Close()

	graph := &auth.LateGraph{}
	api, err := apiserver.New(apiserver.Config{Store: store, Resources: all.Resources(registry.Config{}),
		Authenticator: auth.NewCertAuthenticator(bundle.CAPool()),
		Authorizer:    auth.NewAuthorizer(log.Named("authz"), auth.NodeRule(graph)), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	loopback := &rest.Config{Host: "http://orch-loopback", Transport: api.LoopbackTransport()}
	admin := kubernetes.NewForConfigOrDie(loopback)
	factory := informers.NewSharedInformerFactory(admin, 0)
	graph.Set(auth.NewPodGraph(factory))
	factoryCtx, stopFactory := context.WithCancel(context.Background())
	factory.StartWithContext(factoryCtx)
	defer func() { stopFactory(); factory.Shutdown() }()
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	ipam, err := nodeipam.NewForConfig(loopback, nodeipam.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ipamDone := make(chan struct{})
	go func() { defer close(ipamDone); _ = ipam.Run(ctx) }()
	defer func() { cancel(); <-ipamDone }()

	joinHandler, err := join.New(join.Config{CA: bundle, Token: token, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(joinHandler.Wrap(api.Handler()))
	srv.TLS = bundle.ServerTLSConfig()
	srv.StartTLS()
	defer srv.Close()
	srv.TLS.Certificates = nil // serve the bundle's certificate (GetCertificate), not httptest's, to clients without SNI

	creds, err := agentjoin.Join(ctx, srv.URL, token, "worker-1", t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", creds.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	nodeClient := kubernetes.NewForConfigOrDie(cfg)
	checkNodeAccess(ctx, t, admin, nodeClient)
}

func checkNodeAccess(ctx context.Context, t *testing.T, admin, nc kubernetes.Interface) {
	t.Helper()
	mustOK := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	mustForbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Fatalf("%s: want 403, got %v", what, err)
		}
	}
	_, err := nc.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}}, metav1.CreateOptions{})
	mustOK("register own node", err)
	_, err = admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-2"}}, metav1.CreateOptions{})
	mustOK("admin creates worker-2", err)
	_, err = nc.CoreV1().Nodes().Patch(ctx, "worker-1", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{})
	mustOK("patch own node", err)
	_, err = nc.CoreV1().Nodes().Patch(ctx, "worker-2", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{})
	mustForbidden("patch other node", err)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", Namespace: corev1.NamespaceNodeLease}}
	_, err = nc.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{})
	mustOK("create own lease", err)
	_, err = nc.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "worker-1", metav1.GetOptions{})
	mustOK("get own lease", err)
	_, err = nc.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	mustForbidden("create deployment", err)
	_, err = nc.CoreV1().Secrets("default").Get(ctx, "unreferenced", metav1.GetOptions{})
	mustForbidden("get unreferenced secret", err)
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := nc.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
		mustOK("get own node", err)
		if n.Spec.PodCIDR != "" {
			t.Logf("worker-1 got pod CIDR %s", n.Spec.PodCIDR)
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("worker-1 got no pod CIDR")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
