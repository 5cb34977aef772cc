package cli

import (
	"fmt"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/hostcheck"
)

// checkConfigCommand is `orch check-config`: kernel and tool checks with
// fixes; exit status 1 when a required check fails. The hidden --root reads
// /proc, /sys, /boot, /lib/modules and the bin dirs under another
// directory (tests).
func checkConfigCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "check-config",
		Usage: "check the kernel and host tools orch needs (cgroups, overlayfs, vxlan, br_netfilter, iptables) and print fixes",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "root", Hidden: true, Usage: "read the host files under this directory (tests)"},
		},
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return ucli.Exit("check-config takes no arguments", 2)
			}
			h := hostcheck.OSHost{}
			if root := c.String("root"); root != "" {
				h.Root = root
				for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
					h.Path = append(h.Path, filepath.Join(root, d))
				}
			}
			if n := hostcheck.Print(c.App.Writer, hostcheck.Run(h)); n > 0 {
				return ucli.Exit(fmt.Sprintf("check-config: %d required check(s) failed", n), 1)
			}
			return nil
		},
	}
}
