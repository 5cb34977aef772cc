package apiserver

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orch/orch/server/auth"
)

// Pod subresources served by proxying to the node agent's HTTPS API (the
// kubelet API on status.daemonEndpoints.kubeletEndpoint.port, default 10250):
//
//	pods/log          GET                → GET /containerLogs/{ns}/{pod}/{container}
//	pods/exec         GET (WS) / POST    → /exec/{ns}/{pod}/{container}?command=..&input=1..
//	pods/attach       GET (WS) / POST    → /attach/{ns}/{pod}/{container}
//	pods/portforward  GET (WS) / POST    → /portForward/{ns}/{pod}
//
// The stream protocols (WebSocket channels, SPDY, SPDY tunneled in
// WebSocket) pass through untouched: the agent speaks them.

// podProxySubresources are the pod subresources proxied to the node.
var podProxySubresources = map[string]bool{"log": true, "exec": true, "attach": true, "portforward": true}

// podProxyRoute is the handler of a proxied pod subresource and verb; nil
// when the verb is not supported (a 405).
func (s *Server) podProxyRoute(sub, verb string) resourceHandler {
	if sub == "log" {
		if verb == "get" {
			return s.handlePodLog
		}
		return nil
	}
	if verb == "get" || verb == "create" {
		return s.handlePodStream
	}
	return nil
}

// defaultKubeletPort is the agent API port when a Node does not report one.
const defaultKubeletPort = 10250

// podAndNode loads the pod of rc and the base URL of its node's agent.
func (s *Server) podAndNode(ctx context.Context, rc *reqCtx) (*corev1.Pod, *url.URL, error) {
	obj, _, err := s.getStored(ctx, rc.res, rc.ns, rc.name)
	if err != nil {
		return nil, nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil, fmt.Errorf("pods %s: stored object is %T", rc.name, obj)
	}
	if pod.Spec.NodeName == "" {
		return nil, nil, badRequestf("pod %s does not have a host assigned", pod.Name)
	}
	nodes := s.byGVR[corev1.SchemeGroupVersion.WithResource("nodes")]
	if nodes == nil {
		return nil, nil, apierrors.NewServiceUnavailable("nodes are not served by this server")
	}
	nobj, _, err := s.getStored(ctx, nodes, "", pod.Spec.NodeName)
	if err != nil {
		return nil, nil, err
	}
	base, err := kubeletURL(nobj.(*corev1.Node))
	if err != nil {
		return nil, nil, err
	}
	return pod, base, nil
}

// kubeletURL is https://<address>:<port> of a node's agent API; the address
// is the first InternalIP, else ExternalIP, else Hostname.
func kubeletURL(node *corev1.Node) (*url.URL, error) {
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = defaultKubeletPort
	}
	for _, typ := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeHostName} {
		for _, a := range node.Status.Addresses {
			if a.Type == typ && a.Address != "" {
				return &url.URL{Scheme: "https", Host: joinHostPort(a.Address, port)}, nil
			}
		}
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("node %s reports no address to reach its kubelet API", node.Name))
}

func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		return fmt.Sprintf("[%s]:%d", host, port)
	}
	return fmt.Sprintf("%s:%d", host, port)
}

// podContainer picks the container a request names, or the only one, like
// upstream's ValidateContainer.
func podContainer(pod *corev1.Pod, name string) (string, error) {
	if name == "" {
		if len(pod.Spec.Containers) == 1 {
			return pod.Spec.Containers[0].Name, nil
		}
		msg := fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, containerNames(pod.Spec.Containers))
		if len(pod.Spec.InitContainers) > 0 {
			msg += fmt.Sprintf(" or one of the init containers: %s", containerNames(pod.Spec.InitContainers))
		}
		return "", badRequestf("%s", msg)
	}
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.Containers...), pod.Spec.InitContainers...) {
		if c.Name == name {
			return name, nil
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return name, nil
		}
	}
	return "", badRequestf("container %s is not valid for pod %s", name, pod.Name)
}

func containerNames(cs []corev1.Container) string {
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return "[" + strings.Join(names, " ") + "]"
}

// authorizeStreamCreate additionally requires "create" on a WebSocket (GET)
// exec/attach/portforward, so that "get" on pods/* alone cannot open a
// shell (upstream's AuthorizePodWebsocketUpgradeCreatePermission).
func (s *Server) authorizeStreamCreate(ctx context.Context, rc *reqCtx) error {
	if rc.info.Verb != "get" {
		return nil
	}
	u, ok := auth.UserFrom(ctx)
	if !ok {
		return apierrors.NewUnauthorized("Unauthorized")
	}
	info := *rc.info
	info.Verb = "create"
	return s.authorize(ctx, &info, u)
}
