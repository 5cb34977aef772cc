package images

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// Errors the pod worker turns into container waiting reasons.
var (
	ErrImagePull        = errors.New("ErrImagePull")
	ErrImageNeverPull   = errors.New("ErrImageNeverPull")
	ErrInvalidImageName = errors.New("InvalidImageName")
)

// PullError is a failed pull; Err carries the registry's message.
type PullError struct {
	Ref string
	Err error
}

func (e *PullError) Error() string        { return fmt.Sprintf("pull image %q: %v", e.Ref, e.Err) }
func (e *PullError) Unwrap() []error      { return []error{ErrImagePull, e.Err} }
func (e *PullError) Is(target error) bool { return target == ErrImagePull }

// DefaultImportDir is where tarballs for air-gapped nodes are dropped.
func DefaultImportDir(dataDir string) string { return filepath.Join(dataDir, "agent", "images") }

// DefaultStateFile records what was imported from DefaultImportDir.
func DefaultStateFile(dataDir string) string {
	return filepath.Join(dataDir, "agent", "containerd", "imported-images.json")
}

// Options configure a Service.
type Options struct {
	Namespace   string // containerd namespace (default "orch")
	Snapshotter string // where images are unpacked (the runtime's)
	Registries  *Registries
	// StateFile records imported tarballs (default: none; ImportDir then
	// re-imports every file at start, which is idempotent but slower).
	StateFile string
}

// Service gets images into containerd.
type Service struct {
	log    *zap.Logger
	client *containerd.Client
	opts   Options

	importMu sync.Mutex // one ImportDir at a time
}

// New returns a Service using client.
func New(log *zap.Logger, client *containerd.Client, opts Options) *Service {
	if opts.Namespace == "" {
		opts.Namespace = "orch"
	}
	if opts.Snapshotter == "" {
		opts.Snapshotter = "overlayfs"
	}
	if opts.Registries == nil {
		opts.Registries = &Registries{}
	}
	return &Service{log: log.Named("images"), client: client, opts: opts}
}

func (s *Service) nsCtx(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, s.opts.Namespace)
}

// Normalize turns "nginx:1.25" into "docker.io/library/nginx:1.25" (and a
// bare name into ":latest").
func Normalize(ref string) (string, error) {
	named, err := reference.ParseDockerRef(ref)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrInvalidImageName, ref, err)
	}
	return named.String(), nil
}

// EnsureImage makes ref available and unpacked according to policy; an
// empty policy means IfNotPresent (API defaulting already chose Always for
// :latest).
func (s *Service) EnsureImage(ctx context.Context, ref string, policy corev1.PullPolicy, auth *Auth) (containerd.Image, error) {
	ctx = s.nsCtx(ctx)
	name, err := Normalize(ref)
	if err != nil {
		return nil, err
	}
	img, err := s.client.GetImage(ctx, name)
	present := err == nil
	if err != nil && !errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("look up image %s: %w", name, err)
	}
	switch {
	case policy == corev1.PullNever && !present:
		return nil, fmt.Errorf("%w: image %q is not present with pull policy of Never", ErrImageNeverPull, ref)
	case present && policy != corev1.PullAlways:
		return img, s.unpack(ctx, img)
	}
	return s.pull(ctx, name, auth)
}

func (s *Service) pull(ctx context.Context, name string, auth *Auth) (containerd.Image, error) {
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: s.opts.Registries.Hosts(auth)})
	s.log.Info("pulling image", zap.String("image", name))
	img, err := s.client.Pull(ctx, name,
		containerd.WithResolver(resolver),
		containerd.WithPullUnpack,
		containerd.WithPullSnapshotter(s.opts.Snapshotter),
	)
	if err != nil {
		return nil, &PullError{Ref: name, Err: err}
	}
	return img, nil
}

func (s *Service) unpack(ctx context.Context, img containerd.Image) error {
	ok, err := img.IsUnpacked(ctx, s.opts.Snapshotter)
	if err == nil && ok {
		return nil
	}
	if err := img.Unpack(ctx, s.opts.Snapshotter); err != nil {
		return fmt.Errorf("unpack %s: %w", img.Name(), err)
	}
	return nil
}

// Remove deletes an image by reference (image GC); a missing one is success.
func (s *Service) Remove(ctx context.Context, ref string) error {
	ctx = s.nsCtx(ctx)
	name, err := Normalize(ref)
	if err != nil {
		return err
	}
	if err := s.client.ImageService().Delete(ctx, name); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove image %s: %w", name, err)
	}
	return nil
}
