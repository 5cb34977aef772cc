package deadcode

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/orch/orch/test/testutil"
)

// TestHelpTemplates prints the help of every `orch kubectl` and `orch ctr`
// command (their help is rendered by text/template calling methods of
// cobra's and urfave/cli's commands) and fails on a template error.
func TestHelpTemplates(t *testing.T) {
	bin := testutil.Binary(t)
	for _, tc := range []struct {
		root    string
		section *regexp.Regexp // a heading above a list of subcommands
		entry   *regexp.Regexp // a subcommand line of that list
		want    string         // in every help
	}{
		{"kubectl", regexp.MustCompile(`^(Available Commands|[A-Z][\w ]*Commands[\w ()]*):$`),
			regexp.MustCompile(`^  ([a-z][\w-]*)\s{2,}`), "Usage:"},
		{"ctr", regexp.MustCompile(`^COMMANDS:$`),
			regexp.MustCompile(`^\s+([a-z][\w-]*)(, [\w-]+)*\s{2,}`), "USAGE:"},
	} {
		t.Run(tc.root, func(t *testing.T) {
			n := walkHelp(t, bin, []string{tc.root}, tc.section, tc.entry, tc.want)
			t.Logf("%d commands", n)
			if n < 40 {
				t.Errorf("found only %d %s commands: the help listing was not parsed", n, tc.root)
			}
		})
	}
}

// walkHelp checks the help of the command at path and of its subcommands,
// depth first, and returns how many commands it checked.
func walkHelp(t *testing.T, bin string, path []string, section, entry *regexp.Regexp, want string) int {
	cmd := exec.Command(bin, append(path, "--help")...)
	// A HOME of our own: kubectl writes a cache; CLI_TEMPLATE_ERROR_DEBUG
	// makes urfave/cli print the template errors it otherwise hides.
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "CLI_TEMPLATE_ERROR_DEBUG=1", "KUBECONFIG=")
	b, _ := cmd.CombinedOutput()
	out := string(b)
	name := strings.Join(path, " ")
	for _, bad := range []string{"can't evaluate field", "TEMPLATE ERROR", "error calling", `executing "`} {
		if strings.Contains(out, bad) {
			t.Errorf("orch %s --help: template error:\n%s", name, tail(out, 1500))
			return 1
		}
	}
	if !strings.Contains(out, want) {
		t.Errorf("orch %s --help printed no %q:\n%s", name, want, tail(out, 1500))
	}
	n := 1
	if len(path) >= 4 {
		return n
	}
	for _, sub := range subcommands(out, section, entry) {
		n += walkHelp(t, bin, append(path[:len(path):len(path)], sub), section, entry, want)
	}
	return n
}

// subcommands returns the names listed under the section headings of a
// help text ("help" itself left out).
func subcommands(help string, section, entry *regexp.Regexp) []string {
	var names []string
	in := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case section.MatchString(line):
			in = true
		case !in:
		case entry.MatchString(line):
			if n := entry.FindStringSubmatch(line)[1]; n != "help" {
				names = append(names, n)
			}
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, " "):
		default:
			in = false
		}
	}
	return names
}
