package apiserver

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orch/orch/server/admission"
)

// admitConnect runs the admission chain for a CONNECT to pods/exec,
// pods/attach or pods/portforward, as upstream's connect handler does: the
// object under admission is the request's PodExecOptions,
// PodAttachOptions or PodPortForwardOptions, so webhooks and policies may
// refuse the stream before it is opened.
func (s *Server) admitConnect(ctx context.Context, rc *reqCtx) error {
	if s.cfg.Admission == nil {
		return nil
	}
	opts, kind := connectOptions(rc)
	a := s.admissionAttributes(ctx, rc, admission.Connect, nil, nil, false)
	a.Kind = corev1.SchemeGroupVersion.WithKind(kind)
	opts.GetObjectKind().SetGroupVersionKind(a.Kind)
	a.Object = opts // the options have no metadata: name and namespace are the pod's
	if err := s.admit(ctx, rc, a); err != nil {
		return err
	}
	return s.validateAdmission(ctx, rc, a)
}

// connectOptions decodes the query of a stream request into its options
// object and kind.
func connectOptions(rc *reqCtx) (runtime.Object, string) {
	q := rc.query
	switch rc.info.Subresource {
	case "exec":
		return &corev1.PodExecOptions{Stdin: isTrue(q.Get("stdin")), Stdout: isTrue(q.Get("stdout")), Stderr: isTrue(q.Get("stderr")),
			TTY: isTrue(q.Get("tty")), Container: q.Get("container"), Command: q["command"]}, "PodExecOptions"
	case "attach":
		return &corev1.PodAttachOptions{Stdin: isTrue(q.Get("stdin")), Stdout: isTrue(q.Get("stdout")), Stderr: isTrue(q.Get("stderr")),
			TTY: isTrue(q.Get("tty")), Container: q.Get("container")}, "PodAttachOptions"
	}
	var ports []int32
	for _, p := range q["ports"] {
		if n, err := strconv.ParseInt(p, 10, 32); err == nil {
			ports = append(ports, int32(n))
		}
	}
	return &corev1.PodPortForwardOptions{Ports: ports}, "PodPortForwardOptions"
}
