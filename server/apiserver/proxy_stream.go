package apiserver

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// handlePodStream serves pods/exec, pods/attach and pods/portforward: an
// upgrade-aware reverse proxy to the node, which does the stream protocol.
func (s *Server) handlePodStream(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	if err := s.authorizeStreamCreate(r.Context(), rc); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.admitConnect(r.Context(), rc); err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.kubelet == nil {
		s.writeError(w, r, errNoKubeletClient(rc))
		return
	}
	pod, base, err := s.podAndNode(r.Context(), rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	target, err := streamTarget(pod, base, rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL, pr.Out.Host = target, target.Host
			pr.Out.Header.Del("Authorization") // the client's credentials stay here
			pr.Out.Header.Del("Cookie")
			for k := range pr.Out.Header {
				if strings.HasPrefix(k, "Impersonate-") {
					pr.Out.Header.Del(k)
				}
			}
		},
		Transport:     s.kubelet.transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.writeError(w, r, dialError(err))
		},
	}
	rp.ServeHTTP(w, r)
}

// streamTarget is the node URL of an exec, attach or portforward request;
// PodExecOptions/PodAttachOptions become the kubelet's query parameters.
func streamTarget(pod *corev1.Pod, base *url.URL, rc *reqCtx) (*url.URL, error) {
	t := *base
	q := url.Values{}
	if rc.info.Subresource == "portforward" {
		t.Path = fmt.Sprintf("/portForward/%s/%s", rc.ns, rc.name)
		for _, p := range rc.query["ports"] {
			q.Add("port", p)
		}
		t.RawQuery = q.Encode()
		return &t, nil
	}
	container, err := podContainer(pod, rc.query.Get("container"))
	if err != nil {
		return nil, err
	}
	for from, to := range map[string]string{"stdin": "input", "stdout": "output", "stderr": "error", "tty": "tty"} {
		if isTrue(rc.query.Get(from)) {
			q.Set(to, "1")
		}
	}
	if q.Get("input") == "" && q.Get("output") == "" && q.Get("error") == "" {
		return nil, badRequestf("you must specify at least 1 of stdin, stdout, stderr")
	}
	if rc.info.Subresource == "exec" {
		cmd := rc.query["command"]
		if len(cmd) == 0 {
			return nil, badRequestf("you must specify at least one command for the container")
		}
		q["command"] = cmd
	}
	t.Path = fmt.Sprintf("/%s/%s/%s/%s", rc.info.Subresource, rc.ns, rc.name, container)
	t.RawQuery = q.Encode()
	return &t, nil
}
