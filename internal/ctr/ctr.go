package ctr

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	ctrapp "github.com/containerd/containerd/v2/cmd/ctr/app"
	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/agent/runtime"
)

// Defaults for orch's ctr: the managed containerd and orch's namespace.
const (
	DefaultAddress   = runtime.DefaultAddress
	DefaultNamespace = runtime.DefaultNamespace
)

// Run runs upstream ctr on args, where args[0] is the name ctr's help
// shows ("ctr" or "orch ctr") and the rest are ctr's arguments, with orch's
// defaults (see NewApp). It returns ctr's error; the caller prints it.
func Run(args []string) error {
	// Ctrl-C ends ctr as it does upstream ctr (events, pprof, content
	// fetch); commands that forward signals (run, tasks start/attach) install
	// their own handlers. Undo main's signal.NotifyContext.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	app, err := NewApp(DefaultAddress, DefaultNamespace)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		app.HelpName = args[0]
	}
	return app.Run(args)
}

// NewApp returns upstream ctr's command line with address and namespace as
// the defaults of --address and --namespace.
func NewApp(address, namespace string) (*ucli.App, error) {
	app := ctrapp.New()
	if err := setDefault(app, "address", address); err != nil {
		return nil, err
	}
	if err := setDefault(app, "namespace", namespace); err != nil {
		return nil, err
	}
	return app, nil
}

// setDefault sets the default value of app's global string flag name. An
// explicit flag or the flag's environment variable still wins.
func setDefault(app *ucli.App, name, value string) error {
	for _, f := range app.Flags {
		sf, ok := f.(*ucli.StringFlag)
		if ok && sf.Name == name {
			sf.Value = value
			return nil
		}
	}
	return fmt.Errorf("ctr has no global string flag --%s", name)
}
