// Package kubelet is the agent's pod loop. A pod informer (spec.nodeName =
// this node) and a relist of the runtime's containers (kubelet's generic
// PLEG, every 2 s) enqueue pod keys; workers of a client-go work queue sync
// one pod at a time per key (the queue never hands the same key to two
// workers), level-based, in seed 000's order:
//
//	admit → image → storage → network → compute → start → probe → report
//
// Admission rejects a pod (phase Failed, reasons OutOfcpu, OutOfmemory,
// OutOfpods, NodePorts) whose requests do not fit the node's allocatable
// beside the pods already admitted. Images are ensured with the container's
// pull policy (ErrImagePull, then ImagePullBackOff with back-off). Volumes,
// the pod's network namespace, /etc/hosts + /etc/resolv.conf (under
// <pods-dir>/<uid>/) and the pod cgroup are set up before containers start:
// init containers one by one to completion (native sidecars keep running),
// then the app containers. Exited containers restart per restartPolicy with
// CrashLoopBackOff (10 s doubling to 5 min). As kubelet, pull policy Always
// (and :latest or untagged images without a policy) pulls again before
// every start; runAsNonRoot refuses a start as root (or as an image user it
// cannot verify) with CreateContainerConfigError; a container's
// terminationMessagePath file (or, with FallbackToLogsOnError after a
// failure, its log's last lines) becomes its terminated message. The pod
// status (phase, conditions, container statuses, IPs, QoS class) is written
// only when it changed; conditions the kubelet does not own (DisruptionTarget,
// readiness gates) are kept; status.observedGeneration and the kubelet
// conditions' observedGeneration follow metadata.generation.
//
// A pod update that changes a container's image restarts that container
// with the new image. Ephemeral containers (kubectl debug) run once after
// the app containers, in the target container's PID namespace when one is
// named. In-place resize (resize.go): new resources are accepted when the
// pod still fits (else PodResizePending Deferred or Infeasible), the pod
// cgroup and new containers use the accepted ones, running containers get
// them through runtime.UpdateContainerResources (restarted instead when
// their resizePolicy says RestartContainer), and container statuses report
// allocatedResources and resources.
//
// A pod with a deletionTimestamp is stopped (preStop, SIGTERM, grace,
// SIGKILL) and reported Succeeded or Failed, its containers, network,
// cgroup and volumes are removed, and only then the pod object is deleted
// with grace 0 and a UID precondition.
// After an agent restart running containers are adopted from the runtime's
// labels; resources of pods no longer bound here are garbage-collected.
//
// Collaborators come through small interfaces (Images, Volumes, Probes,
// Cgroups; runtime.Interface and network.Interface), so the state machine is
// tested with in-memory fakes.
package kubelet
