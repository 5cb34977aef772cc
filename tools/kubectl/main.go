// Command kubectl is an unmodified upstream kubectl (k8s.io/kubectl v0.37.2),
// built from its own module so that orch's go.mod stays free of kubectl's
// dependencies. It mirrors kubernetes/cmd/kubectl/kubectl.go.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Import to initialize client auth plugins.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	// Set verbosity before command construction, as upstream does, so klog
	// works while plugins and .kuberc are handled.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
