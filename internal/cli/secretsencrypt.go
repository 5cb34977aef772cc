package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/server/encryption"
)

// secretsEncryptCommand is `orch secrets-encrypt status|rotate-keys|reencrypt`
// (k3s's names). Each subcommand calls the running server on this host over
// HTTPS with the admin client certificate of its data dir; the server
// changes its config file and switches to it without a restart.
func secretsEncryptCommand(ctx context.Context) *ucli.Command {
	flags := []ucli.Flag{
		&ucli.StringFlag{Name: "data-dir", Aliases: []string{"d"}, Value: "/var/lib/orch", EnvVars: envVars("data-dir"),
			Usage: "the server's data dir (its CA and admin certificate are used)"},
		&ucli.StringFlag{Name: "server", Aliases: []string{"s"}, Value: "https://127.0.0.1:6443",
			Usage: "the server to talk to (this host's, normally)"},
	}
	client := func(c *ucli.Context) (*encryption.Client, error) {
		return encryption.NewClient(c.String("server"), c.String("data-dir"))
	}
	return &ucli.Command{
		Name:  "secrets-encrypt",
		Usage: "show and change the encryption of Secrets at rest (servers started with --secrets-encryption)",
		Subcommands: []*ucli.Command{
			{Name: "status", Usage: "print whether encryption is on, the active provider and key, and the config hash",
				Flags: append(flags, &ucli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "json for JSON output"}),
				Action: func(c *ucli.Context) error {
					cl, err := client(c)
					if err != nil {
						return err
					}
					st, err := cl.Status(ctx)
					if err != nil {
						return err
					}
					return printStatus(c.App.Writer, st, c.String("output"))
				}},
			{Name: "rotate-keys", Usage: "put a new key first (older keys still decrypt); then run reencrypt", Flags: flags,
				Action: func(c *ucli.Context) error {
					cl, err := client(c)
					if err != nil {
						return err
					}
					st, err := cl.RotateKeys(ctx)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(c.App.Writer, "new active key %s (%s); run `orch secrets-encrypt reencrypt` to rewrite stored values with it\n", st.ActiveKey, st.Provider)
					return err
				}},
			{Name: "reencrypt", Usage: "rewrite every encrypted resource under the active key", Flags: flags,
				Action: func(c *ucli.Context) error {
					cl, err := client(c)
					if err != nil {
						return err
					}
					res, err := cl.Reencrypt(ctx)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(c.App.Writer, "reencrypted: %d of %d stored values rewritten\n", res.Rewritten, res.Scanned)
					return err
				}},
		},
	}
}

// printStatus prints st like k3s's `secrets-encrypt status`.
func printStatus(w io.Writer, st encryption.Status, output string) error {
	switch output {
	case "json":
		data, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	case "":
	default:
		return fmt.Errorf("--output %q: only json is supported", output)
	}
	if st.ConfigHash == "" {
		_, err := fmt.Fprintln(w, "Encryption Status: Disabled (start the server with --secrets-encryption)")
		return err
	}
	state := "Enabled"
	if !st.Enabled {
		state = "Disabled (identity is the first provider)"
	}
	fmt.Fprintf(w, "Encryption Status: %s\nResources: %v\nConfig: %s\nConfig Hash: %s\n\n", state, st.Resources, st.ConfigPath, st.ConfigHash)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Active\tKey Type\tName")
	fmt.Fprintln(tw, "------\t--------\t----")
	for _, k := range st.Keys {
		mark := ""
		if k.Active {
			mark = " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, k.Provider, k.Name)
	}
	return tw.Flush()
}
