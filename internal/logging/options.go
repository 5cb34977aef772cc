package logging

import (
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// Formats --log-format accepts.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Options choose where and how orch logs (--debug, --log,
// --alsologtostderr, --log-format).
type Options struct {
	Debug bool
	// File, when set, receives the logs (appended, created mode 0600)
	// instead of stderr.
	File string
	// AlsoToStderr writes to stderr too when File is set.
	AlsoToStderr bool
	// Format is FormatText (default: the console format of New) or FormatJSON.
	Format string
}

// Open builds the logger Options describe. close flushes it and closes the
// file; call it when the command ends.
func Open(o Options) (log *zap.Logger, close func(), err error) {
	enc, err := encoder(o.Format)
	if err != nil {
		return nil, nil, err
	}
	out, closeOut, err := sink(o)
	if err != nil {
		return nil, nil, err
	}
	level := zapcore.InfoLevel
	opts := []zap.Option{zap.ErrorOutput(out)}
	if o.Debug {
		level = zapcore.DebugLevel
		opts = append(opts, zap.AddCaller())
	}
	log = zap.New(zapcore.NewCore(enc, out, level), opts...)
	return log, func() { _ = log.Sync(); closeOut() }, nil
}

func encoder(format string) (zapcore.Encoder, error) {
	switch format {
	case "", FormatText:
		return zapcore.NewConsoleEncoder(consoleConfig()), nil
	case FormatJSON:
		cfg := zap.NewProductionEncoderConfig()
		cfg.EncodeTime = zapcore.ISO8601TimeEncoder
		return zapcore.NewJSONEncoder(cfg), nil
	}
	return nil, fmt.Errorf("--log-format %q: want %s or %s", format, FormatText, FormatJSON)
}

// consoleConfig is the human-readable format orch has always logged in.
func consoleConfig() zapcore.EncoderConfig {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	enc.EncodeLevel = zapcore.CapitalLevelEncoder
	return enc
}

// sink opens where the logs go: stderr, the file, or both.
func sink(o Options) (zapcore.WriteSyncer, func(), error) {
	if o.File == "" {
		return zapcore.Lock(os.Stderr), func() {}, nil
	}
	f, err := os.OpenFile(o.File, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--log: %w", err)
	}
	var ws zapcore.WriteSyncer = f
	if o.AlsoToStderr {
		ws = zapcore.NewMultiWriteSyncer(f, os.Stderr)
	}
	return zapcore.Lock(ws), func() { _ = f.Close() }, nil
}

// RouteKlog sends the klog output of the Kubernetes libraries (client-go
// informers, API machinery) to w instead of stderr. klog is process-global,
// so only a command's entry point calls this, once.
func RouteKlog(w io.Writer) {
	klog.LogToStderr(false)
	klog.SetOutput(w)
}
