package cli

import (
	"context"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/kubectl"
)

// Run runs orch's command line on args (os.Args). Invoked as `kubectl` or
// `ctr` (a symlink to the orch binary), orch behaves as `orch kubectl` or
// `orch ctr`.
func Run(ctx context.Context, args []string) error {
	if len(args) > 0 && filepath.Base(args[0]) == "kubectl" {
		kubectl.Run(args[1:])
		return nil
	}
	if len(args) > 0 && filepath.Base(args[0]) == "ctr" {
		return runCtr("ctr", args[1:])
	}
	return NewApp(ctx).Run(args)
}

// kubectlCommand is `orch kubectl …`: upstream kubectl with its arguments
// untouched (urfave parses none of them) and the admin kubeconfig by default.
func kubectlCommand() *ucli.Command {
	return &ucli.Command{
		Name:            "kubectl",
		Usage:           "run kubectl (upstream k8s.io/kubectl) with the admin kubeconfig by default",
		ArgsUsage:       "[kubectl arguments]",
		SkipFlagParsing: true,
		HideHelp:        true,
		Action: func(c *ucli.Context) error {
			kubectl.Run(c.Args().Slice())
			return nil
		},
	}
}
