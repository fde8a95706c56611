#!/usr/bin/env bash
# Runs as root inside a lab VM (lab/labctl pipes it through SSH when LAB_HOSTS_PER_VM is set):
# make COUNT RDMA hosts on this VM, each a set of namespaces around its own sshd.
#
#   hosts.sh FIRST COUNT NET PREFIX
#
# Host number n (FIRST to FIRST+COUNT-1) is "node<nn>": its own network namespace (ip netns) with a
# veth named eth1 and the address NET.(100+n)/PREFIX, its own mount and UTS namespaces, a hostname,
# and its own /etc, /var and /root (overlays on the VM's, written under /srv/lab-hosts/node<nn>),
# /run and /tmp. The kernel, its modules, the processes' view (/proc) and the service manager (the
# VM's systemd, reached through /run/systemd) are the VM's, as a container's kernel is its host's.
# No PID namespace: systemd answers no client from another one (systemctl: "Failed to connect to
# system scope bus via local transport: No data available").
# The VM's data NIC becomes a port of the bridge br-data, which takes the VM's address, and each
# host's veth is another port: every host reaches every other one, on this VM or through the lab's
# data network on another, and the VM relays SSH to its hosts (ProxyCommand ... -W).
#
# Why not a container per host with its own systemd (tried first: Docker, privileged, systemd as
# PID 1): under TCG each such host took 60-75 s of the VM's CPU to start, 8 per VM about 10
# minutes. A host here is an sshd.
#
# Each host's RDMA device is the one its own `rdma link add` makes inside its network namespace
# (Linux 7.1+ keeps an rxe's sockets in the namespace it was made in; the trixie-backports suite
# has such a kernel). In the kernel's default (shared) netns mode every namespace lists every RDMA
# device of the kernel; gid_facts tells a host's own from the others'.
set -euo pipefail
first=${1:?usage: hosts.sh FIRST COUNT NET PREFIX}
count=${2:?}
net=${3:?}
prefix=${4:?}
say() { printf '[lab-hosts %s] %s\n' "$(hostname)" "$*" >&2; }

# what a host's kernel must offer before its roles run, as on a container's host
modprobe -a rdma_rxe rdma_cm rdma_ucm ib_uverbs

if [[ ! -e /sys/class/net/br-data ]]; then
    addr=$(ip -4 -o addr show dev eth1 | awk '{print $4}' | head -1)
    [[ -n $addr ]] || { say "eth1 has no IPv4 address"; exit 1; }
    ip link add br-data type bridge
    # no STP: the bridge forwards from the first frame
    ip link set br-data type bridge stp_state 0 forward_delay 0
    ip link set br-data address "$(cat /sys/class/net/eth1/address)"
    ip link set eth1 master br-data
    ip addr del "$addr" dev eth1
    ip addr add "$addr" dev br-data
    ip link set br-data up
fi

# Runs inside the host's namespaces (ip netns exec has made a mount namespace and mounted a sysfs of
# its network namespace at /sys; unshare made the UTS namespace and a private mount namespace).
cat >/run/lab-host-init <<'INIT'
#!/bin/sh
set -eu
name=$1
state=/srv/lab-hosts/$name
hostname "$name"
for dir in etc var root; do
    mkdir -p "$state/$dir.upper" "$state/$dir.work"
    mount -t overlay "lab-$name-$dir" -o "lowerdir=/$dir,upperdir=$state/$dir.upper,workdir=$state/$dir.work" "/$dir"
done
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/systemd /run/sshd /run/lock
mount --bind /srv/lab-hosts/.vm-run-systemd /run/systemd
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t configfs configfs /sys/kernel/config
echo "$name" >/etc/hostname
exec /usr/sbin/sshd -D -e
INIT
chmod 0644 /run/lab-host-init
mkdir -p /srv/lab-hosts/.vm-run-systemd
mountpoint -q /srv/lab-hosts/.vm-run-systemd || mount --bind /run/systemd /srv/lab-hosts/.vm-run-systemd

for ((n = first; n < first + count; n++)); do
    name=$(printf 'node%02d' "$n")
    veth=vh$n
    if [[ ! -e /run/netns/$name ]]; then
        ip netns add "$name"
    fi
    if [[ ! -e /sys/class/net/$veth ]]; then
        ip link add "$veth" type veth peer name eth1 netns "$name"
        ip link set "$veth" master br-data up
        ip -n "$name" addr add "$net.$((100 + n))/$prefix" dev eth1
        ip -n "$name" link set eth1 up
        ip -n "$name" link set lo up
    fi
    if ! ip netns pids "$name" | grep -q .; then
        setsid ip netns exec "$name" unshare --uts --mount --propagation private \
            /bin/sh /run/lab-host-init "$name" </dev/null >"/run/lab-host-$name.log" 2>&1 &
    fi
done
say "hosts node$(printf '%02d' "$first")..node$(printf '%02d' $((first + count - 1))) started"
