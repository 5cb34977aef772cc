package cli

import (
	"context"

	"go.uber.org/zap"

	"github.com/orch/orch/internal/sdnotify"
)

// systemdNotifier takes $NOTIFY_SOCKET out of the environment (containerd
// and other children must not answer for orch) and returns the hook that
// reports READY=1 plus a func to call when the command returns, which
// reports STOPPING=1 on a signalled shutdown.
func systemdNotifier(ctx context.Context, what string, log *zap.Logger) (ready func(), done func()) {
	n := sdnotify.FromEnv()
	if !n.Enabled() {
		return nil, func() {}
	}
	ready = func() {
		if err := n.Ready(what + " is ready"); err != nil {
			log.Warn("telling systemd orch is ready", zap.Error(err))
		}
	}
	done = func() {
		if ctx.Err() != nil {
			_ = n.Stopping()
		}
	}
	return ready, done
}
