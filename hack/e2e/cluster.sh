#!/usr/bin/env bash
# A one-node Kubernetes cluster on this machine, from Debian's containerd,
# runc and CNI plugins and Kubernetes components built from Go modules, for
# `make test-e2e`. No systemd: every component is a plain process, stopped by
# the PID it was started with.
#
#   hack/e2e/cluster.sh up IMAGES_DIR   start it, import the images, wait for the node
#   hack/e2e/cluster.sh down            stop it and remove everything it made (idempotent)
#   hack/e2e/cluster.sh check           exit 1, naming it, if anything of it is left
#   hack/e2e/cluster.sh env             the variables the tests read
#
# Test traffic stays on this machine: Pods and Services use ranges that exist
# nowhere else (POD_CIDR, SVC_CIDR), the node's address (NODE_IP) lives on
# the loopback interface, the CNI bridge masquerades nothing, and a FORWARD
# rule drops whatever the Pod range sends to the external interface.
#
# Binaries: K8S_BIN (kubelet, kube-controller-manager, kube-scheduler,
# kube-proxy, kubectl) and ENVTEST_BIN (kube-apiserver, etcd).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
: "${K8S_BIN:?K8S_BIN must name the directory of kubelet, kube-proxy, ...}"
: "${ENVTEST_BIN:=$repo/bin/k8s}"
: "${E2E_LOG_DIR:=$repo/bin/e2e/logs}"

NAME=servicewatch-e2e
ROOT=/var/lib/$NAME # data: etcd, containerd, kubelet, PKI
RUN=/run/$NAME      # sockets, PIDs, the runc and IPAM state
NODE_IP=10.215.255.1
POD_CIDR=10.213.0.0/24
SVC_CIDR=10.214.0.0/24
BRIDGE=swe2e0
SOCK=$RUN/containerd.sock
KUBECONFIG_FILE=$ROOT/pki/admin.kubeconfig
EGRESS_COMMENT=servicewatch-e2e-no-egress
PAUSE_IMAGE=localhost/servicewatch-e2e/pause:e2e

ext_if() { ip -4 route show default | awk '{for (i = 1; i < NF; i++) if ($i == "dev") { print $(i+1); exit }}'; }

log() { echo ">> e2e cluster: $*"; }

# --- up ---------------------------------------------------------------------

pki() {
	local d=$ROOT/pki
	mkdir -p "$d"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=$NAME-ca" -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
	cert "$d" apiserver "/CN=kube-apiserver" \
		"DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP,IP:${SVC_CIDR%.0/*}.1"
	# One client identity for the admin, the control plane's controllers and
	# the kubelet: this cluster lives for one test run on one machine.
	cert "$d" admin "/O=system:masters/CN=$NAME-admin" ""
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/sa.key" 2>/dev/null
	openssl pkey -in "$d/sa.key" -pubout -out "$d/sa.pub"
	cat >"$KUBECONFIG_FILE" <<-EOF
	apiVersion: v1
	kind: Config
	clusters:
	- name: $NAME
	  cluster:
	    server: https://$NODE_IP:6443
	    certificate-authority: $d/ca.crt
	users:
	- name: admin
	  user:
	    client-certificate: $d/admin.crt
	    client-key: $d/admin.key
	contexts:
	- name: $NAME
	  context: {cluster: $NAME, user: admin}
	current-context: $NAME
	EOF
}

cert() {
	local d=$1 name=$2 subj=$3 san=$4
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$subj" \
		-keyout "$d/$name.key" -out "$d/$name.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		if [[ -n "$san" ]]; then echo "subjectAltName=$san"; fi
	} >"$d/$name.ext"
	openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 2 -extfile "$d/$name.ext" -out "$d/$name.crt" 2>/dev/null
}

# start NAME COMMAND...: runs a component in the background, its output in
# E2E_LOG_DIR/NAME.log and its PID in RUN/pids/NAME. In a session of its
# own, so that a Ctrl-C of make reaches the tests and the teardown, not the
# cluster under them: the teardown stops the components in order.
start() {
	local name=$1
	shift
	setsid "$@" >"$E2E_LOG_DIR/$name.log" 2>&1 </dev/null &
	echo $! >"$RUN/pids/$name"
}

# wait_for WHAT SECONDS COMMAND...: polls COMMAND until it succeeds.
wait_for() {
	local what=$1 secs=$2
	shift 2
	local i
	for ((i = 0; i < secs * 4; i++)); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.25
	done
	echo "e2e cluster: $what not up after ${secs}s; see $E2E_LOG_DIR" >&2
	return 1
}

network() {
	local ext
	ext=$(ext_if)
	# Record what is changed, so that down restores it.
	cat /proc/sys/net/ipv4/ip_forward >"$RUN/ip_forward.orig"
	cat /proc/sys/net/bridge/bridge-nf-call-iptables >"$RUN/bridge-nf-call-iptables.orig" 2>/dev/null || true
	ls /run/netns 2>/dev/null | sort >"$RUN/netns.orig" || true
	# The egress guard goes in before anything can send: new traffic from
	# the Pod range to the external interface is dropped, never routed out.
	iptables -I FORWARD 1 -s "$POD_CIDR" -o "$ext" -m comment --comment "$EGRESS_COMMENT" -j DROP
	ip addr add "$NODE_IP/32" dev lo
	# Pods reach Services and each other through the host: forwarding on,
	# and bridged traffic through iptables so kube-proxy's NAT sees replies.
	echo 1 >/proc/sys/net/ipv4/ip_forward
	echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || true
	mkdir -p "$ROOT/cni"
	cat >"$ROOT/cni/10-$NAME.conflist" <<-EOF
	{
	  "cniVersion": "0.4.0",
	  "name": "$NAME",
	  "plugins": [{
	    "type": "bridge",
	    "bridge": "$BRIDGE",
	    "isGateway": true,
	    "ipMasq": false,
	    "hairpinMode": true,
	    "ipam": {
	      "type": "host-local",
	      "dataDir": "$RUN/ipam",
	      "ranges": [[{"subnet": "$POD_CIDR"}]],
	      "routes": [{"dst": "0.0.0.0/0"}]
	    }
	  }]
	}
	EOF
}

# The egress guard first in FORWARD, ahead of the rules kube-proxy prepends.
egress_guard_first() {
	local ext
	ext=$(ext_if)
	while iptables -D FORWARD -s "$POD_CIDR" -o "$ext" -m comment --comment "$EGRESS_COMMENT" -j DROP 2>/dev/null; do :; done
	iptables -I FORWARD 1 -s "$POD_CIDR" -o "$ext" -m comment --comment "$EGRESS_COMMENT" -j DROP
}

containerd_up() {
	mkdir -p "$ROOT/containerd" "$RUN/containerd" "$ROOT/pod-logs"
	[[ -d /run/containerd ]] && touch "$RUN/run-containerd.existed"
	cat >"$ROOT/containerd.toml" <<-EOF
	version = 2
	root = "$ROOT/containerd"
	state = "$RUN/containerd"
	disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
	[grpc]
	  address = "$SOCK"
	[ttrpc]
	  address = "$RUN/containerd.sock.ttrpc"
	[plugins."io.containerd.internal.v1.opt"]
	  path = "$ROOT/containerd-opt"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "$PAUSE_IMAGE"
	  # The machine lacks CAP_SYS_RESOURCE: without this every sandbox fails
	  # with runc's "can't get final child's PID from pipe: EOF".
	  restrict_oom_score_adj = true
	  stream_server_address = "127.0.0.1"
	  stream_server_port = "0"
	  [plugins."io.containerd.grpc.v1.cri".containerd]
	    snapshotter = "overlayfs"
	    default_runtime_name = "runc"
	    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
	      runtime_type = "io.containerd.runc.v2"
	      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
	        SystemdCgroup = false
	        Root = "$RUN/runc"
	  [plugins."io.containerd.grpc.v1.cri".cni]
	    bin_dir = "/usr/lib/cni"
	    conf_dir = "$ROOT/cni"
	EOF
	start containerd containerd --config "$ROOT/containerd.toml"
	wait_for containerd 30 ctr -a "$SOCK" version
}

import_images() {
	local images=$1 a
	for a in pause manager manager-previous fakecloud; do
		ctr -a "$SOCK" -n k8s.io images import --no-unpack=false "$images/$a.tar" >/dev/null
	done
	ctr -a "$SOCK" -n k8s.io images ls -q
}

control_plane_up() {
	local d=$ROOT/pki
	mkdir -p "$ROOT/etcd"
	start etcd "$ENVTEST_BIN/etcd" --name "$NAME" --data-dir "$ROOT/etcd" --unsafe-no-fsync \
		--listen-client-urls "http://$NODE_IP:2379" --advertise-client-urls "http://$NODE_IP:2379" \
		--listen-peer-urls "http://$NODE_IP:2380" --initial-advertise-peer-urls "http://$NODE_IP:2380" \
		--initial-cluster "$NAME=http://$NODE_IP:2380" --listen-metrics-urls "http://$NODE_IP:2381"
	start kube-apiserver "$ENVTEST_BIN/kube-apiserver" \
		--etcd-servers "http://$NODE_IP:2379" \
		--bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port 6443 \
		--service-cluster-ip-range "$SVC_CIDR" \
		--client-ca-file "$d/ca.crt" --tls-cert-file "$d/apiserver.crt" --tls-private-key-file "$d/apiserver.key" \
		--kubelet-client-certificate "$d/admin.crt" --kubelet-client-key "$d/admin.key" \
		--kubelet-preferred-address-types InternalIP \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$d/sa.pub" --service-account-signing-key-file "$d/sa.key" \
		--authorization-mode RBAC --allow-privileged=true --profiling=false
	wait_for kube-apiserver 90 "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" get --raw /readyz
	start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
		--kubeconfig "$KUBECONFIG_FILE" --authentication-kubeconfig "$KUBECONFIG_FILE" --authorization-kubeconfig "$KUBECONFIG_FILE" \
		--bind-address "$NODE_IP" --leader-elect=false \
		--service-account-private-key-file "$d/sa.key" --root-ca-file "$d/ca.crt" \
		--use-service-account-credentials --cluster-cidr "$POD_CIDR" --service-cluster-ip-range "$SVC_CIDR" \
		--profiling=false
	start kube-scheduler "$K8S_BIN/kube-scheduler" \
		--kubeconfig "$KUBECONFIG_FILE" --authentication-kubeconfig "$KUBECONFIG_FILE" --authorization-kubeconfig "$KUBECONFIG_FILE" \
		--bind-address "$NODE_IP" --leader-elect=false --profiling=false
}

node_up() {
	mkdir -p "$ROOT/kubelet"
	cat >"$ROOT/kubelet.yaml" <<-EOF
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	address: $NODE_IP
	healthzBindAddress: $NODE_IP
	readOnlyPort: 0
	authentication:
	  anonymous: {enabled: false}
	  webhook: {enabled: false}
	  x509: {clientCAFile: $ROOT/pki/ca.crt}
	authorization: {mode: AlwaysAllow}
	containerRuntimeEndpoint: unix://$SOCK
	# cgroups v1 here; containerd 1.6 cannot tell the kubelet its driver.
	cgroupDriver: cgroupfs
	failCgroupV1: false
	failSwapOn: false
	# The images are imported, never pulled: never collect them.
	imageGCHighThresholdPercent: 100
	imageGCLowThresholdPercent: 99
	evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
	podLogsDir: $ROOT/pod-logs
	# No resolver for Pods: nothing in the tests resolves a name, and a
	# query to the host's resolver would be traffic leaving the machine.
	resolvConf: ""
	clusterDomain: cluster.local
	serializeImagePulls: false
	EOF
	start kubelet "$K8S_BIN/kubelet" --config "$ROOT/kubelet.yaml" --kubeconfig "$KUBECONFIG_FILE" \
		--root-dir "$ROOT/kubelet" --cert-dir "$ROOT/kubelet/pki" \
		--hostname-override "$NAME" --node-ip "$NODE_IP"
	cat >"$ROOT/kube-proxy.yaml" <<-EOF
	apiVersion: kubeproxy.config.k8s.io/v1alpha1
	kind: KubeProxyConfiguration
	clientConnection: {kubeconfig: $KUBECONFIG_FILE}
	hostnameOverride: $NAME
	mode: iptables
	clusterCIDR: $POD_CIDR
	bindAddress: $NODE_IP
	healthzBindAddress: $NODE_IP:10256
	metricsBindAddress: $NODE_IP:10249
	# NodePorts only on the node's own address, never on the external
	# interface, and no route_localnet.
	nodePortAddresses: [$NODE_IP/32]
	iptables: {localhostNodePorts: false}
	# Leave the machine's conntrack table size alone.
	conntrack: {maxPerCore: 0}
	EOF
	start kube-proxy "$K8S_BIN/kube-proxy" --config "$ROOT/kube-proxy.yaml"
	wait_for "node $NAME Ready" 120 "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" wait --for=condition=Ready "node/$NAME" --timeout=1s
	wait_for "kube-proxy" 60 curl -fsS "http://$NODE_IP:10256/healthz"
	wait_for "the default ServiceAccount" 60 "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" get serviceaccount default
}

up() {
	local images=${1:?usage: cluster.sh up IMAGES_DIR}
	if [[ -e "$RUN" || -e "$ROOT" ]]; then
		echo "e2e cluster: $RUN or $ROOT exists: run 'hack/e2e/cluster.sh down' first" >&2
		return 1
	fi
	mkdir -p "$RUN/pids" "$ROOT" "$E2E_LOG_DIR"
	local t0=$SECONDS
	network
	pki
	containerd_up
	import_images "$images"
	control_plane_up
	node_up
	egress_guard_first
	log "node $NAME Ready after $((SECONDS - t0))s (kubeconfig: $KUBECONFIG_FILE)"
}

# --- down -------------------------------------------------------------------

# Our processes: the PIDs we recorded, and any process whose command line
# names this cluster's directories or socket (containerd's shims, a
# component whose PID file was lost to a SIGKILL of its parent).
our_pids() {
	local f p cmd
	for f in "$RUN"/pids/*; do
		[[ -f "$f" ]] || continue
		p=$(cat "$f")
		[[ -d /proc/$p ]] && echo "$p"
	done
	# Matched in bash, not by grep, so that no helper process of this very
	# scan has the pattern in its own command line.
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[[ "$p" == "$$" || "$p" == "$BASHPID" ]] && continue
		cmd=$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null) || continue
		if [[ "$cmd" == *"$ROOT"* || "$cmd" == *"$RUN/"* || "$cmd" == "$K8S_BIN/"* ]]; then
			echo "$p"
		fi
	done
}

# The containers' processes: whatever is in the kubelet's cgroups.
pod_pids() {
	find /sys/fs/cgroup/*/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u
}

# stop_pid PID: SIGTERM, up to 10s, then SIGKILL.
stop_pids() {
	local pids=("$@") p i
	((${#pids[@]})) || return 0
	kill -TERM "${pids[@]}" 2>/dev/null || true
	for ((i = 0; i < 40; i++)); do
		local alive=()
		for p in "${pids[@]}"; do [[ -d /proc/$p ]] && alive+=("$p"); done
		((${#alive[@]})) || return 0
		sleep 0.25
	done
	kill -KILL "${alive[@]}" 2>/dev/null || true
}

down() {
	local kubectl=("$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" --request-timeout=5s)
	# While the node still runs, let the kubelet stop the Pods itself: it
	# tears their networks down through CNI.
	if [[ -f "$RUN/pids/kubelet" ]] && "${kubectl[@]}" get --raw /readyz >/dev/null 2>&1; then
		log "deleting every Pod"
		"${kubectl[@]}" delete pods --all --all-namespaces --grace-period=1 --wait=false >/dev/null 2>&1 || true
		local i
		for ((i = 0; i < 60; i++)); do
			[[ -z "$(ctr -a "$SOCK" -n k8s.io tasks ls -q 2>/dev/null)" ]] && break
			sleep 0.5
		done
	fi
	# Components first (the kubelet would restart what we kill), then
	# containerd, then whatever is left in the Pods' cgroups, then the shims.
	local name p
	for name in kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do
		if [[ -f "$RUN/pids/$name" ]]; then
			p=$(cat "$RUN/pids/$name")
			[[ -d /proc/$p ]] && stop_pids "$p"
		fi
	done
	if [[ -S "$SOCK" ]]; then
		local t
		for t in $(ctr -a "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
			ctr -a "$SOCK" -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
		done
	fi
	mapfile -t pids < <(pod_pids)
	((${#pids[@]})) && kill -KILL "${pids[@]}" 2>/dev/null || true
	mapfile -t pids < <(our_pids | sort -u)
	stop_pids "${pids[@]}"
	# Mounts under our directories, deepest first; then the Pods' network
	# namespaces that appeared while we ran.
	local m
	for m in $(awk -v a="$ROOT" -v b="$RUN" '$5 ~ "^"a || $5 ~ "^"b {print $5}' /proc/self/mountinfo | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	if [[ -f "$RUN/netns.orig" ]]; then
		for m in $(comm -13 "$RUN/netns.orig" <(ls /run/netns 2>/dev/null | sort) | grep '^cni-' || true); do
			umount "/run/netns/$m" 2>/dev/null || umount -l "/run/netns/$m" 2>/dev/null || true
			rm -f "/run/netns/$m"
		done
	fi
	# Cgroups the kubelet made, deepest first.
	find /sys/fs/cgroup/*/kubepods -depth -type d -exec rmdir {} \; 2>/dev/null || true
	ip link del "$BRIDGE" 2>/dev/null || true
	ip addr del "$NODE_IP/32" dev lo 2>/dev/null || true
	iptables_clean
	if [[ -f "$RUN/ip_forward.orig" ]]; then cat "$RUN/ip_forward.orig" >/proc/sys/net/ipv4/ip_forward; fi
	if [[ -s "$RUN/bridge-nf-call-iptables.orig" ]]; then cat "$RUN/bridge-nf-call-iptables.orig" >/proc/sys/net/bridge/bridge-nf-call-iptables; fi
	if [[ -d /run/containerd && ! -e "$RUN/run-containerd.existed" && -f "$RUN/ip_forward.orig" ]]; then
		rm -rf /run/containerd
	fi
	rm -rf "$RUN" "$ROOT"
}

# Removes the kubelet's and kube-proxy's chains (KUBE-*), the rules that jump
# to them, and our egress guard, from every table of iptables and ip6tables.
iptables_clean() {
	local ipt t rule chain
	for ipt in iptables ip6tables; do
		for t in filter nat mangle raw; do
			$ipt -t "$t" -S >/dev/null 2>&1 || continue
			while read -r rule; do
				eval "$ipt -t $t ${rule/-A /-D }" 2>/dev/null || true
			done < <($ipt -t "$t" -S | grep -E '^-A [A-Z]+ ' | grep -E -- "-j (KUBE|CNI)-|$EGRESS_COMMENT" | grep -vE '^-A (KUBE|CNI)-')
			for chain in $($ipt -t "$t" -S | awk '/^-N (KUBE|CNI)-/ {print $2}'); do $ipt -t "$t" -F "$chain"; done
			for chain in $($ipt -t "$t" -S | awk '/^-N (KUBE|CNI)-/ {print $2}'); do $ipt -t "$t" -X "$chain" 2>/dev/null || true; done
		done
	done
}

# --- check ------------------------------------------------------------------

check() {
	local left=()
	local p
	for p in $(our_pids; pod_pids); do
		left+=("process $p: $({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | cut -c1-120)")
	done
	local ipt t
	for ipt in iptables ip6tables; do
		for t in filter nat mangle raw; do
			while read -r r; do left+=("$ipt -t $t: $r"); done < <($ipt -t "$t" -S 2>/dev/null | grep -E -- "KUBE-|CNI-|$EGRESS_COMMENT" || true)
		done
	done
	nft list tables 2>/dev/null | grep -q kube-proxy && left+=("nftables table kube-proxy")
	ip link show "$BRIDGE" >/dev/null 2>&1 && left+=("bridge $BRIDGE")
	ip -o link show type veth 2>/dev/null | grep -q "master $BRIDGE" && left+=("veth on $BRIDGE")
	ip -4 addr show dev lo | grep -q "$NODE_IP/" && left+=("address $NODE_IP on lo")
	while read -r m; do left+=("mount $m"); done < <(awk -v a="$ROOT" -v b="$RUN" '$5 ~ "^"a || $5 ~ "^"b {print $5}' /proc/self/mountinfo)
	while read -r m; do left+=("network namespace $m"); done < <(ls /run/netns 2>/dev/null | grep '^cni-' || true)
	[[ -d /sys/fs/cgroup/pids/kubepods ]] && left+=("cgroup kubepods")
	[[ -e "$ROOT" ]] && left+=("directory $ROOT")
	[[ -e "$RUN" ]] && left+=("directory $RUN")
	if ((${#left[@]})); then
		echo "e2e cluster: left behind after teardown:" >&2
		printf '  %s\n' "${left[@]}" >&2
		return 1
	fi
	log "nothing left: no process, iptables chain, bridge, address, mount, network namespace, cgroup or directory of the cluster"
}

env_() {
	cat <<-EOF
	export KUBECONFIG=$KUBECONFIG_FILE
	export E2E_KUBECTL=$K8S_BIN/kubectl
	export E2E_NODE_IP=$NODE_IP
	export E2E_POD_CIDR=$POD_CIDR
	export E2E_EXT_IF=$(ext_if)
	export E2E_EGRESS_COMMENT=$EGRESS_COMMENT
	EOF
}

case "${1:-}" in
up) up "${2:-}" ;;
down) down ;;
check) check ;;
env) env_ ;;
*)
	echo "usage: $0 up IMAGES_DIR | down | check | env" >&2
	exit 2
	;;
esac
