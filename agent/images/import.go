package images

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	containerd "github.com/containerd/containerd/v2/client"
	cimages "github.com/containerd/containerd/v2/core/images"
	"go.uber.org/zap"
)

// importRecord remembers one imported tarball.
type importRecord struct {
	Size    int64    `json:"size"`
	ModTime int64    `json:"modTime"` // UnixNano
	Digest  string   `json:"digest"`  // sha256 of the file
	Images  []string `json:"images"`
}

// importState maps file names (within the import dir) to records.
type importState map[string]importRecord

func isImageTarball(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false // temp files of writers that rename into place
	}
	for _, ext := range []string{".tar", ".tar.gz", ".tgz", ".tar.zst"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

func (s *Service) loadState() importState {
	st := importState{}
	if s.opts.StateFile == "" {
		return st
	}
	b, err := os.ReadFile(s.opts.StateFile)
	if err == nil {
		if err := json.Unmarshal(b, &st); err != nil {
			s.log.Warn("ignoring unreadable image import state", zap.Error(err))
			st = importState{}
		}
	}
	return st
}

func (s *Service) saveState(st importState) error {
	if s.opts.StateFile == "" {
		return nil
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.opts.StateFile), 0o700); err != nil {
		return err
	}
	tmp := s.opts.StateFile + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write image import state: %w", err)
	}
	return os.Rename(tmp, s.opts.StateFile)
}

// ImportDir imports every tarball in dir not imported before (same name,
// size and mtime, or same content digest) and returns the images it
// imported. A missing dir is empty. Errors of single files are logged and
// joined; the other files are still imported.
func (s *Service) ImportDir(ctx context.Context, dir string) ([]string, error) {
	s.importMu.Lock()
	defer s.importMu.Unlock()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read image dir: %w", err)
	}
	st := s.loadState()
	var imported []string
	var errs []error
	for _, e := range ents {
		if !e.Type().IsRegular() || !isImageTarball(e.Name()) {
			continue
		}
		names, err := s.importIfNew(ctx, dir, e.Name(), st)
		if err != nil {
			s.log.Error("image import failed", zap.String("file", e.Name()), zap.Error(err))
			errs = append(errs, err)
		}
		imported = append(imported, names...)
	}
	if err := s.saveState(st); err != nil {
		errs = append(errs, err)
	}
	sort.Strings(imported)
	return imported, errors.Join(errs...)
}

func (s *Service) importIfNew(ctx context.Context, dir, name string, st importState) ([]string, error) {
	path := filepath.Join(dir, name)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	rec, ok := st[name]
	if ok && rec.Size == fi.Size() && rec.ModTime == fi.ModTime().UnixNano() {
		return nil, nil
	}
	digest, err := fileDigest(path)
	if err != nil {
		return nil, err
	}
	for _, r := range st {
		if r.Digest == digest {
			st[name] = importRecord{Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Digest: digest, Images: r.Images}
			return nil, nil
		}
	}
	names, err := s.ImportFile(ctx, path)
	if err != nil {
		return nil, err
	}
	st[name] = importRecord{Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Digest: digest, Images: names}
	return names, nil
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// ImportFile imports one OCI-layout or docker-archive tarball (optionally
// gzip- or zstd-compressed), unpacks its images and returns their names.
func (s *Service) ImportFile(ctx context.Context, path string) ([]string, error) {
	ctx = s.nsCtx(ctx)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, closeR, err := decompress(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	defer closeR()
	imgs, err := s.client.Import(ctx, r)
	if errors.Is(err, cimages.ErrEmptyWalk) && isEmptyLayout(path) {
		s.log.Info("image tarball holds no image", zap.String("file", filepath.Base(path)))
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	var names []string
	for _, i := range imgs {
		img := containerd.NewImage(s.client, i)
		if err := s.unpack(ctx, img); err != nil {
			return names, fmt.Errorf("import %s: %w", path, err)
		}
		names = append(names, i.Name)
	}
	s.log.Info("imported images", zap.String("file", filepath.Base(path)), zap.Strings("images", names))
	return names, nil
}
