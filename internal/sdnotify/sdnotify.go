package sdnotify

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// EnvVar is the variable systemd sets for Type=notify services.
const EnvVar = "NOTIFY_SOCKET"

// Notifier sends state lines to systemd. The zero Notifier (no socket:
// not run by systemd, or not Type=notify) accepts every call and does
// nothing.
type Notifier struct {
	addr string
}

// FromEnv returns a Notifier for $NOTIFY_SOCKET and unsets the variable so
// children do not inherit it.
func FromEnv() Notifier {
	addr := os.Getenv(EnvVar)
	_ = os.Unsetenv(EnvVar)
	return New(addr)
}

// New returns a Notifier for a socket path; "@name" is an abstract socket,
// "" a Notifier that does nothing.
func New(addr string) Notifier {
	if strings.HasPrefix(addr, "@") {
		addr = "\x00" + addr[1:]
	}
	return Notifier{addr: addr}
}

// Enabled tells whether a socket was given.
func (n Notifier) Enabled() bool { return n.addr != "" }

// Notify sends one or more "KEY=value" lines as one datagram.
func (n Notifier) Notify(lines ...string) error {
	if n.addr == "" {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	return nil
}

// Ready reports READY=1 with a status line.
func (n Notifier) Ready(status string) error {
	return n.Notify("READY=1", "STATUS="+status)
}

// Stopping reports STOPPING=1.
func (n Notifier) Stopping() error { return n.Notify("STOPPING=1") }
