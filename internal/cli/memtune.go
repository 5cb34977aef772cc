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
	action := cmd.Action
	cmd.Action = func(c *ucli.Context) error {
		log, closeLog, err := openLogger(c)
		if err != nil {
			return err
		}
		defer closeLog()
		memtune.Start(ctx, log, memtuneOptions(cmd.Name, c.Bool("disable-agent")))
		return action(c)
	}
	return cmd
}

// memtuneOptions: the agent's GC percents (busy and idle) for `orch agent`
// and for an `orch server` that runs its own agent (the single board of a
// one-node cluster); a server without one keeps Go's default, for API
// throughput.
func memtuneOptions(command string, agentDisabled bool) memtune.Options {
	if command == "agent" || command == "server" && !agentDisabled {
		return memtune.Options{GCPercent: memtune.AgentGCPercent, IdleGCPercent: memtune.IdleGCPercent}
	}
	return memtune.Options{}
}
