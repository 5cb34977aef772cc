// Package sdnotify tells systemd about a service's state (sd_notify(3)):
// a unit of Type=notify is "started" only when its main process sends
// READY=1 to the datagram socket named by $NOTIFY_SOCKET, so
// `systemctl start orch` returns once the API answers. FromEnv takes the
// socket out of the environment, so processes orch starts (its managed
// containerd, which would otherwise send its own READY=1) never see it.
package sdnotify
