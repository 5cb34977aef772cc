package cli

import (
	"fmt"
	"sort"

	ucli "github.com/urfave/cli/v2"
)

// applyConfigFile reads the YAML config file named by --config and the
// drop-ins in <config>.d/*.yaml (merged by mergeConfig), and sets every
// flag that was not given on the command line or in the environment. Keys
// are flag names; list flags take YAML lists. A missing file is fine when
// the path is the default; a missing explicit file, an unknown key or a
// value of the wrong type is an error naming the file and key.
func applyConfigFile(c *ucli.Context, defaultPath string) error {
	return applyConfig(c, defaultPath, true)
}

// applyConfigSubset is applyConfigFile for a command that reads another
// command's file (orch host-names reads data-dir of orch server's): keys
// that are not its flags are skipped.
func applyConfigSubset(c *ucli.Context, defaultPath string) error {
	return applyConfig(c, defaultPath, false)
}

func applyConfig(c *ucli.Context, defaultPath string, strict bool) error {
	path := c.String("config")
	sources, err := readConfigSources(path, !c.IsSet("config") && path == defaultPath)
	if err != nil {
		return err
	}
	values, err := mergeConfig(sources)
	if err != nil {
		return err
	}
	known := map[string]ucli.Flag{} // every flag of the command, set or not (c.FlagNames lists only set ones)
	for _, f := range c.Command.Flags {
		known[f.Names()[0]] = f
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		v := values[key]
		flag, ok := known[key]
		if !strict && (!ok || key == "config") {
			continue
		}
		if !ok || key == "config" {
			return fmt.Errorf("config file %s: unknown key %q (keys are flag names of `orch %s`)", v.file, key, c.Command.Name)
		}
		if c.IsSet(key) {
			continue // command line and environment win over the file
		}
		if err := setFromFile(c, flag, key, v.value); err != nil {
			return fmt.Errorf("config file %s: key %q: %w", v.file, key, err)
		}
	}
	return nil
}

func setFromFile(c *ucli.Context, flag ucli.Flag, key string, v interface{}) error {
	switch val := v.(type) {
	case []interface{}:
		if _, isList := flag.(*ucli.StringSliceFlag); !isList {
			return fmt.Errorf("a list is not a value of this flag")
		}
		for _, item := range val {
			if err := c.Set(key, fmt.Sprint(item)); err != nil {
				return err
			}
		}
		return nil
	case map[string]interface{}:
		return fmt.Errorf("a map is not a flag value")
	case nil:
		return nil
	case float64:
		if val == float64(int64(val)) {
			return c.Set(key, fmt.Sprintf("%d", int64(val)))
		}
		return c.Set(key, fmt.Sprint(val))
	default:
		return c.Set(key, fmt.Sprint(val))
	}
}
