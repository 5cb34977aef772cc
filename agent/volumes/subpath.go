package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/envvars"
)

// ErrSubPathEscapes is returned when a subPath resolves outside its volume.
var ErrSubPathEscapes = errors.New("subPath escapes the volume")

// Mount is one container bind mount: host path -> container path.
type Mount struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
}

// ContainerMounts turns c's volumeMounts into bind mounts from the set-up
// volumes. subPathExpr is expanded with the container's resolved env
// (KEY=VALUE, from envvars.Resolve). A mount is read-only when the mount or
// the volume says so.
func ContainerMounts(vols map[string]Volume, c *corev1.Container, env []string) ([]Mount, error) {
	out := make([]Mount, 0, len(c.VolumeMounts))
	for _, vm := range c.VolumeMounts {
		vol, ok := vols[vm.Name]
		if !ok {
			return nil, fmt.Errorf("container %q: volumeMount %q: no such volume", c.Name, vm.Name)
		}
		if vm.SubPathExpr != "" {
			sp, err := envvars.ExpandSubPath(vm.SubPathExpr, env)
			if err != nil {
				return nil, fmt.Errorf("container %q: volumeMount %q: %w", c.Name, vm.Name, err)
			}
			vm.SubPath = sp
		}
		host, err := MountSource(vol, vm)
		if err != nil {
			return nil, fmt.Errorf("container %q: %w", c.Name, err)
		}
		out = append(out, Mount{HostPath: host, ContainerPath: vm.MountPath, ReadOnly: vm.ReadOnly || vol.ReadOnly})
	}
	return out, nil
}

// MountSource returns the host path to bind-mount for mount. With a
// subPath it checks that the path is relative without "..", resolves
// symlinks and requires the result to stay inside the volume; a missing
// subPath of a writable volume is created as a directory with the
// volume root's mode, as the kubelet does.
func MountSource(vol Volume, mount corev1.VolumeMount) (string, error) {
	if mount.SubPath == "" {
		return vol.HostPath, nil
	}
	sp := mount.SubPath
	if filepath.IsAbs(sp) {
		return "", fmt.Errorf("volumeMount %q: subPath %q must be a relative path", mount.Name, sp)
	}
	for _, el := range strings.Split(filepath.ToSlash(sp), "/") {
		if el == ".." {
			return "", fmt.Errorf("volumeMount %q: subPath %q must not contain '..'", mount.Name, sp)
		}
	}
	root, err := filepath.EvalSymlinks(vol.HostPath)
	if err != nil {
		return "", fmt.Errorf("volumeMount %q: resolve volume path: %w", mount.Name, err)
	}
	full := filepath.Join(vol.HostPath, sp)
	if _, err := os.Lstat(full); errors.Is(err, fs.ErrNotExist) && !vol.ReadOnly {
		if err := makeSubPathDir(root, sp); err != nil {
			return "", fmt.Errorf("volumeMount %q: %w", mount.Name, err)
		}
	}
	resolved, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", fmt.Errorf("volumeMount %q: subPath %q: %w", mount.Name, sp, err)
	}
	if !within(root, resolved) {
		return "", fmt.Errorf("volumeMount %q: subPath %q: %w", mount.Name, sp, ErrSubPathEscapes)
	}
	return resolved, nil
}

// makeSubPathDir creates root/sp one element at a time, refusing to
// follow a symlink out of root at any step.
func makeSubPathDir(root, sp string) error {
	st, err := os.Stat(root)
	if err != nil {
		return err
	}
	cur := root
	for _, el := range strings.Split(filepath.Clean(sp), "/") {
		next := filepath.Join(cur, el)
		switch err := os.Mkdir(next, st.Mode().Perm()); {
		case err == nil: // the umask must not narrow the mode
			if err := os.Chmod(next, st.Mode().Perm()); err != nil {
				return fmt.Errorf("create subPath %q: %w", sp, err)
			}
		case !errors.Is(err, fs.ErrExist):
			return fmt.Errorf("create subPath %q: %w", sp, err)
		}
		resolved, err := filepath.EvalSymlinks(next)
		if err != nil {
			return fmt.Errorf("create subPath %q: %w", sp, err)
		}
		if !within(root, resolved) {
			return fmt.Errorf("subPath %q: %w", sp, ErrSubPathEscapes)
		}
		cur = resolved
	}
	return nil
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}
