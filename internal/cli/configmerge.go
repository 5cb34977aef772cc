package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// configSource is one config file's name and content.
type configSource struct {
	path string
	data []byte
}

// configValue is one key's merged value and the file that set it last.
type configValue struct {
	value interface{}
	file  string
}

// readConfigSources returns the config file (unless it is missing and
// optional) followed by <path>.d/*.yaml in lexical order, as k3s reads
// config.yaml and config.yaml.d.
func readConfigSources(path string, optional bool) ([]configSource, error) {
	var out []configSource
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		out = append(out, configSource{path, data})
	case !(optional && errors.Is(err, fs.ErrNotExist)):
		return nil, fmt.Errorf("reading config file: %w", err)
	}
	dropIns, err := filepath.Glob(filepath.Join(path+".d", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("config drop-in dir %s.d: %w", path, err)
	}
	sort.Strings(dropIns)
	for _, p := range dropIns {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading config file: %w", err)
		}
		out = append(out, configSource{p, data})
	}
	return out, nil
}

// mergeConfig merges config files in order with k3s's rule: a later file's
// key replaces an earlier value (lists too), and a key ending in "+"
// appends its list (or single value) to the list set so far.
func mergeConfig(sources []configSource) (map[string]configValue, error) {
	merged := map[string]configValue{}
	for _, src := range sources {
		values := map[string]interface{}{}
		if err := yaml.Unmarshal(src.data, &values); err != nil {
			return nil, fmt.Errorf("config file %s: %w", src.path, err)
		}
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, k)
		}
		// Plain keys before appending ones ("a" sorts before "a+"), so a
		// file may both set and extend a list.
		sort.Strings(keys)
		for _, key := range keys {
			base, appending := strings.CutSuffix(key, "+")
			if !appending {
				merged[key] = configValue{values[key], src.path}
				continue
			}
			v, err := appendValue(merged[base].value, values[key])
			if err != nil {
				return nil, fmt.Errorf("config file %s: key %q: %w", src.path, key, err)
			}
			merged[base] = configValue{v, src.path}
		}
	}
	return merged, nil
}

// appendValue appends add (a list or one value) to prev (nothing or a list).
func appendValue(prev, add interface{}) (interface{}, error) {
	var out []interface{}
	switch p := prev.(type) {
	case nil:
	case []interface{}:
		out = append(out, p...)
	default:
		return nil, fmt.Errorf("cannot append to %v, which is not a list", prev)
	}
	switch a := add.(type) {
	case []interface{}:
		out = append(out, a...)
	case map[string]interface{}:
		return nil, fmt.Errorf("a map cannot be appended")
	case nil:
	default:
		out = append(out, a)
	}
	return out, nil
}
