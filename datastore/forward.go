package datastore

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"
)

// fwdOp is a request one server makes of another over a forwarding
// connection (a peer connection announced with connForward).
type fwdOp uint8

const (
	fwdWrite     fwdOp = iota + 1 // apply an encoded command (leader only)
	fwdReadIndex                  // confirm leadership, answer the commit index
	fwdJoin                       // add a server as a non-voter
	fwdPromote                    // make a caught-up non-voter a voter
	fwdRemove                     // remove a server from the configuration
)

type fwdRequest struct {
	Op      fwdOp
	Cmd     []byte
	ID      string
	Addr    string
	Timeout time.Duration
}

type fwdResponse struct {
	Rev   int64
	Prev  *KV
	Index uint64
	Code  errCode
	Msg   string
}

// errCode carries the datastore's sentinel errors across the wire.
type errCode uint8

const (
	codeOK errCode = iota
	codeOther
	codeKeyExists
	codeNotFound
	codeConflict
	codeNotLeader
	codeClosed
	codeUnknownCommand
	codeTimeout
)

var codeErrors = map[errCode]error{
	codeKeyExists: ErrKeyExists, codeNotFound: ErrNotFound, codeConflict: ErrConflict,
	codeNotLeader: ErrNotLeader, codeClosed: ErrClosed, codeUnknownCommand: ErrUnknownCommand,
	codeTimeout: context.DeadlineExceeded,
}

func codeOf(err error) errCode {
	if err == nil {
		return codeOK
	}
	for c, sentinel := range codeErrors {
		if errors.Is(err, sentinel) {
			return c
		}
	}
	return codeOther
}

// remoteError is an error answered by another server: its message as the
// other server wrote it, matching the same sentinel with errors.Is.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

func (r *fwdResponse) err() error {
	if r.Code == codeOK {
		return nil
	}
	return &remoteError{msg: r.Msg, sentinel: codeErrors[r.Code]}
}

func errResponse(err error) *fwdResponse {
	return &fwdResponse{Code: codeOf(err), Msg: err.Error()}
}

// fwdConn is one forwarding connection with its gob streams.
type fwdConn struct {
	net.Conn
	enc *gob.Encoder
	dec *gob.Decoder
}

func newFwdConn(c net.Conn) *fwdConn {
	return &fwdConn{Conn: c, enc: gob.NewEncoder(c), dec: gob.NewDecoder(c)}
}

// forwarder is the client side: a small pool of idle connections per peer.
type forwarder struct {
	dial func(addr string, timeout time.Duration) (net.Conn, error)
	mu   sync.Mutex
	idle map[string][]*fwdConn
}

const maxIdleForwardConns = 8

func newForwarder(dial func(string, time.Duration) (net.Conn, error)) *forwarder {
	return &forwarder{dial: dial, idle: map[string][]*fwdConn{}}
}

func (f *forwarder) get(addr string, timeout time.Duration) (*fwdConn, error) {
	f.mu.Lock()
	if cs := f.idle[addr]; len(cs) > 0 {
		c := cs[len(cs)-1]
		f.idle[addr] = cs[:len(cs)-1]
		f.mu.Unlock()
		return c, nil
	}
	f.mu.Unlock()
	c, err := f.dial(addr, timeout)
	if err != nil {
		return nil, err
	}
	return newFwdConn(c), nil
}

func (f *forwarder) put(addr string, c *fwdConn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.idle[addr]) >= maxIdleForwardConns {
		_ = c.Close()
		return
	}
	f.idle[addr] = append(f.idle[addr], c)
}

func (f *forwarder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cs := range f.idle {
		for _, c := range cs {
			_ = c.Close()
		}
	}
	f.idle = map[string][]*fwdConn{}
}

// errNotSent marks a failed call whose request never left this server, so
// it is safe to retry elsewhere.
var errNotSent = errors.New("request not sent")

// call sends req to addr and waits for the answer within ctx.
func (f *forwarder) call(ctx context.Context, addr string, req fwdRequest) (*fwdResponse, error) {
	timeout := timeoutFor(ctx)
	req.Timeout = timeout
	c, err := f.get(addr, min(timeout, 5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotSent, err)
	}
	_ = c.SetDeadline(time.Now().Add(timeout + time.Second))
	// ctx ending (e.g. the leader changed) unblocks the read at once.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	if err := c.enc.Encode(&req); err != nil {
		stop()
		_ = c.Close()
		return nil, fmt.Errorf("forwarding to %s: %w", addr, err)
	}
	var resp fwdResponse
	if err := c.dec.Decode(&resp); err != nil {
		stop()
		_ = c.Close()
		return nil, fmt.Errorf("forwarding to %s: no answer: %w", addr, err)
	}
	if !stop() { // the deadline may already be cut short: do not reuse
		_ = c.Close()
		return &resp, nil
	}
	_ = c.SetDeadline(time.Time{})
	f.put(addr, c)
	return &resp, nil
}

// serveForward answers requests on one forwarding connection until it
// closes. Peers are authenticated by the transport's mutual TLS.
func (s *RaftStore) serveForward(conn net.Conn) {
	c := newFwdConn(conn)
	defer c.Close()
	for {
		var req fwdRequest
		if err := c.dec.Decode(&req); err != nil {
			return
		}
		resp := s.answer(&req)
		if err := c.enc.Encode(resp); err != nil {
			return
		}
	}
}

// answer runs one forwarded request on this server.
func (s *RaftStore) answer(req *fwdRequest) *fwdResponse {
	timeout := req.Timeout
	if timeout <= 0 || timeout > defaultWriteTimeout {
		timeout = defaultWriteTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch req.Op {
	case fwdWrite:
		res, err := s.applyLocal(ctx, req.Cmd)
		if err != nil {
			return errResponse(err)
		}
		if res.Err != nil {
			return &fwdResponse{Rev: res.Rev, Prev: res.Prev, Index: res.Index, Code: codeOf(res.Err), Msg: res.Err.Error()}
		}
		return &fwdResponse{Rev: res.Rev, Prev: res.Prev, Index: res.Index}
	case fwdReadIndex:
		idx, err := s.localReadIndex()
		if err != nil {
			return errResponse(err)
		}
		return &fwdResponse{Index: idx}
	case fwdJoin, fwdPromote, fwdRemove:
		if err := s.changeMembership(ctx, req); err != nil {
			return errResponse(err)
		}
		return &fwdResponse{Index: s.raft.CommitIndex()}
	}
	s.log.Warn("unknown forwarded request", zap.Uint8("op", uint8(req.Op)))
	return errResponse(fmt.Errorf("forwarded request type %d: %w", req.Op, ErrUnknownCommand))
}
