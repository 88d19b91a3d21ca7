#!/usr/bin/env bash
# A throwaway Slurm cluster on loopback for `coopsched replay` (src/coopsched/slurm/replay.py).
#
# The Python driver writes STATE/etc/slurm.conf, STATE/etc/slurmdbd.conf and STATE/ports
# (free loopback ports it picked) and calls, in order:
#   cluster.sh db STATE     munged (private socket), MariaDB (fresh data directory in STATE,
#                           127.0.0.1 only), the accounting database and its user, slurmdbd
#   (the driver then adds the cluster, the accounts and their shares with sacctmgr)
#   cluster.sh ctld STATE   slurmctld (cold start) and one slurmd per node (Debian's build
#                           allows several on one host); waits until every node is idle
#   cluster.sh stop STATE   cancels every job, stops every daemon it started (pid files in
#                           STATE/pids), kills the step daemons of this cluster's spool
# Every daemon runs as root with its state, logs, sockets and pid files under STATE; nothing
# outside STATE is written except /etc/munge/munge.key when it does not exist yet. Every wait
# is bounded. Clients reach the cluster through SLURM_CONF=STATE/etc/slurm.conf.
#
# Requires root and Debian's slurm-wlm, slurmdbd, mariadb-server and munge
# (`apt-get install slurm-wlm slurmdbd mariadb-server munge`; `cluster.sh check` says what
# is missing, exit status 3).
set -euo pipefail

cmd=${1:-}
STATE=${2:-}
log() { echo "[cluster $(date -u +%H:%M:%S)] $*" >&2; }
die() { echo "cluster.sh: $*" >&2; exit 1; }

check() {
    [ "$(id -u)" -eq 0 ] || { echo "needs root (it starts munged, MariaDB and Slurm's daemons)"; return 3; }
    local missing=()
    for tool in slurmctld slurmd slurmdbd sbatch sacct sacctmgr munged mariadbd mariadb-install-db; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "missing ${missing[*]} (apt-get install slurm-wlm slurmdbd mariadb-server munge)"
        return 3
    fi
}

if [ "$cmd" = check ]; then
    check
    exit $?
fi
[ -n "$STATE" ] && [ -d "$STATE" ] || die "usage: cluster.sh check | db STATE | ctld STATE | stop STATE"
reason=$(check) || die "$reason"
export SLURM_CONF="$STATE/etc/slurm.conf"
# shellcheck disable=SC1091
. "$STATE/ports" # DBPORT, DBPASS, NODES (the node names, one slurmd each)
NODES=${NODES:-localhost}

# wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND every half second until it succeeds.
wait_for() {
    local limit=$1 what=$2
    shift 2
    for _ in $(seq $((limit * 2))); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.5
    done
    log "timed out after ${limit}s waiting for $what"
    for f in "$STATE"/log/*; do [ -f "$f" ] && { echo "== $f"; tail -15 "$f"; } >&2; done
    return 1
}

# spawn NAME COMMAND...: start a daemon in its own session, its pid in STATE/pids/NAME.
spawn() {
    local name=$1
    shift
    setsid "$@" >"$STATE/log/$name.out" 2>&1 </dev/null &
    echo $! >"$STATE/pids/$name"
}

case "$cmd" in
db)
    mkdir -p "$STATE/pids" "$STATE/log" "$STATE/munge" "$STATE/db" "$STATE/ctld" "$STATE/d" "$STATE/run"
    chmod 755 "$STATE"
    log "munged on a private socket"
    mkdir -p /etc/munge
    if [ ! -s /etc/munge/munge.key ]; then
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
        chown munge:munge /etc/munge/munge.key
        chmod 400 /etc/munge/munge.key
    fi
    chown munge:munge "$STATE/munge"
    chmod 755 "$STATE/munge"
    spawn munged runuser -u munge -- /usr/sbin/munged --foreground \
        --socket="$STATE/munge/munge.socket" --pid-file="$STATE/munge/munged.pid" \
        --log-file="$STATE/log/munged.log" --seed-file="$STATE/munge/seed"
    wait_for 20 munged munge --socket="$STATE/munge/munge.socket" -n
    log "MariaDB on 127.0.0.1:$DBPORT, fresh data directory"
    chown mysql:mysql "$STATE/db" "$STATE/run"
    timeout 120 mariadb-install-db --user=mysql --datadir="$STATE/db" \
        --auth-root-authentication-method=socket >"$STATE/log/mariadb-install.log" 2>&1
    spawn mariadb mariadbd --user=mysql --datadir="$STATE/db" --bind-address=127.0.0.1 \
        --port="$DBPORT" --socket="$STATE/run/mysqld.sock" --pid-file="$STATE/run/mariadb.pid" \
        --log-error="$STATE/log/mariadb.log" --innodb-buffer-pool-size=64M \
        --innodb-lock-wait-timeout=900 --skip-name-resolve
    wait_for 60 mariadb mariadb --socket="$STATE/run/mysqld.sock" -e 'select 1'
    mariadb --socket="$STATE/run/mysqld.sock" <<SQL
CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DBPASS';
CREATE DATABASE coopsched_acct;
GRANT ALL ON coopsched_acct.* TO 'slurm'@'127.0.0.1';
SQL
    log "slurmdbd"
    spawn slurmdbd slurmdbd -D
    wait_for 90 slurmdbd timeout 5 sacctmgr -n show cluster
    ;;
ctld)
    log "slurmctld (cold start) and slurmd"
    spawn slurmctld slurmctld -D -c -i
    wait_for 60 slurmctld timeout 5 scontrol ping
    for node in $NODES; do
        mkdir -p "$STATE/d/$node"
        spawn "slurmd-$node" slurmd -D -N "$node"
    done
    # every node up: no line of sinfo's node states other than idle
    idle() { [ -z "$(timeout 5 sinfo -h -N -o '%T' | grep -Ev '^idle$')" ] && timeout 5 sinfo -h -N -o '%T' | grep -q idle; }
    wait_for 90 "the nodes" idle
    ;;
stop)
    log "cancelling every job, then stopping the daemons"
    if [ -f "$STATE/pids/slurmctld" ]; then
        timeout 10 scancel --full --quiet --user=root 2>/dev/null || true
        for _ in $(seq 10); do
            [ -z "$(timeout 5 squeue -h -t running -o '%A' 2>/dev/null)" ] && break
            sleep 1
        done
    fi
    # step daemons of this cluster (their working directory is its spool) and their children
    for pid in $(pgrep -x slurmstepd || true); do
        if [[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" == "$STATE/d"* ]]; then
            pkill -P "$pid" 2>/dev/null || true
            kill "$pid" 2>/dev/null || true
        fi
    done
    order=()
    for node in $NODES; do order+=("slurmd-$node"); done
    order+=(slurmctld slurmdbd mariadb munged)
    for name in "${order[@]}"; do
        f="$STATE/pids/$name"
        [ -f "$f" ] && kill -- "-$(cat "$f")" 2>/dev/null || true
    done
    for _ in $(seq 20); do
        alive=0
        for name in "${order[@]}"; do
            f="$STATE/pids/$name"
            [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1
        done
        [ "$alive" -eq 0 ] && break
        sleep 0.5
    done
    for name in "${order[@]}"; do
        f="$STATE/pids/$name"
        [ -f "$f" ] && kill -9 -- "-$(cat "$f")" 2>/dev/null || true
        rm -f "$f"
    done
    # anything else started for this cluster: its environment names this cluster's config
    for pid in $(pgrep -x 'slurmd|slurmctld|slurmdbd|slurmstepd|munged|mariadbd' || true); do
        if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "SLURM_CONF=$SLURM_CONF"; then
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    ;;
*)
    die "usage: cluster.sh check | db STATE | ctld STATE | stop STATE"
    ;;
esac
