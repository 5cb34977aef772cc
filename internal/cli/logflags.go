package cli

import (
	ucli "github.com/urfave/cli/v2"
	"go.uber.org/zap"

	"github.com/orch/orch/internal/logging"
)

// logFlags are the logging flags of `orch server` and `orch agent`.
func logFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "log", Aliases: []string{"l"}, EnvVars: envVars("log"),
			Usage: "write logs to this file (appended, created mode 0600) instead of stderr"},
		&ucli.BoolFlag{Name: "alsologtostderr", EnvVars: envVars("alsologtostderr"), Usage: "with --log, log to stderr too"},
		&ucli.StringFlag{Name: "log-format", Value: logging.FormatText, EnvVars: envVars("log-format"),
			Usage: "log format: text (human-readable) or json (one object per line)"},
	}
}

// openLogger builds the command's logger from --debug and the log flags
// (flags a command lacks read as empty). The Kubernetes libraries' klog
// lines go through it when logs go to a file or are JSON.
func openLogger(c *ucli.Context) (*zap.Logger, func(), error) {
	o := logging.Options{Debug: c.Bool("debug"), File: c.String("log"), AlsoToStderr: c.Bool("alsologtostderr"),
		Format: c.String("log-format")}
	log, closeLog, err := logging.Open(o)
	if err != nil {
		return nil, nil, err
	}
	if o.File != "" || o.Format == logging.FormatJSON {
		logging.RouteKlog(zap.NewStdLog(log.Named("klog")).Writer())
	}
	return log, closeLog, nil
}
