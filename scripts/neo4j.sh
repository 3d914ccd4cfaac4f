#!/usr/bin/env bash
# Real Neo4j Community server for DreamMem's tests and benchmarks, no Docker.
#
#   bash scripts/neo4j.sh up      # (build once,) start fresh & empty, print bolt URI last
#   bash scripts/neo4j.sh down    # stop (SIGTERM, then SIGKILL after a timeout); idempotent
#   bash scripts/neo4j.sh restart # stop if running, start again KEEPING the data and the port
#   bash scripts/neo4j.sh kill    # SIGKILL the server (a crash: no clean shutdown); data and port kept
#   bash scripts/neo4j.sh status  # "running pid N bolt://..." (exit 0) or "stopped" (exit 3)
#   bash scripts/neo4j.sh uri     # print the bolt URI of the running server (exit 1 if none)
#   bash scripts/neo4j.sh build   # only build tools/neo4j-launcher (Maven)
#
# The server is tools/neo4j-launcher (embedded Neo4j 5.26 LTS DBMS + Bolt, or the
# version NEO4J_VERSION names),
# bound to 127.0.0.1 only, auth disabled, HTTP off, telemetry off. Its jars
# come from Maven Central into tools/neo4j-launcher/target/lib (ignored by git,
# never shipped: Neo4j Community is GPLv3). State lives in .neo4j/ (ignored);
# the database is wiped on every `up`.
#
# Environment:
#   NEO4J_PORT            Bolt port. Unset: 7687, or a free port if 7687 is busy.
#                         0 or "auto": always a free port. Set: must be free.
#   NEO4J_HEAP            JVM heap (-Xmx), default 1g (-Xms is 512m or less).
#   NEO4J_PAGECACHE       page cache size, default 256m.
#   NEO4J_START_TIMEOUT   seconds to wait for readiness, default 120.
#   NEO4J_STOP_TIMEOUT    seconds to wait after SIGTERM before SIGKILL, default 30.
#   NEO4J_VERSION         Neo4j version to build and run (default: the pom's 5.26.x).
#                         Another version (e.g. 2026.08.1) builds into
#                         tools/neo4j-launcher/target-VERSION and runs on Java 21+
#                         (the Java 25 JDK when installed) for 2025.x and later.
#   NEO4J_JAVA            java executable (default: a Java 17 JDK; 21+ for 2025.x+).
#   NEO4J_STATE_DIR       state folder, default <repo>/.neo4j (<repo>/.neo4j-VERSION
#                         when NEO4J_VERSION is set)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
LAUNCHER_DIR="$REPO_ROOT/tools/neo4j-launcher"
VERSION="${NEO4J_VERSION:-}"
[[ -z "$VERSION" || "$VERSION" =~ ^[0-9][0-9A-Za-z.-]*$ ]] || { echo "neo4j.sh: error: bad NEO4J_VERSION '$VERSION'" >&2; exit 1; }
if [[ -n "$VERSION" ]]; then
    TARGET_DIR="$LAUNCHER_DIR/target-$VERSION"
    STATE_DIR="${NEO4J_STATE_DIR:-$REPO_ROOT/.neo4j-$VERSION}"
else
    TARGET_DIR="$LAUNCHER_DIR/target"
    STATE_DIR="${NEO4J_STATE_DIR:-$REPO_ROOT/.neo4j}"
fi
HOME_DIR="$STATE_DIR/home"
PID_FILE="$STATE_DIR/neo4j.pid"
PORT_FILE="$STATE_DIR/port"
URI_FILE="$STATE_DIR/uri"
LOG_FILE="$STATE_DIR/neo4j.log"
BUILD_LOG="$STATE_DIR/build.log"
MAIN_CLASS="dev.dreammem.neo4j.Launcher"
HOST="127.0.0.1"
START_TIMEOUT="${NEO4J_START_TIMEOUT:-120}"
STOP_TIMEOUT="${NEO4J_STOP_TIMEOUT:-30}"
HEAP="${NEO4J_HEAP:-1g}"
PAGECACHE="${NEO4J_PAGECACHE:-256m}"

log() { echo "neo4j.sh: $*" >&2; }
die() { echo "neo4j.sh: error: $*" >&2; exit 1; }

# ---------------------------------------------------------------- java / build

java_major() {  # java_major JAVA -> prints major version (e.g. 17)
    "$1" -XshowSettings:properties -version 2>&1 \
        | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n1
}

calver() {  # the version is 2025.x or later (Java 21 bytecode)
    [[ "$VERSION" =~ ^20[0-9][0-9]\. ]]
}

find_java() {
    if [[ -n "${NEO4J_JAVA:-}" ]]; then echo "$NEO4J_JAVA"; return; fi
    local cand
    if calver; then
        for cand in /usr/lib/jvm/*-25*/bin/java /usr/lib/jvm/*-21*/bin/java \
                    "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)"; do
            [[ -n "$cand" && -x "$cand" ]] || continue
            (( "$(java_major "$cand")" >= 21 )) && { echo "$cand"; return; }
        done
        die "Neo4j $VERSION needs Java 21 or later (set NEO4J_JAVA=/path/to/java)"
    fi
    # Neo4j 5.26 runs on Java 17 or 21; prefer the Java 17 default JDK.
    for cand in "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" \
                /usr/lib/jvm/java-17-openjdk-*/bin/java /usr/lib/jvm/*-17*/bin/java \
                /usr/lib/jvm/java-21-openjdk-*/bin/java /usr/lib/jvm/*-21*/bin/java; do
        [[ -n "$cand" && -x "$cand" ]] || continue
        case "$(java_major "$cand")" in 17|21) echo "$cand"; return ;; esac
    done
    die "no Java 17 or 21 found (set NEO4J_JAVA=/path/to/java)"
}

needs_build() {
    local stamp="$TARGET_DIR/.built"
    [[ -f "$stamp" && -f "$TARGET_DIR/classes/dev/dreammem/neo4j/Launcher.class" ]] || return 0
    compgen -G "$TARGET_DIR/lib/neo4j-kernel-*.jar" >/dev/null || return 0
    [[ -n "$(find "$LAUNCHER_DIR/pom.xml" "$LAUNCHER_DIR/src" -newer "$stamp" -print -quit)" ]] && return 0
    return 1
}

build() {
    local java="$1"
    command -v mvn >/dev/null || die "Maven (mvn) not found; install maven"
    mkdir -p "$STATE_DIR"
    log "building tools/neo4j-launcher ${VERSION:+(Neo4j $VERSION) }(first run downloads ~125 MB of jars from Maven Central)..."
    local java_home
    java_home="$(cd "$(dirname "$(readlink -f "$java")")/.." && pwd)"
    local -a props=()
    if [[ -n "$VERSION" ]]; then
        props=("-Dneo4j.version=$VERSION" "-Dlauncher.build.dir=$TARGET_DIR")
        calver && props+=("-Dmaven.compiler.release=21")
    fi
    rm -rf "$TARGET_DIR/lib"  # no stale jars after a version bump
    if ! (cd "$LAUNCHER_DIR" && JAVA_HOME="$java_home" mvn -B -q package "${props[@]}") >"$BUILD_LOG" 2>&1; then
        tail -n 40 "$BUILD_LOG" >&2
        die "Maven build failed (full log: $BUILD_LOG)"
    fi
    touch "$TARGET_DIR/.built"
    log "build ok"
}

# ---------------------------------------------------------------- processes

# Is PID alive and really our launcher (guards against recycled PIDs)?
is_ours() {
    local pid="$1"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    if [[ -r "/proc/$pid/cmdline" ]]; then
        tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$MAIN_CLASS" || return 1
    fi
    return 0
}

alive() {  # the process exists and is not a zombie waiting for its parent
    kill -0 "$1" 2>/dev/null || return 1
    [[ -r "/proc/$1/stat" ]] || return 0
    [[ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]]
}

running_pid() {
    [[ -f "$PID_FILE" ]] || return 1
    local pid
    pid="$(cat "$PID_FILE" 2>/dev/null || true)"
    is_ours "$pid" || return 1
    echo "$pid"
}

port_open() {  # something accepts TCP connections on HOST:$1
    (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
        return
    fi
    local p
    for _ in $(seq 200); do
        p=$(( 20000 + RANDOM % 40000 ))
        port_open "$p" || { echo "$p"; return; }
    done
    die "could not find a free port"
}

choose_port() {
    local p="${NEO4J_PORT-}"
    if [[ -z "$p" ]]; then
        if port_open 7687; then
            p="$(free_port)"
            log "port 7687 is busy, using free port $p"
        else
            p=7687
        fi
    elif [[ "$p" == 0 || "$p" == auto ]]; then
        p="$(free_port)"
    else
        [[ "$p" =~ ^[0-9]+$ ]] || die "NEO4J_PORT must be a number, 0 or auto (got '$p')"
        port_open "$p" && die "port $HOST:$p is already in use (NEO4J_PORT=$p)"
    fi
    echo "$p"
}

# ---------------------------------------------------------------- commands

cmd_down() {  # cmd_down [KILL]: SIGTERM (SIGKILL after STOP_TIMEOUT), or at once SIGKILL (a crash)
    local signal="${1:-TERM}" pid
    if ! pid="$(running_pid)"; then
        rm -f "$PID_FILE" "$URI_FILE"
        log "not running"
        return 0
    fi
    log "stopping pid $pid (SIG$signal)..."
    kill "-$signal" "$pid" 2>/dev/null || true
    local waited=0 limit=$(( STOP_TIMEOUT * 5 ))
    [[ "$signal" == TERM ]] || limit=150
    while alive "$pid" && (( waited < limit )); do sleep 0.2; waited=$((waited + 1)); done
    if alive "$pid" && [[ "$signal" == TERM ]]; then
        log "still alive after ${STOP_TIMEOUT}s, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        local k=0
        while alive "$pid" && (( k < 50 )); do sleep 0.2; k=$((k + 1)); done
    fi
    alive "$pid" && die "pid $pid did not exit"
    rm -f "$PID_FILE" "$URI_FILE"
    log "stopped"
}

cmd_up() {  # cmd_up [keep]: "keep" reuses the last database and port (restart)
    local keep="${1:-}" java pid port uri start_ns
    start_ns="$(date +%s%N)"
    mkdir -p "$STATE_DIR"
    if pid="$(running_pid)"; then
        if [[ -n "$keep" ]]; then log "restarting pid $pid, keeping its data"
        else log "already running (pid $pid); restarting with an empty database"; fi
        cmd_down
    fi
    rm -f "$PID_FILE" "$URI_FILE"

    java="$(find_java)"
    if needs_build; then build "$java"; fi
    if [[ -n "$keep" && -s "$PORT_FILE" && -d "$HOME_DIR" ]]; then
        port="$(cat "$PORT_FILE")"
        port_open "$port" && die "port $HOST:$port (of the last run) is in use"
    else
        [[ -n "$keep" ]] && log "no previous run to restart; starting fresh"
        port="$(choose_port)"
        # Fresh, empty database on every start.
        rm -rf "$HOME_DIR"
    fi
    echo "$port" >"$PORT_FILE"
    uri="bolt://$HOST:$port"
    mkdir -p "$HOME_DIR"

    local xms="512m"
    case "$HEAP" in [0-9]*m) (( ${HEAP%m} < 512 )) && xms="$HEAP" ;; esac

    local -a jvm=(
        "-Xms$xms" "-Xmx$HEAP"
        -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError
        --add-opens=java.base/java.nio=ALL-UNNAMED
        --add-opens=java.base/java.io=ALL-UNNAMED
        --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
        --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
        --add-opens=java.base/java.lang=ALL-UNNAMED
        --enable-native-access=ALL-UNNAMED
        -Dio.netty.tryReflectionSetAccessible=true
        -Djava.awt.headless=true
        -Dfile.encoding=UTF-8
    )
    local setsid_cmd=()
    command -v setsid >/dev/null && setsid_cmd=(setsid)

    log "starting Neo4j on $uri (log: $LOG_FILE)"
    # Non-interactive bash: the background child execs setsid which execs java
    # (it is not a process-group leader), so $! is the java pid.
    "${setsid_cmd[@]}" "$java" "${jvm[@]}" \
        -cp "$TARGET_DIR/classes:$TARGET_DIR/lib/*" \
        "$MAIN_CLASS" --home "$HOME_DIR" --host "$HOST" --port "$port" --pagecache "$PAGECACHE" \
        >"$LOG_FILE" 2>&1 </dev/null 9>&- &
    pid=$!
    echo "$pid" >"$PID_FILE"

    local deadline=$(( $(date +%s) + START_TIMEOUT ))
    while :; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 40 "$LOG_FILE" >&2 || true
            rm -f "$PID_FILE"
            die "Neo4j exited during start-up (log: $LOG_FILE)"
        fi
        if grep -q "^NEO4J READY $uri" "$LOG_FILE" 2>/dev/null && port_open "$port"; then
            break
        fi
        if (( $(date +%s) >= deadline )); then
            tail -n 40 "$LOG_FILE" >&2 || true
            kill -TERM "$pid" 2>/dev/null || true
            sleep 2
            kill -KILL "$pid" 2>/dev/null || true
            rm -f "$PID_FILE"
            die "Neo4j not ready after ${START_TIMEOUT}s (log: $LOG_FILE)"
        fi
        sleep 0.25
    done
    echo "$uri" >"$URI_FILE"
    local ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
    log "ready in $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s (pid $pid)"
    echo "$uri"
}

cmd_status() {
    local pid
    if pid="$(running_pid)"; then
        echo "running pid $pid $(cat "$URI_FILE" 2>/dev/null || echo '(starting)')"
    else
        echo "stopped"
        return 3
    fi
}

cmd_uri() {
    running_pid >/dev/null && [[ -s "$URI_FILE" ]] || die "Neo4j is not running (bash scripts/neo4j.sh up)"
    cat "$URI_FILE"
}

with_lock() {  # serialise up/down (e.g. parallel test workers)
    mkdir -p "$STATE_DIR"
    if command -v flock >/dev/null; then
        exec 9>"$STATE_DIR/lock"
        flock -w 300 9 || die "could not get $STATE_DIR/lock"
    fi
    "$@"
}

case "${1:-}" in
    up)     with_lock cmd_up ;;
    restart) with_lock cmd_up keep ;;
    down)   with_lock cmd_down ;;
    kill)   with_lock cmd_down KILL ;;
    status) cmd_status ;;
    uri)    cmd_uri ;;
    build)  with_lock build "$(find_java)" ;;
    *)      echo "usage: $0 {up|down|restart|kill|status|uri|build}" >&2; exit 2 ;;
esac
