#!/usr/bin/env bash
# cluster.sh: an emulated cluster on one machine (root). Each "host" is a network
# namespace with its own hostname; every host has one veth link to a bridge that lives
# in a namespace of its own (the "switch"), and the host side of the link sends through
# a token-bucket filter (tc tbf) at the configured rate. Nothing is added to the
# machine's own namespace: all traffic stays between the namespaces' addresses.
#
#   cluster.sh up [--hosts N] [--rate RATE] [--mtu BYTES] [--name PREFIX]
#                                (re)create (default 2 hosts, 10gbit, MTU 9000); removes leftovers first
#   cluster.sh down [--name PREFIX]                           remove everything (idempotent)
#   cluster.sh status [--name PREFIX]                         hosts, addresses, link rate; exit 1 if down
#   cluster.sh exec HOST CMD...  run CMD on host HOST (h0, h1, ...) with that hostname
#   cluster.sh check             exit 0 when this machine can host a cluster, else print why (exit 77)
#   cluster.sh prune --match REGEX [--older-than MIN]
#                                remove every cluster whose name REGEX matches (whole name), whose
#                                namespaces hold no process and were all made at least MIN minutes
#                                ago (default 120): what a run killed before its `down` left
#
# RATE is in tc's units (1gbit, 500mbit, ...). Hosts are h0..h(N-1) with addresses
# 10.199.20.(i+1)/24 on their eth0; names resolve inside the hosts through
# /etc/netns/PREFIX-hI/hosts, which `ip netns exec` binds over /etc/hosts (removed on down).
# State: /run/PREFIX-cluster.env. Hostnames are per command: `exec` starts CMD in a new
# UTS namespace whose hostname is HOST.
set -euo pipefail
NAME=${PARTITA_CLUSTER_NAME:-partita}
HOSTS=2
RATE=10gbit
MTU=9000
SUBNET=10.199.20

die() { echo "cluster.sh: error: $*" >&2; exit 2; }

need_tools() {
  # prints the reason and returns non-zero when a cluster cannot be built here
  if [ "$(id -u)" != 0 ]; then echo "cluster.sh: not root, an emulated cluster needs root"; return 1; fi
  if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
    if command -v apt-get >/dev/null; then
      echo "cluster.sh: installing iproute2 (ip, tc)" >&2
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2) >/dev/null 2>&1 || true
    fi
  fi
  if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then echo "cluster.sh: ip/tc (iproute2) not available"; return 1; fi
  if ! command -v unshare >/dev/null; then echo "cluster.sh: unshare (util-linux) not available"; return 1; fi
  # root in a container may still lack the rights or kernel modules: try every piece in a
  # throw-away namespace (gone when the probe exits)
  local err
  if ! err=$(unshare --net --uts sh -c 'hostname probe && ip link add pa type veth peer name pb &&
      ip link add pbr type bridge && tc qdisc add dev pa root tbf rate 1gbit burst 32k limit 1m' 2>&1); then
    echo "cluster.sh: this machine cannot emulate hosts (network namespace, veth, bridge or tbf): ${err//$'\n'/ }"
    return 1
  fi
  return 0
}

sw() { echo "$NAME-sw"; }
ns() { echo "$NAME-h$1"; }
state() { echo "/run/$NAME-cluster.env"; }

down() {
  local n
  for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$NAME-(sw|h[0-9]+)$" || true); do
    ip netns delete "$n" 2>/dev/null || true
    rm -rf "/etc/netns/$n"
  done
  rm -f "$(state)"
}

up() {
  down
  trap 'down' ERR
  ip netns add "$(sw)"
  ip -n "$(sw)" link add br0 type bridge
  ip -n "$(sw)" link set br0 up
  local hosts_file i
  hosts_file=$(printf '127.0.0.1 localhost\n::1 localhost\n')
  for ((i = 0; i < HOSTS; i++)); do hosts_file+=$'\n'"$SUBNET.$((i + 1)) h$i"; done
  # tbf: bucket of 1 ms at the rate (at least 4 frames; larger GSO segments are split); a
  # queue of 16 MiB, deep as a switch port's buffer, so TCP over it does not lose packets
  local bits burst
  bits=$(rate_bits "$RATE")
  burst=$((bits / 8 / 1000)); [ "$burst" -lt $((4 * MTU)) ] && burst=$((4 * MTU))
  for ((i = 0; i < HOSTS; i++)); do
    local h; h=$(ns "$i")
    ip netns add "$h"
    ip -n "$h" link set lo up
    ip link add eth0 netns "$h" type veth peer name "p$i" netns "$(sw)"
    ip -n "$(sw)" link set "p$i" master br0 up
    ip -n "$h" addr add "$SUBNET.$((i + 1))/24" dev eth0
    ip -n "$h" link set eth0 mtu "$MTU" up
    ip -n "$(sw)" link set "p$i" mtu "$MTU"
    # a link that idles between messages keeps its congestion window, as a cluster
    # interconnect would (TCP's default restarts slow start after an idle moment)
    ip netns exec "$h" sh -c 'echo 0 >/proc/sys/net/ipv4/tcp_slow_start_after_idle'
    tc -n "$h" qdisc replace dev eth0 root tbf rate "$RATE" burst "$burst" limit 16777216
    mkdir -p "/etc/netns/$h"
    printf '%s\n' "$hosts_file" >"/etc/netns/$h/hosts"
  done
  printf 'CLUSTER_NAME=%s\nCLUSTER_HOSTS=%s\nCLUSTER_RATE=%s\nCLUSTER_RATE_BITS=%s\nCLUSTER_MTU=%s\n' \
    "$NAME" "$HOSTS" "$RATE" "$bits" "$MTU" >"$(state)"
  trap - ERR
}

# Clusters whose name matches $1 (an extended regex, whole name), idle (no process in any of
# their namespaces) and made at least $2 minutes ago: removed, each with one line saying so.
# A run killed between its `up` and its `down` (a test timeout, a signal) cannot remove its
# cluster; the next run of the same build removes it by name, but a build folder that is gone
# (a fresh clone's CI run) never comes back for it.
prune() {
  local pattern=$1 minutes=$2 keep=$NAME name n busy old now
  now=$(date +%s)
  for name in $(ip netns list 2>/dev/null | awk '{print $1}' | sed -nE 's/^(.+)-(sw|h[0-9]+)$/\1/p' | sort -u); do
    [[ $name =~ ^($pattern)$ ]] || continue
    busy=0 old=1
    for n in $(ip netns list | awk '{print $1}' | grep -E "^$name-(sw|h[0-9]+)$"); do
      [ -z "$(ip netns pids "$n" 2>/dev/null)" ] || busy=1
      [ $((now - $(stat -c %Y "/run/netns/$n"))) -ge $((minutes * 60)) ] || old=0
    done
    if [ $busy = 1 ]; then
      echo "cluster.sh: keeping cluster $name: a process runs in it"
    elif [ $old = 0 ]; then
      echo "cluster.sh: keeping cluster $name: made less than $minutes minutes ago (a run may be using it)"
    else
      echo "cluster.sh: removing cluster $name: idle and made over $minutes minutes ago, left by a run that did not finish"
      NAME=$name
      down
    fi
  done
  NAME=$keep
}

rate_bits() {
  # tc rate string -> bits per second
  local r=${1,,} num unit
  num=${r%%[a-z]*}; unit=${r#"$num"}
  [[ $num =~ ^[0-9]+$ ]] || die "rate '$1': expected e.g. 1gbit, 500mbit"
  case "$unit" in
    bit) echo "$num" ;; kbit) echo $((num * 1000)) ;; mbit) echo $((num * 1000000)) ;;
    gbit) echo $((num * 1000000000)) ;;
    *) die "rate '$1': unit must be bit, kbit, mbit or gbit" ;;
  esac
}

status() {
  [ -f "$(state)" ] || { echo "cluster $NAME: down"; return 1; }
  # shellcheck disable=SC1090
  . "$(state)"
  echo "cluster $NAME: $CLUSTER_HOSTS hosts, link rate $CLUSTER_RATE ($CLUSTER_RATE_BITS bit/s), MTU $CLUSTER_MTU"
  local i
  for ((i = 0; i < CLUSTER_HOSTS; i++)); do
    ip netns list | grep -q "^$(ns "$i")\b" || { echo "cluster $NAME: namespace $(ns "$i") missing"; return 1; }
    echo "  h$i  $SUBNET.$((i + 1))  $(tc -n "$(ns "$i")" qdisc show dev eth0 | head -1)"
  done
}

cmd=${1:-}; shift || true
if [ "$cmd" = exec ]; then
  [ $# -ge 2 ] || die "usage: cluster.sh exec HOST CMD..."
  host=$1; shift
  [[ $host =~ ^h[0-9]+$ ]] || die "host '$host': expected h0, h1, ..."
  ip netns list | grep -q "^$(ns "${host#h}")\b" || die "host $host is not up (cluster.sh up first)"
  # a new UTS namespace per command gives the host its name; "$@" is run as given
  exec ip netns exec "$(ns "${host#h}")" unshare --uts sh -c 'hostname "$0"; exec "$@"' "$host" "$@"
fi
MATCH=
OLDER_THAN=120
while [ $# -gt 0 ]; do
  case "$1" in
    --match) MATCH=${2:?}; shift 2 ;;
    --older-than) OLDER_THAN=${2:?}; shift 2 ;;
    --hosts) HOSTS=${2:?}; shift 2 ;;
    --rate) RATE=${2:?}; shift 2 ;;
    --mtu) MTU=${2:?}; shift 2 ;;
    --name) NAME=${2:?}; shift 2 ;;
    *) die "unknown option '$1'" ;;
  esac
done
[[ $HOSTS =~ ^[0-9]+$ ]] && [ "$HOSTS" -ge 2 ] && [ "$HOSTS" -le 64 ] || die "--hosts must be 2..64"
[[ $MTU =~ ^[0-9]+$ ]] && [ "$MTU" -ge 1280 ] && [ "$MTU" -le 65535 ] || die "--mtu must be 1280..65535"
rate_bits "$RATE" >/dev/null  # a bad rate stops here, before a running cluster is removed
[[ $OLDER_THAN =~ ^[0-9]+$ ]] || die "--older-than must be a whole number of minutes"
case "$cmd" in
  prune)
    [ -n "$MATCH" ] || die "prune needs --match REGEX (the names of the clusters it may remove)"
    need_tools >/dev/null || exit 0
    prune "$MATCH" "$OLDER_THAN" ;;
  check) need_tools || exit 77 ;;
  up) need_tools || exit 77; up; status ;;
  down) need_tools >/dev/null || exit 0; down; echo "cluster $NAME: down" ;;
  status) status ;;
  *) die "usage: cluster.sh up|down|status|exec|check|prune (see the header of this script)" ;;
esac
