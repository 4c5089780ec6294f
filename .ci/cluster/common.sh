# What .ci/cluster/start, stop and node share: where the cluster lives and how its parts
# are named. Sourced, never run.
#
# Env (all optional): SSB_SLURM_DIR (default /var/lib/ssb-slurm: outside /tmp, which each
# node has its own of), SSB_SLURM_NODES (default 3), SSB_SLURM_NET (the private /24 the
# nodes talk on, default 10.252.0), SSB_SLURM_SHARED (more paths, colon-separated, that
# every node sees as the host does, like a parallel file system; the repository and
# $SSB_SLURM_DIR always are).
D=${SSB_SLURM_DIR:-/var/lib/ssb-slurm}
NET=${SSB_SLURM_NET:-10.252.0}
BRIDGE=ssb-br0
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Node-local scratch: one path, each node's own directory mounted on it (site_configs/ci.py
# names it in the partition's extras).
LSCRATCH=$D/lscratch
CONTROLLER_IP=$NET.1

node_name() { echo "node$1"; }
node_ip() { echo "$NET.$((10 + $1))"; }
node_veth() { echo "ssb-veth$1"; }            # the host's end; the node's end is its eth0
node_dir() { echo "$D/nodes/node$1"; }

# error MESSAGE: the one line a failure prints, then exit 1.
error() { echo "error: $*" >&2; exit 1; }

# The node numbers the running cluster was started with (from its slurm.conf).
started_nodes() {
    [ -s "$D/nodes.count" ] && seq "$(cat "$D/nodes.count")" || true
}

# Processes whose network namespace is node N's (recorded when the node started).
node_pids() {
    local ns pid
    ns=$(cat "$(node_dir "$1")/netns" 2>/dev/null) || return 0
    [ -n "$ns" ] || return 0
    for pid in /proc/[0-9]*; do
        [ "$(readlink "$pid/ns/net" 2>/dev/null)" = "$ns" ] && echo "${pid#/proc/}"
    done
    return 0
}
