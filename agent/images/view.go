package images

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/mount"
	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/errdefs"
	"github.com/opencontainers/image-spec/identity"
)

// viewOwnerLabel marks the snapshot views of image volumes with their pod.
const viewOwnerLabel = "orch.io/image-volume-pod"

// ViewKey is the snapshot key of a pod's image volume.
func ViewKey(owner, volume string) string {
	return "orch-image-volume/" + owner + "/" + volume
}

// MountView mounts img's root filesystem read-only at target through a
// snapshot view (image volumes). The view is named key, labelled with owner
// and kept (a gc root) until RemoveViews(owner); a second call reuses it.
func (s *Service) MountView(ctx context.Context, img containerd.Image, key, owner, target string) error {
	ctx = s.nsCtx(ctx)
	sn := s.client.SnapshotService(s.opts.Snapshotter)
	mounts, err := sn.Mounts(ctx, key)
	if errdefs.IsNotFound(err) {
		mounts, err = s.view(ctx, img, key, owner)
	}
	if err != nil {
		return fmt.Errorf("snapshot view of %s: %w", img.Name(), err)
	}
	if err := mount.All(mounts, target); err != nil {
		return fmt.Errorf("mount image %s at %s: %w", img.Name(), target, err)
	}
	return nil
}

func (s *Service) view(ctx context.Context, img containerd.Image, key, owner string) ([]mount.Mount, error) {
	if err := s.unpack(ctx, img); err != nil {
		return nil, err
	}
	diffIDs, err := img.RootFS(ctx)
	if err != nil {
		return nil, fmt.Errorf("layers of %s: %w", img.Name(), err)
	}
	labels := map[string]string{viewOwnerLabel: owner,
		"containerd.io/gc.root": strconv.FormatInt(time.Now().Unix(), 10)}
	return s.client.SnapshotService(s.opts.Snapshotter).View(ctx, key, identity.ChainID(diffIDs).String(), snapshots.WithLabels(labels))
}

// RemoveViews removes the snapshot views MountView made for owner; they
// must be unmounted first. Missing views are success.
func (s *Service) RemoveViews(ctx context.Context, owner string) error {
	ctx = s.nsCtx(ctx)
	sn := s.client.SnapshotService(s.opts.Snapshotter)
	var keys []string
	err := sn.Walk(ctx, func(_ context.Context, i snapshots.Info) error {
		keys = append(keys, i.Name)
		return nil
	}, `labels."`+viewOwnerLabel+`"==`+strconv.Quote(owner))
	if err != nil {
		return fmt.Errorf("list image volume views of %s: %w", owner, err)
	}
	var errs []error
	for _, k := range keys {
		if err := sn.Remove(ctx, k); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove view %s: %w", k, err))
		}
	}
	return errors.Join(errs...)
}
