package kubelet

import (
	"context"
	"os"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"
)

// adopt marks pods that already have containers (an agent restart) as
// admitted, so they are not admitted again, and remembers the containers'
// states so the relist does not see them as new.
func (k *Kubelet) adopt(ctx context.Context) {
	list, err := k.cfg.Runtime.ListContainers(ctx, "")
	if err != nil {
		k.log.Warn("listing containers to adopt failed", zap.Error(err))
		return
	}
	pods, _ := k.lister.List(everything)
	byUID := map[types.UID]bool{}
	for _, c := range list {
		byUID[types.UID(c.PodUID)] = true
		k.relist[c.ID] = c.State
	}
	for _, p := range pods {
		if byUID[p.UID] && !terminal(p) {
			k.state(p).admitted = true
			k.log.Info("adopting running pod", zap.String("pod", p.Namespace+"/"+p.Name))
		}
	}
}

// collectOrphans removes containers, networks, cgroups and pod dirs of pods
// no longer bound to this node. Resources are listed before the pods, so a
// pod that appears meanwhile is never taken for an orphan.
func (k *Kubelet) collectOrphans(ctx context.Context) {
	found := map[types.UID]bool{}
	if list, err := k.cfg.Runtime.ListContainers(ctx, ""); err == nil {
		for _, c := range list {
			found[types.UID(c.PodUID)] = true
		}
	}
	if ids, err := k.cfg.Network.PodIDs(); err == nil {
		for _, id := range ids {
			found[types.UID(id)] = true
		}
	}
	if uids, err := k.cfg.Cgroups.PodCgroups(); err == nil {
		for _, u := range uids {
			found[u] = true
		}
	}
	if entries, err := os.ReadDir(k.cfg.PodsDir); err == nil {
		for _, e := range entries {
			found[types.UID(e.Name())] = true
		}
	}
	pods, err := k.lister.List(everything)
	if err != nil {
		return
	}
	for _, p := range pods {
		delete(found, p.UID)
	}
	for uid := range found {
		k.log.Info("removing orphaned pod resources", zap.String("uid", string(uid)))
		if err := k.cleanupPod(ctx, uid); err != nil {
			k.log.Warn("orphan cleanup failed", zap.String("uid", string(uid)), zap.Error(err))
		}
	}
}
