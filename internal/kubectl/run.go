package kubectl

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/plugin"
	"k8s.io/kubectl/pkg/cmd/util"

	// Before kubectl's packages: no translation catalog unless running kubectl.
	_ "github.com/orch/orch/internal/kubectl/i18nlazy"
)

// Run runs upstream kubectl with args (kubectl's arguments, without the
// command name) as upstream kubectl's main does, after choosing the
// kubeconfig (see ChooseKubeconfig). Like kubectl it exits the process on
// failure, with kubectl's exit code and message.
func Run(args []string) {
	// Ctrl-C ends kubectl (get -w, logs -f) as it does upstream kubectl:
	// undo main's signal.NotifyContext; kubectl installs its own handlers
	// where it needs them (port-forward, exec).
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	choice := ChooseKubeconfig(args, OSEnv{}, DefaultAdminKubeconfig)
	applyChoice(choice, os.Setenv, os.Stderr)
	argv := append([]string{"kubectl"}, args...)
	// Set verbosity before command construction, as upstream does, so klog
	// works while plugins and .kuberc are handled.
	logs.GlogSetter(cmd.GetLogVerbosity(argv)) // nolint:errcheck
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	command := cmd.NewDefaultKubectlCommandWithArgs(cmd.KubectlOptions{
		PluginHandler: cmd.NewDefaultPluginHandler(plugin.ValidPluginFilenamePrefixes),
		Arguments:     argv,
		// The same as upstream's (unexported) defaultConfigFlags.
		ConfigFlags: genericclioptions.NewConfigFlags(true).WithDeprecatedPasswordFlag().
			WithDiscoveryBurst(300).WithDiscoveryQPS(50.0).WithWarningPrinter(streams),
		IOStreams: streams,
	})
	command.SetArgs(args)
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}

// applyChoice sets $KUBECONFIG to the chosen path, or prints a hint when the
// admin kubeconfig exists but may not be read.
func applyChoice(c Choice, setenv func(k, v string) error, stderr io.Writer) {
	switch {
	case c.Path != "":
		if err := setenv("KUBECONFIG", c.Path); err != nil {
			fmt.Fprintf(stderr, "orch kubectl: setting KUBECONFIG: %v\n", err)
		}
	case c.Denied:
		fmt.Fprintf(stderr, "orch kubectl: %s is not readable by this user (run as root, "+
			"or set KUBECONFIG / --kubeconfig)\n", DefaultAdminKubeconfig)
	}
}
