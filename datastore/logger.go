package datastore

import (
	"fmt"
	"io"
	"log"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// hclogAdapter routes hashicorp/raft's hclog output to zap. Raft's info
// chatter is logged at debug; warnings and errors keep their level.
type hclogAdapter struct {
	z     *zap.Logger
	name  string
	args  []interface{}
	level hclog.Level
}

var _ hclog.Logger = (*hclogAdapter)(nil)

func newHclog(z *zap.Logger) *hclogAdapter {
	return &hclogAdapter{z: z.WithOptions(zap.AddCallerSkip(2)), level: hclog.Debug}
}

func (l *hclogAdapter) fields(args []interface{}) []zap.Field {
	all := append(append([]interface{}{}, l.args...), args...)
	fields := make([]zap.Field, 0, len(all)/2+1)
	for i := 0; i < len(all); i += 2 {
		if i+1 == len(all) {
			fields = append(fields, zap.Any("extra", all[i]))
			break
		}
		fields = append(fields, zap.Any(fmt.Sprint(all[i]), all[i+1]))
	}
	return fields
}

// Log implements hclog.Logger.
func (l *hclogAdapter) Log(level hclog.Level, msg string, args ...interface{}) {
	lvl := zapcore.DebugLevel
	switch {
	case level >= hclog.Error:
		lvl = zapcore.ErrorLevel
	case level == hclog.Warn && !routineWarning(msg, args):
		lvl = zapcore.WarnLevel
	}
	if ce := l.z.Check(lvl, msg); ce != nil {
		ce.Write(l.fields(args)...)
	}
}

func (l *hclogAdapter) Trace(msg string, args ...interface{}) { l.Log(hclog.Trace, msg, args...) }
func (l *hclogAdapter) Debug(msg string, args ...interface{}) { l.Log(hclog.Debug, msg, args...) }
func (l *hclogAdapter) Info(msg string, args ...interface{})  { l.Log(hclog.Info, msg, args...) }
func (l *hclogAdapter) Warn(msg string, args ...interface{})  { l.Log(hclog.Warn, msg, args...) }
func (l *hclogAdapter) Error(msg string, args ...interface{}) { l.Log(hclog.Error, msg, args...) }

func (l *hclogAdapter) IsTrace() bool { return false }
func (l *hclogAdapter) IsDebug() bool { return l.z.Core().Enabled(zapcore.DebugLevel) }
func (l *hclogAdapter) IsInfo() bool  { return l.IsDebug() }
func (l *hclogAdapter) IsWarn() bool  { return l.z.Core().Enabled(zapcore.WarnLevel) }
func (l *hclogAdapter) IsError() bool { return l.z.Core().Enabled(zapcore.ErrorLevel) }

func (l *hclogAdapter) ImpliedArgs() []interface{} { return l.args }

func (l *hclogAdapter) With(args ...interface{}) hclog.Logger {
	c := *l
	c.args = append(append([]interface{}{}, l.args...), args...)
	return &c
}

func (l *hclogAdapter) Name() string { return l.name }

func (l *hclogAdapter) Named(name string) hclog.Logger {
	c := *l
	c.z = l.z.Named(name)
	c.name = name
	if l.name != "" {
		c.name = l.name + "." + name
	}
	return &c
}

func (l *hclogAdapter) ResetNamed(name string) hclog.Logger { return l.Named(name) }

func (l *hclogAdapter) SetLevel(level hclog.Level) { l.level = level }
func (l *hclogAdapter) GetLevel() hclog.Level      { return l.level }

func (l *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(opts), "", 0)
}

func (l *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		l.Log(hclog.Info, string(p))
		return len(p), nil
	})
}

type writerFunc func(p []byte) (int, error)

func (w writerFunc) Write(p []byte) (int, error) { return w(p) }

// routineWarning tells raft warnings that are normal operation: the first
// election of a server that has never seen a leader (every single-node start).
func routineWarning(msg string, args []interface{}) bool {
	if msg != "heartbeat timeout reached, starting election" {
		return false
	}
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "last-leader-addr" {
			return fmt.Sprint(args[i+1]) == ""
		}
	}
	return false
}
