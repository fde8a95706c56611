#!/usr/bin/env bash
# Build the lab's Debian VM image from Debian packages only.
#
#   lab/build-image.sh OUTDIR [SUITE]
#
# SUITE is bookworm (the default; Debian 12), trixie (Debian 13) or trixie-backports (Debian 13 with
# the kernel of trixie-backports, 7.x, whose rxe works inside a network namespace: the scale
# lab's suite; everything but the linux-* packages is trixie's). OUTDIR receives base.img
# (ext4, raw), vmlinuz, initrd.img, the build logs of siw.ko and nvidia_peermem.ko, id_ed25519{,.pub}
# (the lab's SSH key),
# kernel-release, suite, and container.tar: the same Debian user space without kernel, modules or
# boot files, as the root filesystem that `docker import` makes the containers scenario's image
# from (no registry needed). The VM image also has docker.io (and docker-cli, a package of its own
# since Debian 13), masked until labctl starts it (LAB_DOCKER=1).
#
# The apt sources are the build machine's own (/etc/apt/sources.list.d/debian.sources or
# /etc/apt/sources.list), with its suite names changed to SUITE (bookworm-updates becomes
# trixie-updates, and so on). Neither Debian 12's nor Debian 13's kernel has CONFIG_RDMA_SIW, so
# siw.ko is built out of tree, in a second, throwaway chroot of the same suite with that kernel's
# headers and sources: the module and the kernel share one ABI whatever the build machine runs. The
# same chroot builds image/peermem/, a stand-in for NVIDIA's nvidia_peermem (no GPU: it holds
# ib_core and shows /sys/kernel/mm/memory_peers/nv_mem, for GPUDirect RDMA readiness checks).
# Runs as root (mmdebstrap --mode=root).
set -euo pipefail

out=${1:?usage: build-image.sh OUTDIR [SUITE]}
suite=${2:-bookworm}
here=$(cd "$(dirname "$0")" && pwd)
step() { printf '[lab-image] %s\n' "$*" >&2; }
die() { printf '[lab-image] FAILED: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || die "building the image needs root (mmdebstrap --mode=root)"
case $suite in
    bookworm | trixie) base=$suite ;;
    trixie-backports) base=trixie ;;
    *) die "suite '$suite' is not supported; allowed: bookworm, trixie, trixie-backports" ;;
esac

machine_sources=""
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    if [[ -s $f ]] && grep -Eq '^[^#]*(Suites:.*bookworm|deb .* bookworm)' "$f"; then
        machine_sources=$f
        break
    fi
done
[[ -n $machine_sources ]] || die "no bookworm apt source found in /etc/apt (the image uses the machine's own mirrors)"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/rdma-lab-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
mkdir -p "$out"
# mmdebstrap reads deb822 files by their name's ending.
sources=$work/${machine_sources##*/}
sed "s/bookworm/$base/g" "$machine_sources" >"$sources"
pin=()
if [[ $suite != "$base" ]]; then
    # The suite's own lines (not -security, not -updates) once more for the backports suite, and
    # the kernel's packages (linux-image, linux-base, headers, kbuild, source) taken from it.
    if [[ $sources == *.sources ]]; then
        sed -i -E "/^Suites:.* $base( |\$)/ s/\$/ $suite/" "$sources"
    else
        sed -i -E "/^deb .* $base /{p;s/ $base / $suite /}" "$sources"
    fi
    grep -Eq "(^Suites:| )$suite( |\$)" "$sources" || die "could not add $suite to the apt sources"
    printf 'Package: linux-*\nPin: release n=%s\nPin-Priority: 990\n' "$suite" >"$work/kernel.pref"
    pin=(--setup-hook="mkdir -p \"\$1/etc/apt/preferences.d\" && cp '$work/kernel.pref' \"\$1/etc/apt/preferences.d/rdma-fabric-lab-kernel.pref\"")
fi

packages=$(grep -Ev '^\s*(#|$)' "$here/image/packages.txt" | paste -sd, -)

step "mmdebstrap $suite from the mirrors of $machine_sources"
mmdebstrap --variant=minbase --mode=root --quiet "${pin[@]}" \
    --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook="bash '$here/image/container-tar.sh' \"\$1\" '$out/container.tar'" \
    --customize-hook="chroot \"\$1\" sh -c 'cli=; apt-cache show docker-cli >/dev/null 2>&1 && cli=docker-cli; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io \$cli'" \
    --customize-hook="bash '$here/image/local-repo.sh' \"\$1\"" \
    "$base" "$rootfs" "$sources"

abi=$(ls "$rootfs/lib/modules")
[[ $(wc -w <<<"$abi") == 1 ]] || die "expected one kernel in the image, found: $abi"
step "kernel $abi"

srcpkg=linux-source-$(cut -d. -f1,2 <<<"$abi")
step "build siw.ko and nvidia_peermem.ko out of tree in a $suite chroot with linux-headers-$abi and $srcpkg"
# The hooks run while mmdebstrap has /proc and /dev mounted in that chroot; it is thrown away with
# $work.
siwdir=/tmp/$srcpkg/drivers/infiniband/sw/siw
cat >"$work/siw-build.sh" <<BUILD
set -eu
tar -xJf /usr/src/$srcpkg.tar.xz -C /tmp --wildcards '*/drivers/infiniband/sw/siw/*'
make -s -C /usr/src/linux-headers-$abi M=$siwdir CONFIG_RDMA_SIW=m modules
BUILD
cat >"$work/peermem-build.sh" <<BUILD
set -eu
make -s -C /usr/src/linux-headers-$abi M=/tmp/peermem modules
BUILD
mmdebstrap --variant=minbase --mode=root --quiet "${pin[@]}" \
    --include="linux-headers-$abi,$srcpkg,make,gcc,xz-utils" \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --customize-hook="copy-in $work/siw-build.sh $work/peermem-build.sh $here/image/peermem /tmp" \
    --customize-hook="chroot \"\$1\" sh /tmp/siw-build.sh >'$out/siw-build.log' 2>&1 || { tail -20 '$out/siw-build.log' >&2; exit 1; }" \
    --customize-hook="chroot \"\$1\" sh /tmp/peermem-build.sh >'$out/peermem-build.log' 2>&1 || { tail -20 '$out/peermem-build.log' >&2; exit 1; }" \
    --customize-hook="copy-out $siwdir/siw.ko /tmp/peermem/nvidia_peermem.ko $work" \
    "$base" "$work/siw-chroot" "$sources" || die "siw.ko or nvidia_peermem.ko build (see $out/siw-build.log, $out/peermem-build.log)"
# make -s prints nothing but diagnostics: a warning is shown here, not only kept in the log.
if grep -q . "$out/peermem-build.log"; then
    step "nvidia_peermem.ko built with diagnostics:"
    cat "$out/peermem-build.log" >&2
fi
install -D -m 0644 "$work/siw.ko" "$rootfs/lib/modules/$abi/updates/siw.ko"
install -D -m 0644 "$work/nvidia_peermem.ko" "$rootfs/lib/modules/$abi/updates/nvidia_peermem.ko"
rm -rf "$work/siw-chroot"
chroot "$rootfs" depmod "$abi"

step "customise the guest"
cp -a "$here/image/rootfs/." "$rootfs/"
chmod 0755 "$rootfs/usr/local/sbin/lab-net"
chmod 0600 "$rootfs/etc/NetworkManager/system-connections/"*.nmconnection
rm -f "$rootfs/etc/hostname"
for unit in systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
    e2scrub_reap.service fstrim.timer man-db.timer dpkg-db-backup.timer \
    docker.service docker.socket containerd.service; do
    ln -sf /dev/null "$rootfs/etc/systemd/system/$unit"
done
chroot "$rootfs" systemctl enable lab-net.service >/dev/null 2>&1
# Generators for what the lab has not: systemd runs every generator at each boot and each daemon-reload (every
# package install and systemd_service daemon_reload of the tests), 0.1-0.4 s each on the emulated CPU. Masked:
# GPT partition discovery, hibernation, /etc/rc.local, systemd.run=, sshd over AF_VSOCK, offline updates, TPM2,
# and the getty generator, whose one product here, the serial console's getty, is enabled as a plain unit below.
# Kept: fstab, debug (labctl's systemd.mask= words), sysv (packages with init scripts), rpc-pipefs (NFS).
# benchmarks/README.md: a daemon-reload took 0.4-0.9 CPU-s less with the first seven masked.
mkdir -p "$rootfs/etc/systemd/system-generators" "$rootfs/etc/systemd/system/getty.target.wants"
for generator in systemd-gpt-auto-generator systemd-hibernate-resume-generator systemd-rc-local-generator \
    systemd-run-generator systemd-ssh-generator systemd-system-update-generator systemd-tpm2-generator \
    systemd-getty-generator; do
    ln -sf /dev/null "$rootfs/etc/systemd/system-generators/$generator"
done
ln -sf /usr/lib/systemd/system/serial-getty@.service \
    "$rootfs/etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service"
# The lab's own key: root logs in with it, over 127.0.0.1 only.
rm -f "$out/id_ed25519" "$out/id_ed25519.pub"
ssh-keygen -q -t ed25519 -N '' -C rdma-fabric-lab -f "$out/id_ed25519"
install -D -m 0600 "$out/id_ed25519.pub" "$rootfs/root/.ssh/authorized_keys"
chmod 0700 "$rootfs/root/.ssh"

step "small initrd (virtio + ext4 only)"
sed -i 's/^MODULES=.*/MODULES=list/' "$rootfs/etc/initramfs-tools/initramfs.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' >"$rootfs/etc/initramfs-tools/modules"
chroot "$rootfs" update-initramfs -u -k "$abi" >/dev/null
cp "$rootfs/boot/vmlinuz-$abi" "$out/vmlinuz"
cp "$rootfs/boot/initrd.img-$abi" "$out/initrd.img"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
chroot "$rootfs" apt-get update -qq -o Dir::Etc::SourceList=/etc/apt/sources.list.d/rdma-fabric-lab.list \
    -o Dir::Etc::SourceParts=- -o APT::Get::List-Cleanup=0 >/dev/null || die "apt-get update of the local repository"
[[ -n $(ls "$rootfs"/var/lib/apt/lists/*rdma-fabric-lab*Packages* 2>/dev/null) ]] || die "no index of the local repository"

step "ext4 image"
rm -f "$out/base.img"
mkfs.ext4 -q -L labroot -d "$rootfs" "$out/base.img" 3072M
echo "$abi" >"$out/kernel-release"
echo "$suite" >"$out/suite"
step "done: $(du -sh --apparent-size "$out/base.img" | cut -f1) apparent, $(du -sh "$out/base.img" | cut -f1) on disk"
