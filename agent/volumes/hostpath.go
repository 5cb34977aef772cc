package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	corev1 "k8s.io/api/core/v1"
)

// setupHostPath checks the host path against its type as the kubelet does
// (same error messages) and returns it as the volume.
func setupHostPath(hp *corev1.HostPathVolumeSource) (Volume, error) {
	t := corev1.HostPathUnset
	if hp.Type != nil {
		t = *hp.Type
	}
	if err := checkHostPathType(hp.Path, t); err != nil {
		return Volume{}, err
	}
	return Volume{HostPath: hp.Path}, nil
}

func checkHostPathType(path string, t corev1.HostPathType) error {
	switch t {
	case corev1.HostPathUnset:
		return nil
	case corev1.HostPathDirectoryOrCreate:
		if !exists(path) {
			return makeDir(path)
		}
		return typeMatchedOrError(path, "Directory", "directory")
	case corev1.HostPathDirectory:
		return typeMatchedOrError(path, "Directory", "directory")
	case corev1.HostPathFileOrCreate:
		if !exists(path) {
			return makeFile(path)
		}
		return typeMatchedOrError(path, "File", "file")
	case corev1.HostPathFile:
		return typeMatchedOrError(path, "File", "file")
	case corev1.HostPathSocket:
		return typeMatchedOrError(path, "Socket", "socket file")
	case corev1.HostPathCharDev:
		return typeMatchedOrError(path, "CharDevice", "character device")
	case corev1.HostPathBlockDev:
		return typeMatchedOrError(path, "BlockDevice", "block device")
	}
	return fmt.Errorf("%s is an invalid volume type", t)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func typeMatchedOrError(path, want, expected string) error {
	got, err := fileType(path)
	if err != nil {
		return fmt.Errorf("hostPath type check failed, %s is not a %s, unable to determine its type: %w", path, expected, err)
	}
	if got != want {
		return fmt.Errorf("hostPath type check failed: %s is not a %s, it's a %s", path, expected, got)
	}
	return nil
}

// errUnknownFileType is the kubelet's message for a path of another kind.
var errUnknownFileType = errors.New("only recognise file, directory, socket, block device and character device")

// fileType returns the kubelet's FileType name of path (following links).
func fileType(path string) (string, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("path %q does not exist", path)
	}
	if err != nil {
		return "", err
	}
	mode := info.Mode()
	switch {
	case mode.IsDir():
		return "Directory", nil
	case mode.IsRegular():
		return "File", nil
	case mode&os.ModeSocket != 0:
		return "Socket", nil
	case mode&os.ModeCharDevice != 0:
		return "CharDevice", nil
	case mode&os.ModeDevice != 0:
		return "BlockDevice", nil
	}
	return "", errUnknownFileType
}

func makeDir(path string) error {
	if err := os.MkdirAll(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

func makeFile(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE, 0o644)
	if f != nil {
		_ = f.Close()
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}
