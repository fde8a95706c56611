// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stand-in for NVIDIA's nvidia_peermem, for the rdma.fabric lab, which has no GPU.
 *
 * GPUDirect RDMA readiness checks look for a loaded nvidia_peermem, for its dependency on
 * ib_core and for the peer-memory client it registers (/sys/kernel/mm/memory_peers/nv_mem/ on
 * a MOFED stack). This module has the same name and makes those facts true, and nothing more:
 *
 *  - it registers an ib_client with ib_core (no-op add and remove), so it really depends on
 *    ib_core: modprobe loads ib_core first, and ib_core cannot be removed while this is loaded;
 *  - with peer_register=1 (the default) it makes /sys/kernel/mm/memory_peers/nv_mem/version;
 *    with peer_register=0 it registers nothing there: "loaded but not registered", what users
 *    see when nvidia_peermem loads on a stack without the peer-memory API.
 *
 * No memory is pinned, mapped or registered for anybody.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <linux/kernfs.h>
#include <linux/version.h>
#include <rdma/ib_verbs.h>

#define STANDIN_PEER_VERSION "1.2"

static bool peer_register = true;
module_param(peer_register, bool, 0444);
MODULE_PARM_DESC(peer_register,
		 "1: register the nv_mem peer-memory client in /sys/kernel/mm/memory_peers (default); 0: do not");

static struct kobject *memory_peers_kobj;
static struct kobject *nv_mem_kobj;

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", STANDIN_PEER_VERSION);
}

static struct kobj_attribute version_attr = __ATTR_RO(version);

/* No-op: the client only has to exist for the module to hold ib_core. */
static int standin_add_one(struct ib_device *device)
{
	return 0;
}

static void standin_remove_one(struct ib_device *device, void *client_data)
{
}

static struct ib_client standin_client = {
	.name = "nvidia_peermem",
	.add = standin_add_one,
	.remove = standin_remove_one,
};

/*
 * /sys/kernel/mm. Linux 6.1 exports mm_kobj to GPL modules; 6.6 dropped that export ("mm: no
 * need to export mm_kobj"), so on newer kernels the same kobject is found through its sysfs
 * directory under kernel_kobj (a kobject's directory keeps the kobject as its private data).
 * Either way the caller gets a reference it must drop with kobject_put().
 */
static struct kobject *standin_mm_kobj(void)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	return kobject_get(mm_kobj);
#else
	struct kernfs_node *kn = kernfs_find_and_get(kernel_kobj->sd, "mm");
	struct kobject *kobj = NULL;

	if (kn) {
		if (kernfs_type(kn) == KERNFS_DIR)
			kobj = kobject_get(kn->priv);
		kernfs_put(kn);
	}
	return kobj;
#endif
}

static void standin_unregister_peer(void)
{
	if (nv_mem_kobj) {
		sysfs_remove_file(nv_mem_kobj, &version_attr.attr);
		kobject_put(nv_mem_kobj);
		nv_mem_kobj = NULL;
	}
	kobject_put(memory_peers_kobj);
	memory_peers_kobj = NULL;
}

static int standin_register_peer(void)
{
	struct kobject *mm = standin_mm_kobj();
	int ret;

	if (!mm)
		return -ENOENT;
	memory_peers_kobj = kobject_create_and_add("memory_peers", mm);
	kobject_put(mm); /* memory_peers holds its parent now */
	if (!memory_peers_kobj)
		return -ENOMEM;
	nv_mem_kobj = kobject_create_and_add("nv_mem", memory_peers_kobj);
	if (!nv_mem_kobj) {
		ret = -ENOMEM;
		goto out;
	}
	ret = sysfs_create_file(nv_mem_kobj, &version_attr.attr);
	if (ret)
		goto out;
	return 0;
out:
	standin_unregister_peer();
	return ret;
}

static int __init standin_init(void)
{
	int ret = ib_register_client(&standin_client);

	if (ret)
		return ret;
	if (peer_register) {
		ret = standin_register_peer();
		if (ret) {
			ib_unregister_client(&standin_client);
			return ret;
		}
		pr_info("nvidia_peermem stand-in: nv_mem peer client registered (no GPU, for tests)\n");
	} else {
		pr_info("nvidia_peermem stand-in: loaded, peer client not registered (peer_register=0)\n");
	}
	return 0;
}

static void __exit standin_exit(void)
{
	standin_unregister_peer();
	ib_unregister_client(&standin_client);
}

module_init(standin_init);
module_exit(standin_exit);

MODULE_LICENSE("GPL");
MODULE_VERSION("0.1-rdma-fabric-stand-in");
MODULE_DESCRIPTION("Stand-in for NVIDIA's nvidia_peermem, for GPUDirect RDMA readiness tests: no GPU, no peer memory");
MODULE_AUTHOR("rdma.fabric contributors");
