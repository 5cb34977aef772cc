// Package cli defines orch's command line with urfave/cli/v2: the commands,
// their k3s-compatible flags, ORCH_<NAME> environment variables and the YAML
// config file whose keys are flag names. It only turns input into typed
// configs and calls each component's Run; no component reads flags itself.
package cli
