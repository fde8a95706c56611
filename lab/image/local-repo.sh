#!/usr/bin/env bash
# mmdebstrap customize hook: the NFS client (nfs-common) installed, and a local apt repository in
# the image with the packages that roles install themselves (OpenSM for subnet_manager, the NFS
# server for nfs_rdma) and what they need beyond the image's own. These are not installed: the
# roles install them with apt on a lab VM that has no network. build-image.sh keeps only this
# repository's index in the image, so apt knows them from it and nothing from the mirrors the VM
# cannot reach.
#
# nfs-common is in the VM image (not in container.tar, made before this hook) because its install
# costs about 40 s of maintainer scripts per VM under TCG, and its purge as much again, in every
# make test; a Debian host with the NFS client already installed is a common starting point. The
# server package, whose first start must already find the role's RDMA listener, stays for the role
# to install.
#
#   local-repo.sh ROOTFS
set -euo pipefail
rootfs=${1:?usage: local-repo.sh ROOTFS}
repo=/var/lib/rdma-fabric-lab/apt
printf '[lab-image] %s\n' "nfs-common, and a local apt repository with OpenSM and the NFS server ($repo)" >&2
mkdir -p "$rootfs$repo"
rm -f "$rootfs"/var/cache/apt/archives/*.deb
chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get install -qq -y --no-install-recommends nfs-common >/dev/null
rm -f "$rootfs"/var/cache/apt/archives/*.deb
chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get install -qq -y --download-only --no-install-recommends \
    opensm nfs-kernel-server >/dev/null
mv "$rootfs"/var/cache/apt/archives/*.deb "$rootfs$repo/"
cd "$rootfs$repo"
for deb in *.deb; do
    dpkg-deb -f "$deb"
    printf 'Filename: ./%s\nSize: %s\nSHA256: %s\n\n' "$deb" "$(stat -c %s "$deb")" "$(sha256sum "$deb" | cut -d' ' -f1)"
done >Packages
printf 'Origin: rdma-fabric-lab\nLabel: rdma-fabric-lab\nSHA256:\n %s %s Packages\n' \
    "$(sha256sum Packages | cut -d' ' -f1)" "$(stat -c %s Packages)" >Release
echo "deb [trusted=yes] file:$repo ./" >"$rootfs/etc/apt/sources.list.d/rdma-fabric-lab.list"
debs=(./*.deb)
printf '[lab-image] %s\n' "local repository: ${debs[*]#./}" >&2
