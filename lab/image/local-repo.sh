#!/usr/bin/env bash
# mmdebstrap customize hook: a local apt repository in the image with the packages that roles
# install themselves (OpenSM for subnet_manager, the NFS server and client for nfs_rdma) and what
# they need beyond the image's own. None of them is installed: the roles install them with apt on a
# lab VM that has no network. build-image.sh keeps only this repository's index in the image, so
# apt knows them from it and nothing from the mirrors the VM cannot reach.
#
#   local-repo.sh ROOTFS
set -euo pipefail
rootfs=${1:?usage: local-repo.sh ROOTFS}
repo=/var/lib/rdma-fabric-lab/apt
printf '[lab-image] %s\n' "local apt repository with OpenSM and NFS ($repo)" >&2
mkdir -p "$rootfs$repo"
rm -f "$rootfs"/var/cache/apt/archives/*.deb
chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get install -qq -y --download-only --no-install-recommends \
    opensm nfs-kernel-server nfs-common >/dev/null
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
