package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/hostcheck"
)

// checkConfigCommand is `orch check-config`: kernel and tool checks with
// fixes; exit status 1 when a required check fails.
func checkConfigCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "check-config",
		Usage: "check the kernel and host tools orch needs (cgroups, overlayfs, vxlan, br_netfilter, iptables) and print fixes",
		Action: func(c *ucli.Context) error {
			if n := hostcheck.Print(c.App.Writer, hostcheck.Run(hostcheck.OSHost{})); n > 0 {
				return ucli.Exit(fmt.Sprintf("check-config: %d required check(s) failed", n), 1)
			}
			return nil
		},
	}
}
