package cli

import (
	"context"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/version"
)

// DefaultConfigPath is where orch looks for its config file.
const DefaultConfigPath = "/etc/orch/config.yaml"

// NewApp returns the orch command line. ctx is cancelled on SIGINT/SIGTERM by main.
func NewApp(ctx context.Context) *ucli.App {
	return &ucli.App{
		Name:    "orch",
		Usage:   "a small Kubernetes-compatible cluster in one binary",
		Version: version.Get().Version,
		Flags:   []ucli.Flag{versionFlag()},
		Action:  rootAction,
		Commands: []*ucli.Command{
			withMemtune(ctx, serverCommand(ctx)),
			withMemtune(ctx, agentCommand(ctx)),
			secretsEncryptCommand(ctx),
			versionCommand(),
			etcdSnapshotCommand(),
			tokenCommand(ctx),
			certificateCommand(),
			checkConfigCommand(),
			hostNamesCommand(),
			kubectlCommand(),
			ctrCommand(),
		},
		HideVersion: true,
	}
}

func versionCommand() *ucli.Command {
	return &ucli.Command{
		Name:   "version",
		Usage:  "print orch's version, git commit, Kubernetes version served and Go version",
		Action: printVersion,
	}
}

// envVars returns the environment variable that also sets a flag: ORCH_<NAME>.
func envVars(name string) []string {
	return []string{"ORCH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))}
}

func configFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: DefaultConfigPath,
		EnvVars: envVars("config"), Usage: "YAML config file; keys are flag names"}
}

func debugFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "debug", EnvVars: envVars("debug"), Usage: "debug logging"}
}
