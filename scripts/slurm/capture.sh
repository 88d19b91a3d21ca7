#!/usr/bin/env bash
# Capture real Slurm accounting output for coopsched's sacct reader tests.
#
# What it does: installs Debian's slurm-wlm, slurmdbd, mariadb-server and munge (apt), starts
# MariaDB, munged, slurmdbd, slurmctld and slurmd on 127.0.0.1 as one host with a few CPUs,
# creates accounts with local Unix users, submits a small multi-account workload of `sleep`
# jobs (serial, parallel `-n 2`, a job array, job steps from `srun`, a failing job, a job
# cancelled while pending, one cancelled while running, one still pending and one still
# running at capture), waits for the short jobs, captures
#   sacct -a -X -P --format=JobID,User,Account,Group,Partition,Submit,Start,End,AllocCPUS,State
# (allocations only) in UTC and in Europe/Warsaw, `sacct -a -P` with the same format (every
# step), and `-X` with the columns reordered plus others, into tests/fixtures/slurm/ (with
# CAPTURE.txt saying how), then cancels every job and stops every daemon it started.
#
# RUN IT AS ROOT ON A THROWAWAY MACHINE ONLY: it installs packages, creates Unix users
# (cs_alice, ...), writes /etc/slurm/, /etc/munge/munge.key and a MariaDB database and user,
# and kills the daemons it starts. It never contacts anything but the package mirror and
# 127.0.0.1. It is idempotent (every run drops the database and Slurm's state and starts
# afresh) and bounded in time: every wait has a timeout; a run took under 2 minutes on a
# 2-core VM (Debian 12, Slurm 22.05). The committed sacct_X_utc_run2.txt is sacct_X_utc.txt
# of a second run, kept because Slurm recorded the job cancelled while pending differently.
#
# With --tree it runs the consortium workload instead (default output tests/fixtures/slurm-tree):
# an account tree (parents, Fairshare shares set with sacctmgr), priority/multifactor, jobs with
# time limits (one outliving its limit under OverTimeLimit), and it captures besides the files
# above: the Timelimit column, `sacct --json`, epoch-second times (SLURM_TIME_FORMAT=%s),
# `sacctmgr show assoc -P` (the tree and the shares) and `sshare -a -l -P`.
#
# Usage: sudo scripts/slurm/capture.sh [--tree] [OUTPUT_DIR]
#        (default: tests/fixtures/slurm, or tests/fixtures/slurm-tree with --tree)
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORKLOAD=basic
if [ "${1:-}" = "--tree" ]; then
    WORKLOAD=tree
    shift
fi
if [ "$WORKLOAD" = tree ]; then
    OUT="${1:-$ROOT/tests/fixtures/slurm-tree}"
    PRIORITY="PriorityType=priority/multifactor
PriorityWeightFairshare=10000
OverTimeLimit=1"
else
    OUT="${1:-$ROOT/tests/fixtures/slurm}"
    PRIORITY=""
fi
STATE=/var/tmp/coopsched-slurm
CPUS=4
HOST=localhost
DBPASS="capture-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
FORMAT=JobID,User,Account,Group,Partition,Submit,Start,End,AllocCPUS,State
# the same columns in another order, with others the reader ignores or uses (ReqCPUS)
EXTRA=State,JobName,JobIDRaw,JobID,NCPUS,ReqCPUS,AllocCPUS,End,Start,Submit,Elapsed,Partition,Group,Account,User,QOS
PIDS=()

[ "$(id -u)" -eq 0 ] || { echo "capture.sh: must run as root (on a throwaway machine)" >&2; exit 1; }

# kill_pidfile FILE: stop the process whose id FILE holds, if any.
kill_pidfile() {
    [ -f "$1" ] || return 0
    kill "$(cat "$1")" 2>/dev/null || true
}

log() { echo "[capture $(date -u +%H:%M:%S)] $*" >&2; }

stop_all() {
    log "cancelling every job, then stopping daemons"
    timeout 10 squeue -h -o '%A' 2>/dev/null | xargs -r timeout 10 scancel 2>/dev/null || true
    for _ in $(seq 20); do
        [ -z "$(timeout 5 squeue -h -o '%A' 2>/dev/null)" ] && break
        sleep 1
    done
    sleep 2
    # step daemons of this cluster (their working directory is our spool) and their children
    for pid in $(pgrep -x slurmstepd || true); do
        if [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$STATE/d" ]; then
            pkill -P "$pid" 2>/dev/null || true
            kill "$pid" 2>/dev/null || true
        fi
    done
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    sleep 2
    for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    kill_pidfile "$STATE/db/mariadb.pid"
    kill_pidfile "$STATE/munged.pid"
}
trap stop_all EXIT

# wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND once a second until it succeeds.
wait_for() {
    local limit=$1 what=$2
    shift 2
    for _ in $(seq "$limit"); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 1
    done
    log "timed out after ${limit}s waiting for $what"
    for f in "$STATE"/*.log "$STATE"/*.out "$STATE"/db/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; } >&2; done
    exit 1
}

log "installing packages (apt)"
if ! command -v slurmctld >/dev/null || ! command -v slurmdbd >/dev/null \
    || ! command -v mariadbd >/dev/null || ! command -v munged >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    timeout 600 apt-get update -q
    timeout 900 apt-get install -y -q slurm-wlm slurmdbd mariadb-server munge
fi

log "stopping leftovers of an earlier run"
for name in slurmd slurmctld slurmdbd; do
    kill_pidfile "$STATE/$name.pid"
done
kill_pidfile "$STATE/db/mariadb.pid"
kill_pidfile "$STATE/munged.pid"
sleep 2
rm -rf "$STATE"
mkdir -p "$STATE/ctld" "$STATE/d" "$STATE/db" "$STATE/munge" "$OUT"

log "munge: local key, munged on a private socket"
mkdir -p /etc/munge
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key "$STATE/munge"
chmod 400 /etc/munge/munge.key
chmod 700 "$STATE/munge"
mkdir -p /run/munge && chown munge:munge /run/munge
runuser -u munge -- /usr/sbin/munged --pid-file="$STATE/munge/munged.pid" \
    --log-file="$STATE/munge/munged.log" --seed-file="$STATE/munge/seed"
wait_for 20 munged munge -n
cp "$STATE/munge/munged.pid" "$STATE/munged.pid"

log "mariadb on 127.0.0.1, fresh data directory"
chown mysql:mysql "$STATE/db"
timeout 120 mariadb-install-db --user=mysql --datadir="$STATE/db" --auth-root-authentication-method=socket >"$STATE/mariadb-install.log" 2>&1
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
mariadbd --user=mysql --datadir="$STATE/db" --bind-address=127.0.0.1 --port=3306 \
    --socket=/run/mysqld/mysqld.sock --pid-file="$STATE/db/mariadb.pid" \
    --log-error="$STATE/db/mariadb.log" --innodb-buffer-pool-size=64M --innodb-lock-wait-timeout=900 &
PIDS+=($!)
wait_for 60 mariadb mariadb --socket=/run/mysqld/mysqld.sock -e 'select 1'
mariadb --socket=/run/mysqld/mysqld.sock <<SQL
CREATE USER 'slurm'@'localhost' IDENTIFIED BY '$DBPASS';
CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DBPASS';
CREATE DATABASE coopsched_acct;
GRANT ALL ON coopsched_acct.* TO 'slurm'@'localhost';
GRANT ALL ON coopsched_acct.* TO 'slurm'@'127.0.0.1';
SQL

log "slurm configuration in /etc/slurm"
mkdir -p /etc/slurm
for f in slurm.conf slurmdbd.conf; do
    sed -e "s|@HOST@|$HOST|g" -e "s|@CPUS@|$CPUS|g" -e "s|@STATE@|$STATE|g" \
        -e "s|@DBPASS@|$DBPASS|g" "$HERE/$f.in" >"/etc/slurm/$f"
done
[ -z "$PRIORITY" ] || echo "$PRIORITY" >>/etc/slurm/slurm.conf
chmod 600 /etc/slurm/slurmdbd.conf
chmod 644 /etc/slurm/slurm.conf

log "slurmdbd"
slurmdbd -D >"$STATE/slurmdbd.out" 2>&1 &
PIDS+=($!)
wait_for 300 slurmdbd timeout 5 sacctmgr -n show cluster

if [ "$WORKLOAD" = tree ]; then
log "cluster, account tree with shares, and users"
timeout 20 sacctmgr -i add cluster coopsched
# the tree: root -> sciences(60) -> physics(40), chemistry(20); root -> life(30) -> biology(30),
# genomics(10); root -> astro(10); Fairshare is each association's raw share among its siblings
timeout 20 sacctmgr -i add account sciences,life Cluster=coopsched Fairshare=60
timeout 20 sacctmgr -i modify account life set Fairshare=30
timeout 20 sacctmgr -i add account astro Cluster=coopsched Fairshare=10
timeout 20 sacctmgr -i add account physics Parent=sciences Cluster=coopsched Fairshare=40
timeout 20 sacctmgr -i add account chemistry Parent=sciences Cluster=coopsched Fairshare=20
timeout 20 sacctmgr -i add account biology Parent=life Cluster=coopsched Fairshare=30
timeout 20 sacctmgr -i add account genomics Parent=life Cluster=coopsched Fairshare=10
# user:account:share triples (cs_erin is in two accounts)
for triple in cs_alice:physics:2 cs_bob:physics:1 cs_carol:chemistry:1 cs_dave:biology:1 \
    cs_erin:astro:1 cs_erin:biology:1 cs_frank:genomics:1; do
    u=${triple%%:*}
    rest=${triple#*:}
    a=${rest%%:*}
    sh=${rest##*:}
    id "$u" >/dev/null 2>&1 || useradd --no-create-home --shell /usr/sbin/nologin --user-group "$u"
    timeout 20 sacctmgr -i add user "$u" Account="$a" Cluster=coopsched Fairshare="$sh"
done

else
log "cluster, accounts and users"
timeout 20 sacctmgr -i add cluster coopsched
timeout 20 sacctmgr -i add account physics,chemistry,biology,astro Cluster=coopsched
# user:account pairs (cs_erin is in two accounts)
for pair in cs_alice:physics cs_bob:physics cs_carol:chemistry cs_dave:biology cs_erin:astro cs_erin:biology; do
    u=${pair%%:*}
    a=${pair##*:}
    id "$u" >/dev/null 2>&1 || useradd --no-create-home --shell /usr/sbin/nologin --user-group "$u"
    timeout 20 sacctmgr -i add user "$u" Account="$a" Cluster=coopsched
done

fi

log "slurmctld and slurmd"
slurmctld -D -c -i >"$STATE/slurmctld.out" 2>&1 &
PIDS+=($!)
wait_for 60 slurmctld timeout 5 scontrol ping
slurmd -D -N "$HOST" >"$STATE/slurmd.out" 2>&1 &
PIDS+=($!)
idle() { timeout 5 sinfo -h -N -o '%T' | grep -Eq '^(idle|mixed|allocated)'; }
wait_for 60 "node $HOST" idle

# sub USER ACCOUNT SBATCH-ARGS...: submit as USER, print the job id.
sub() {
    local u=$1 a=$2
    shift 2
    runuser -u "$u" -- timeout 20 sbatch --parsable -A "$a" --chdir=/tmp -o /dev/null -e /dev/null "$@"
}

if [ "$WORKLOAD" = tree ]; then
log "workload (consortium: time limits on every job)"
sub cs_alice physics -n 2 -t 2 --wrap 'srun sleep 20' >/dev/null
sub cs_carol chemistry -n 1 -t 1 --wrap 'sleep 15' >/dev/null
sub cs_frank genomics -n 1 -t 3 --wrap 'sleep 10' >/dev/null
sub cs_dave biology -n 1 -t 1 -p short --wrap 'srun sleep 10; srun sleep 5' >/dev/null
sub cs_bob physics -n 1 -t 1 --array=0-3 --wrap 'sleep 8' >/dev/null
sub cs_erin astro -n 2 -t 5 --wrap 'sleep 12' >/dev/null
# outlives its 1-minute limit (OverTimeLimit=1 lets it run up to 2 minutes)
sub cs_frank genomics -n 1 -t 1 -J overtime --wrap 'sleep 75' >/dev/null
sub cs_carol chemistry -n 1 -t 1 --wrap 'sleep 3; exit 3' >/dev/null
sleep 2
sub cs_dave biology -n 4 -t 2 --wrap 'sleep 10' >/dev/null
sub cs_erin biology -n 1 -t 1 -p short --wrap 'sleep 6' >/dev/null
sub cs_alice physics -n 3 -t 1 --wrap 'sleep 5' >/dev/null
sub cs_frank genomics -n 1 -t 1 --array=0-2 --wrap 'sleep 4' >/dev/null
sleep 5
run_cancel=$(sub cs_carol chemistry -n 1 -t 10 --wrap 'sleep 120')
sub cs_bob physics -n 2 -t 1 --wrap 'srun -n 2 sleep 7' >/dev/null
running() { [ "$(timeout 5 squeue -h -j "$1" -o '%T')" = RUNNING ]; }
wait_for 150 "job $run_cancel to start" running "$run_cancel"
sleep 3
log "cancelling running job $run_cancel"
timeout 20 scancel "$run_cancel"
overtime_done() { [ -z "$(timeout 5 squeue -h -n overtime -o '%A')" ]; }
wait_for 200 "the overtime job" overtime_done
long=$(sub cs_alice physics -n 1 -t 30 -J long --wrap 'sleep 600')
wait_for 120 "job $long to start" running "$long"
# these cannot start while the long job holds a CPU: pending at capture
sub cs_erin astro -n "$CPUS" -t 1 -J later --wrap 'sleep 5' >/dev/null
sub cs_frank genomics -n "$CPUS" -t 1 -J later --wrap 'sleep 5' >/dev/null

else
log "workload"
sub cs_alice physics -n 2 --wrap 'srun sleep 20' >/dev/null
sub cs_carol chemistry -n 1 --wrap 'sleep 15' >/dev/null
sub cs_dave biology -n 1 -p short --wrap 'srun sleep 10; srun sleep 5' >/dev/null
sub cs_bob physics -n 1 --array=0-3 --wrap 'sleep 8' >/dev/null
sub cs_erin astro -n 2 --wrap 'sleep 12' >/dev/null
sub cs_carol chemistry -n 1 --wrap 'sleep 3; exit 3' >/dev/null
sleep 2
pend_cancel=$(sub cs_dave biology -n 4 --wrap 'sleep 30')
sub cs_erin biology -n 1 -p short --wrap 'sleep 6' >/dev/null
sub cs_alice physics -n 1 --wrap 'sleep 5' >/dev/null
sleep 3
log "cancelling pending job $pend_cancel"
timeout 20 scancel "$pend_cancel"
sleep 5
run_cancel=$(sub cs_carol chemistry -n 1 --wrap 'sleep 120')
sub cs_bob physics -n 2 --wrap 'srun -n 2 sleep 7' >/dev/null
sub cs_dave biology -n 1 --wrap 'sleep 9' >/dev/null
running() { [ "$(timeout 5 squeue -h -j "$1" -o '%T')" = RUNNING ]; }
wait_for 120 "job $run_cancel to start" running "$run_cancel"
sleep 3
log "cancelling running job $run_cancel"
timeout 20 scancel "$run_cancel"
long=$(sub cs_alice physics -n 1 -J long --wrap 'sleep 600')
wait_for 120 "job $long to start" running "$long"
# these cannot start while the long job holds a CPU: pending at capture
sub cs_erin astro -n "$CPUS" -J later --wrap 'sleep 5' >/dev/null
sub cs_carol chemistry -n "$CPUS" -J later --array=0-2 --wrap 'sleep 5' >/dev/null

fi

log "waiting for the short jobs (at most 180 s)"
only_long_left() {
    # done when the only jobs left are the two meant to be pending and running at capture
    local left
    left=$(timeout 5 squeue -h -o '%j' | grep -Evc '^(later|long)$' || true)
    [ "$left" -eq 0 ]
}
wait_for 180 "short jobs" only_long_left
sleep 5

mkdir -p "$OUT"
if [ "$WORKLOAD" = tree ]; then
log "capturing sacct, sacctmgr and sshare into $OUT"
TFORMAT=$FORMAT,Timelimit
TZ=UTC timeout 30 sacct -a -X -P --format="$TFORMAT" >"$OUT/sacct_X_utc.txt"
TZ=Europe/Warsaw timeout 30 sacct -a -X -P --format="$TFORMAT" >"$OUT/sacct_X_warsaw.txt"
SLURM_TIME_FORMAT=%s timeout 30 sacct -a -X -P --format="$TFORMAT" >"$OUT/sacct_X_epoch.txt"
TZ=UTC timeout 30 sacct -a -P --format="$TFORMAT" >"$OUT/sacct_steps_utc.txt"
if TZ=UTC timeout 30 sacct -a -X --json >"$OUT/sacct_json.json" 2>"$OUT/sacct_json.err"; then
    rm -f "$OUT/sacct_json.err"
fi
timeout 30 sacctmgr -n -P show assoc format=Cluster,Account,ParentName,User,Share >"$OUT/sacctmgr_assoc.txt"
timeout 30 sacctmgr -P show assoc format=Cluster,Account,ParentName,User,Share,Fairshare >"$OUT/sacctmgr_assoc_header.txt"
timeout 30 sshare -a -l -P >"$OUT/sshare.txt"
{
    echo "# How these fixtures were made (scripts/slurm/capture.sh --tree)"
    echo "captured_utc: $(date -u +%Y-%m-%dT%H:%M:%S)"
    echo "slurm: $(sinfo -V)"
    echo "node: $HOST CPUs=$CPUS (partitions batch, short); priority/multifactor, OverTimeLimit=1"
    echo "tree: root -> sciences(60) -> physics(40: cs_alice 2, cs_bob 1), chemistry(20: cs_carol 1);"
    echo "      root -> life(30) -> biology(30: cs_dave 1, cs_erin 1), genomics(10: cs_frank 1);"
    echo "      root -> astro(10: cs_erin 1)"
    echo "format: $TFORMAT"
    echo "sacct_X_utc.txt: TZ=UTC sacct -a -X -P --format=\$format"
    echo "sacct_X_warsaw.txt: TZ=Europe/Warsaw sacct -a -X -P --format=\$format"
    echo "sacct_X_epoch.txt: SLURM_TIME_FORMAT=%s sacct -a -X -P --format=\$format"
    echo "sacct_steps_utc.txt: TZ=UTC sacct -a -P --format=\$format"
    if [ -f "$OUT/sacct_json.err" ]; then
        echo "sacct_json.json: TZ=UTC sacct -a -X --json FAILED here (sacct_json.err holds its message)"
    else
        echo "sacct_json.json: TZ=UTC sacct -a -X --json"
    fi
    echo "sacctmgr_assoc.txt: sacctmgr -n -P show assoc format=Cluster,Account,ParentName,User,Share"
    echo "sacctmgr_assoc_header.txt: sacctmgr -P show assoc format=Cluster,Account,ParentName,User,Share,Fairshare"
    echo "sshare.txt: sshare -a -l -P"
} >"$OUT/CAPTURE.txt"
log "done: $(wc -l <"$OUT/sacct_X_utc.txt") lines in sacct_X_utc.txt"
else
log "capturing sacct into $OUT"
TZ=UTC timeout 30 sacct -a -X -P --format="$FORMAT" >"$OUT/sacct_X_utc.txt"
TZ=Europe/Warsaw timeout 30 sacct -a -X -P --format="$FORMAT" >"$OUT/sacct_X_warsaw.txt"
TZ=UTC timeout 30 sacct -a -P --format="$FORMAT" >"$OUT/sacct_steps_utc.txt"
TZ=UTC timeout 30 sacct -a -X -P --format="$EXTRA" >"$OUT/sacct_X_extra_utc.txt"
{
    echo "# How these fixtures were made (scripts/slurm/capture.sh)"
    echo "captured_utc: $(date -u +%Y-%m-%dT%H:%M:%S)"
    echo "slurm: $(sinfo -V)"
    echo "node: $HOST CPUs=$CPUS (partitions batch, short)"
    echo "accounts: physics(cs_alice,cs_bob) chemistry(cs_carol) biology(cs_dave,cs_erin) astro(cs_erin)"
    echo "format: $FORMAT"
    echo "sacct_X_utc.txt: TZ=UTC sacct -a -X -P --format=\$format"
    echo "sacct_X_warsaw.txt: TZ=Europe/Warsaw sacct -a -X -P --format=\$format"
    echo "sacct_steps_utc.txt: TZ=UTC sacct -a -P --format=\$format"
    echo "sacct_X_extra_utc.txt: TZ=UTC sacct -a -X -P --format=$EXTRA"
} >"$OUT/CAPTURE.txt"
log "done: $(wc -l <"$OUT/sacct_X_utc.txt") lines in sacct_X_utc.txt"
fi
