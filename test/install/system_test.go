package install

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

const (
	releaseVersion = "v0.0.0-installtest"
	serverIP       = "10.77.0.2"
	agentIP        = "10.77.0.3"
	busyboxRef     = "docker.io/library/busybox:1.36"
	// thresholds: the test host's disk may be fuller than kubelet's
	// defaults allow (config.yaml.d is merged over config.yaml).
	testConfig = "eviction-hard: \"nodefs.available<1%,imagefs.available<1%\"\n"
)

// TestSystem installs real releases on booted Debian boxes: a server, an
// agent joining it, a wrong checksum and an air-gapped server, then
// uninstalls them and compares each box with itself before the install.
func TestSystem(t *testing.T) {
	if os.Getenv("ORCH_TEST_INSTALL") != "1" {
		t.Skip("boots systemd-nspawn containers: run `make test-install` (as root)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("make test-install needs root")
	}
	base := baseRootfs(t)
	rel := buildRelease(t)
	bad := tamperedRelease(t, rel)
	image := filepath.Join(t.TempDir(), "busybox.tar")
	must(t, images.WriteBusyboxImage(image, "/bin/busybox", busyboxRef))
	bridge(t)

	srv := boot(t, base, "orchti-server", serverIP)
	agt := boot(t, base, "orchti-agent", agentIP)
	srv.serve(t, rel, 8080)
	agt.serve(t, rel, 8080)
	agt.serve(t, bad, 8081)
	srvBefore, agtBefore := takeSnapshot(t, srv), takeSnapshot(t, agt)
	t.Run("WrongChecksumInstallsNothing", func(t *testing.T) { wrongChecksum(t, agt, agtBefore) })
	for _, m := range []*machine{srv, agt} {
		prepare(t, m, image)
	}
	t.Run("Server", func(t *testing.T) { installServer(t, srv) })
	t.Run("RerunChangesNothing", func(t *testing.T) { rerun(t, srv) })
	t.Run("Agent", func(t *testing.T) { installAgent(t, srv, agt) })
	t.Run("PodsOnBothNodes", func(t *testing.T) { podsOnBothNodes(t, srv) })
	t.Run("AirGap", func(t *testing.T) { airGap(t, base, rel, image) })
	t.Run("OpenRC", func(t *testing.T) { openRC(t, rel, image) })
	t.Run("UninstallLeavesNothing", func(t *testing.T) {
		uninstall(t, agt, agtBefore, distroPackages(t, agt))
		uninstall(t, srv, srvBefore, distroPackages(t, srv))
	})
}

// baseRootfs returns the cached Debian root file system, made by
// scripts/test-install-rootfs.sh when missing.
func baseRootfs(t *testing.T, flavour ...string) string {
	t.Helper()
	repo, err := testutil.RepoRoot()
	must(t, err)
	out, err := exec.Command(filepath.Join(repo, "scripts", "test-install-rootfs.sh"), flavour...).Output()
	if err != nil {
		t.Fatalf("scripts/test-install-rootfs.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// buildRelease runs scripts/release.sh (amd64 only) into a temp dir.
func buildRelease(t *testing.T) string {
	t.Helper()
	repo, err := testutil.RepoRoot()
	must(t, err)
	dist := t.TempDir()
	cmd := exec.Command(filepath.Join(repo, "scripts", "release.sh"))
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "DIST="+dist, "RELEASE_ARCHS=amd64", "VERSION="+releaseVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	return dist
}

// tamperedRelease is rel with the binary's checksum changed.
func tamperedRelease(t *testing.T, rel string) string {
	t.Helper()
	bad := t.TempDir()
	run(t, "cp", "-a", rel+"/.", bad)
	sums := filepath.Join(bad, releaseVersion, "sha256sum-amd64.txt")
	b, err := os.ReadFile(sums)
	must(t, err)
	flipped := "f" + string(b[1:])
	if b[0] == 'f' {
		flipped = "e" + string(b[1:])
	}
	must(t, os.WriteFile(sums, []byte(flipped), 0o644))
	return bad
}

func bridge(t *testing.T) {
	t.Helper()
	_ = exec.Command("ip", "link", "delete", testBridge).Run()
	run(t, "ip", "link", "add", testBridge, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", testBridge).Run() })
	run(t, "ip", "link", "set", testBridge, "up")
}

// prepare puts the test's settings and the busybox image where a user
// would: a config.yaml.d file and <data-dir>/agent/images (no registry).
func prepare(t *testing.T, m *machine, image string) {
	t.Helper()
	for path, mode := range map[string]os.FileMode{"etc/orch/config.yaml.d": 0o755, "var/lib/orch/agent/images": 0o700} {
		must(t, os.MkdirAll(filepath.Join(m.dir, path), mode))
	}
	must(t, os.WriteFile(filepath.Join(m.dir, "etc/orch/config.yaml.d/10-test.yaml"), []byte(testConfig), 0o600))
	run(t, "cp", image, filepath.Join(m.dir, "var/lib/orch/agent/images/busybox.tar"))
}

// curlInstall is the one line a user runs.
func curlInstall(port int, env string) string {
	return fmt.Sprintf("curl -sfL http://127.0.0.1:%d/install.sh | ORCH_RELEASE_URL=http://127.0.0.1:%d %s sh -", port, port, env)
}

func wrongChecksum(t *testing.T, m *machine, before snapshot) {
	out, err := m.shErr(curlInstall(8081, ""))
	if err == nil {
		t.Fatalf("install with a wrong checksum succeeded:\n%s", out)
	}
	if !strings.Contains(out, "checksum mismatch for orch") || !strings.Contains(out, "nothing was installed") {
		t.Errorf("the error does not say what is wrong:\n%s", out)
	}
	after := takeSnapshot(t, m)
	if d := before.added(after, nil); len(d) > 0 {
		t.Errorf("a failed install added %v", d)
	}
	if d := after.added(before, nil); len(d) > 0 {
		t.Errorf("a failed install removed %v", d)
	}
}

func installServer(t *testing.T, m *machine) {
	out := m.sh(t, curlInstall(8080, ""))
	t.Logf("install:\n%s", out)
	if got := m.sh(t, "systemctl show -p Type -p ActiveState -p StatusText orch.service"); !strings.Contains(got, "Type=notify") ||
		!strings.Contains(got, "ActiveState=active") || !strings.Contains(got, "StatusText=orch server is ready") {
		t.Fatalf("orch.service after the install:\n%s", got)
	}
	// Type=notify: systemctl start returned once the API served.
	m.sh(t, "kubectl get --raw /readyz")
	for path, want := range map[string]string{"/etc/orch/orch.yaml": "600", "/etc/systemd/system/orch.service.env": "600"} {
		if got := strings.TrimSpace(m.sh(t, "stat -c %a "+path)); got != want {
			t.Errorf("%s has mode %s, want %s", path, got, want)
		}
	}
	waitReady(t, m, "orchti-server")
}

func waitReady(t *testing.T, srv *machine, node string) {
	t.Helper()
	// The node object appears a moment after the API: retry until kubectl
	// can wait on it.
	script := "for i in $(seq 60); do kubectl get node " + node + " >/dev/null 2>&1 && break; sleep 2; done; " +
		"kubectl wait --for=condition=Ready node/" + node + " --timeout=120s"
	t.Log(strings.TrimSpace(srv.sh(t, script)))
}

func rerun(t *testing.T, m *machine) {
	show := "systemctl show -p MainPID -p InvocationID orch.service"
	before := m.sh(t, show)
	out := m.sh(t, curlInstall(8080, ""))
	if !strings.Contains(out, "nothing changed: not restarting") || strings.Contains(out, "wrote ") {
		t.Errorf("a re-run did more than nothing:\n%s", out)
	}
	if after := m.sh(t, show); after != before {
		t.Errorf("the service restarted: %q -> %q", before, after)
	}
}

func installAgent(t *testing.T, srv, agt *machine) {
	token := strings.TrimSpace(srv.sh(t, "orch token create --ttl 1h --description installtest"))
	if !strings.HasPrefix(token, "K10") {
		t.Fatalf("orch token create printed %q", token)
	}
	out := agt.sh(t, curlInstall(8080, fmt.Sprintf("ORCH_URL=https://%s:6443 ORCH_TOKEN=%s", serverIP, token)))
	t.Logf("install:\n%s", out)
	if !strings.Contains(out, "installing containerd runc from the distribution") {
		t.Errorf("the agent box had no containerd, yet the installer did not install it:\n%s", out)
	}
	if strings.Contains(out, token[len(token)-8:]) {
		t.Error("the installer printed the token")
	}
	if got := agt.sh(t, "systemctl show -p Type -p ActiveState -p StatusText orch-agent.service"); !strings.Contains(got, "ActiveState=active") ||
		!strings.Contains(got, "StatusText=orch agent is ready") {
		t.Fatalf("orch-agent.service:\n%s", got)
	}
	if got := strings.TrimSpace(agt.sh(t, "systemctl is-enabled containerd.service || true")); got != "disabled" {
		t.Errorf("the distribution's containerd service is %q, want disabled (orch runs its own)", got)
	}
	waitReady(t, srv, "orchti-agent")
}

// podsOnBothNodes runs a web server pod on the agent and fetches from it
// in a pod on the server: real containers and cross-node pod networking.
func podsOnBothNodes(t *testing.T, srv *machine) {
	manifest := `apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  nodeName: orchti-agent
  containers:
  - {name: web, image: ` + busyboxRef + `, imagePullPolicy: Never, command: [sh, -c, "echo hello-from-agent > /tmp/index.html && httpd -f -p 8080 -h /tmp"]}
`
	srv.sh(t, "cat <<'EOF' | kubectl apply -f -\n"+manifest+"EOF")
	srv.sh(t, "kubectl wait --for=condition=Ready pod/web --timeout=120s")
	ip := strings.TrimSpace(srv.sh(t, "kubectl get pod web -o jsonpath={.status.podIP}"))
	client := `apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeName: orchti-server
  restartPolicy: Never
  containers:
  - {name: c, image: ` + busyboxRef + `, imagePullPolicy: Never, command: [sh, -c, "for i in 1 2 3 4 5 6 7 8 9 10; do timeout 5 wget -qO- http://` + ip + `:8080/index.html && exit 0; sleep 2; done; exit 1"]}
`
	srv.sh(t, "cat <<'EOF' | kubectl apply -f -\n"+client+"EOF")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		phase := strings.TrimSpace(srv.sh(t, "kubectl get pod client -o jsonpath={.status.phase}"))
		if phase == "Succeeded" {
			break
		}
		if phase == "Failed" || time.Now().After(deadline) {
			t.Fatalf("client pod %s:\n%s", phase, srv.sh(t, "kubectl describe pod client; kubectl logs client || true"))
		}
		time.Sleep(time.Second)
	}
	if got := srv.sh(t, "kubectl logs client"); !strings.Contains(got, "hello-from-agent") {
		t.Errorf("client pod got %q", got)
	}
}

// airGap installs on a box with no network at all: the binary is put in
// place by hand, containerd comes from apt's cache, images from the
// bundle directory.
func airGap(t *testing.T, base, rel, image string) {
	m := boot(t, base, "orchti-airgap", "")
	before := takeSnapshot(t, m)
	if links := strings.Fields(m.sh(t, "ip -o link show | awk -F': ' '{ print $2 }'")); strings.Join(links, " ") != "lo eth0p@eth0 eth0@eth0p" {
		t.Fatalf("the air-gapped box has links %v, want only lo and its own veth pair", links)
	}
	prepare(t, m, image)
	must(t, os.MkdirAll(filepath.Join(m.dir, "usr/local/bin"), 0o755))
	run(t, "install", "-m", "0755", filepath.Join(rel, releaseVersion, "orch"), filepath.Join(m.dir, "usr/local/bin/orch"))
	run(t, "cp", filepath.Join(rel, releaseVersion, "orch-airgap-images-amd64.tar.zst"), filepath.Join(m.dir, "var/lib/orch/agent/images/"))
	run(t, "cp", filepath.Join(rel, "install.sh"), filepath.Join(m.dir, "root/install.sh"))
	out := m.sh(t, "INSTALL_ORCH_SKIP_DOWNLOAD=true sh /root/install.sh && rm /root/install.sh")
	t.Logf("install:\n%s", out)
	waitReady(t, m, "orchti-airgap")
	m.sh(t, "kubectl run airgap --image="+busyboxRef+" --image-pull-policy=Never --restart=Never -- echo air-gapped-pod-ran")
	m.sh(t, "kubectl wait --for=jsonpath={.status.phase}=Succeeded pod/airgap --timeout=120s")
	if got := m.sh(t, "kubectl logs airgap"); !strings.Contains(got, "air-gapped-pod-ran") {
		t.Errorf("pod log %q", got)
	}
	uninstall(t, m, before, distroPackages(t, m))
}

// distroPackages returns the files of the packages the installer added
// (containerd, runc): they stay after an uninstall, as with k3s.
func distroPackages(t *testing.T, m *machine) func(kind, item string) bool {
	t.Helper()
	files := map[string]bool{}
	for _, l := range strings.Split(m.sh(t, "dpkg -L containerd runc"), "\n") {
		files[l] = true
		for _, merged := range []string{"/lib/", "/bin/", "/sbin/"} { // Debian 12 is usr-merged
			if strings.HasPrefix(l, merged) {
				files["/usr"+l] = true
			}
		}
	}
	return func(kind, item string) bool { return kind == "file" && files[item] }
}

func uninstall(t *testing.T, m *machine, before snapshot, allowed func(kind, item string) bool) {
	t.Helper()
	out := m.sh(t, "orch-uninstall.sh")
	if !strings.Contains(out, "orch uninstalled") {
		t.Errorf("%s: orch-uninstall.sh said:\n%s", m.name, out)
	}
	after := takeSnapshot(t, m)
	if left := before.added(after, allowed); len(left) > 0 {
		t.Errorf("%s: orch-uninstall.sh left %d things behind:\n%s", m.name, len(left), strings.Join(left, "\n"))
	}
}

// openRC installs a server on a box whose init is OpenRC (Debian's
// sysvinit-core + openrc, booted with openrc-init: Alpine's init system;
// Alpine itself cannot be downloaded here): the script picks OpenRC,
// writes /etc/init.d/orch for supervise-daemon and starts it; a re-run
// restarts nothing and orch-uninstall.sh leaves nothing.
func openRC(t *testing.T, rel, image string) {
	m := bootOpenRC(t, baseRootfs(t, "openrc"), "orchti-openrc")
	m.serve(t, rel, 8080)
	before := takeSnapshot(t, m)
	prepare(t, m, image)
	out := m.sh(t, curlInstall(8080, ""))
	t.Logf("install:\n%s", out)
	if _, err := os.Stat(filepath.Join(m.dir, "etc/init.d/orch")); err != nil {
		t.Fatalf("no OpenRC script: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(m.sh(t, "stat -c %a /etc/orch/orch.env")); got != "600" {
		t.Errorf("/etc/orch/orch.env has mode %s", got)
	}
	if got := m.sh(t, "rc-update show default"); !strings.Contains(got, "orch") {
		t.Errorf("orch is not in the default runlevel:\n%s", got)
	}
	waitReady(t, m, "orchti-openrc")
	m.sh(t, "kubectl run rc --image="+busyboxRef+" --image-pull-policy=Never --restart=Never -- echo openrc-pod-ran")
	m.sh(t, "kubectl wait --for=jsonpath={.status.phase}=Succeeded pod/rc --timeout=120s")
	pid := "cat /run/orch.pid"
	pidBefore := m.sh(t, pid)
	out = m.sh(t, curlInstall(8080, ""))
	if !strings.Contains(out, "nothing changed: not restarting") || strings.Contains(out, "wrote ") {
		t.Errorf("a re-run did more than nothing:\n%s", out)
	}
	if pidAfter := m.sh(t, pid); pidAfter != pidBefore {
		t.Errorf("the service restarted: pid %s -> %s", pidBefore, pidAfter)
	}
	uninstall(t, m, before, distroPackages(t, m))
}
