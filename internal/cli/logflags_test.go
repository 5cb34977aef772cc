package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"
)

// TestLogFlagsFromConfigFile: the log flags work from the config file like
// every flag, and openLogger writes JSON to --log.
func TestLogFlagsFromConfigFile(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "orch.log")
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("log: "+logFile+"\nlog-format: json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	app := &ucli.App{Name: "orch", Commands: []*ucli.Command{{
		Name:   "agent",
		Flags:  append(agentFlags(), logFlags()...),
		Before: func(c *ucli.Context) error { return applyConfigFile(c, DefaultConfigPath) },
		Action: func(c *ucli.Context) error {
			log, closeLog, err := openLogger(c)
			if err != nil {
				return err
			}
			log.Info("from the agent")
			closeLog()
			return nil
		},
	}}}
	if err := app.Run([]string{"orch", "agent", "--config", cfg}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "{") || !strings.Contains(string(data), `"msg":"from the agent"`) {
		t.Fatalf("log file %q", data)
	}
	err = app.Run([]string{"orch", "agent", "--config", cfg, "--log-format", "yaml"})
	if err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Fatalf("bad --log-format: %v", err)
	}
}
