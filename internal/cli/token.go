package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/internal/bootstraptoken"
	"github.com/orch/orch/internal/pki"
)

// tokenCommand is `orch token create|list|delete` (k3s's `k3s token`):
// bootstrap tokens for agents, stored as kubeadm stores them. Each
// subcommand talks to the running server with the admin certificate of
// its data dir.
func tokenCommand(ctx context.Context) *ucli.Command {
	flags := []ucli.Flag{
		&ucli.StringFlag{Name: "data-dir", Aliases: []string{"d"}, Value: "/var/lib/orch", EnvVars: envVars("data-dir"),
			Usage: "the server's data dir (its CA and admin certificate are used)"},
		&ucli.StringFlag{Name: "server", Aliases: []string{"s"}, Value: "https://127.0.0.1:6443",
			Usage: "the server to talk to (this host's, normally)"},
	}
	return &ucli.Command{
		Name:  "token",
		Usage: "create, list and delete bootstrap tokens that join agents (not servers)",
		Subcommands: []*ucli.Command{
			{Name: "create", Usage: "create a bootstrap token and print it in its K10...::<id>.<secret> join form",
				ArgsUsage: "[<id>.<secret>]", Flags: append(flags,
					&ucli.DurationFlag{Name: "ttl", Value: bootstraptoken.DefaultTTL, Usage: "how long the token is valid (0 = never expires)"},
					&ucli.StringFlag{Name: "description", Usage: "a human-readable note on the token"},
					&ucli.StringSliceFlag{Name: "usages", Value: ucli.NewStringSlice(bootstraptoken.DefaultUsages...),
						Usage: "usages of the token (signing, authentication; joining needs authentication)"},
					&ucli.StringSliceFlag{Name: "groups", Value: ucli.NewStringSlice(bootstraptoken.DefaultGroup),
						Usage: "extra groups of the token (system:bootstrappers:...)"}),
				Action: func(c *ucli.Context) error { return tokenCreate(ctx, c) }},
			{Name: "list", Aliases: []string{"ls"}, Usage: "list the bootstrap tokens (IDs; secrets are never shown again)", Flags: flags,
				Action: func(c *ucli.Context) error { return tokenList(ctx, c) }},
			{Name: "delete", Aliases: []string{"rm"}, Usage: "delete bootstrap tokens: agents can no longer join with them",
				ArgsUsage: "<id>|<id>.<secret>...", Flags: flags, Action: func(c *ucli.Context) error { return tokenDelete(ctx, c) }},
		},
	}
}

// adminClientset is a client of the server at url, authenticated with the
// admin certificate of dataDir.
func adminClientset(url, dataDir string) (kubernetes.Interface, error) {
	tlsCfg, err := pki.AdminClientTLS(filepath.Join(dataDir, "server", "tls"))
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: url, Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment}})
	if err != nil {
		return nil, fmt.Errorf("client of %s: %w", url, err)
	}
	return cs, nil
}

func tokenCreate(ctx context.Context, c *ucli.Context) error {
	if c.NArg() > 1 {
		return errors.New("give at most one token (<id>.<secret>); without one a random token is made")
	}
	tok, err := chosenToken(c.Args().First())
	if err != nil {
		return err
	}
	secret, err := bootstraptoken.NewSecret(tok, bootstraptoken.Spec{Description: c.String("description"), TTL: c.Duration("ttl"),
		Usages: c.StringSlice("usages"), Groups: c.StringSlice("groups")}, time.Now())
	if err != nil {
		return err
	}
	caPEM, err := os.ReadFile(filepath.Join(c.String("data-dir"), "server", "tls", pki.CACertFile))
	if err != nil {
		return fmt.Errorf("reading the cluster CA (is --data-dir the server's, and are you root?): %w", err)
	}
	cs, err := adminClientset(c.String("server"), c.String("data-dir"))
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Secrets(bootstraptoken.Namespace).Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("a token with ID %s exists already", tok.ID)
	}
	if err != nil {
		return fmt.Errorf("creating the token: %w", err)
	}
	_, err = fmt.Fprintln(c.App.Writer, pki.FormatBootstrapToken(pki.CAHash(caPEM), tok.String()))
	return err
}

// chosenToken parses a token given on the command line, else makes one.
func chosenToken(arg string) (bootstraptoken.Token, error) {
	if arg == "" {
		return bootstraptoken.Generate()
	}
	if _, s, err := pki.ParseToken(arg); err == nil && bootstraptoken.IsToken(s) {
		arg = s // a full K10...::<id>.<secret> is accepted too
	}
	return bootstraptoken.Parse(arg)
}

func tokenList(ctx context.Context, c *ucli.Context) error {
	cs, err := adminClientset(c.String("server"), c.String("data-dir"))
	if err != nil {
		return err
	}
	l, err := cs.CoreV1().Secrets(bootstraptoken.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "type=" + bootstraptoken.SecretType})
	if err != nil {
		return fmt.Errorf("listing tokens: %w", err)
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "TOKEN ID\tTTL\tEXPIRES\tUSAGES\tDESCRIPTION\tEXTRA GROUPS")
	now := time.Now()
	for i := range l.Items {
		if !bootstraptoken.IsTokenSecret(&l.Items[i]) {
			continue
		}
		in := bootstraptoken.InfoOf(&l.Items[i])
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", in.ID, ttlOf(in.Expires, now), expiresOf(in.Expires),
			orNone(strings.Join(in.Usages, ",")), orNone(in.Description), orNone(strings.Join(in.Groups, ",")))
	}
	return w.Flush()
}

// ttlOf is the TTL column as kubeadm prints it.
func ttlOf(expires, now time.Time) string {
	switch {
	case expires.IsZero():
		return "<forever>"
	case !expires.After(now):
		return "<invalid>"
	}
	return expires.Sub(now).Round(time.Second).String()
}

func expiresOf(expires time.Time) string {
	if expires.IsZero() {
		return "<never>"
	}
	return expires.Format(time.RFC3339)
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func tokenDelete(ctx context.Context, c *ucli.Context) error {
	if c.NArg() == 0 {
		return errors.New("name the tokens to delete by ID (see `orch token list`)")
	}
	ids := make([]string, 0, c.NArg())
	for _, a := range c.Args().Slice() {
		if _, s, err := pki.ParseToken(a); err == nil && bootstraptoken.IsToken(s) {
			a = s
		}
		id, err := bootstraptoken.ParseID(a)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	cs, err := adminClientset(c.String("server"), c.String("data-dir"))
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		err := cs.CoreV1().Secrets(bootstraptoken.Namespace).Delete(ctx, bootstraptoken.SecretName(id), metav1.DeleteOptions{})
		switch {
		case apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("token %s does not exist", id))
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting token %s: %w", id, err))
		default:
			fmt.Fprintf(c.App.Writer, "bootstrap token %q deleted\n", id)
		}
	}
	return errors.Join(errs...)
}
