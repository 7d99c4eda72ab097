#!/bin/sh
# Starts and signals the peer nodes of test/node/test_cluster.sh (called by
# the driver node through os.execute; SKYNET_BUILD and CLUSTER_TMP come
# from its environment).
#   peer.sh start ID NAME   start a node serving as cluster node NAME;
#                           pid in $CLUSTER_TMP/ID.pid, log in ID.log,
#                           $CLUSTER_TMP/ID.ready appears once it listens
#   peer.sh signal ID SIG   kill -SIG the node ID
case "$1" in
start)
	rm -f "$CLUSTER_TMP/$2.ready"
	CLUSTER_START=cluster_b CLUSTER_ID=$2 CLUSTER_OPEN=$3 \
		"$SKYNET_BUILD/skynet" test/node/cluster/config >>"$CLUSTER_TMP/$2.log" 2>&1 </dev/null &
	echo $! >"$CLUSTER_TMP/$2.pid"
	;;
signal)
	kill "-$3" "$(cat "$CLUSTER_TMP/$2.pid")"
	;;
*)
	echo "usage: peer.sh start ID NAME | signal ID SIG" >&2
	exit 2
	;;
esac
