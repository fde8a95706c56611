#!/usr/bin/env bash
# A stand-in for lab/build-image.sh, for tests/firstrun: the cold-cache path of
# `lab/labctl image` and `lab/labctl up` in seconds instead of minutes.
#
#   LAB_STANDIN_FROM=<a built image directory> build-image.sh OUTDIR [SUITE]
#
# It behaves as the real build does towards labctl: it writes to standard output
# (progress, and mkfs.ext4 -d's "Creating regular file ...", which the real build's
# last step prints) and fills OUTDIR with the files labctl boots from, here links
# to the real image's kernel, initrd and root file system and a copy of its key.
set -euo pipefail
out=${1:?usage: build-image.sh OUTDIR [SUITE]}
real=${LAB_STANDIN_FROM:?LAB_STANDIN_FROM: the directory of a built lab image (lab/labctl image prints it)}
[[ -f $real/complete ]] || { echo "stand-in: $real is not a built image" >&2; exit 1; }
echo "stand-in recipe: building into $out"
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/rdma-lab-standin.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/etc"
echo standin >"$work/root/etc/hostname"
mkfs.ext4 -q -L standin -d "$work/root" "$work/root.img" 8M
for name in vmlinuz initrd.img base.img kernel-release; do
    ln -s "$real/$name" "$out/$name"
done
cp "$real/id_ed25519" "$real/id_ed25519.pub" "$out/"
echo "stand-in recipe: done"
