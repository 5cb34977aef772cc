package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/hostnames"
)

// hostNamesCommand is `orch host-names`: the host-global names of the
// instance with a data dir, as the shell assignments orch-killall.sh
// reads, so `env $(orch host-names --data-dir X) orch-killall.sh` cleans
// up a second instance and nothing of the first.
func hostNamesCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "host-names",
		Usage: "print the host-global names (run dir, bridge, DNS link, VXLAN device, netns/chain prefixes, cgroup root) of the instance with this data dir, as orch-killall.sh's ORCH_* settings",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "data-dir", Aliases: []string{"d"}, Value: hostnames.DefaultDataDir, EnvVars: envVars("data-dir"),
				Usage: "the instance's --data-dir"},
			configFlag(),
		},
		// data-dir may come from the config file, as for orch server/agent.
		Before: func(c *ucli.Context) error { return applyConfigSubset(c, DefaultConfigPath) },
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return ucli.Exit("host-names takes no arguments", 2)
			}
			if c.String("data-dir") == "" {
				return ucli.Exit("host-names: --data-dir is empty", 2)
			}
			_, err := fmt.Fprint(c.App.Writer, hostnames.For(c.String("data-dir")).Shell())
			return err
		},
	}
}
