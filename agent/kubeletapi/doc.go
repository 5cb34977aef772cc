// Package kubeletapi is the node agent's HTTPS API on the kubelet port
// (10250), the part of the kubelet API the API server proxies to:
//
//	GET  /containerLogs/{ns}/{pod}/{container}  CRI log files, with follow/tail/since/previous/timestamps/limitBytes
//	GET|POST /exec/{ns}/{pod}/{container}       remote command (WebSocket v5/v4 channel protocols or SPDY v5/v4)
//	GET|POST /attach/{ns}/{pod}/{container}     the running container's stdio (same protocols as exec)
//	GET|POST /portForward/{ns}/{pod}            SPDY portforward.k8s.io, plain or tunneled in a WebSocket
//	GET  /pods, /metrics/resource, /stats/summary, /healthz
//	GET  /metrics, /metrics/cadvisor, /metrics/probes  Prometheus (client_golang gatherers of the Config;
//	                                            NewKubeletCollector, NewCadvisorCollector)
//	GET  /logs/                                 the node's Config.NodeLogDir (/var/log), read-only, for nodes/log
//
// Terminal sizes from the resize stream (SPDY) or channel 4 (WebSocket)
// resize the TTY of an exec or attach session.
//
// Clients whose certificate the cluster CA signed and Config.AllowedClient
// accepts (the API server's kubelet-client certificate) are served; others
// authenticate with a bearer token (TokenReview) and are authorized per
// nodes subresource (SubjectAccessReview), as kubelet's webhook modes do.
//
// The stream protocols follow the kubelet's server side
// (k8s.io/cri-streaming/pkg/streaming, Apache-2.0) and the API server's
// SPDY-over-WebSocket tunnel (k8s.io/apiserver/pkg/util/proxy/streamtunnel.go,
// Apache-2.0); the wire framing itself comes from k8s.io/apimachinery
// (wsstream, spdy) and client-go's TunnelingConnection.
package kubeletapi
