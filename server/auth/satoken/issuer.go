package satoken

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
)

// DefaultIssuer is kube-apiserver's issuer for the cluster domain.
func DefaultIssuer(clusterDomain string) string {
	if clusterDomain == "" {
		clusterDomain = "cluster.local"
	}
	return "https://kubernetes.default.svc." + clusterDomain
}

// Issuer signs ServiceAccount tokens.
type Issuer struct {
	key       *ecdsa.PrivateKey
	kid       string
	issuer    string
	audiences []string
	now       func() time.Time
}

// NewIssuer signs with key as issuer; audiences are the API server's own
// (a TokenRequest without audiences gets these).
func NewIssuer(key *ecdsa.PrivateKey, issuer string, audiences []string) (*Issuer, error) {
	if key == nil || issuer == "" {
		return nil, errors.New("satoken: a key and an issuer are required")
	}
	kid, err := KeyID(key.Public())
	if err != nil {
		return nil, err
	}
	if len(audiences) == 0 {
		audiences = []string{issuer}
	}
	return &Issuer{key: key, kid: kid, issuer: issuer, audiences: audiences, now: time.Now}, nil
}

// APIAudiences are the audiences the API server accepts.
func (i *Issuer) APIAudiences() []string { return append([]string(nil), i.audiences...) }

// IssuerURL is the "iss" of the tokens.
func (i *Issuer) IssuerURL() string { return i.issuer }

// Request is what one token is for.
type Request struct {
	Namespace      string
	ServiceAccount Ref
	Audiences      []string // empty = the API audiences
	Expiration     time.Duration
	Pod            *Ref
	Secret         *Ref
	Node           *Ref
}

// Issue signs a token for req and returns it with its expiry.
func (i *Issuer) Issue(req Request) (string, time.Time, error) {
	if req.Namespace == "" || req.ServiceAccount.Name == "" {
		return "", time.Time{}, errors.New("satoken: namespace and service account are required")
	}
	if req.Expiration <= 0 {
		return "", time.Time{}, fmt.Errorf("satoken: expiration %v must be positive", req.Expiration)
	}
	now := i.now().Truncate(time.Second)
	exp := now.Add(req.Expiration)
	aud := req.Audiences
	if len(aud) == 0 {
		aud = i.audiences
	}
	c := Claims{
		Issuer: i.issuer, Subject: UserName(req.Namespace, req.ServiceAccount.Name),
		Audience: aud, Expiry: exp.Unix(), IssuedAt: now.Unix(), NotBefore: now.Unix(),
		ID: string(uuid.NewUUID()),
		K8s: &Private{Namespace: req.Namespace, ServiceAccount: req.ServiceAccount,
			Pod: req.Pod, Secret: req.Secret, Node: req.Node},
	}
	tok, err := sign(i.key, i.kid, c)
	if err != nil {
		return "", time.Time{}, err
	}
	return tok, exp, nil
}
