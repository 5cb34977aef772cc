package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/pki"
)

// certificateCommand is `orch certificate rotate` (k3s's `k3s certificate
// rotate`): new leaf certificates from the same CA for a stopped server.
// A running server renews them itself 90 days before they expire.
func certificateCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "certificate",
		Usage: "manage the server's leaf certificates (the CA stays)",
		Subcommands: []*ucli.Command{{
			Name:  "check",
			Usage: "print when the server's CA and leaf certificates expire (leaves are renewed 90 days before)",
			Flags: []ucli.Flag{&ucli.StringFlag{Name: "data-dir", Aliases: []string{"d"}, Value: "/var/lib/orch", EnvVars: envVars("data-dir"),
				Usage: "the server's data dir"}},
			Action: func(c *ucli.Context) error {
				exp, err := pki.Expiries(filepath.Join(c.String("data-dir"), "server", "tls"))
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(c.App.Writer, 0, 8, 2, ' ', 0)
				fmt.Fprintln(w, "CERTIFICATE\tEXPIRES\tLEFT\tFILE")
				for _, e := range exp {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", e.Name, e.NotAfter.UTC().Format(time.RFC3339),
						time.Until(e.NotAfter).Round(time.Hour), e.Path)
				}
				return w.Flush()
			},
		}, {
			Name: "rotate",
			Usage: "issue the server's leaf certificates again with new keys; run it while orch server is stopped " +
				"(a running server keeps the ones it loaded until it restarts)",
			Flags: []ucli.Flag{
				&ucli.StringFlag{Name: "data-dir", Aliases: []string{"d"}, Value: "/var/lib/orch", EnvVars: envVars("data-dir"),
					Usage: "the server's data dir"},
				&ucli.StringSliceFlag{Name: "service", Aliases: []string{"s"},
					Usage: "certificate to rotate (repeatable; default all): " + strings.Join(pki.RotateServices(), ", ")},
			},
			Action: func(c *ucli.Context) error {
				out, err := pki.Rotate(filepath.Join(c.String("data-dir"), "server", "tls"), c.StringSlice("service"), time.Now(), nil)
				for _, r := range out {
					fmt.Fprintf(c.App.Writer, "rotated %s (%s), valid until %s\n", r.Name, r.Path, r.NotAfter.UTC().Format(time.RFC3339))
				}
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(c.App.Writer, "start (or restart) orch server on this host to use them; "+
					"agents need nothing (the CA did not change)")
				return err
			},
		}},
	}
}
