package ingress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// listeners are the HTTP and HTTPS servers, open while the IngressClass
// exists.
type listeners struct {
	httpAddr, httpsAddr string // "" disables one
	handler             http.Handler
	tlsConfig           *tls.Config
	log                 *zap.Logger
	servers             []*http.Server
	addrs               []net.Addr
}

func (l *listeners) isOpen() bool { return len(l.servers) > 0 }

// open binds both addresses (all or nothing) and serves them; a port
// another process holds is a clear error.
func (l *listeners) open() error {
	var lns []net.Listener
	for _, addr := range []string{l.httpAddr, l.httpsAddr} {
		if addr == "" {
			lns = append(lns, nil)
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, o := range lns {
				if o != nil {
					_ = o.Close()
				}
			}
			return fmt.Errorf("ingress cannot listen on %s (is another ingress controller or web server using the port? "+
				"free it, or set --ingress-http-port/--ingress-https-port, 0 to disable): %w", addr, err)
		}
		lns = append(lns, ln)
	}
	for i, ln := range lns {
		if ln == nil {
			continue
		}
		srv := &http.Server{Handler: l.handler, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
			ErrorLog: errorLog(l.log)}
		l.servers, l.addrs = append(l.servers, srv), append(l.addrs, ln.Addr())
		go l.serve(srv, ln, i == 1)
	}
	l.log.Info("ingress listening", zap.String("http", l.httpAddr), zap.String("https", l.httpsAddr))
	return nil
}

func (l *listeners) serve(srv *http.Server, ln net.Listener, useTLS bool) {
	var err error
	if useTLS {
		srv.TLSConfig = l.tlsConfig.Clone() // ServeTLS adds h2 to NextProtos
		err = srv.ServeTLS(ln, "", "")
	} else {
		err = srv.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		l.log.Error("ingress server stopped", zap.Stringer("addr", ln.Addr()), zap.Error(err))
	}
}

// close stops serving, letting requests in flight finish for a few seconds.
func (l *listeners) close() {
	if !l.isOpen() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range l.servers {
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
	}
	l.servers, l.addrs = nil, nil
	l.log.Info("ingress stopped listening")
}

// errorLog sends net/http's own messages (TLS handshake failures of
// scanners, bad requests) to the debug level.
func errorLog(log *zap.Logger) *stdlog.Logger {
	l, err := zap.NewStdLogAt(log.Named("http"), zap.DebugLevel)
	if err != nil {
		return zap.NewStdLog(log.Named("http"))
	}
	return l
}
