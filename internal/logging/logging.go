// Package logging builds the zap loggers orch passes to its components:
// human-readable console output on stderr, debug level with --debug;
// Open adds --log <file>, --alsologtostderr and --log-format json|text.
package logging

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New returns a console logger writing to stderr. Components name their own
// child loggers with logger.Named("...").
func New(debug bool) *zap.Logger {
	level := zapcore.InfoLevel
	if debug {
		level = zapcore.DebugLevel
	}
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(consoleConfig()), zapcore.Lock(os.Stderr), level)
	opts := []zap.Option{zap.ErrorOutput(zapcore.Lock(os.Stderr))}
	if debug {
		opts = append(opts, zap.AddCaller())
	}
	return zap.New(core, opts...)
}
