package images

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// settle is how long Watch waits after the last change before importing, so
// a file being copied in is imported once, complete.
const settle = time.Second

// Watch imports dir's tarballs now and again whenever a file there is
// closed after writing or moved in (inotify), until ctx ends. dir is
// created if missing.
func (s *Service) Watch(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create image dir: %w", err)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	f := os.NewFile(uintptr(fd), "inotify") // nonblocking: Read honors Close
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO); err != nil {
		f.Close()
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	changed := make(chan struct{}, 1)
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	go readEvents(f, changed)
	s.importLogged(ctx, dir)
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-changed:
			if !ok {
				return nil
			}
			timer = time.After(settle)
		case <-timer:
			timer = nil
			s.importLogged(ctx, dir)
		}
	}
}

// readEvents signals changed for every batch of inotify events; the names
// do not matter since ImportDir rescans. It closes changed when f closes.
func readEvents(f *os.File, changed chan<- struct{}) {
	defer close(changed)
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		if err != nil { // os.ErrClosed when Watch ends
			return
		}
		if n > 0 {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}
}

func (s *Service) importLogged(ctx context.Context, dir string) {
	if _, err := s.ImportDir(ctx, dir); err != nil && ctx.Err() == nil {
		s.log.Warn("importing images from dir", zap.String("dir", dir), zap.Error(err))
	}
}
