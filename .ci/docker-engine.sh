#!/usr/bin/env bash
# A private Docker engine on a machine with no Docker daemon and no reachable container registry (CI here).
# Nothing in it is specific to turnbench but the default names below.
#
#   docker-engine.sh install   apt-get install Debian's docker.io (dockerd 20.10 + containerd 1.6 + runc) if dockerd
#                              is missing; a system daemon the package may start on the default socket is stopped again
#   docker-engine.sh start     start dockerd on a private socket with its own data/exec roots, loopback-only networking,
#                              and a pull guard; waits until the daemon answers; prints `export DOCKER_HOST=...`
#   docker-engine.sh stop      stop exactly the dockerd recorded at start (by pid), clean its bridge/netns/shims, lift
#                              the guard, and fail naming anything left behind
#   docker-engine.sh status    say whether the recorded daemon runs and answers
#   docker-engine.sh env       print `export DOCKER_HOST=...` for eval
#   docker-engine.sh pidfile   print the path of the file holding the daemon's pid
#
# Everything is private (socket, pidfile, exec root, data root, bridge name, cgroup parent, address pools) so it can
# neither clash with nor be mistaken for a system Docker. Settings (environment):
#   TURNBENCH_DOCKER_DATA_ROOT  images and containers, kept across runs   (default /var/lib/turnbench-docker)
#   TURNBENCH_DOCKER_RUN_DIR    socket, pidfile, exec root, log, state    (default /run/turnbench-docker)
#   TURNBENCH_DOCKER_BRIDGE     default bridge name                       (default tbdocker0)
#   TURNBENCH_DOCKER_BRIDGE_IP  its address/prefix                        (default 10.213.0.1/24)
#   TURNBENCH_DOCKER_POOL       pool for user networks (compose)          (default base=10.214.0.0/16,size=24)
#   TURNBENCH_DOCKER_TIMEOUT    seconds to wait for the daemon to answer  (default 60)
#   TURNBENCH_DOCKER_PROXY_GUARD=0  do not give dockerd a dead HTTP(S) proxy (second pull guard, see below)
set -euo pipefail

DATA_ROOT=${TURNBENCH_DOCKER_DATA_ROOT:-/var/lib/turnbench-docker}
RUN_DIR=${TURNBENCH_DOCKER_RUN_DIR:-/run/turnbench-docker}
BRIDGE=${TURNBENCH_DOCKER_BRIDGE:-tbdocker0}
BRIDGE_IP=${TURNBENCH_DOCKER_BRIDGE_IP:-10.213.0.1/24}
POOL=${TURNBENCH_DOCKER_POOL:-base=10.214.0.0/16,size=24}
TIMEOUT=${TURNBENCH_DOCKER_TIMEOUT:-60}
PROXY_GUARD=${TURNBENCH_DOCKER_PROXY_GUARD:-1}

SOCK=$RUN_DIR/docker.sock
HOST=unix://$SOCK
PIDFILE=$RUN_DIR/dockerd.pid
EXEC_ROOT=$RUN_DIR/exec
LOG=$RUN_DIR/dockerd.log
HOSTS_SAVED=$RUN_DIR/hosts.orig
HOSTS=/etc/hosts
GUARD_BEGIN="# >>> turnbench-docker pull guard, removed by docker-engine.sh stop >>>"
GUARD_END="# <<< turnbench-docker pull guard <<<"
# Registries a stray pull could reach: Docker Hub (registry, index, auth, CDN) and the other public ones an image
# name can point at (testcontainers' Ryuk is docker.io/testcontainers/ryuk).
GUARD_HOSTS=(
  docker.io index.docker.io registry-1.docker.io registry.docker.io auth.docker.io hub.docker.com
  registry.hub.docker.com production.cloudflare.docker.com
  docker-images-prod.6aa30f8b08e16409b46e0173d6de2f56.r2.cloudflarestorage.com
  ghcr.io pkg-containers.githubusercontent.com quay.io cdn.quay.io gcr.io registry.k8s.io mcr.microsoft.com
  public.ecr.aws
)

# Whichever client is first on PATH (a newer client negotiates the API version down to dockerd 20.10's).
DOCKER=${DOCKER:-docker}

T0=$(date +%s.%N)
step_start=$T0
now() { date +%s.%N; }
step() { # step "what happened": print the time since the previous step and since the command began
  local t; t=$(now)
  awk -v a="$T0" -v b="$step_start" -v t="$t" -v m="$*" 'BEGIN { printf "[engine %6.1fs +%5.1fs] %s\n", t - a, t - b, m }'
  step_start=$t
}
die() { echo "docker-engine.sh: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || die "must run as root (dockerd, /etc/hosts, bridges)"; }
dc() { "$DOCKER" -H "$HOST" "$@"; }

alive() { # alive PID: running and not a zombie (PID 1 here reaps late, and kill -0 succeeds on a zombie)
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}
recorded_pid() { # the pid in the pidfile if that process is still a live dockerd, else nothing
  [ -s "$PIDFILE" ] || return 0
  local pid; pid=$(cat "$PIDFILE")
  if alive "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]; then echo "$pid"; fi
}

# ---- pull guard ---------------------------------------------------------------------------------------------
hosts_without_guard() { # /etc/hosts minus any guard block (also one left by a crashed run)
  awk -v b="$GUARD_BEGIN" -v e="$GUARD_END" '$0 == b {skip = 1; next} $0 == e {skip = 0; next} !skip' "$HOSTS"
}
guard_on() {
  local tmp=$RUN_DIR/hosts.tmp
  hosts_without_guard > "$tmp"
  # The saved copy is /etc/hosts without any guard block (a crashed run's is stripped first), taken afresh at
  # each fresh start ($1 = fresh) so that edits made since a crashed run are kept.
  if [ "${1:-}" = fresh ] || [ ! -s "$HOSTS_SAVED" ]; then cp "$tmp" "$HOSTS_SAVED"; fi
  { echo "$GUARD_BEGIN"
    for h in "${GUARD_HOSTS[@]}"; do printf '127.0.0.1 %s\n::1 %s\n' "$h" "$h"; done
    echo "$GUARD_END"; } >> "$tmp"
  # Write in place (no mv): /etc/hosts may be a bind mount in a container-like VM.
  cat "$tmp" > "$HOSTS"; rm -f "$tmp"
}
guard_off() {
  if grep -qxF "$GUARD_BEGIN" "$HOSTS"; then
    local tmp=$RUN_DIR/hosts.tmp
    mkdir -p "$RUN_DIR"; hosts_without_guard > "$tmp"; cat "$tmp" > "$HOSTS"; rm -f "$tmp"
  fi
  if [ -s "$HOSTS_SAVED" ]; then
    if cmp -s "$HOSTS_SAVED" "$HOSTS"; then
      rm -f "$HOSTS_SAVED"
    else # someone else edited /etc/hosts meanwhile: keep their edits, keep the copy for a human to compare
      echo "docker-engine.sh: note: $HOSTS differs from the copy saved at start ($HOSTS_SAVED kept); the guard block was removed" >&2
    fi
  fi
}

# ---- install ------------------------------------------------------------------------------------------------
cmd_install() {
  need_root
  if command -v dockerd >/dev/null && command -v containerd >/dev/null && command -v runc >/dev/null \
     && command -v docker-proxy >/dev/null; then
    step "dockerd already installed: $(dockerd --version)"
    return 0
  fi
  # policy-rc.d (exit 101) on this VM keeps the package from starting a system daemon on /var/run/docker.sock;
  # where there is none, the daemon the package starts is stopped again below: other programs on this machine
  # pick a Docker engine by that default socket, and must not find one because this script ran.
  local before; before=$(pgrep -x dockerd || true)
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || true   # a third-party source failing must not stop the Debian install
  apt-get install -y -qq --no-install-recommends docker.io >/dev/null
  step "installed $(dockerd --version)"
  local pid
  for pid in $(pgrep -x dockerd || true); do
    case " $before " in *" $pid "*) continue ;; esac
    echo "docker-engine.sh: the package started a system dockerd (pid $pid); stopping it" >&2
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
  done
  [ -S /var/run/docker.sock ] && ! pgrep -x dockerd >/dev/null && rm -f /var/run/docker.sock || true
}

# ---- start --------------------------------------------------------------------------------------------------
our_bridges() { # bridge interfaces holding an address in our bridge's or our pool's range (default bridge + user networks)
  local b16 p16
  b16=$(echo "$BRIDGE_IP" | cut -d. -f1-2); p16=$(echo "$POOL" | sed 's/^base=//' | cut -d. -f1-2)
  ip -o -4 addr show type bridge 2>/dev/null | awk -v a="$b16." -v b="$p16." \
    'index($4, a) == 1 || index($4, b) == 1 {print $2}' | sort -u
  ip link show "$BRIDGE" >/dev/null 2>&1 && echo "$BRIDGE"
  return 0
}

cleanup_leftovers() { # what a dockerd of ours that died without its shutdown left: processes, mounts, cgroups, bridges
  local pid cg m b
  # Its containerd (managed: config under our exec root) and every process of our containers (their cgroups
  # sit under our --cgroup-parent), then the shims. Matching on our private paths: never anyone else's.
  for pid in $(pgrep -f "containerd --config $EXEC_ROOT/containerd/" || true); do kill -9 "$pid" 2>/dev/null || true; done
  for cg in /sys/fs/cgroup/*/turnbench-docker /sys/fs/cgroup/unified/turnbench-docker; do
    [ -d "$cg" ] || continue
    for pid in $(cat "$cg"/*/cgroup.procs 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
  done
  for pid in $(pgrep -f "containerd-shim.* -address $EXEC_ROOT/" || true); do kill -9 "$pid" 2>/dev/null || true; done
  # dockerd trusts the managed containerd's pidfile: naming a dead (or zombie) containerd, it makes the next
  # start wait for a socket nobody serves ("failed to start containerd: timeout waiting for containerd to start").
  local cpid; cpid=$(cat "$EXEC_ROOT/containerd/containerd.pid" 2>/dev/null || true)
  if [ -n "$cpid" ] && ! alive "$cpid"; then rm -f "$EXEC_ROOT/containerd/containerd.pid"; fi
  # docker-proxy processes orphaned by a killed dockerd of ours: they forward to our bridge or pool subnets.
  local nets; nets="$(echo "$BRIDGE_IP" | cut -d. -f1-2)|$(echo "$POOL" | sed 's/^base=//' | cut -d. -f1-2)"
  for pid in $(pgrep -f "docker-proxy .*-container-ip (${nets//./\\.})\\." || true); do
    [ "$(ps -o ppid= -p "$pid" | tr -d ' ')" = 1 ] && kill -9 "$pid" 2>/dev/null || true
  done
  sleep 0.2
  # Network namespaces and other mounts under our exec root, container root filesystems (overlay) and shm
  # mounts strictly below our data root (deepest first).
  for m in $( { awk -v r="$EXEC_ROOT" 'index($2, r) == 1 {print $2}' /proc/self/mounts
                awk -v r="$DATA_ROOT/" 'index($2, r) == 1 {print $2}' /proc/self/mounts; } | sort -ru); do
    umount -l "$m" 2>/dev/null || true
  done
  # dockerd bind-mounts its data root onto itself (to make it a shared mount) and undoes that on a clean exit
  # only. A bind of a directory shows a root other than "/" in mountinfo; a filesystem of its own mounted at
  # the data root (root "/") is left alone.
  while awk -v d="$DATA_ROOT" '$5 == d && $4 != "/" {found = 1} END {exit !found}' /proc/self/mountinfo; do
    umount -l "$DATA_ROOT" 2>/dev/null || break
  done
  # Empty container cgroups under our parent (leaves first).
  for cg in /sys/fs/cgroup/*/turnbench-docker /sys/fs/cgroup/unified/turnbench-docker; do
    [ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  for b in $(our_bridges); do ip link del "$b" 2>/dev/null || true; done
}

cmd_start() {
  need_root
  command -v dockerd >/dev/null || die "dockerd not installed: run '$0 install' first"
  mkdir -p "$RUN_DIR" "$DATA_ROOT" "$EXEC_ROOT"
  chmod 700 "$RUN_DIR"
  local pid; pid=$(recorded_pid)
  if [ -n "$pid" ]; then
    if dc info >/dev/null 2>&1; then guard_on; step "already running (pid $pid) on $HOST; guard on"; return 0; fi
    die "dockerd pid $pid is recorded but does not answer on $HOST: run '$0 stop' first"
  fi
  # dockerd refuses to start while its own pidfile names a process that exists, and a killed dockerd stays a
  # zombie here for a while ("pid file found, ensure docker is not running").
  if [ -s "$RUN_DIR/dockerd.self.pid" ]; then
    local old; old=$(cat "$RUN_DIR/dockerd.self.pid")
    if alive "$old" && [ "$(cat "/proc/$old/comm" 2>/dev/null)" = dockerd ]; then
      die "a dockerd (pid $old) runs with our pidfile but is not the one recorded: stop it first"
    fi
    rm -f "$RUN_DIR/dockerd.self.pid"
  fi
  cleanup_leftovers
  step "cleaned leftovers of earlier runs"

  guard_on fresh
  step "pull guard on: ${#GUARD_HOSTS[@]} registry hostnames -> 127.0.0.1 in $HOSTS (original saved in $HOSTS_SAVED)"

  # Our own bridge: dockerd's default would be docker0 on 172.17.0.0/16, shared with any other engine. With -b,
  # dockerd uses this bridge and takes the subnet from its address (so --bip must not be given too).
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$BRIDGE_IP" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  step "bridge $BRIDGE $BRIDGE_IP up"

  local env_guard=()
  if [ "$PROXY_GUARD" = 1 ]; then
    # dockerd uses HTTP(S)_PROXY for every registry it talks to: a dead proxy on loopback makes any pull from any
    # registry fail at once, whatever its hostname. Build RUN steps do not inherit the daemon's environment.
    env_guard=(HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=)
  fi
  : > "$LOG"
  # --ip=127.0.0.1: published ports bind loopback unless a port says otherwise.
  # --iptables/--ip-forward/--ip-masq=false: no NAT, no forwarding, so containers cannot route out of the VM;
  #   published ports then go through docker-proxy (userland), which is all loopback publishing needs.
  # --cgroup-parent: our containers' cgroups apart from any other engine's "docker" cgroups.
  # No --default-ulimit nofile=65536: root on this VM lacks CAP_SYS_RESOURCE (hard limit 20000), and runc then
  #   fails every container start ("error setting rlimit type 7: operation not permitted").
  # setsid + nohup: dockerd outlives this shell and the caller's session; its pid is what stop kills.
  env -u DOCKER_HOST "${env_guard[@]}" setsid nohup dockerd \
      --host "$HOST" \
      --data-root "$DATA_ROOT" \
      --exec-root "$EXEC_ROOT" \
      --pidfile "$RUN_DIR/dockerd.self.pid" \
      --bridge "$BRIDGE" \
      --default-address-pool "$POOL" \
      --ip 127.0.0.1 --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --ipv6=false \
      --userland-proxy=true \
      --storage-driver overlay2 \
      --exec-opt native.cgroupdriver=cgroupfs --cgroup-parent /turnbench-docker \
      --live-restore=false --shutdown-timeout 10 \
      --log-driver json-file --log-opt max-size=20m --log-opt max-file=2 \
      >>"$LOG" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$PIDFILE"
  step "dockerd launched, pid $pid, log $LOG"

  local deadline=$(( $(date +%s) + TIMEOUT ))
  until dc info >/dev/null 2>&1; do
    if ! alive "$pid"; then
      echo "docker-engine.sh: dockerd (pid $pid) exited before answering; last lines of $LOG:" >&2
      tail -n 25 "$LOG" >&2; rm -f "$PIDFILE"; guard_off; ip link del "$BRIDGE" 2>/dev/null || true; exit 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "docker-engine.sh: dockerd (pid $pid) did not answer on $HOST within ${TIMEOUT}s; last lines of $LOG:" >&2
      tail -n 25 "$LOG" >&2; echo "docker-engine.sh: it is left running with the guard on: '$0 stop' removes both" >&2; exit 1
    fi
    sleep 0.2
  done
  # dockerd's own pidfile is the authority ($! would be setsid's pid wherever setsid had to fork).
  [ -s "$RUN_DIR/dockerd.self.pid" ] && cp "$RUN_DIR/dockerd.self.pid" "$PIDFILE"
  pid=$(cat "$PIDFILE")
  step "daemon answers: server $(dc version -f '{{.Server.Version}}') (API $(dc version -f '{{.Server.APIVersion}}')), driver $(dc info -f '{{.Driver}}'), cgroup $(dc info -f '{{.CgroupDriver}}') v$(dc info -f '{{.CgroupVersion}}')"
  echo "export DOCKER_HOST=$HOST"
}

# ---- stop ---------------------------------------------------------------------------------------------------
cmd_stop() {
  need_root
  local pid; pid=$(recorded_pid)
  if [ -n "$pid" ]; then
    kill -TERM "$pid"
    # dockerd stops its containers (--shutdown-timeout) and its managed containerd before it exits.
    local i
    for i in $(seq 1 300); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then
      echo "docker-engine.sh: dockerd $pid still running after 30 s: SIGKILL" >&2; kill -KILL "$pid"; sleep 0.5
    fi
    step "dockerd $pid stopped"
  else
    step "no recorded dockerd running"
  fi
  rm -f "$PIDFILE" "$RUN_DIR/dockerd.self.pid"
  cleanup_leftovers   # dockerd leaves its bridges up; after a crash also shims, containers, mounts
  step "leftovers cleaned (bridges, netns mounts, cgroups; processes if dockerd had died)"
  guard_off
  step "pull guard off: $HOSTS restored"
  # What must not be left: any process or mount of ours, the bridge, the guard.
  local left=""
  pgrep -f -- "--exec-root $EXEC_ROOT" >/dev/null && left+=" dockerd"
  pgrep -f -- "$EXEC_ROOT/containerd" >/dev/null && left+=" containerd/shim"
  [ -z "$(our_bridges)" ] || left+=" bridges:$(our_bridges | tr '\n' ' ')"
  awk -v e="$EXEC_ROOT" -v d="$DATA_ROOT" 'index($5, e) == 1 || index($5, d "/") == 1 || ($5 == d && $4 != "/")' \
    /proc/self/mountinfo | grep -q . && left+=" mounts"
  grep -qxF "$GUARD_BEGIN" "$HOSTS" && left+=" hosts-guard"
  [ -z "$left" ] || die "left behind:$left"
  step "nothing left behind (data root $DATA_ROOT kept)"
}

cmd_status() {
  local pid; pid=$(recorded_pid)
  if [ -z "$pid" ]; then echo "stopped"; return 3; fi
  if dc info >/dev/null 2>&1; then echo "running: pid $pid, $HOST, data root $DATA_ROOT"; else echo "pid $pid not answering"; return 1; fi
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) echo "export DOCKER_HOST=$HOST" ;;
  pidfile) echo "$PIDFILE" ;;
  *) echo "usage: $0 install|start|stop|status|env|pidfile" >&2; exit 2 ;;
esac
