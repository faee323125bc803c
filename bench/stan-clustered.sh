#!/usr/bin/env bash
# Starts a three-node clustered streaming deployment in the foreground, for
# ../shared/bench/stan-compare.sh (which gives HOST, PORT, MPORT and DATA_DIR and
# stops the process group at the end of a round):
#
#   stan-clustered.sh wirebus     three nats-server 2.9 nodes with JetStream clustering
#                                 (clients on $PORT and two free ports) and three
#                                 bin/wirebus --clustered nodes on them (-ns all three)
#   stan-clustered.sh wirebus-js  one bin/wirebus -js (wirebus's own JetStream, a single
#                                 engine node, R1) on $PORT and three bin/wirebus
#                                 --clustered nodes on it
#   stan-clustered.sh reference   one nats-server on $PORT and three reference
#                                 nats-streaming-server nodes, --clustered, FILE store
#                                 (RAFT_FILE); STAN_REF_BIN or /tmp/stan-ref/...
#
# Both are "three replicas": JetStream replicates each channel's stream on three
# servers (R3), the reference's raft replicates its log on three streaming nodes.
# The script exits when any process it started exits.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
mode=${1:?usage: stan-clustered.sh wirebus|wirebus-js|reference}
: "${PORT:?}" "${DATA_DIR:?}"
HOST=${HOST:-127.0.0.1}
ref_bin=${STAN_REF_BIN:-/tmp/stan-ref/nats-streaming-server}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT TERM INT

case $mode in
wirebus)
    ports=("$PORT" "$(free_port)" "$(free_port)")
    routes=("$(free_port)" "$(free_port)" "$(free_port)")
    urls=$(printf 'nats://127.0.0.1:%s,' "${ports[@]}"); urls=${urls%,}
    for i in 0 1 2; do
        r=""
        for j in 0 1 2; do [ "$j" != "$i" ] && r+="nats-route://127.0.0.1:${routes[$j]},"; done
        cat >"$DATA_DIR/js$i.conf" <<CONF
server_name: js$i
listen: 127.0.0.1:${ports[$i]}
jetstream { store_dir: "$DATA_DIR/js$i", max_memory_store: 256MB, max_file_store: 8GB }
cluster { name: wbjs, listen: 127.0.0.1:${routes[$i]}, routes: [${r%,}] }
CONF
        nats-server -c "$DATA_DIR/js$i.conf" &
        pids+=($!)
    done
    # The streaming nodes wait for JetStream themselves (they retry the connection).
    sleep 3
    for n in a b c; do
        peers=$(echo a b c | tr ' ' '\n' | grep -v "$n" | paste -sd,)
        node "$repo/bin/wirebus" -a 127.0.0.1 -p "$(free_port)" -ns "$urls" --clustered \
            --cluster_node_id "$n" --cluster_peers "$peers" -st FILE --dir "$DATA_DIR/$n" &
        pids+=($!)
    done
    ;;
wirebus-js)
    node "$repo/bin/wirebus" -a 127.0.0.1 -p "$PORT" -js -sd "$DATA_DIR/js" &
    pids+=($!)
    sleep 1
    for n in a b c; do
        peers=$(echo a b c | tr ' ' '\n' | grep -v "$n" | paste -sd,)
        node "$repo/bin/wirebus" -a 127.0.0.1 -p "$(free_port)" -ns "nats://127.0.0.1:$PORT" \
            --clustered --cluster_node_id "$n" --cluster_peers "$peers" -st FILE --dir "$DATA_DIR/$n" &
        pids+=($!)
    done
    ;;
reference)
    nats-server -a 127.0.0.1 -p "$PORT" &
    pids+=($!)
    sleep 0.5
    for n in a b c; do
        peers=$(echo a b c | tr ' ' '\n' | grep -v "$n" | paste -sd,)
        "$ref_bin" -ns "nats://127.0.0.1:$PORT" --clustered --cluster_node_id "$n" \
            --cluster_peers "$peers" -st FILE --dir "$DATA_DIR/$n" \
            --cluster_log_path "$DATA_DIR/$n/raft" &
        pids+=($!)
    done
    ;;
*)
    echo "stan-clustered.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
wait -n
