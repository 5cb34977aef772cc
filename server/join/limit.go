package join

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits bound failed join attempts: each client IP gets a token bucket of
// PerIPBurst tokens refilled at PerIP per second, and all clients share one
// of GlobalBurst tokens refilled at Global per second. Only failures take
// tokens; a request is refused (429) while either bucket is empty.
type Limits struct {
	PerIP       rate.Limit
	PerIPBurst  int
	Global      rate.Limit
	GlobalBurst int
	// MaxTracked bounds the number of remembered client IPs (memory).
	MaxTracked int
}

func (l Limits) withDefaults() Limits {
	if l.PerIP == 0 {
		l.PerIP = rate.Every(10 * time.Second)
	}
	if l.PerIPBurst == 0 {
		l.PerIPBurst = 5
	}
	if l.Global == 0 {
		l.Global = 2
	}
	if l.GlobalBurst == 0 {
		l.GlobalBurst = 20
	}
	if l.MaxTracked == 0 {
		l.MaxTracked = 1024
	}
	return l
}

type failureLimiter struct {
	limits Limits
	global *rate.Limiter
	mu     sync.Mutex
	perIP  map[string]*rate.Limiter
}

func newFailureLimiter(l Limits) *failureLimiter {
	l = l.withDefaults()
	return &failureLimiter{limits: l, global: rate.NewLimiter(l.Global, l.GlobalBurst), perIP: map[string]*rate.Limiter{}}
}

// allowed reports whether ip may try now, else roughly how long to wait.
func (f *failureLimiter) allowed(ip string) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if lim, ok := f.perIP[ip]; ok && lim.TokensAt(now) < 1 {
		return waitFor(lim, now), false
	}
	if f.global.TokensAt(now) < 1 {
		return waitFor(f.global, now), false
	}
	return 0, true
}

// failed takes a token from ip's bucket and from the global one.
func (f *failureLimiter) failed(ip string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lim, ok := f.perIP[ip]
	if !ok {
		if len(f.perIP) >= f.limits.MaxTracked {
			f.perIP = map[string]*rate.Limiter{} // forget everyone rather than grow; the global bucket still holds
		}
		lim = rate.NewLimiter(f.limits.PerIP, f.limits.PerIPBurst)
		f.perIP[ip] = lim
	}
	now := time.Now()
	lim.AllowN(now, 1)
	f.global.AllowN(now, 1)
}

func waitFor(lim *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - lim.TokensAt(now)
	if lim.Limit() <= 0 {
		return time.Minute
	}
	return time.Duration(missing / float64(lim.Limit()) * float64(time.Second))
}

// clientIP is the remote address without port (proxies are not trusted).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
