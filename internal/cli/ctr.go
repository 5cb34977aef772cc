package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/ctr"
)

// ctrCommand is `orch ctr …`: upstream ctr with its arguments untouched
// (urfave parses none of them here) and orch's managed containerd socket
// and namespace by default.
func ctrCommand() *ucli.Command {
	return &ucli.Command{
		Name: "ctr",
		Usage: "run ctr (upstream containerd ctr) against the agent's containerd " +
			"(default --address " + ctr.DefaultAddress + " --namespace " + ctr.DefaultNamespace + ")",
		ArgsUsage:       "[ctr arguments]",
		SkipFlagParsing: true,
		HideHelp:        true,
		Action: func(c *ucli.Context) error {
			return runCtr("orch ctr", c.Args().Slice())
		},
	}
}

// runCtr runs ctr's arguments args; name is how ctr's help calls it.
func runCtr(name string, args []string) error {
	if err := ctr.Run(append([]string{name}, args...)); err != nil {
		return fmt.Errorf("ctr: %w", err)
	}
	return nil
}
