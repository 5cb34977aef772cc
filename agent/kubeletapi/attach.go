package kubeletapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/agent/runtime"
)

// serveAttach answers /attach/{ns}/{pod}/{container}: the client's streams
// are connected to the running container's stdio (runtime.Attach) over the
// same protocols as exec; the status says how the attach ended.
func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request) {
	s.serveSession(w, r, nil, s.runAttach)
}

func (s *Server) runAttach(ctx context.Context, id string, opts execOptions, st *streams) {
	ctx, cancel := sessionContext(ctx, st)
	defer cancel()
	req := st.request(opts)
	status := metav1.Status{Status: metav1.StatusSuccess}
	if err := s.cfg.Runtime.Attach(ctx, id, req); err != nil {
		s.log.Debug("attach failed", zap.String("container", id), zap.Error(err))
		msg := fmt.Sprintf("Internal error occurred: error attaching to container: %v", err)
		if errors.Is(err, runtime.ErrNotAttachable) {
			msg = fmt.Sprintf("cannot attach to container %s: it is not running", id)
		}
		status = metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError,
			Code: http.StatusInternalServerError, Message: msg}
	}
	if err := st.writeStatus(status); err != nil {
		s.log.Debug("write attach status", zap.Error(err))
	}
}
