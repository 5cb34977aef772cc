package apiserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
)

// podLogParams are the PodLogOptions query parameters the node understands.
var podLogParams = []string{"follow", "previous", "timestamps", "tailLines", "sinceSeconds", "sinceTime", "limitBytes"}

// handlePodLog serves GET pods/<name>/log by streaming the node's
// /containerLogs answer back as text/plain.
func (s *Server) handlePodLog(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	if s.kubelet == nil {
		s.writeError(w, r, errNoKubeletClient(rc))
		return
	}
	pod, base, err := s.podAndNode(r.Context(), rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	container, err := podContainer(pod, rc.query.Get("container"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q := url.Values{}
	for _, p := range podLogParams {
		if v := rc.query.Get(p); v != "" {
			q.Set(p, v)
		}
	}
	target := *base
	target.Path = fmt.Sprintf("/containerLogs/%s/%s/%s", rc.ns, rc.name, container)
	target.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, target.String(), nil)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	resp, err := s.kubelet.transport.RoundTrip(req)
	if err != nil {
		s.writeError(w, r, dialError(err))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.writeError(w, r, kubeletError(resp))
		return
	}
	if wsstream.IsWebSocketRequest(r) {
		// As upstream's StreamObject: the log as WebSocket messages
		// (protocols "", binary.k8s.io, base64.binary.k8s.io).
		// A refused handshake never ends Copy: the request's end does.
		rd := wsstream.NewReader(resp.Body, true, wsstream.NewDefaultReaderProtocols())
		errc := make(chan error, 1)
		go func() { errc <- rd.Copy(hijacker{w, http.NewResponseController(w)}, r) }()
		select {
		case err := <-errc:
			if err != nil {
				s.log.Debug("pod log websocket ended", zap.String("pod", rc.ns+"/"+rc.name), zap.Error(err))
			}
		case <-r.Context().Done():
		}
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	if err := copyFlushing(w, resp.Body); err != nil && r.Context().Err() == nil {
		s.log.Debug("pod log stream ended", zap.String("pod", rc.ns+"/"+rc.name), zap.Error(err))
	}
}

// hijacker makes a wrapped ResponseWriter an http.Hijacker (which
// golang.org/x/net/websocket asserts) through http.ResponseController.
type hijacker struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) { return h.rc.Hijack() }

// copyFlushing copies src to w, flushing after every read so followed logs
// arrive as they are written.
func copyFlushing(w http.ResponseWriter, src io.Reader) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			_ = rc.Flush()
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// kubeletError turns a node's non-200 answer into an API error: its
// metav1.Status when it sent one, else the body as the message.
func kubeletError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Message != "" {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		return &apierrors.StatusError{ErrStatus: st}
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: int32(resp.StatusCode),
		Reason: metav1.StatusReasonUnknown, Message: fmt.Sprintf("the node answered %s: %s", resp.Status, body)}}
}

// dialError is upstream's "error dialing backend" 500.
func dialError(err error) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("error dialing backend: %v", err)}}
}

func errNoKubeletClient(rc *reqCtx) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf("pods/%s is not available: this server has no kubelet client certificate", rc.info.Subresource))
}
