package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"

	"github.com/orch/orch/agent/certs"
	"github.com/orch/orch/agent/cgroups"
	"github.com/orch/orch/agent/images"
	"github.com/orch/orch/agent/join"
	"github.com/orch/orch/agent/kubelet"
	"github.com/orch/orch/agent/lifecycle"
	"github.com/orch/orch/agent/localpath"
	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/agent/node"
	"github.com/orch/orch/agent/prober"
	"github.com/orch/orch/agent/qos"
	"github.com/orch/orch/agent/runtime"
	"github.com/orch/orch/agent/serverlb"
	"github.com/orch/orch/agent/volumes"
	"github.com/orch/orch/internal/memtune"
	"github.com/orch/orch/internal/restconfig"
	"github.com/orch/orch/internal/version"
)

// Run joins the cluster, registers the node and runs its pods until ctx
// ends. Containers keep running after it returns.
func Run(ctx context.Context, cfg Config, log *zap.Logger) error {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	log = log.Named("agent")
	token, err := cfg.token()
	if err != nil {
		return err
	}
	agentDir := filepath.Join(cfg.DataDir, "agent")
	ip, err := nodeIP(cfg)
	if err != nil {
		return err
	}
	creds, err := joinWithRetry(ctx, join.Options{ServerURL: cfg.ServerURL, Token: token, NodeName: cfg.NodeName,
		Dir: agentDir, Logger: log.Named("join"), NodeIPs: []net.IP{ip}})
	if err != nil {
		return err
	}
	go join.KeepRenewed(ctx, join.Options{ServerURL: cfg.ServerURL, NodeName: cfg.NodeName, Dir: agentDir, Logger: log.Named("join")}, creds)
	client, err := clientFor(ctx, creds.KubeconfigPath, log)
	if err != nil {
		return err
	}
	ctrd, stop, err := connectRuntime(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stop()
	return runNode(ctx, cfg, log, client, ctrd, creds, ip)
}

// nodeIP is --node-ip or the default route's source address.
func nodeIP(cfg Config) (net.IP, error) {
	if cfg.NodeIP == "" {
		return node.DefaultRouteIP()
	}
	ip := net.ParseIP(cfg.NodeIP)
	if ip == nil {
		return nil, fmt.Errorf("--node-ip %q is not an IP address", cfg.NodeIP)
	}
	return ip, nil
}

// joinWithRetry joins the cluster, retrying while the server is unreachable
// (it may still be starting, e.g. the embedded agent of `orch server`); a
// wrong token or CA stops at once with a clear message.
func joinWithRetry(ctx context.Context, o join.Options) (*join.Credentials, error) {
	delay, log := time.Second, o.Logger
	for {
		creds, err := join.JoinWithOptions(ctx, o)
		if err == nil {
			return creds, nil
		}
		if errors.Is(err, join.ErrCAMismatch) || errors.Is(err, join.ErrUnpinnedToken) || errors.Is(err, join.ErrRejected) {
			return nil, fmt.Errorf("joining %s: %w", o.ServerURL, err)
		}
		log.Warn("joining the cluster failed; retrying", zap.String("server", o.ServerURL), zap.Duration("in", delay), zap.Error(err))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("joining %s: %w", o.ServerURL, err)
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// clientFor builds the agent's client from its kubeconfig, dialling
// through a load balancer that fails over between the cluster's servers.
func clientFor(ctx context.Context, kubeconfig string, log *zap.Logger) (apiClients, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return apiClients{}, fmt.Errorf("loading node kubeconfig: %w", err)
	}
	rc = restconfig.PreferProtobuf(rc)
	// The client certificate from files, which client-go reloads when a
	// renewal (join.KeepRenewed) replaces them.
	rc.TLSClientConfig.CertData, rc.TLSClientConfig.KeyData = nil, nil
	rc.TLSClientConfig.CertFile = filepath.Join(filepath.Dir(kubeconfig), join.CertFile)
	rc.TLSClientConfig.KeyFile = filepath.Join(filepath.Dir(kubeconfig), join.KeyFile)
	rc.QPS, rc.Burst = kubeAPIQPS, kubeAPIBurst
	rc.UserAgent = "orch-agent/" + version.Get().Version
	lb, err := serverlb.Wire(rc, log)
	if err != nil {
		return apiClients{}, err
	}
	lb.Persist(filepath.Join(filepath.Dir(kubeconfig), "api-servers.json"))
	c, err := newAPIClients(rc)
	if err != nil {
		return apiClients{}, err
	}
	return c, lb.Start(ctx, rc, c)
}

// The agent's client-side rate limits, kubelet's defaults: the node's own
// requests (pod status, leases, watches) and, apart, its events, so a
// burst of pod starts neither waits behind nor starves the other.
const (
	kubeAPIQPS, kubeAPIBurst      = 50, 100
	eventRecordQPS, eventRecBurst = 50, 100
)

// apiClients is the agent's clientset plus one for events with a rate
// limiter of its own; both share one HTTP/2 connection pool.
type apiClients struct {
	kubernetes.Interface
	events kubernetes.Interface
}

func newAPIClients(rc *rest.Config) (apiClients, error) {
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return apiClients{}, fmt.Errorf("agent API client: %w", err)
	}
	api, err := kubernetes.NewForConfigAndClient(rc, hc)
	if err != nil {
		return apiClients{}, fmt.Errorf("agent API client: %w", err)
	}
	ec := rest.CopyConfig(rc)
	ec.QPS, ec.Burst = eventRecordQPS, eventRecBurst
	events, err := kubernetes.NewForConfigAndClient(ec, hc)
	if err != nil {
		return apiClients{}, fmt.Errorf("agent event client: %w", err)
	}
	return apiClients{Interface: api, events: events}, nil
}

// connectRuntime starts the managed containerd (no endpoint given) and
// connects to it; stop closes the client and stops the daemon.
func connectRuntime(ctx context.Context, cfg Config, log *zap.Logger) (*containerd.Client, func(), error) {
	addr := cfg.ContainerRuntimeEndpoint
	var managed *runtime.Managed
	if addr == "" {
		mc := runtime.DefaultManagedConfig(cfg.DataDir)
		if cfg.ContainerdStateDir != "" {
			mc.StateDir = cfg.ContainerdStateDir
		}
		if mt := (memtune.Options{}); mt.Enabled() {
			mc.SettleAfter = max(mt.SettleAfter(log), time.Millisecond)
		}
		var err error
		if managed, err = runtime.StartManagedConfig(ctx, log.Named("containerd"), mc); err != nil {
			return nil, nil, fmt.Errorf("starting containerd: %w", err)
		}
		addr = managed.Address()
	}
	client, err := runtime.Connect(ctx, addr)
	if err != nil {
		if managed != nil {
			_ = managed.Stop()
		}
		return nil, nil, fmt.Errorf("connecting to containerd at %s: %w", addr, err)
	}
	return client, func() {
		_ = client.Close()
		if managed != nil {
			if err := managed.Stop(); err != nil {
				log.Warn("stopping containerd", zap.Error(err))
			}
		}
	}, nil
}

// runNode sets up images, the Node, network and cgroups, then runs the pod
// loop and the heartbeat.
func runNode(ctx context.Context, cfg Config, log *zap.Logger, client apiClients, ctrd *containerd.Client,
	creds *join.Credentials, ip net.IP) error {
	rt, err := runtime.New(ctx, log.Named("runtime"), ctrd, runtime.Options{Namespace: cfg.ContainerdNS,
		LogDir: runtime.DefaultLogDir(cfg.DataDir), FIFODir: cfg.FIFODir, PodsPerShim: cfg.PodsPerShim})
	if err != nil {
		return fmt.Errorf("containerd runtime: %w", err)
	}
	defer rt.Close()
	imgs, err := startImages(ctx, cfg, log, ctrd, rt.Snapshotter())
	if err != nil {
		return err
	}
	nodeCfg, err := nodeConfig(ctx, cfg, ctrd, ip)
	if err != nil {
		return err
	}
	if _, err := node.Register(ctx, log.Named("node"), client, node.Build(nodeCfg)); err != nil {
		return err
	}
	podCIDR, err := node.WaitPodCIDR(ctx, log.Named("node"), client, cfg.NodeName)
	if err != nil {
		return err
	}
	if err := checkHostNetwork(cfg, ip, podCIDR); err != nil {
		return err
	}
	warnDNSConflict(cfg, log)
	netm, cg, err := setupHost(cfg, log, podCIDR, podMTU(cfg, ip, log), nodeCfg.Allocatable)
	if err != nil {
		return err
	}
	defer netm.Close()
	stopOverlay, err := startOverlay(ctx, cfg, log, client, ip, podCIDR)
	if err != nil {
		return err
	}
	defer stopOverlay()
	shared := newSharedInformers(client, cfg.NodeName)
	defer shared.stop() // after the components below have stopped
	defer startProxy(ctx, cfg, log, client, shared.cluster.View())()
	defer startNetpol(ctx, cfg, log, client)()
	defer startDNS(ctx, cfg, log, client, shared.cluster.View())()
	defer startIngress(ctx, cfg, log, client, shared.cluster.View())()
	stopNode := keepNode(ctx, cfg, log, client, shared.node.View(), ctrd, netm, nodeCfg, podCIDR)
	defer stopNode()
	if cfg.Ready != nil {
		cfg.Ready()
	}
	return runPods(ctx, cfg, log, client, shared, rt, netm, cg, kubelet.ImageService{S: imgs, Client: ctrd, Namespace: cfg.ContainerdNS}, nodeCfg, creds)
}

// keepNode runs the heartbeat (Lease, conditions from real health) and
// re-registers the Node when it is deleted; the returned func stops both.
func keepNode(ctx context.Context, cfg Config, log *zap.Logger, client kubernetes.Interface, nodes informers.SharedInformerFactory,
	ctrd *containerd.Client, netm *network.Manager, nodeCfg node.Config, podCIDR string) func() {
	thresholds, _ := node.ParseThresholds(cfg.EvictionHard) // checked by Validate
	checker := &node.Checker{Log: log.Named("health"), NodeFS: cfg.DataDir, ImageFS: imageFSDir(cfg), Thresholds: thresholds,
		Runtime: func(ctx context.Context) error { _, err := ctrd.Version(ctx); return err },
		Network: netm.CheckHost, Repair: netm.EnsureHost}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		node.Heartbeat(ctx, log.Named("heartbeat"), client, nodeCfg, checker.Health)
	}()
	go func() {
		defer wg.Done()
		node.KeepRegistered(ctx, log.Named("node"), client, nodes, nodeCfg, podCIDR, checker.Health)
	}()
	return func() { cancel(); wg.Wait() }
}

// imageFSDir is where containerd keeps images: the managed containerd's
// root, else containerd's default root when present.
func imageFSDir(cfg Config) string {
	if cfg.ContainerRuntimeEndpoint == "" {
		return runtime.DefaultManagedConfig(cfg.DataDir).RootDir
	}
	if _, err := os.Stat("/var/lib/containerd"); err == nil {
		return "/var/lib/containerd"
	}
	return ""
}

func startImages(ctx context.Context, cfg Config, log *zap.Logger, ctrd *containerd.Client, snapshotter string) (*images.Service, error) {
	var regs *images.Registries
	if r, err := images.LoadRegistries(cfg.PrivateRegistry); err == nil {
		regs = r
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("registries config: %w", err)
	}
	stateFile := images.DefaultStateFile(cfg.DataDir)
	forgetImportsIfNoImages(ctx, log, ctrd, cfg.ContainerdNS, stateFile)
	svc := images.New(log.Named("images"), ctrd, images.Options{Namespace: cfg.ContainerdNS, Snapshotter: snapshotter,
		Registries: regs, StateFile: stateFile})
	dir := images.DefaultImportDir(cfg.DataDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("images dir: %w", err)
	}
	if _, err := svc.ImportDir(ctx, dir); err != nil {
		log.Warn("importing air-gap images", zap.Error(err))
	}
	go func() {
		if err := svc.Watch(ctx, dir); err != nil && ctx.Err() == nil {
			log.Warn("watching the air-gap images dir stopped", zap.Error(err))
		}
	}()
	return svc, nil
}

// forgetImportsIfNoImages drops the record of imported air-gap tarballs when
// containerd holds no image in orch's namespace (its root was wiped, e.g. a
// reboot with a fresh containerd root), so they are imported again.
func forgetImportsIfNoImages(ctx context.Context, log *zap.Logger, ctrd *containerd.Client, ns, stateFile string) {
	if _, err := os.Stat(stateFile); err != nil {
		return
	}
	list, err := ctrd.ImageService().List(namespaces.WithNamespace(ctx, ns))
	if err != nil || len(list) > 0 {
		return
	}
	log.Info("containerd has no images: importing the air-gap images again", zap.String("state", stateFile))
	if err := os.Remove(stateFile); err != nil {
		log.Warn("removing the image import record", zap.Error(err))
	}
}

func nodeConfig(ctx context.Context, cfg Config, ctrd *containerd.Client, ip net.IP) (node.Config, error) {
	labels, err := node.ParseLabels(cfg.NodeLabels)
	if err != nil {
		return node.Config{}, err
	}
	taints, err := node.ParseTaints(cfg.NodeTaints)
	if err != nil {
		return node.Config{}, err
	}
	capacity, err := node.HostCapacity(cfg.DataDir)
	if err != nil {
		return node.Config{}, err
	}
	v, err := ctrd.Version(ctx)
	if err != nil {
		return node.Config{}, fmt.Errorf("containerd version: %w", err)
	}
	return node.Config{Name: cfg.NodeName, Labels: labels, Taints: taints, InternalIP: ip, Capacity: capacity,
		Allocatable: node.Allocatable(capacity, node.Reservation), KubeletPort: cfg.KubeletPort,
		RuntimeVersion: "containerd://" + v.Version, KubeletVersion: version.Kubernetes().GitVersion,
		Images: containerdImages(ctrd, cfg.ContainerdNS)}, nil
}

func setupHost(cfg Config, log *zap.Logger, podCIDR string, mtu int, alloc corev1.ResourceList) (*network.Manager, *cgroups.Manager, error) {
	netm, err := network.New(log.Named("network"), network.Config{BridgeName: cfg.BridgeName, PodCIDR: podCIDR, MTU: mtu,
		ClusterCIDR: cfg.ClusterCIDR, IPAMDir: filepath.Join(cfg.DataDir, "agent", "ipam"), NetnsPrefix: cfg.NetnsPrefix,
		NATChain: cfg.ChainPrefix + "POSTROUTING", FilterChain: cfg.ChainPrefix + "FORWARD"})
	if err != nil {
		return nil, nil, fmt.Errorf("pod network: %w", err)
	}
	if err := netm.EnsureHost(); err != nil {
		_ = netm.Close()
		return nil, nil, fmt.Errorf("pod network: %w", err)
	}
	cg, err := cgroups.New(log.Named("cgroups"), cgroups.Config{Root: cfg.CgroupRoot, NodeAllocatable: alloc})
	if err == nil {
		err = cg.EnsureQoSTiers()
	}
	if err != nil {
		_ = netm.Close()
		return nil, nil, fmt.Errorf("cgroups: %w", err)
	}
	return netm, cg, nil
}

func runPods(ctx context.Context, cfg Config, log *zap.Logger, client apiClients, shared sharedInformers, rt runtime.Interface,
	netm *network.Manager, cg kubelet.Cgroups, imgs kubelet.ImageService, nc node.Config, creds *join.Credentials) error {
	bc := record.NewBroadcaster(record.WithContext(ctx))
	bc.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.events.CoreV1().Events("")})
	defer bc.Shutdown()
	podsDir := filepath.Join(cfg.DataDir, "agent", "pods")
	rec := bc.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: cfg.NodeName})
	prom := newAgentMetrics()
	probes := prober.New(log.Named("prober"), prober.Deps{Exec: prober.ExecFromRuntime(rt), Recorder: rec, Metrics: prom.prober})
	defer probes.Stop()
	hooks := lifecycle.New(log, lifecycle.Deps{Exec: prober.ExecFromRuntime(rt), Recorder: rec})
	storageDir := localpath.StorageDir(cfg.DataDir)
	go func() { // local-path volumes: report the storage dir, remove deleted volumes' data
		if err := localpath.Run(ctx, localpath.Config{Client: client, NodeName: cfg.NodeName, StorageDir: storageDir, Logger: log,
			NodeInformers: shared.node.View()}); err != nil && ctx.Err() == nil {
			log.Error("local-path storage stopped", zap.Error(err))
		}
	}()
	vols := volumes.New(log.Named("volumes"), volumes.Config{PodsDir: podsDir,
		Allocatable: func() corev1.ResourceList { return nc.Allocatable },
		Claims:      volumes.APIClaims(client), StorageDir: storageDir, NodeName: cfg.NodeName,
		Images: kubelet.ImageVolumes{S: imgs.S, Client: client}})
	bundles := certs.NewBundles(client, log)
	go bundles.Run(ctx)
	podCerts := certs.NewPodCerts(certs.PodCertsConfig{Client: client, NodeName: cfg.NodeName, Recorder: rec, Log: log})
	k, err := kubelet.New(kubelet.Config{
		NodeName: cfg.NodeName, Client: client, Informers: shared.cluster.View(), Runtime: rt, Network: netm, Cgroups: cg,
		Images: imgs, Volumes: kubelet.VolumeManager{M: vols, Src: kubelet.CertSources(client, bundles, podCerts)},
		PodCerts: podCerts, Probes: kubelet.ProberProbes{M: probes}, Hooks: hooks, Recorder: rec,
		PodsDir: podsDir, DNS: kubelet.DNS{ClusterDNS: cfg.ClusterDNS, ClusterDomain: cfg.ClusterDomain},
		HostIP: nc.InternalIP.String(), Allocatable: nc.Allocatable,
		MemoryCapacity: qos.MemoryBytes(nc.Capacity), SyncPeriod: cfg.SyncFrequency, Log: log.Named("kubelet"),
	})
	if err != nil {
		return err
	}
	usage, _ := cg.(cgroupUsage)
	stopAPI := serveKubeletAPI(ctx, cfg, log, creds, rt, k, kubeletAPIExtras{client: client, cg: usage, prom: prom})
	defer stopAPI()
	log.Info("agent running", zap.String("node", cfg.NodeName))
	return k.Run(ctx)
}
