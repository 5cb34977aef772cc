package kubeletapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/agent/runtime"
)

// Runtime is the part of runtime.Interface this API needs.
type Runtime interface {
	ContainerStatus(ctx context.Context, id string) (runtime.ContainerStatus, error)
	Exec(ctx context.Context, id string, req runtime.ExecRequest) (exitCode int, err error)
	Attach(ctx context.Context, id string, req runtime.AttachRequest) error
}

var _ Runtime = (runtime.Interface)(nil)

// Pod is what the API needs to know about a pod running on this node.
type Pod struct {
	UID string
	// IP is the pod's IP on the node bridge; port-forward dials it.
	IP string
	// Containers maps a container name to the ID of its current container.
	Containers map[string]string
}

// Config configures the API.
type Config struct {
	Runtime Runtime
	// LogDir is the runtime's log dir, used when a container status has no LogPath.
	LogDir string
	// ServerTLS serves the node's certificate; ClientAuth and ClientCAs are set by New.
	ServerTLS *tls.Config
	ClientCA  *x509.CertPool
	// AllowedClient accepts a verified client certificate (e.g. CN
	// system:apiserver-kubelet-client); nil rejects every client.
	AllowedClient func(*x509.Certificate) bool
	// PodLookup finds a pod of this node by namespace and name.
	PodLookup func(ns, name string) (Pod, bool)
	// FollowPoll is how often a followed log is checked for new lines; 0 = 250ms.
	FollowPoll time.Duration
	// Tokens and Access authenticate bearer tokens and authorize callers
	// other than the API server (metrics-server, Prometheus) as kubelet's
	// webhook authentication and authorization do; nil refuses them.
	Tokens TokenReviewer
	Access AccessReviewer
	// Stats, when set, serves /metrics/resource and /stats/summary.
	Stats Stats
	// Pods, when set, serves /pods: the pods bound to this node, as
	// kubelet's /pods lists them.
	Pods func() []*corev1.Pod
	// Metrics, CadvisorMetrics and ProbeMetrics, when set, are served on
	// /metrics, /metrics/cadvisor and /metrics/probes (authorized as
	// nodes/metrics, as kubelet does). Without Metrics, /metrics is the
	// running pods and containers of Pods.
	Metrics, CadvisorMetrics, ProbeMetrics prometheus.Gatherer
	// NodeLogDir, when set, is served read-only under /logs/ (kubelet's
	// /var/log; nodes/log, `kubectl get --raw .../nodes/<n>/proxy/logs/`).
	NodeLogDir string
}

// Server is the agent's HTTPS API.
type Server struct {
	cfg    Config
	log    *zap.Logger
	mux    *http.ServeMux
	tokens reviewCache
	access reviewCache
}

// New checks cfg and builds the Server.
func New(log *zap.Logger, cfg Config) (*Server, error) {
	if cfg.Runtime == nil || cfg.PodLookup == nil || cfg.ClientCA == nil {
		return nil, errors.New("kubeletapi: Config.Runtime, PodLookup and ClientCA are required")
	}
	if cfg.FollowPoll <= 0 {
		cfg.FollowPoll = 250 * time.Millisecond
	}
	s := &Server{cfg: cfg, log: log.Named("kubeletapi"), mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", s.serveLogs)
	s.mux.HandleFunc("/exec/{ns}/{pod}/{container}", s.serveExec)
	s.mux.HandleFunc("/attach/{ns}/{pod}/{container}", s.serveAttach)
	s.mux.HandleFunc("/portForward/{ns}/{pod}", s.servePortForward)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	if cfg.Pods != nil {
		s.mux.HandleFunc("GET /pods", s.servePods)
	}
	s.routeMetrics()
	if cfg.NodeLogDir != "" {
		s.mux.Handle("GET /logs/", http.StripPrefix("/logs/", http.FileServer(http.Dir(cfg.NodeLogDir))))
	}
	if cfg.Stats != nil {
		s.mux.HandleFunc("GET /metrics/resource", s.serveResourceMetrics)
		s.mux.HandleFunc("GET /stats/summary", s.serveSummary)
	}
	return s, nil
}

// servePods writes the node's pods as a v1 PodList (kubelet's /pods).
func (s *Server) servePods(w http.ResponseWriter, _ *http.Request) {
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	for _, p := range s.cfg.Pods() {
		list.Items = append(list.Items, *p)
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&list); err != nil {
		s.log.Debug("writing /pods", zap.Error(err))
	}
}

// serveMetrics is kubelet's /metrics in the Prometheus text format: the
// gauges of running pods and containers (kubelet_running_pods,
// kubelet_running_containers by state) from the node's pods.
func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	running, states := countRunning(s.cfg.Pods())
	var b strings.Builder
	b.WriteString("# HELP kubelet_running_pods [ALPHA] Number of pods that have a running pod sandbox\n# TYPE kubelet_running_pods gauge\n")
	fmt.Fprintf(&b, "kubelet_running_pods %d\n", running)
	b.WriteString("# HELP kubelet_running_containers [ALPHA] Number of containers currently running\n# TYPE kubelet_running_containers gauge\n")
	for _, st := range []string{"created", "exited", "running"} {
		fmt.Fprintf(&b, "kubelet_running_containers{container_state=%q} %d\n", st, states[st])
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}

// TLSConfig is cfg.ServerTLS requiring a client certificate from ClientCA,
// limited to HTTP/1.1 (stream upgrades need it).
func (s *Server) TLSConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.cfg.ServerTLS != nil {
		c = s.cfg.ServerTLS.Clone()
	}
	c.ClientAuth = tls.VerifyClientCertIfGiven
	c.ClientCAs = s.cfg.ClientCA
	c.NextProtos = []string{"http/1.1"}
	return c
}

// Handler is the API behind TLS: it checks the client certificate, then routes.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authenticate(r)
	if !ok {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", "a client certificate signed by the cluster CA or a valid bearer token is required")
		return
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && s.cfg.AllowedClient != nil && s.cfg.AllowedClient(r.TLS.VerifiedChains[0][0]) {
		s.mux.ServeHTTP(w, r)
		return
	}
	if !s.authorize(r, c) {
		verb, sub := attributes(r)
		writeStatus(w, http.StatusForbidden, "Forbidden",
			fmt.Sprintf("user=%s verb=%s resource=nodes subresource=%s", c.Name, verb, sub))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Serve serves the API on ln with TLS until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: s.TLSConfig(),
		ErrorLog: zap.NewStdLog(s.log.Named("http"))}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			_ = srv.Close()
		case <-done:
		}
	}()
	err := srv.Serve(tls.NewListener(ln, srv.TLSConfig))
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("kubelet API: %w", err)
}

// ListenAndServe listens on addr (e.g. ":10250") and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("kubelet API listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, ln)
}

// container resolves {ns}/{pod}/{container} of a request.
func (s *Server) container(r *http.Request) (Pod, string, error) {
	ns, name, cname := r.PathValue("ns"), r.PathValue("pod"), r.PathValue("container")
	pod, ok := s.cfg.PodLookup(ns, name)
	if !ok {
		return Pod{}, "", &httpError{http.StatusNotFound, "NotFound", fmt.Sprintf("pod %q not found in namespace %q on this node", name, ns)}
	}
	id, ok := pod.Containers[cname]
	if !ok {
		return Pod{}, "", &httpError{http.StatusBadRequest, "BadRequest", fmt.Sprintf("container %s is not valid for pod %s", cname, name)}
	}
	return pod, id, nil
}

func queryFlag(r *http.Request, names ...string) bool {
	for _, n := range names {
		v := strings.ToLower(r.URL.Query().Get(n))
		if v == "1" || v == "true" {
			return true
		}
	}
	return false
}
