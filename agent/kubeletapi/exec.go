package kubeletapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"

	"github.com/orch/orch/agent/runtime"
)

const (
	streamIdleTimeout     = 4 * time.Hour // the kubelet's default streamingConnectionIdleTimeout
	streamCreationTimeout = 30 * time.Second
)

// spdyExecProtocols are the SPDY remote command versions served; v5 over
// SPDY is v4 (SPDY closes streams itself).
var spdyExecProtocols = []string{remotecommandconsts.StreamProtocolV5Name, remotecommandconsts.StreamProtocolV4Name}

// execOptions are the streams a remote command asks for.
type execOptions struct {
	stdin, stdout, stderr, tty bool
}

// parseExecOptions accepts the kubelet's names (input/output/error) and the
// API's (stdin/stdout/stderr).
func parseExecOptions(r *http.Request) (execOptions, error) {
	o := execOptions{stdin: queryFlag(r, "input", "stdin"), stdout: queryFlag(r, "output", "stdout"),
		stderr: queryFlag(r, "error", "stderr"), tty: queryFlag(r, "tty")}
	if o.tty {
		o.stderr = false // a terminal merges stderr into stdout
	}
	if !o.stdin && !o.stdout && !o.stderr {
		return o, errors.New("you must specify at least 1 of stdin, stdout, stderr")
	}
	return o, nil
}

// streams is one open remote command session.
type streams struct {
	conn        io.Closer
	stdin       io.ReadCloser
	stdout      io.WriteCloser
	stderr      io.WriteCloser
	resize      io.ReadCloser
	sizes       <-chan runtime.TerminalSize // decoded from the resize stream
	writeStatus func(metav1.Status) error
	closed      <-chan bool // closed when the client's connection ends
}

// serveExec answers /exec/{ns}/{pod}/{container}?command=...
func (s *Server) serveExec(w http.ResponseWriter, r *http.Request) {
	cmd := r.URL.Query()["command"]
	check := func() error {
		if len(cmd) == 0 {
			return badRequest("you must specify at least one command for the container")
		}
		return nil
	}
	s.serveSession(w, r, check, func(ctx context.Context, id string, opts execOptions, st *streams) {
		s.runExec(ctx, id, cmd, opts, st)
	})
}

// serveSession is what exec and attach share: parse the options, run check
// (if any), find the container, open the client's streams and run the
// session on them.
func (s *Server) serveSession(w http.ResponseWriter, r *http.Request, check func() error,
	run func(context.Context, string, execOptions, *streams)) {
	opts, err := parseExecOptions(r)
	if err != nil {
		writeErr(w, badRequest(err.Error()))
		return
	}
	if check != nil {
		if err := check(); err != nil {
			writeErr(w, err)
			return
		}
	}
	_, id, err := s.container(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	st, ok := s.openStreams(w, r, opts)
	if !ok {
		return
	}
	defer st.conn.Close()
	run(r.Context(), id, opts, st)
}

func (s *Server) openStreams(w http.ResponseWriter, r *http.Request, opts execOptions) (*streams, bool) {
	if wsstream.IsWebSocketRequest(r) {
		return s.openWebSocketStreams(w, r, opts)
	}
	return s.openSPDYStreams(w, r, opts)
}

// request is what the client asked for of st: the streams it opted into
// (those it has), the TTY and, with one, its sizes.
func (st *streams) request(opts execOptions) runtime.AttachRequest {
	req := runtime.AttachRequest{TTY: opts.tty}
	if opts.tty {
		req.Resize = st.sizes
	}
	if opts.stdin && st.stdin != nil {
		req.Stdin = st.stdin
	}
	if opts.stdout && st.stdout != nil {
		req.Stdout = st.stdout
	}
	if opts.stderr && st.stderr != nil {
		req.Stderr = st.stderr
	}
	return req
}

// sessionContext ends when ctx does or the client's connection closes.
func sessionContext(ctx context.Context, st *streams) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if st.closed != nil {
		go func() {
			select {
			case <-st.closed:
				cancel() // the client went away: end the process
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

func (s *Server) runExec(ctx context.Context, id string, cmd []string, opts execOptions, st *streams) {
	ctx, cancel := sessionContext(ctx, st)
	defer cancel()
	a := st.request(opts)
	req := runtime.ExecRequest{Cmd: cmd, Stdin: a.Stdin, Stdout: a.Stdout, Stderr: a.Stderr, TTY: a.TTY, Resize: a.Resize}
	code, err := s.cfg.Runtime.Exec(ctx, id, req)
	var status metav1.Status
	switch {
	case err != nil:
		s.log.Debug("exec failed", zap.String("container", id), zap.Error(err))
		status = metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError,
			Code: http.StatusInternalServerError, Message: fmt.Sprintf("Internal error occurred: error executing command in container: %v", err)}
	case code != 0:
		status = metav1.Status{Status: metav1.StatusFailure, Reason: remotecommandconsts.NonZeroExitCodeReason,
			Message: fmt.Sprintf("command terminated with non-zero exit code: exit status %d", code),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: remotecommandconsts.ExitCodeCauseType, Message: strconv.Itoa(code)}}}}
	default:
		status = metav1.Status{Status: metav1.StatusSuccess}
	}
	if err := st.writeStatus(status); err != nil {
		s.log.Debug("write exec status", zap.Error(err))
	}
}

// statusWriter writes a v4/v5 status as JSON on the error stream.
func statusWriter(w io.Writer) func(metav1.Status) error {
	return func(st metav1.Status) error {
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
}

// v1StatusWriter is the pre-v4 error channel: nothing on success, the
// message on failure (upstream's v1WriteStatusFunc).
func v1StatusWriter(w io.Writer) func(metav1.Status) error {
	return func(st metav1.Status) error {
		if st.Status == metav1.StatusSuccess {
			return nil
		}
		_, err := w.Write([]byte(st.Message))
		return err
	}
}

// WebSocket channel numbers of the remote command protocols.
const (
	chStdin = iota
	chStdout
	chStderr
	chError
	chResize
)

func (s *Server) openWebSocketStreams(w http.ResponseWriter, r *http.Request, opts execOptions) (*streams, bool) {
	ch := make([]wsstream.ChannelType, 5)
	ch[chStdin] = pick(opts.stdin, wsstream.ReadChannel)
	ch[chStdout] = pick(opts.stdout, wsstream.WriteChannel)
	ch[chStderr] = pick(opts.stderr, wsstream.WriteChannel)
	ch[chError] = wsstream.WriteChannel
	ch[chResize] = wsstream.ReadChannel
	// The kubelet's protocols: v5 and v4 (JSON status on the error channel),
	// and the pre-v4 ones ("", channel.k8s.io, base64.channel.k8s.io) whose
	// error channel carries only a failure's message.
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		remotecommandconsts.StreamProtocolV5Name:        {Binary: true, Channels: ch},
		remotecommandconsts.StreamProtocolV4Name:        {Binary: true, Channels: ch},
		"v4." + wsstream.Base64ChannelWebSocketProtocol: {Binary: false, Channels: ch},
		"":                                      {Binary: true, Channels: ch},
		wsstream.ChannelWebSocketProtocol:       {Binary: true, Channels: ch},
		wsstream.Base64ChannelWebSocketProtocol: {Binary: false, Channels: ch},
	})
	conn.SetIdleTimeout(streamIdleTimeout)
	proto, chans, err := conn.Open(w, r)
	if err != nil {
		s.log.Debug("websocket upgrade failed", zap.Error(err))
		return nil, false
	}
	writeStatus := statusWriter(chans[chError])
	if !strings.HasPrefix(proto, "v4.") && !strings.HasPrefix(proto, "v5.") {
		writeStatus = v1StatusWriter(chans[chError])
	}
	// An empty message on the lowest writable channel tells the client the
	// session is open (as the kubelet does).
	switch {
	case opts.stdout:
		_, _ = chans[chStdout].Write(nil)
	case opts.stderr:
		_, _ = chans[chStderr].Write(nil)
	default:
		_, _ = chans[chError].Write(nil)
	}
	// The resize channel is always open for reading (terminal sizes); it
	// ends when the WebSocket closes, which tells the session
	// (sessionContext) that the client went away.
	closed := make(chan bool)
	sizes := make(chan runtime.TerminalSize, 1)
	go func() {
		decodeSizes(chans[chResize], sizes)
		close(closed)
	}()
	return &streams{conn: conn, stdin: chans[chStdin], stdout: chans[chStdout], stderr: chans[chStderr],
		writeStatus: writeStatus, closed: closed, sizes: sizes}, true
}

// decodeSizes reads the JSON terminal sizes of a resize stream into out
// until the stream ends. It never blocks on out: a size nobody took yet is
// replaced by the newer one.
func decodeSizes(r io.Reader, out chan runtime.TerminalSize) {
	dec := json.NewDecoder(r)
	for {
		var sz struct{ Width, Height uint16 }
		if err := dec.Decode(&sz); err != nil {
			_, _ = io.Copy(io.Discard, r)
			return
		}
		ts := runtime.TerminalSize{Width: sz.Width, Height: sz.Height}
		for sent := false; !sent; {
			select {
			case out <- ts:
				sent = true
			default:
				select {
				case <-out:
				default:
				}
			}
		}
	}
}

func pick(want bool, t wsstream.ChannelType) wsstream.ChannelType {
	if want {
		return t
	}
	return wsstream.IgnoreChannel
}

type streamAndReply struct {
	httpstream.Stream
	replySent <-chan struct{}
}

func (s *Server) openSPDYStreams(w http.ResponseWriter, r *http.Request, opts execOptions) (*streams, bool) {
	if _, err := httpstream.Handshake(r, w, spdyExecProtocols); err != nil {
		return nil, false // Handshake answered the client
	}
	streamCh := make(chan streamAndReply)
	done := make(chan struct{})
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(st httpstream.Stream, replySent <-chan struct{}) error {
		select {
		case streamCh <- streamAndReply{Stream: st, replySent: replySent}:
		case <-done:
		}
		return nil
	})
	if conn == nil {
		close(done)
		return nil, false // the upgrader answered the client
	}
	conn.SetIdleTimeout(streamIdleTimeout)
	st, err := waitForStreams(streamCh, expectedStreams(opts), done)
	close(done)
	if err != nil {
		s.log.Debug("remote command streams", zap.Error(err))
		conn.Close()
		return nil, false
	}
	st.conn, st.closed = conn, conn.CloseChan()
	if st.resize != nil {
		sizes := make(chan runtime.TerminalSize, 1)
		st.sizes = sizes
		go decodeSizes(st.resize, sizes)
	}
	return st, true
}

func expectedStreams(o execOptions) int {
	n := 1 // error
	for _, b := range []bool{o.stdin, o.stdout, o.stderr, o.tty} {
		if b {
			n++
		}
	}
	return n
}

// waitForStreams collects the client's streams by their streamType header
// and counts one once its reply is sent (the kubelet's v4 handler).
func waitForStreams(in <-chan streamAndReply, expected int, done <-chan struct{}) (*streams, error) {
	st := &streams{}
	replied := make(chan struct{}, expected+5)
	expired := time.NewTimer(streamCreationTimeout)
	defer expired.Stop()
	for got := 0; got < expected; {
		select {
		case s := <-in:
			switch s.Headers().Get(corev1.StreamType) {
			case corev1.StreamTypeError:
				st.writeStatus = statusWriter(s)
			case corev1.StreamTypeStdin:
				st.stdin = s
			case corev1.StreamTypeStdout:
				st.stdout = s
			case corev1.StreamTypeStderr:
				st.stderr = s
			case corev1.StreamTypeResize:
				st.resize = s
			default:
				continue
			}
			go func(rs <-chan struct{}) {
				select {
				case <-rs:
					replied <- struct{}{}
				case <-done:
				}
			}(s.replySent)
		case <-replied:
			got++
		case <-expired.C:
			return nil, errors.New("timed out waiting for client to create streams")
		}
	}
	if st.writeStatus == nil {
		return nil, errors.New("the client did not create an error stream")
	}
	return st, nil
}
