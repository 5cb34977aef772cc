package pki

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"
)

// ErrUnknownService means `orch certificate rotate --service` named no
// certificate orch has.
var ErrUnknownService = errors.New("unknown certificate service")

// rotatable maps the service names of `orch certificate rotate --service`
// (k3s's where they apply, orch's own file names too) to a leaf's directory
// (relative to the TLS directory) and file base name.
var rotatable = map[string][2]string{
	"api-server":         {".", LeafServing},
	LeafServing:          {".", LeafServing},
	"etcd":               {".", LeafPeer},
	LeafPeer:             {".", LeafPeer},
	LeafAdmin:            {".", LeafAdmin},
	"auth-proxy":         {FrontProxyDir, FrontProxyClientName},
	FrontProxyClientName: {FrontProxyDir, FrontProxyClientName},
}

// RotateServices lists the names Rotate accepts.
func RotateServices() []string {
	var names []string
	for n := range rotatable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Rotated is one certificate Rotate issued again.
type Rotated struct {
	Name     string
	Path     string
	NotAfter time.Time
}

// Rotate issues the named leaf certificates in tlsDir (<data-dir>/server/tls)
// again with new keys, from the CA beside them, keeping their subjects,
// names and usages (all of them when services is empty). The CA is not
// changed. Run it on a stopped server: a running one keeps presenting the
// certificates it loaded until it restarts.
func Rotate(tlsDir string, services []string, now time.Time, log *zap.Logger) ([]Rotated, error) {
	if log == nil {
		log = zap.NewNop()
	}
	leaves, err := selectLeaves(services)
	if err != nil {
		return nil, err
	}
	var out []Rotated
	for _, l := range leaves {
		r, err := rotateLeaf(filepath.Join(tlsDir, l[0]), l[1], now, log)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// selectLeaves resolves service names to distinct leaves, in a fixed order.
func selectLeaves(services []string) ([][2]string, error) {
	if len(services) == 0 {
		services = []string{LeafServing, LeafPeer, LeafAdmin, FrontProxyClientName}
	}
	var leaves [][2]string
	for _, s := range services {
		l, ok := rotatable[strings.TrimSpace(s)]
		if !ok {
			return nil, fmt.Errorf("%w %q: valid names are %s", ErrUnknownService, s, strings.Join(RotateServices(), ", "))
		}
		if !slices.Contains(leaves, l) {
			leaves = append(leaves, l)
		}
	}
	return leaves, nil
}

func rotateLeaf(dir, name string, now time.Time, log *zap.Logger) (Rotated, error) {
	certPath, keyPath := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	caCert, err := readOptional(filepath.Join(dir, CACertFile))
	if err != nil {
		return Rotated{}, err
	}
	caKey, err := readOptional(filepath.Join(dir, CAKeyFile))
	if err != nil {
		return Rotated{}, err
	}
	if caCert == nil || caKey == nil {
		return Rotated{}, fmt.Errorf("%w: no CA in %s (is it a server's <data-dir>/server/tls?)", ErrCAIncomplete, dir)
	}
	ca, err := parseKeyPair(caCert, caKey)
	if err != nil {
		return Rotated{}, fmt.Errorf("CA in %s: %w", dir, err)
	}
	oldPEM, err := readOptional(certPath)
	if err != nil {
		return Rotated{}, err
	}
	if oldPEM == nil {
		return Rotated{}, fmt.Errorf("no %s: start the server once to create it", certPath)
	}
	old, err := parseCertPEM(oldPEM)
	if err != nil {
		return Rotated{}, fmt.Errorf("%s: %w", certPath, err)
	}
	spec := leafSpec{commonName: old.Subject.CommonName, orgs: old.Subject.Organization, dnsNames: old.DNSNames,
		ips: old.IPAddresses, extUsage: old.ExtKeyUsage}
	kp, err := ca.issue(now, spec, nil)
	if err != nil {
		return Rotated{}, err
	}
	if err := writePair(certPath, keyPath, kp); err != nil {
		return Rotated{}, err
	}
	log.Info("rotated certificate", zap.String("name", name), zap.Time("notAfter", kp.cert.NotAfter))
	return Rotated{Name: name, Path: certPath, NotAfter: kp.cert.NotAfter}, nil
}

// Expiries reads the CA and the leaf certificates in tlsDir (what `orch
// certificate check` prints); a missing leaf is skipped.
func Expiries(tlsDir string) ([]Rotated, error) {
	files := [][2]string{{".", "ca"}, {".", LeafServing}, {".", LeafPeer}, {".", LeafAdmin},
		{FrontProxyDir, "ca"}, {FrontProxyDir, FrontProxyClientName}}
	var out []Rotated
	for _, f := range files {
		path := filepath.Join(tlsDir, f[0], f[1]+".crt")
		b, err := readOptional(path)
		if err != nil {
			return out, err
		}
		if b == nil {
			continue
		}
		c, err := parseCertPEM(b)
		if err != nil {
			return out, fmt.Errorf("%s: %w", path, err)
		}
		name := f[1]
		if f[0] == FrontProxyDir && name == "ca" {
			name = "front-proxy-ca"
		}
		out = append(out, Rotated{Name: name, Path: path, NotAfter: c.NotAfter})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no certificates in %s (is it a server's <data-dir>/server/tls?)", tlsDir)
	}
	return out, nil
}
