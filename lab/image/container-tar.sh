#!/usr/bin/env bash
# mmdebstrap customize hook: write the guest's user space, before docker.io is
# added to it, as a root filesystem archive for `docker import`.
#
#   container-tar.sh ROOTFS OUT.tar
#
# Kernel, modules and boot files stay out (containers bind-mount the host's
# /lib/modules), and so do caches and mmdebstrap's temporary files. The files of
# image/container and a few unit masks are added; `docker import` refuses an
# archive that names a path twice, so those paths are left out of the rootfs part.
set -euo pipefail
rootfs=${1:?usage: container-tar.sh ROOTFS OUT.tar}
out=${2:?usage: container-tar.sh ROOTFS OUT.tar}
here=$(cd "$(dirname "$0")" && pwd)

extra=$(mktemp -d)
trap 'rm -rf "$extra"' EXIT
cp -a "$here/container/." "$extra/"
# the guests' bytecode cache for modules imported from zip archives (Ansible's AnsiballZ), as in the VMs
mkdir -p "$extra/usr/lib/python3/dist-packages"
cp -a "$here/rootfs/usr/lib/python3/dist-packages/rdma_fabric_lab_zipcache".* "$extra/usr/lib/python3/dist-packages/"
# The host's udevd owns its devices (a second one would run every rule twice);
# the rest make no sense in a container.
mkdir -p "$extra/etc/systemd/system"
for unit in systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket \
    systemd-udev-trigger.service systemd-udev-settle.service ssh.service ssh.socket \
    getty@tty1.service console-getty.service systemd-timesyncd.service apt-daily.timer \
    apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer man-db.timer \
    dpkg-db-backup.timer; do
    ln -sf /dev/null "$extra/etc/systemd/system/$unit"
done
mapfile -t added < <(cd "$extra" && find . ! -type d | sort)

# mmdebstrap has proc, sys and dev mounted while hooks run: one file system only,
# and the API file systems' mount points left empty (Docker provides them).
excludes=(--exclude='./proc/*' --exclude='./sys/*' --exclude='./dev/*' --exclude='./run/*' --exclude='./tmp/*'
    --exclude=./boot --exclude=./lib/modules --exclude=./usr/lib/modules --exclude=./vmlinuz
    --exclude=./vmlinuz.old --exclude=./initrd.img --exclude=./initrd.img.old
    --exclude=./usr/sbin/policy-rc.d --exclude=./etc/resolv.conf --exclude=./etc/hostname
    --exclude='./var/cache/apt/*' --exclude='./var/lib/apt/lists/*' --exclude='./var/cache/debconf/*-old'
    --exclude=./usr/lib/udev/hwdb.bin --exclude=./etc/udev/hwdb.bin)
for path in "${added[@]}"; do
    excludes+=("--exclude=$path")
done
tar --numeric-owner --one-file-system -C "$rootfs" "${excludes[@]}" -cf "$out" .
# Only the added files themselves: their directories are already in the archive.
(cd "$extra" && tar --numeric-owner --owner=0 --group=0 --no-recursion -rf "$out" "${added[@]}")
dupes=$(tar -tf "$out" | sed 's:/$::' | sort | uniq -d | head -5)
[[ -z $dupes ]] || { printf '[lab-image] container.tar names paths twice: %s\n' "$dupes" >&2; exit 1; }
printf '[lab-image] container.tar: %s\n' "$(du -sh "$out" | cut -f1)" >&2
