// Package controllers holds orch's in-process control loops. Each lives in
// its own sub-package, talks to the API through client-go (in-process via
// the API server's loopback transport, so writes pass the same validation
// as any client), enqueues keys from informer events into a rate-limited
// workqueue and reconciles level-based, never mutating cached objects. Only
// the Raft leader runs them: Run(ctx) returns when ctx (the leadership) ends.
//
//	nodeipam   assigns each Node a pod CIDR from the cluster CIDR
//	schedloop  binds pending pods to Nodes with server/scheduler
//	replicaset keeps ReplicaSets' pods (create, delete, adopt, status)
//	replication the same for ReplicationControllers, converted in memory to ReplicaSets
//	deployment rolls Deployments out through their ReplicaSets
//	pvbinder   binds PersistentVolumeClaims and PersistentVolumes, reclaims released volumes
//	localpath  the local-path StorageClass and provisioner (hostPath PVs on the pod's node)
//	job        runs Jobs' pods to completion (Indexed too), back-off, deadline, suspend,
//	           pod failure policy, success policy, per-index back-off, adoption
//	cronjob    creates Jobs on a cron schedule, concurrency policy, history limits
//	ttlafterfinished deletes finished Jobs after spec.ttlSecondsAfterFinished
//	garbagecollector deletes dependents by ownerReferences (Background, Foreground, Orphan)
//	nodelifecycle marks silent nodes Unknown, taints nodes by condition, evicts by taints, GCs orphaned pods
//	disruption keeps PodDisruptionBudget status, which the eviction subresource honours
//	daemonset  one pod per eligible node, rolling updates, ControllerRevisions (shared package history)
//	statefulset ordered pods with stable names and per-pod claims, partitioned rolling updates
//	resourcequota recounts ResourceQuota usage (the API server charges creates)
//	endpoints  Endpoints and EndpointSlices of Services (and mirrors selector-less ones)
//	podautoscaler HorizontalPodAutoscalers: resource metrics from metrics.k8s.io, behavior, the scale subresource
//	servicelb  status.loadBalancer of LoadBalancer Services: the Ready nodes' addresses (k3s ServiceLB)
package controllers
