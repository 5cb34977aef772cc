package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.uber.org/zap"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/agent"
	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/internal/restconfig"
	"github.com/orch/orch/internal/version"
	"github.com/orch/orch/server/admission/policy"
	"github.com/orch/orch/server/admission/webhook"
	"github.com/orch/orch/server/apf"
	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/controllers/eventttl"
	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/nodeipam"
	"github.com/orch/orch/server/controllers/pcrcleaner"
	"github.com/orch/orch/server/join"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/all"
)

// Run starts `orch server` and blocks until ctx is cancelled or a component
// fails, then shuts everything down in order.
func Run(ctx context.Context, cfg Config, log *zap.Logger) error {
	started := time.Now()
	p, err := cfg.Parse()
	if err != nil {
		return err
	}
	dir := filepath.Join(cfg.DataDir, "server")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	var peers []string
	if cfg.JoinServer != "" {
		if peers, err = joinAsServer(ctx, cfg, dir, log); err != nil {
			return err
		}
	}
	bundle, token, err := loadIdentity(cfg, p, dir, log)
	if err != nil {
		return err
	}
	if cfg.Snapshots.ClusterReset {
		return clusterReset(cfg, p, log)
	}
	d, err := openData(ctx, cfg, p, dir, bundle, peers, log)
	if errors.Is(err, errRemoved) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.close()
	id, err := raftID(filepath.Join(dir, "raft-id"))
	if err != nil {
		return err
	}

	ready := newReadyState()
	authz := newAuthorization(log)
	scheme := all.NewScheme()
	parts := &parts{authz: authz, crds: newCustomResources(log), hooks: webhook.New(log, authz.authz), policies: policy.New(scheme),
		mutatingPolicies: policy.NewMutating(scheme), apf: &apf.Classifier{}, metrics: newMetricsAPI(cfg)}
	if parts.prom, err = newPrometheus(d, parts); err != nil {
		return err
	}
	sa, err := newServiceAccountTokens(bundle, d.kv, cfg.ClusterDomain)
	if err != nil {
		return err
	}
	servers := &liveServers{self: p.Advertise}
	api, err := newAPIServer(cfg, p, dir, bundle, d.store, d.kv, sa, ready, parts, servers.ips, log)
	if err != nil {
		return err
	}
	inproc, err := startInProcess(cfg, api, parts, controllerTLS{caPEM: bundle.CAPEM(), sa: sa, signCSR: bundle.SignRequest}, log)
	if err != nil {
		return err
	}
	defer inproc.stop()
	servers.client.Store(&inproc.client)
	d.enc.SetPeers(encryptionPeers(inproc.client, id, bundle))
	loops := append(inproc.loops, haLoops(inproc.client, inproc.views, api, d.raft, log)...)
	availability, err := availabilityController(bundle, api, log)
	if err != nil {
		return err
	}
	loops = append(loops, availability)
	loops = append(loops, parts.metrics.leaderLoops(inproc.client, log)...)
	stopMetrics, err := parts.metrics.start(ctx, api, inproc.views(), log)
	if err != nil {
		return err
	}
	defer stopMetrics()
	joinCfg, err := agentJoinTokens(cfg, dir, bundle, token, inproc.client, log,
		join.Config{CA: bundle, Token: token, Logger: log, ServerBootstrap: serverBootstrap(dir, d.raft)})
	if err != nil {
		return err
	}
	joinHandler, err := join.New(joinCfg)
	if err != nil {
		return err
	}
	handler := secretsEncryptHandler(d.enc, bundle, d.snapshotWrap(joinHandler.Wrap(api.Handler())), log)
	srv, errc, err := serveHTTPS(cfg, p, bundle, handler, log)
	if err != nil {
		return err
	}
	defer shutdownHTTP(log, srv)
	defer servePprof(cfg.PprofAddress, log)()
	if !cfg.DisableAgent {
		if err := agent.CheckHost(agentConfig(cfg, p), cfg.ServiceCIDR); err != nil {
			return err
		}
		defer agent.StartEmbedded(ctx, agentConfig(cfg, p), apiURL(cfg, p), token, log.Named("agent"))()
	}

	go awaitBootstrapped(ctx, bootstrapped(api, d.store), ready)
	go keepCertsRenewed(ctx, cfg, p, bundle, log)
	go keepServerLease(ctx, inproc.client, serverIdentity{raftID: id, address: p.Advertise,
		port: cfg.HTTPSListenPort, nodeName: nodeName(cfg)}, clusteredRaft(d.raft), log)
	go runWhileLeader(ctx, d.store, log, func(lctx context.Context) {
		leaderTasks(lctx, []func(context.Context) error{api.Bootstrap, inproc.policy, ingressClassStep(cfg.Disable, inproc.client)}, ready, loops, api.RunNamespaceLifecycle, log)
	})
	caches := func() error { return errors.Join(parts.authz.ready(), parts.crds.ready()) }
	return serveUntilDone(ctx, cfg, p, bundle, ready, caches, errc, started, log)
}

// agentConfig is the configuration of the server's own agent.
func agentConfig(cfg Config, p *Parsed) agent.Config {
	return agent.Config{
		DataDir: cfg.DataDir, NodeName: cfg.NodeName, NodeIP: p.Advertise.String(),
		NodeLabels: cfg.NodeLabels, NodeTaints: cfg.NodeTaints, KubeletPort: cfg.KubeletPort,
		ContainerRuntimeEndpoint: cfg.ContainerRuntimeEndpoint, PrivateRegistry: cfg.PrivateRegistry, Debug: cfg.Debug,
		ClusterCIDR: cfg.ClusterCIDR, ClusterDNS: cfg.ClusterDNS, ClusterDomain: cfg.ClusterDomain,
		NetworkBackend: cfg.NetworkBackend, EvictionHard: cfg.EvictionHard, PodsPerShim: cfg.PodsPerShim,
		IngressHTTPPort: cfg.IngressHTTPPort, IngressHTTPSPort: cfg.IngressHTTPSPort,
	}
}

// loadIdentity loads or creates the cluster CA, certificates and join token.
func loadIdentity(cfg Config, p *Parsed, dir string, log *zap.Logger) (*pki.Bundle, string, error) {
	bundle, err := pki.LoadOrCreate(filepath.Join(dir, "tls"), pki.Options{
		AdvertiseAddress: p.Advertise.String(), BindAddress: p.Bind.String(), TLSSANs: cfg.TLSSANs, ClusterDomain: cfg.ClusterDomain,
		ServiceCIDR: cfg.ServiceCIDR, Logger: log.Named("pki"), LeafValidity: cfg.LeafValidity,
	})
	if err != nil {
		return nil, "", fmt.Errorf("loading cluster certificates: %w", err)
	}
	token, err := pki.LoadOrCreateToken(filepath.Join(dir, "token"), bundle.CAPEM(), cfg.Token, log.Named("pki"))
	if err != nil {
		return nil, "", fmt.Errorf("join token: %w", err)
	}
	return bundle, token, nil
}

// inProcess is what startInProcess started and built.
type inProcess struct {
	client kubernetes.Interface                   // the loopback client
	views  func() informers.SharedInformerFactory // a term's view of the shared cache
	loops  []controller
	policy func(context.Context) error // the default RBAC policy, reconciled by the leader
	stop   func()
}

// startInProcess starts what runs in-process on every server over the
// loopback client (the shared cache behind authorization, APF and
// admission) and builds the leader-only controllers, which leaderTasks
// runs.
func startInProcess(cfg Config, api *apiserver.Server, parts *parts, tls controllerTLS, log *zap.Logger) (*inProcess, error) {
	// In-process clients are not rate-limited by client-go (QPS < 0): the
	// API server's own limits apply.
	loopback := &rest.Config{Host: "http://orch-loopback", Transport: api.LoopbackTransport(), QPS: -1}
	loopClient, err := kubernetes.NewForConfig(restconfig.PreferProtobuf(loopback))
	if err != nil {
		return nil, fmt.Errorf("loopback client: %w", err)
	}
	cache := newSharedCache(loopClient)
	ipam, err := nodeipam.New(nodeipam.Config{Client: loopClient, Informers: cache.view, ClusterCIDR: cfg.ClusterCIDR, Logger: log})
	if err != nil {
		return nil, err
	}
	events := eventttl.New(eventttl.Config{Client: loopClient, TTL: cfg.EventTTL, Logger: log})
	loops := []controller{{"event TTL", func(ctx context.Context) error { events.Run(ctx); return nil }},
		{"apf bootstrap", func(ctx context.Context) error {
			return apf.RunEnsurer(ctx, loopClient.FlowcontrolV1(), cache.view(), log)
		}}}
	if !cfg.DisableControllerManager {
		pcrs := pcrcleaner.New(pcrcleaner.Config{Client: loopClient, Logger: log})
		loops = append(loops, controller{"node IPAM", ipam.Run},
			controller{"podcertificaterequest cleaner", func(ctx context.Context) error { pcrs.Run(ctx); return nil }})
	}
	meta, err := metadata.NewForConfig(loopback)
	if err != nil {
		return nil, fmt.Errorf("loopback metadata client: %w", err)
	}
	shared := builtinIngress(selectShared(sharedControllers(), cfg.DisableScheduler, cfg.DisableControllerManager), cfg.Disable)
	if len(shared) > 0 {
		loops = append(loops, controller{"controllers", func(ctx context.Context) error {
			return runShared(ctx, loopClient, meta, shared, kit.Options{NodeMonitorGracePeriod: cfg.NodeMonitorGracePeriod, DataDir: cfg.DataDir,
				ClusterCAPEM: tls.caPEM, IssueLegacyToken: tls.sa.issueLegacy, SignCSR: tls.signCSR,
				Loopback: loopback, HPASyncPeriod: cfg.HPASyncPeriod, Metrics: parts.prom, Cache: cache.forControllers()}, log)
		}})
	}
	crdLoop, stopCRDs, err := parts.crds.start(loopback, log)
	if err != nil {
		return nil, err
	}
	loops = append(loops, crdLoop)
	manifests, err := manifestsLoop(cfg, loopback, loopClient, log)
	if err != nil {
		stopCRDs()
		return nil, err
	}
	loops = append(loops, manifests)
	parts.mutatingPolicies.SetOpenAPIPaths(api.OpenAPIV3Paths)
	if err := startCaches(loopback, loopClient, parts, cache); err != nil {
		cache.Stop()
		stopCRDs()
		return nil, err
	}
	return &inProcess{client: loopClient, views: cache.view, loops: loops, policy: bootstrapPolicy(loopClient, log),
		stop: func() { cache.Stop(); stopCRDs() }}, nil
}

// serveUntilDone waits for the bootstrap objects, writes the kubeconfig,
// announces readiness and then serves until ctx ends or the listener fails.
func serveUntilDone(ctx context.Context, cfg Config, p *Parsed, bundle *pki.Bundle, ready *readyState, caches func() error,
	errc <-chan error, started time.Time, log *zap.Logger) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-errc:
		return fmt.Errorf("API server: %w", err)
	case <-ready.ch:
	}
	for caches() != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			return fmt.Errorf("API server: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := writeKubeconfig(cfg, p, bundle); err != nil {
		return err
	}
	announce(log, cfg, time.Since(started))
	if cfg.Ready != nil {
		cfg.Ready()
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down")
		return nil
	case err := <-errc:
		return fmt.Errorf("API server: %w", err)
	}
}

func openStore(ctx context.Context, cfg Config, p *Parsed, bundle *pki.Bundle, log *zap.Logger) (*datastore.RaftStore, error) {
	id, err := raftID(filepath.Join(cfg.DataDir, "server", "raft-id"))
	if err != nil {
		return nil, err
	}
	raftAddr := net.JoinHostPort(p.Advertise.String(), strconv.Itoa(cfg.RaftPort))
	store, err := datastore.Open(ctx, datastore.Config{
		Dir:           filepath.Join(cfg.DataDir, "server", "db"),
		NodeID:        id,
		BindAddr:      net.JoinHostPort(p.Bind.String(), strconv.Itoa(cfg.RaftPort)),
		AdvertiseAddr: raftAddr,
		ServerTLS:     bundle.PeerServerTLS(),
		ClientTLS:     bundle.PeerClientTLS(),
		Bootstrap:     cfg.JoinServer == "",
		HistorySize:   cfg.DefaultWatchCacheSize,
		Logger:        log.Named("datastore"),
	})
	if err != nil {
		return nil, fmt.Errorf("opening datastore: %w", err)
	}
	return store, nil
}

func newAPIServer(cfg Config, p *Parsed, dir string, bundle *pki.Bundle, store backend, kv datastore.Store,
	sa *saTokens, ready *readyState, parts *parts, endpoints func(context.Context) []net.IP, log *zap.Logger) (*apiserver.Server, error) {
	tokens, err := auth.NewTokenAuthenticator(filepath.Join(dir, "cred", "tokens.csv"))
	if err != nil {
		return nil, fmt.Errorf("loading bearer tokens: %w", err)
	}
	kubeletTLS, err := kubeletClientTLS(bundle)
	if err != nil {
		return nil, err
	}
	parts.metrics.setKubeletTLS(kubeletTLS)
	chain, err := newAdmissionChain(kv, parts)
	if err != nil {
		return nil, fmt.Errorf("admission chain: %w", err)
	}
	agg, err := newAggregationProxy(bundle, log)
	if err != nil {
		return nil, err
	}
	regCfg := registry.Config{
		ServiceCIDR:   p.ServiceCIDR,
		NodePortRange: utilnet.PortRange{Base: p.NodePortBase, Size: p.NodePortSize},
		ClusterDomain: cfg.ClusterDomain,
	}
	authn := auth.Union(auth.NewCertAuthenticator(bundle.CAPool()), tokens, sa.authenticator)
	api, err := apiserver.New(apiserver.Config{
		Store:            kv,
		Resources:        all.Resources(regCfg),
		Virtual:          append(append(sa.reviews(authn), parts.authz.reviews()...), parts.metrics.resources()...),
		OIDC:             sa.oidc,
		TokenIssuer:      sa.issuer,
		APIAudiences:     sa.issuer.APIAudiences(),
		Authenticator:    authn,
		Authorizer:       parts.authz.authz,
		Logger:           log,
		Ready:            readiness(store, ready, parts),
		Dynamic:          parts.crds.reg,
		AdvertiseAddress: p.Advertise,
		EndpointIPs:      endpoints,
		ClusterDNS:       p.ClusterDNS,
		SecurePort:       cfg.HTTPSListenPort,
		ServiceCIDR:      p.ServiceCIDR,
		Version:          version.Kubernetes(),
		KubeletClientTLS: kubeletTLS,
		Admission:        chain,
		ExtensionAuth:    &apiserver.ExtensionAuth{ClientCA: bundle.CAPEM(), RequestHeader: bundle.FrontProxyCAPEM()},
		Aggregator:       agg,
		FlowControl:      parts.apf,
		Metrics:          parts.prom,
	})
	if err != nil {
		return nil, err
	}
	return api, attachResolver(agg, api)
}

// kubeletClientTLS is how the API server reaches node agents for logs, exec
// and port-forward: a client certificate system:apiserver-kubelet-client
// (issued at each start, renewed in memory 90 days before expiry) and the cluster CA for the agents' serving certs.
func kubeletClientTLS(bundle *pki.Bundle) (*tls.Config, error) {
	cert, err := bundle.RenewingClientCert("system:apiserver-kubelet-client", []string{"system:masters"})
	if err != nil {
		return nil, fmt.Errorf("issuing the kubelet client certificate: %w", err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: bundle.CAPool(), GetClientCertificate: cert}, nil
}

func readiness(store backend, ready *readyState, parts *parts) func() error {
	return func() error {
		if err := store.Healthy(); err != nil {
			return err
		}
		if !ready.flag.Load() {
			return errors.New("system namespaces and the kubernetes service are not created yet")
		}
		return errors.Join(parts.authz.ready(), parts.crds.ready())
	}
}

func serveHTTPS(cfg Config, p *Parsed, bundle *pki.Bundle, h http.Handler, log *zap.Logger) (*http.Server, <-chan error, error) {
	addr := net.JoinHostPort(p.Bind.String(), strconv.Itoa(cfg.HTTPSListenPort))
	ln, err := tls.Listen("tcp", addr, bundle.ServerTLSConfig())
	if err != nil {
		return nil, nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	errc := make(chan error, 1)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	log.Info("API server listening", zap.String("address", "https://"+addr))
	return srv, errc, nil
}

func shutdownHTTP(log *zap.Logger, srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close() // long-running watches end here
	}
	log.Debug("API server stopped")
}

func closeLogged(log *zap.Logger, what string, f func() error) {
	if err := f(); err != nil {
		log.Warn("closing "+what, zap.Error(err))
	}
}
