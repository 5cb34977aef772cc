//go:build !linux

package memtune

import "errors"

func releaseBinary() (int64, error) { return 0, errors.New("only on Linux") }

// ReleaseProcess is a no-op outside Linux.
func ReleaseProcess(int) (int64, error) { return 0, errors.New("only on Linux") }
