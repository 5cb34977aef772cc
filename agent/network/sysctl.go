package network

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"go.uber.org/zap"
)

// Sysctl paths orch sets on the host.
const (
	SysctlIPForward      = "/proc/sys/net/ipv4/ip_forward"
	SysctlBridgeNFCallIP = "/proc/sys/net/bridge/bridge-nf-call-iptables"
)

// EnsureHostSysctls turns on IPv4 forwarding and makes bridged traffic pass
// through iptables (br_netfilter). br_netfilter is loaded with modprobe when
// its sysctl is missing; when it cannot be loaded that is logged and setup
// carries on (pod-to-pod traffic on one bridge works without it).
func EnsureHostSysctls(log *zap.Logger) error {
	if err := setSysctl(log, SysctlIPForward, "1"); err != nil {
		return err
	}
	if _, err := os.Stat(SysctlBridgeNFCallIP); errors.Is(err, os.ErrNotExist) {
		out, err := exec.Command("modprobe", "br_netfilter").CombinedOutput()
		if err != nil {
			log.Warn("br_netfilter not available; bridged pod traffic bypasses iptables",
				zap.Error(err), zap.ByteString("output", bytes.TrimSpace(out)))
			return nil
		}
	}
	if err := setSysctl(log, SysctlBridgeNFCallIP, "1"); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			log.Warn("br_netfilter sysctl missing after modprobe", zap.String("path", SysctlBridgeNFCallIP))
			return nil
		}
		return err
	}
	return nil
}

// setSysctl writes value to path unless it already holds it.
func setSysctl(log *zap.Logger, path, value string) error {
	cur, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read sysctl %s: %w", path, err)
	}
	if string(bytes.TrimSpace(cur)) == value {
		return nil
	}
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("set sysctl %s=%s: %w", path, value, err)
	}
	log.Info("set sysctl", zap.String("name", filepath.Base(path)), zap.String("value", value))
	return nil
}
