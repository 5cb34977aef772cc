package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/version"
)

// versionFlag is orch's own --version/-v (urfave's built-in one prints
// through a package-global printer, so the App hides it: HideVersion).
func versionFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "version", Aliases: []string{"v"},
		Usage: "print the version, as the version command does"}
}

// rootAction runs for `orch` without a command: --version prints the
// version, anything else is answered as urfave's default root action does
// (help, or an error for an unknown command).
func rootAction(c *ucli.Context) error {
	if c.Bool("version") {
		return printVersion(c)
	}
	if c.Args().Present() {
		_ = ucli.ShowAppHelp(c)
		return ucli.Exit(fmt.Sprintf("orch: unknown command %q", c.Args().First()), 3)
	}
	return ucli.ShowAppHelp(c)
}

// printVersion writes version.String to the App's writer.
func printVersion(c *ucli.Context) error {
	_, err := fmt.Fprint(c.App.Writer, version.String())
	return err
}
