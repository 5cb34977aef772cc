package cli

import (
	"context"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/memtune"
)

// withMemtune wraps a long-running command (server, agent) so that it starts
// with orch's runtime memory defaults and settles after start-up (see
// internal/memtune; ORCH_MEMTUNE=off disables it).
func withMemtune(ctx context.Context, cmd *ucli.Command) *ucli.Command {
	opts := memtune.Options{}
	if cmd.Name == "agent" {
		opts.GCPercent = memtune.AgentGCPercent
	}
	action := cmd.Action
	cmd.Action = func(c *ucli.Context) error {
		log, closeLog, err := openLogger(c)
		if err != nil {
			return err
		}
		defer closeLog()
		memtune.Start(ctx, log, opts)
		return action(c)
	}
	return cmd
}
