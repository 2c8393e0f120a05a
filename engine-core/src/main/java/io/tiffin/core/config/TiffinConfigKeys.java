package io.tiffin.core.config;

import static java.time.temporal.ChronoUnit.HOURS;
import static java.time.temporal.ChronoUnit.MILLIS;
import static java.time.temporal.ChronoUnit.SECONDS;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every configuration key of Tiffin, with its default, in one place, plus the rules that relate
 * several keys ({@link #crossCheck}), the open prefixes and the Mooncake environment aliases.
 *
 * <p>Plain-number durations follow Mooncake's units: milliseconds for leases, pins and intervals,
 * seconds for the keys Mooncake names {@code *_sec}.
 *
 * <p>Thread-safe (constants).
 */
public final class TiffinConfigKeys {
    // ------------------------------------------------------------------------------------ master
    public static final ConfigKey<String> MASTER_HOST = ConfigKey.host("master.host", "127.0.0.1", false,
            "Interface the master's RPC and admin servers bind to.");
    public static final ConfigKey<Integer> MASTER_PORT = ConfigKey.port("master.port", 50051,
            "Port of the master's RPC server.");
    public static final ConfigKey<Integer> MASTER_ADMIN_PORT = ConfigKey.port("master.admin-port", 9003,
            "Port of the master's HTTP admin server (metrics, health, queries).");
    public static final ConfigKey<String> MASTER_ADDRESS = ConfigKey.addressList("master.address", "127.0.0.1:50051",
            "Address nodes and clients connect to to reach the master; with standby masters, all of them"
                    + " (host:port,host:port,...): the leader is found among them.");
    public static final ConfigKey<String> MASTER_COORDINATOR = ConfigKey.string("master.coordinator", "",
            "Coordination service electing one leader among several masters: zk://host:port[,host:port...][/root]"
                    + " (ZooKeeper; root /tiffin by default). Empty = a single master.");
    public static final ConfigKey<String> MASTER_STATE_DIR = ConfigKey.string("master.state-dir", "",
            "Directory where a single master (no master.coordinator) keeps the cluster facts, so that after a"
                    + " restart its nodes attach and keep their objects. Empty = a restarted master starts empty."
                    + " Setting it together with master.coordinator is an error (masters with failover keep the"
                    + " facts in the coordination service).");
    public static final ConfigKey<String> MASTER_ADVERTISE_ADDRESS = ConfigKey.string("master.advertise-address", "",
            "host:port clients and nodes reach this master at, as other masters name it; empty = master.host:"
                    + "master.port (127.0.0.1 for a wildcard host).");
    public static final ConfigKey<Duration> MASTER_COORDINATOR_SESSION_TIMEOUT = ConfigKey.duration(
            "master.coordinator-session-timeout", "3s", MILLIS, "How long after a master loses its connection to"
                    + " the coordination service its session ends: a dead leader is replaced about that long after"
                    + " it died (the server may raise it to twice its tick time).");
    public static final ConfigKey<Duration> MASTER_LEASE_TTL = ConfigKey.duration("master.lease-ttl", "10s", MILLIS,
            "How long a read lease keeps an object from being removed or evicted (a forced remove or replacement,"
                    + " and an expiry, keep its buffers until then instead). A lookup of an object with an expiry"
                    + " deadline gets at most twice its time left (at least 100 ms), so location caches do not serve"
                    + " it past the deadline.");
    public static final ConfigKey<Duration> MASTER_SOFT_PIN_TTL = ConfigKey.duration("master.soft-pin-ttl", "30m",
            MILLIS, "How long a soft-pinned object is protected from eviction after its last access.");
    public static final ConfigKey<Duration> MASTER_MAX_SOFT_PIN_TTL = ConfigKey.duration("master.max-soft-pin-ttl",
            "24h", MILLIS, "Upper bound for a soft-pin TTL a client may request.");
    public static final ConfigKey<Boolean> MASTER_ALLOW_EVICT_SOFT_PINNED = ConfigKey.bool(
            "master.allow-evict-soft-pinned", true,
            "Whether eviction may remove soft-pinned objects when nothing else can be evicted.");
    public static final ConfigKey<Double> MASTER_EVICTION_HIGH_WATERMARK = ConfigKey.ratio(
            "master.eviction-high-watermark", 0.90, 0.0, false, 1.0, true,
            "Used fraction of total capacity above which the master starts evicting.");
    public static final ConfigKey<Double> MASTER_EVICTION_RATIO = ConfigKey.ratio("master.eviction-ratio", 0.05,
            0.0, true, 1.0, true, "Fraction of objects evicted in one eviction pass.");
    public static final ConfigKey<Duration> MASTER_EVICTION_INTERVAL = ConfigKey.duration(
            "master.eviction-interval", "10ms", MILLIS, "Pause between two eviction checks while the pool is within 10"
                    + " points of the high watermark or an allocation failed; ten times as long otherwise (a failed"
                    + " allocation brings the next check forward).");
    public static final ConfigKey<Duration> MASTER_NODE_TTL = ConfigKey.duration("master.node-ttl", "10s", SECONDS,
            "A node that has not pinged for this long is considered dead and its segments are unmounted.");
    public static final ConfigKey<Duration> MASTER_NODE_CHECK_INTERVAL = ConfigKey.duration(
            "master.node-check-interval", "1s", MILLIS, "How often the master looks for dead nodes.");
    public static final ConfigKey<Duration> MASTER_PUT_START_DISCARD_TIMEOUT = ConfigKey.duration(
            "master.put-start-discard-timeout", "30s", SECONDS,
            "After this long an unfinished put may be discarded by a new put of the same key.");
    public static final ConfigKey<Duration> MASTER_PUT_START_RELEASE_TIMEOUT = ConfigKey.duration(
            "master.put-start-release-timeout", "600s", SECONDS,
            "After this long an SSD-tier task (offload, promotion) whose node never reported is abandoned.");
    public static final ConfigKey<Duration> MASTER_PUT_TIMEOUT = ConfigKey.duration("master.put-timeout", "60s",
            SECONDS, "A put whose writer has neither ended (PutEnd) nor revoked it this long after its PutStart is"
                    + " abandoned and its space freed; a later PutEnd is refused (INVALID_WRITE). Longer than the"
                    + " slowest write of the largest object (32 MiB at 1 MB/s: 34 s).");
    public static final ConfigKey<Duration> MASTER_RECOVERY_READ_WAIT = ConfigKey.durationOrZero(
            "master.recovery-read-wait", "2s", MILLIS, "For this long after a master took over (or restarted with"
                    + " master.state-dir), while it still recovers objects from nodes that have not attached, a lookup"
                    + " (get, exist, their batches, regex queries) that needs one of those objects is refused with"
                    + " UNAVAILABLE_IN_CURRENT_STATUS, which clients retry, so it is answered once the nodes are back"
                    + " instead of as a miss. Later in a recovery such lookups answer REPLICA_IS_NOT_READY (exist:"
                    + " false). 0 = answer at once.");
    public static final ConfigKey<Integer> MASTER_WORKER_THREADS = ConfigKey.integer("master.worker-threads", 0, 0,
            4096, "threads", "Threads serving master requests; 0 = the number of cores.");
    public static final ConfigKey<Integer> MASTER_MAX_KEY_LENGTH = ConfigKey.integer("master.max-key-length", 4096, 1,
            65536, "bytes", "Longest object key accepted, in UTF-8 bytes.");
    /** At most the master's ObjectMetadata.MAX_SIZE (sizes kept in 56 bits; ObjectMetadataTest checks they agree). */
    public static final ConfigKey<Long> MASTER_MAX_OBJECT_SIZE = ConfigKey.size("master.max-object-size", "1TiB", 1,
            (1L << 56) - 1, "Largest object a put may store (at most 64 PiB - 1: the master keeps sizes in 56 bits).");
    public static final ConfigKey<Double> MASTER_MAX_HARD_PINNED_SHARE = ConfigKey.ratio(
            "master.max-hard-pinned-share", 0.5, 0.0, true, 1.0, true,
            "Largest share of the mounted capacity that hard-pinned objects (never evicted) may take; a put asking"
                    + " for a hard pin beyond it is refused (INVALID_PARAMS), so a client cannot fill the store with"
                    + " objects nothing can evict. Checked when the put starts.");
    public static final ConfigKey<String> ALLOCATION_STRATEGY = ConfigKey.pluginName("allocation.strategy", "random",
            "Allocation strategy placing replicas on segments; must be installed (see `tiffin plugins`).");

    // -------------------------------------------------------------------------------------- node
    public static final ConfigKey<String> NODE_ID = ConfigKey.string("node.id", "",
            "Unique id of this node; empty = generated at start-up. With an SSD tier the id is kept in"
                    + " node.storage-path's node.id file: empty takes the id written there (or generates one and"
                    + " writes it), and a set id must equal it.");
    public static final ConfigKey<String> NODE_HOST = ConfigKey.host("node.host", "127.0.0.1", true,
            "Host name or address this node binds to and advertises to the master (clients connect to it).");
    public static final ConfigKey<Integer> NODE_PORT = ConfigKey.port("node.port", 0,
            "Port of the node's transfer server; 0 = any free port.");
    public static final ConfigKey<Long> NODE_SEGMENT_SIZE = ConfigKey.size("node.segment-size", "1GiB", Sizes.MIB,
            Long.MAX_VALUE, "Memory this node contributes to the store, mounted as one segment.");
    public static final ConfigKey<Boolean> NODE_SEGMENT_PREFAULT = ConfigKey.bool("node.segment-prefault", false,
            "Back every page of the segment's anonymous memory at start-up (the node starts once it has all of it)"
                    + " instead of as each is first written (the node starts at once, its resident memory grows as"
                    + " it fills).");
    public static final ConfigKey<Duration> NODE_PING_INTERVAL = ConfigKey.duration("node.ping-interval", "1s", MILLIS,
            "How often a node pings the master to stay alive.");
    public static final ConfigKey<Integer> NODE_IO_THREADS = ConfigKey.integer("node.io-threads", 0, 0, 1024, "threads",
            "Event-loop threads of a node's data plane; 0 = one per available processor. Each sends one value at a"
                    + " time (the kernel's copy into the socket), so fewer loops than cores leave cores idle on reads"
                    + " of large values.");
    public static final ConfigKey<String> NODE_SHARED_MEMORY_DIR = ConfigKey.string("node.shared-memory-dir", "",
            "Directory on a tmpfs (e.g. /dev/shm) for the node's segment as a shared-memory file, which clients on"
                    + " the same host map and copy directly instead of using the socket; needs room for"
                    + " node.segment-size (reserved at start-up). Empty = anonymous memory, socket only.");

    public static final ConfigKey<Long> NODE_SSD_READ_MEMORY = ConfigKey.size("node.ssd-read-memory", "256MiB",
            Sizes.MIB, 64 * Sizes.GIB, "Bytes of SSD reads (DATA_READ_SSD) a node holds in memory at once; a read"
                    + " waits for room on the node's I/O threads, and one request may ask for at most"
                    + " transport.max-frame-size.");
    public static final ConfigKey<Integer> NODE_SSD_READ_QUEUE = ConfigKey.integer("node.ssd-read-queue", 256, 1,
            1_000_000, "requests", "SSD read requests a node keeps waiting for its I/O threads; more are refused"
                    + " (UNAVAILABLE_IN_CURRENT_STATUS, retry later).");

    public static final ConfigKey<Integer> NODE_ADMIN_PORT = ConfigKey.integer("node.admin-port", -1, -1, 65_535,
            "port", "Port of the node's HTTP admin server (/metrics: its link to the master, its SSD tier's disk and"
                    + " tasks, its certificate's expiry; /health), on node.host; 0 = any free port, -1 = none (the"
                    + " master's metrics cover the cluster). Beyond loopback it needs the admin token, as the"
                    + " master's.");
    public static final ConfigKey<Duration> NODE_STOP_OFFLOAD_TIMEOUT = ConfigKey.durationOrZero(
            "node.stop-offload-timeout", "20s", SECONDS, "With an SSD tier: how long a graceful stop (SIGTERM, Ctrl-C)"
                    + " may spend copying to the tier the objects only this node's memory holds (its segment takes no"
                    + " new puts meanwhile), so that they are read from the tier once the node starts again on the"
                    + " same node.storage-path. Objects still without a copy then are lost, as without a tier. 0 ="
                    + " stop at once.");

    // ------------------------------------------------------------------------------------ client
    public static final ConfigKey<Duration> CLIENT_RPC_TIMEOUT = ConfigKey.duration("client.rpc-timeout", "30s",
            MILLIS, "Time a client waits for the answer to one request.");
    public static final ConfigKey<Duration> CLIENT_CONNECT_TIMEOUT = ConfigKey.duration("client.connect-timeout",
            "10s", MILLIS, "Time a client waits to open a connection.");
    public static final ConfigKey<Duration> CLIENT_FAILOVER_TIMEOUT = ConfigKey.duration("client.failover-timeout",
            "15s", MILLIS, "How long a client call keeps looking for the leader among the masters of"
                    + " master.address, or waits for a master that recovers after a takeover, before it fails.");
    public static final ConfigKey<Long> CLIENT_TRANSFER_SLICE_SIZE = ConfigKey.size("client.transfer-slice-size",
            "16MiB", Sizes.KIB, 64 * Sizes.MIB, "Objects are moved in slices of at most this size.");
    public static final ConfigKey<Boolean> CLIENT_VERIFY_CHECKSUMS = ConfigKey.bool("client.verify-checksums", true,
            "Reads check the bytes they receive against the CRC32C their writer computed (kept by the master) and"
                    + " try another replica when a copy fails it (CHECKSUM_MISMATCH naming the copy when none is left)."
                    + " Objects written without a checksum (checksum 0) are not checked.");
    public static final ConfigKey<Boolean> CLIENT_LOCAL_MEMCPY = ConfigKey.bool("client.local-memcpy", true,
            "Same-process shortcuts: copy directly in memory when a replica lives in this process, and call a"
                    + " master running in this process directly, instead of going through the network.");
    public static final ConfigKey<Boolean> CLIENT_SHARED_MEMORY = ConfigKey.bool("client.shared-memory", true,
            "Same-host shortcut: map the segment of a node on this host that keeps it in shared memory"
                    + " (node.shared-memory-dir) and copy directly, instead of going through the socket.");
    public static final ConfigKey<Duration> CLIENT_LOCATION_CACHE_TTL = ConfigKey.durationOrZero(
            "client.location-cache-ttl", "2s", MILLIS,
            "Reuse a key's looked-up location for later gets and exists of this client for up to this long (at most"
                    + " half of master.lease-ttl, within the read lease of the lookup), saving the master round"
                    + " trip. A forced remove of an object another client has cached returns once that client's"
                    + " reuse has ended (up to this and a quarter more). 0 = off.");
    public static final ConfigKey<Long> CLIENT_LOCATION_CACHE_SIZE = ConfigKey.longInteger("client.location-cache-size",
            100_000, 1, 100_000_000, "locations", "Most locations the location cache keeps (client.location-cache-ttl).");
    /** Default of {@code client.read-hint-cache-size}. */
    public static final long DEFAULT_READ_HINT_CACHE_SIZE = 100_000;
    public static final ConfigKey<Long> CLIENT_READ_HINT_CACHE_SIZE = ConfigKey.longInteger(
            "client.read-hint-cache-size", DEFAULT_READ_HINT_CACHE_SIZE, 0, 100_000_000, "keys",
            "Keys whose last known replica (from this client's put or lookup) a get reads while it looks the key up,"
                    + " keeping the bytes only if the master's answer names that very replica (else it reads the"
                    + " replica named): one round trip of waiting instead of two, with the same answers. 0 = off.");

    // --------------------------------------------------------------------------------- transport
    public static final ConfigKey<Long> TRANSPORT_MAX_FRAME_SIZE = ConfigKey.size("transport.max-frame-size", "64MiB",
            Sizes.MIB, Sizes.GIB,
            "Largest frame accepted on a connection; must exceed client.transfer-slice-size + 64KiB.");
    public static final ConfigKey<String> TRANSPORT_AUTH_TOKEN = ConfigKey.string("transport.auth-token", "",
            "Shared secret for every role without a token of its own (alone: every connection presents it and may"
                    + " do everything, as before roles); empty = none. With no token at all there is no"
                    + " authentication.");
    public static final ConfigKey<String> TRANSPORT_CLIENT_TOKEN = ConfigKey.string("transport.client-token", "",
            "Token of the client role (put, get, list, remove without force): servers accept it, clients present"
                    + " it. Empty = transport.auth-token.");
    public static final ConfigKey<String> TRANSPORT_NODE_TOKEN = ConfigKey.string("transport.node-token", "",
            "Token of the node role (mount, heartbeat, SSD-tier tasks, copies between nodes): the master and nodes"
                    + " accept it, nodes present it. Empty = transport.auth-token.");
    public static final ConfigKey<String> TRANSPORT_ADMIN_TOKEN = ConfigKey.string("transport.admin-token", "",
            "Token of the admin role (everything, also remove-all, forced removal by pattern, unmounting any node, and"
                    + " the admin HTTP beyond loopback): servers accept it, tiffin rm --all presents it. Empty ="
                    + " transport.auth-token.");
    public static final ConfigKey<String> TRANSPORT_TOKENS_FILE = ConfigKey.string("transport.tokens-file", "",
            "File of tokens, one role=token per line (role: auth, client, node or admin; # comments), read instead of"
                    + " the token keys for the roles it names and looked at again while the process runs, so tokens"
                    + " rotate without a restart: servers accept every token of a role, this process presents the"
                    + " first. A role it names must not have its key set too. Empty = none.");
    public static final ConfigKey<Duration> TRANSPORT_TOKENS_RELOAD_INTERVAL = ConfigKey.durationOrZero(
            "transport.tokens-reload-interval", "1m", SECONDS, "How often a process looks at transport.tokens-file"
                    + " again (at its next new connection after this long): new connections use the changed tokens,"
                    + " established ones keep the roles they proved; a file that does not parse, or no longer names a"
                    + " role it named, is logged and the tokens read before stay. 0 = read once at start.");
    public static final ConfigKey<Integer> TRANSPORT_IO_THREADS = ConfigKey.integer("transport.io-threads", 0, 0, 1024,
            "threads", "Network I/O threads of the master and of clients; 0 = one per available processor for the"
                    + " master, half of them (at least 1) for clients (a node's data plane has node.io-threads).");
    public static final ConfigKey<Duration> TRANSPORT_HANDSHAKE_TIMEOUT = ConfigKey.duration(
            "transport.handshake-timeout", "5s", MILLIS, "A connection must complete its handshake within this time.");
    public static final ConfigKey<Boolean> TRANSPORT_NATIVE = ConfigKey.bool("transport.native", true,
            "Use the native epoll transport where available.");

    public static final ConfigKey<List<String>> TRANSPORT_TLS_CLIENT_NAMES = ConfigKey.commonNames(
            "transport.tls.client-names", "With mutual TLS: client certificates whose common name is one of these"
                    + " hold the client role (as if they presented transport.client-token).");
    public static final ConfigKey<List<String>> TRANSPORT_TLS_NODE_NAMES = ConfigKey.commonNames(
            "transport.tls.node-names", "With mutual TLS: certificates whose common name is one of these hold the"
                    + " node role, and the common name is the node id they may act for (so a node's certificate"
                    + " must name its node.id).");
    public static final ConfigKey<List<String>> TRANSPORT_TLS_ADMIN_NAMES = ConfigKey.commonNames(
            "transport.tls.admin-names", "With mutual TLS: client certificates whose common name is one of these"
                    + " hold the admin role.");
    public static final ConfigKey<Boolean> TRANSPORT_INSECURE = ConfigKey.bool("transport.insecure", false,
            "Protected mode off: let a master, node or admin server listen on an address other hosts reach although"
                    + " a role is open (no transport.auth-token nor that role's token, no mutual TLS). Off, such a server refuses to"
                    + " start. The flag --insecure sets it.");
    public static final ConfigKey<Boolean> TRANSPORT_TLS_ENABLED = ConfigKey.bool("transport.tls.enabled", false,
            "TLS on the master's RPC, the nodes' data plane, the admin HTTP, the Redis gateway's RESP port and every"
                    + " client of them (set it on all processes of a cluster). Servers need transport.tls.cert and"
                    + " transport.tls.key.");
    public static final ConfigKey<String> TRANSPORT_TLS_CERT = ConfigKey.string("transport.tls.cert", "",
            "PEM certificate chain this process presents (its own certificate first): a server's, or a client's"
                    + " for mutual TLS. Its names (SAN) must include the hosts clients dial. Empty = none.");
    public static final ConfigKey<String> TRANSPORT_TLS_KEY = ConfigKey.string("transport.tls.key", "",
            "PEM private key of transport.tls.cert, unencrypted PKCS#8 (-----BEGIN PRIVATE KEY-----). Empty = none.");
    public static final ConfigKey<String> TRANSPORT_TLS_CA = ConfigKey.string("transport.tls.ca", "",
            "PEM certificates of the authorities to trust: clients check servers against them, servers check"
                    + " client certificates against them. Empty = the JDK's trust store (and no client certificates).");
    public static final ConfigKey<String> TRANSPORT_TLS_CLIENT_AUTH = ConfigKey.choice("transport.tls.client-auth",
            "none", List.of("none", "optional", "require"),
            "Whether servers ask clients for a certificate issued by transport.tls.ca: none, optional, or require"
                    + " (mutual TLS; a credential like the auth token, for protected mode).");
    public static final ConfigKey<String> TRANSPORT_TLS_PROVIDER = ConfigKey.choice("transport.tls.provider", "auto",
            List.of("auto", "openssl", "jdk"),
            "TLS engine: openssl (BoringSSL, bundled for linux-x86_64), jdk, or auto = openssl where it loads.");
    public static final ConfigKey<Boolean> TRANSPORT_TLS_VERIFY_HOSTNAME = ConfigKey.bool(
            "transport.tls.verify-hostname", true,
            "Whether clients check that a server's certificate names the host they dialled.");
    public static final ConfigKey<Duration> TRANSPORT_TLS_RELOAD_INTERVAL = ConfigKey.durationOrZero(
            "transport.tls.reload-interval", "1m", SECONDS, "How often a process looks at the files of"
                    + " transport.tls.cert, transport.tls.key and transport.tls.ca again (at its next new connection"
                    + " after this long): changed files are loaded for new connections, established ones keep theirs,"
                    + " and files that do not load are logged while the ones loaded before stay. 0 = read once at"
                    + " start (rotate certificates by restarting).");
    public static final ConfigKey<Long> TRANSPORT_MAX_HANDSHAKE_FRAME_SIZE = ConfigKey.size(
            "transport.max-handshake-frame-size", "64KiB", Sizes.KIB, 64 * Sizes.KIB,
            "Largest frame a server accepts before the peer's handshake (HELLO) succeeded; a larger one closes"
                    + " the connection, so an unauthenticated peer cannot make the server buffer big frames.");
    public static final ConfigKey<Duration> TRANSPORT_IDLE_TIMEOUT = ConfigKey.durationOrZero("transport.idle-timeout",
            "10m", SECONDS, "A server closes a connection that has neither sent nor received a byte for this long"
                    + " (clients reconnect when they next need it). 0 = never.");
    public static final ConfigKey<Duration> TRANSPORT_FRAME_TIMEOUT = ConfigKey.durationOrZero(
            "transport.frame-timeout", "60s", SECONDS, "A server closes a connection whose frame has not arrived"
                    + " whole this long after its first byte (a peer trickling bytes to hold the connection). 0 = no"
                    + " limit.");
    public static final ConfigKey<Integer> TRANSPORT_MAX_CONNECTIONS = ConfigKey.integer("transport.max-connections",
            10_000, 1, 1_000_000, "connections", "Connections one server holds at once; a further one is answered"
                    + " UNAVAILABLE_IN_CURRENT_STATUS and closed.");
    public static final ConfigKey<Integer> TRANSPORT_MAX_CONNECTIONS_PER_ADDRESS = ConfigKey.integer(
            "transport.max-connections-per-address", 1_000, 1, 1_000_000, "connections",
            "Connections one server holds at once from one IP address; a further one is answered"
                    + " UNAVAILABLE_IN_CURRENT_STATUS and closed.");
    public static final ConfigKey<Long> TRANSPORT_WRITE_BUFFER_LIMIT = ConfigKey.size("transport.write-buffer-limit",
            "4MiB", 64 * Sizes.KIB, Sizes.GIB, "Answer bytes waiting to be sent to one peer above which a server"
                    + " stops reading that peer's requests, until a quarter of it is left: a peer that does not read"
                    + " its answers cannot make the server queue them without end.");
    public static final ConfigKey<Integer> TRANSPORT_MAX_BATCH_KEYS = ConfigKey.integer("transport.max-batch-keys",
            100_000, 1, 10_000_000, "keys", "Keys one batch request may name (batch put, get, exist, remove); a"
                    + " larger batch is refused (INVALID_PARAMS), so one request cannot hold a server's thread long.");
    public static final ConfigKey<Long> TRANSPORT_MAX_QUERY_ANSWER_SIZE = ConfigKey.size(
            "transport.max-query-answer-size", "15MiB", Sizes.KIB, 16 * Sizes.MIB - 64 * Sizes.KIB,
            "Bytes of one answer listing keys: a LIST_KEYS answer stops there (truncated), a regex lookup whose"
                    + " locations take more is refused; below the 16 MiB every peer accepts.");

    // ------------------------------------------------------------------- gateway (Redis protocol)
    public static final ConfigKey<String> GATEWAY_HOST = ConfigKey.host("gateway.host", "127.0.0.1", false,
            "Interface the Redis-protocol (RESP) gateway binds to: `tiffin gateway`, and the RESP server of"
                    + " `tiffin standalone`.");
    public static final ConfigKey<Integer> GATEWAY_PORT = ConfigKey.port("gateway.port", 6379,
            "Port of the RESP gateway. `tiffin gateway --port`: 0 = any free port; `tiffin standalone"
                    + " --redis-port`: 0 = no RESP server.");
    public static final ConfigKey<Integer> GATEWAY_MAX_CONNECTIONS = ConfigKey.integer("gateway.max-connections",
            10_000, 1, 1_000_000, "connections", "Most RESP connections at once; one more is answered"
                    + " `-ERR max number of clients reached` and closed (Redis's maxclients).");
    public static final ConfigKey<Duration> GATEWAY_IDLE_TIMEOUT = ConfigKey.durationOrZero("gateway.idle-timeout",
            "0", SECONDS, "Close a RESP connection that has neither sent a byte nor taken one of its replies for"
                    + " this long while none of its commands runs (Redis's timeout). 0 = never.");
    public static final ConfigKey<Long> GATEWAY_MAX_BULK_SIZE = ConfigKey.size("gateway.max-bulk-size", "512MiB",
            Sizes.KIB, 2047 * Sizes.MIB, "Longest bulk string (key or value) a RESP command may carry (Redis's"
                    + " proto-max-bulk-len); a longer one is answered `-ERR Protocol error: invalid bulk length`"
                    + " and the connection closed.");
    public static final ConfigKey<Integer> GATEWAY_MAX_ARRAY_LENGTH = ConfigKey.integer("gateway.max-array-length",
            1 << 20, 1, Integer.MAX_VALUE, "arguments", "Most arguments of one RESP command; more is answered"
                    + " `-ERR Protocol error: invalid multibulk length` and the connection closed.");
    public static final ConfigKey<Long> GATEWAY_MAX_INLINE_LENGTH = ConfigKey.size("gateway.max-inline-length",
            "64KiB", 16, 16 * Sizes.MIB, "Longest inline command (a line of plain text, e.g. from telnet) and"
                    + " longest `*`/`$` header line; longer is answered `-ERR Protocol error: too big inline"
                    + " request` (or `too big mbulk count string`) and the connection closed.");
    public static final ConfigKey<Long> GATEWAY_MAX_PIPELINE_BYTES = ConfigKey.size("gateway.max-pipeline-bytes",
            "64MiB", Sizes.KIB, Long.MAX_VALUE, "Requests one RESP connection may have received but not yet"
                    + " answered (their bytes plus 64 per argument); above it the gateway stops reading from the"
                    + " connection until its commands have run. A single command may exceed it.");
    public static final ConfigKey<Long> GATEWAY_MAX_MEMORY = ConfigKey.size("gateway.max-memory", "1GiB", Sizes.MIB,
            Long.MAX_VALUE, "Memory for commands and replies in flight on all RESP connections together; above it"
                    + " connections stop reading until memory is freed, and a reply that waits 10 s for room while"
                    + " nothing is freed and no reply is being written is answered `-ERR NO_AVAILABLE_HANDLE`. A value larger than the whole budget still passes"
                    + " when nothing else is in flight.");
    public static final ConfigKey<Long> GATEWAY_WRITE_BUFFER = ConfigKey.size("gateway.write-buffer", "8MiB",
            Sizes.KIB, Sizes.GIB, "Replies waiting for a RESP client to read them, per connection; above it the"
                    + " gateway runs no more of its commands and stops reading from it until the client has taken"
                    + " half (so a client that never reads its replies cannot grow the gateway's memory).");
    public static final ConfigKey<Integer> GATEWAY_IO_THREADS = ConfigKey.integer("gateway.io-threads", 0, 0, 1024,
            "threads", "Event-loop threads of the RESP gateway; 0 = half the available processors, at least 1."
                    + " Store calls run on virtual threads, one at a time per connection, never on these.");
    public static final ConfigKey<Integer> GATEWAY_REPLICAS = ConfigKey.integer("gateway.replicas", 1, 1, 64,
            "replicas", "Replicas of every value a RESP SET or MSET stores (each on another segment).");

    // ------------------------------------------------------------------------------- SSD tier
    public static final ConfigKey<String> OFFLOAD_MODE = ConfigKey.choice("offload.mode", "off",
            List.of("off", "on-evict", "write-through"),
            "When objects are copied to nodes' SSD tiers: off, on-evict (memory eviction moves them to SSD instead "
                    + "of dropping them) or write-through (every completed put is also written to SSD).");
    public static final ConfigKey<Integer> OFFLOAD_QUEUE_LIMIT = ConfigKey.integer("offload.queue-limit", 25_000, 1,
            10_000_000, "tasks", "Most offload tasks queued or running at once, cluster-wide.");
    public static final ConfigKey<Duration> OFFLOAD_AWAY_TTL = ConfigKey.duration("offload.away-ttl", "24h", HOURS,
            "How long the master keeps the keys of the objects whose only copy is on the SSD of a node that is away "
                    + "(stopped or expired): a removal or a new put of such a key meanwhile deletes the copy when the "
                    + "node returns, and the others come back with it. After this long, the node's copies are all "
                    + "deleted when it returns.");
    public static final ConfigKey<Integer> PROMOTION_ADMISSION_THRESHOLD = ConfigKey.integer(
            "promotion.admission-threshold", 2, 1, 1_000_000, "reads",
            "Reads of an SSD-only object (count-min estimate) after which it is promoted back to memory.");
    public static final ConfigKey<Integer> PROMOTION_QUEUE_LIMIT = ConfigKey.integer("promotion.queue-limit", 50_000,
            1, 10_000_000, "tasks", "Most promotion tasks queued at once, cluster-wide.");
    public static final ConfigKey<String> NODE_STORAGE_BACKEND = ConfigKey.string("node.storage-backend", "",
            "Storage backend of the node's SSD tier (e.g. bucket); empty = no SSD tier. Backend keys: "
                    + "storage.<backend>.* (e.g. storage.bucket.capacity).");
    public static final ConfigKey<String> NODE_STORAGE_PATH = ConfigKey.string("node.storage-path", "",
            "Directory of the node's SSD tier; required with node.storage-backend.");
    public static final ConfigKey<Duration> NODE_TASK_POLL_INTERVAL = ConfigKey.duration("node.task-poll-interval",
            "50ms", MILLIS, "How often a node with an SSD tier asks the master for offload and promotion work.");

    // ----------------------------------------------------------------------------------- plugins
    public static final ConfigKey<String> PLUGINS_DIR = ConfigKey.string("plugins.dir", "plugins",
            "Directory whose sub-folders each hold one plugin's jars; a relative path is resolved against the"
                    + " Tiffin home (the unpacked tarball) when the launcher sets it.");

    // ---------------------------------------------------------------------------------- hotcache
    public static final ConfigKey<Long> HOTCACHE_SIZE = ConfigKey.size("hotcache.size", "0", 0, Long.MAX_VALUE,
            "Memory of the client's local hot cache; 0 = disabled; less than one block disables it with a warning.");
    public static final ConfigKey<Long> HOTCACHE_BLOCK_SIZE = ConfigKey.size("hotcache.block-size", "16MiB",
            Sizes.KIB, Sizes.GIB, "Size of one hot-cache block.");
    public static final ConfigKey<String> HOTCACHE_POLICY = ConfigKey.pluginName("hotcache.policy", "w-tinylfu-tuned",
            "Replacement policy of the hot cache; must be installed.");
    public static final ConfigKey<Double> HOTCACHE_MAX_ENTRY_SHARE = ConfigKey.ratio("hotcache.max-entry-share", 0.5,
            0.0, false, 1.0, true, "Largest share of the hot cache one object may take (objects may span blocks).");
    public static final ConfigKey<Integer> HOTCACHE_RING_SIZE = ConfigKey.integer("hotcache.ring-size", 4096, 64,
            1 << 20, "slots", "Slots of the hot cache's fill ring (a power of two); a full ring drops fills.");

    /**
     * Prefixes under which any key is accepted here and passed to plugins (see
     * {@link TiffinConfig#withPrefix(String)}): {@code storage.<backend>.}, {@code plugin.<strategy>.} and
     * {@code hotcache.policy.<policy>.}. The host checks them against the keys a plugin declares
     * ({@link io.tiffin.api.spi.NamedFactory#configKeys()}); a plugin that declares none checks its own.
     */
    public static final List<String> OPEN_PREFIXES = List.of("storage.", "plugin.", "hotcache.policy.");

    /**
     * Environment variables from Mooncake Store that set a Tiffin key, alias to key. The
     * {@code TIFFIN_*} form of a key takes precedence over its aliases only if they agree; two
     * variables with different values for one key are an error.
     */
    public static final Map<String, ConfigKey<?>> ENV_ALIASES = aliases();

    /** {@code TIFFIN_*} variables the launcher uses; they are not configuration keys. */
    public static final List<String> LAUNCHER_ENV = List.of("TIFFIN_HOME", "TIFFIN_OPTS", "TIFFIN_CONF_DIR",
            "TIFFIN_LOG_DIR", "TIFFIN_AOT_CACHE", "TIFFIN_AOT_CACHE_OUTPUT");

    /** Extra bytes a frame needs beyond one transfer slice (headers, metadata). */
    static final long FRAME_OVERHEAD = 64 * Sizes.KIB;

    private static final List<ConfigKey<?>> ALL = collect();
    private static final Map<String, ConfigKey<?>> BY_NAME = index(ALL);

    private TiffinConfigKeys() {
    }

    /** All keys, in definition order. */
    public static List<ConfigKey<?>> all() {
        return ALL;
    }

    /** The key with this name, if any. */
    public static Optional<ConfigKey<?>> byName(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    /** Whether {@code name} lies under one of the {@link #OPEN_PREFIXES} (and is longer than it). */
    public static boolean isOpen(String name) {
        for (String prefix : OPEN_PREFIXES) {
            if (name.startsWith(prefix) && name.length() > prefix.length()) {
                return true;
            }
        }
        return false;
    }

    /** The environment variables that set {@code key}: its {@code TIFFIN_*} form first, then aliases. */
    public static List<String> envNames(ConfigKey<?> key) {
        List<String> names = new ArrayList<>();
        names.add(key.envName());
        ENV_ALIASES.forEach((alias, k) -> {
            if (k == key) {
                names.add(alias);
            }
        });
        return List.copyOf(names);
    }

    /** What the rules relating several keys need to know about the resolved values. */
    interface Resolved {
        /** The value of a key, or empty if the key's value was invalid. */
        <T> Optional<T> value(ConfigKey<T> key);

        /** {@code key = raw (from source)}, for messages. */
        String describe(ConfigKey<?> key);
    }

    /** Checks the rules that relate several keys; appends one line per broken rule. */
    static void crossCheck(Resolved r, List<String> problems) {
        Optional<Long> frame = r.value(TRANSPORT_MAX_FRAME_SIZE);
        Optional<Long> slice = r.value(CLIENT_TRANSFER_SLICE_SIZE);
        if (frame.isPresent() && slice.isPresent() && frame.get() <= slice.get() + FRAME_OVERHEAD) {
            problems.add(r.describe(TRANSPORT_MAX_FRAME_SIZE) + " (expected: more than client.transfer-slice-size + "
                    + Sizes.format(FRAME_OVERHEAD) + " = " + Sizes.format(slice.get() + FRAME_OVERHEAD) + ", where "
                    + r.describe(CLIENT_TRANSFER_SLICE_SIZE) + "; raise the frame size or lower the slice size)");
        }
        Optional<Duration> pin = r.value(MASTER_SOFT_PIN_TTL);
        Optional<Duration> maxPin = r.value(MASTER_MAX_SOFT_PIN_TTL);
        if (pin.isPresent() && maxPin.isPresent() && pin.get().compareTo(maxPin.get()) > 0) {
            problems.add(r.describe(MASTER_SOFT_PIN_TTL) + " (expected: at most master.max-soft-pin-ttl, where "
                    + r.describe(MASTER_MAX_SOFT_PIN_TTL) + ")");
        }
        Optional<Duration> check = r.value(MASTER_NODE_CHECK_INTERVAL);
        Optional<Duration> nodeTtl = r.value(MASTER_NODE_TTL);
        if (check.isPresent() && nodeTtl.isPresent() && check.get().compareTo(nodeTtl.get()) > 0) {
            problems.add(r.describe(MASTER_NODE_CHECK_INTERVAL) + " (expected: at most master.node-ttl, where "
                    + r.describe(MASTER_NODE_TTL) + ")");
        }
        Optional<Boolean> tls = r.value(TRANSPORT_TLS_ENABLED);
        Optional<String> cert = r.value(TRANSPORT_TLS_CERT);
        Optional<String> key = r.value(TRANSPORT_TLS_KEY);
        if (tls.orElse(false) && cert.isPresent() && key.isPresent() && cert.get().isEmpty() != key.get().isEmpty()) {
            problems.add(r.describe(cert.get().isEmpty() ? TRANSPORT_TLS_CERT : TRANSPORT_TLS_KEY) + " (expected: set"
                    + " together with " + (cert.get().isEmpty() ? r.describe(TRANSPORT_TLS_KEY)
                    : r.describe(TRANSPORT_TLS_CERT)) + ": a certificate and its private key)");
        }
        Optional<String> clientAuth = r.value(TRANSPORT_TLS_CLIENT_AUTH);
        Optional<String> ca = r.value(TRANSPORT_TLS_CA);
        if (tls.orElse(false) && clientAuth.isPresent() && !clientAuth.get().equals("none") && ca.isPresent()
                && ca.get().isEmpty()) {
            problems.add(r.describe(TRANSPORT_TLS_CLIENT_AUTH) + " (expected: none unless transport.tls.ca names the"
                    + " authorities whose client certificates servers accept, where " + r.describe(TRANSPORT_TLS_CA)
                    + ")");
        }
        Optional<String> coordinator = r.value(MASTER_COORDINATOR);
        Optional<String> stateDir = r.value(MASTER_STATE_DIR);
        if (coordinator.isPresent() && stateDir.isPresent() && !coordinator.get().isEmpty()
                && !stateDir.get().isEmpty()) {
            problems.add(r.describe(MASTER_STATE_DIR) + " is set together with " + r.describe(MASTER_COORDINATOR)
                    + ", which would ignore it (expected: one of them: a single master keeps its cluster facts in"
                    + " master.state-dir; masters with failover keep them in the coordination service of"
                    + " master.coordinator. Remove master.state-dir (--state-dir) to run masters with failover, or"
                    + " master.coordinator (--coordinator) to run a single master)");
        }
        Optional<Integer> ring = r.value(HOTCACHE_RING_SIZE);
        if (ring.isPresent() && Integer.bitCount(ring.get()) != 1) {
            problems.add(r.describe(HOTCACHE_RING_SIZE) + " (expected: a power of two, e.g. 4096)");
        }
    }

    private static Map<String, ConfigKey<?>> aliases() {
        Map<String, ConfigKey<?>> m = new LinkedHashMap<>();
        m.put("MC_STORE_LOCAL_HOT_CACHE_SIZE", HOTCACHE_SIZE);
        m.put("LOCAL_HOT_CACHE_SIZE", HOTCACHE_SIZE);
        m.put("MC_STORE_LOCAL_HOT_BLOCK_SIZE", HOTCACHE_BLOCK_SIZE);
        m.put("LOCAL_HOT_BLOCK_SIZE", HOTCACHE_BLOCK_SIZE);
        return Collections.unmodifiableMap(m);
    }

    private static List<ConfigKey<?>> collect() {
        return List.of(
                MASTER_HOST, MASTER_PORT, MASTER_ADMIN_PORT, MASTER_ADDRESS, MASTER_COORDINATOR, MASTER_STATE_DIR,
                MASTER_ADVERTISE_ADDRESS, MASTER_COORDINATOR_SESSION_TIMEOUT, MASTER_LEASE_TTL, MASTER_SOFT_PIN_TTL,
                MASTER_MAX_SOFT_PIN_TTL, MASTER_ALLOW_EVICT_SOFT_PINNED, MASTER_EVICTION_HIGH_WATERMARK,
                MASTER_EVICTION_RATIO, MASTER_EVICTION_INTERVAL, MASTER_NODE_TTL, MASTER_NODE_CHECK_INTERVAL,
                MASTER_PUT_START_DISCARD_TIMEOUT, MASTER_PUT_START_RELEASE_TIMEOUT, MASTER_PUT_TIMEOUT, MASTER_RECOVERY_READ_WAIT,
                MASTER_WORKER_THREADS,
                MASTER_MAX_KEY_LENGTH, MASTER_MAX_OBJECT_SIZE, MASTER_MAX_HARD_PINNED_SHARE, ALLOCATION_STRATEGY, NODE_ID,
                NODE_HOST, NODE_PORT, NODE_SEGMENT_SIZE, NODE_SEGMENT_PREFAULT, NODE_PING_INTERVAL, NODE_IO_THREADS, NODE_SHARED_MEMORY_DIR,
                NODE_SSD_READ_MEMORY, NODE_SSD_READ_QUEUE, NODE_STOP_OFFLOAD_TIMEOUT, NODE_ADMIN_PORT, CLIENT_RPC_TIMEOUT,
                CLIENT_CONNECT_TIMEOUT,
                CLIENT_FAILOVER_TIMEOUT,
                CLIENT_TRANSFER_SLICE_SIZE, CLIENT_VERIFY_CHECKSUMS, CLIENT_LOCAL_MEMCPY, CLIENT_SHARED_MEMORY, CLIENT_LOCATION_CACHE_TTL,
                CLIENT_LOCATION_CACHE_SIZE, CLIENT_READ_HINT_CACHE_SIZE, TRANSPORT_MAX_FRAME_SIZE, TRANSPORT_AUTH_TOKEN,
                TRANSPORT_CLIENT_TOKEN, TRANSPORT_NODE_TOKEN, TRANSPORT_ADMIN_TOKEN, TRANSPORT_TOKENS_FILE,
                TRANSPORT_TOKENS_RELOAD_INTERVAL, TRANSPORT_IO_THREADS, TRANSPORT_HANDSHAKE_TIMEOUT, TRANSPORT_NATIVE, TRANSPORT_INSECURE,
                TRANSPORT_TLS_ENABLED, TRANSPORT_TLS_CERT, TRANSPORT_TLS_KEY, TRANSPORT_TLS_CA, TRANSPORT_TLS_CLIENT_AUTH,
                TRANSPORT_TLS_PROVIDER, TRANSPORT_TLS_VERIFY_HOSTNAME, TRANSPORT_TLS_RELOAD_INTERVAL,
                TRANSPORT_TLS_CLIENT_NAMES, TRANSPORT_TLS_NODE_NAMES,
                TRANSPORT_TLS_ADMIN_NAMES, TRANSPORT_MAX_HANDSHAKE_FRAME_SIZE,
                TRANSPORT_IDLE_TIMEOUT, TRANSPORT_FRAME_TIMEOUT, TRANSPORT_MAX_CONNECTIONS,
                TRANSPORT_MAX_CONNECTIONS_PER_ADDRESS, TRANSPORT_WRITE_BUFFER_LIMIT, TRANSPORT_MAX_BATCH_KEYS,
                TRANSPORT_MAX_QUERY_ANSWER_SIZE, PLUGINS_DIR, HOTCACHE_SIZE,
                HOTCACHE_BLOCK_SIZE, HOTCACHE_POLICY, HOTCACHE_MAX_ENTRY_SHARE, HOTCACHE_RING_SIZE, OFFLOAD_MODE,
                OFFLOAD_QUEUE_LIMIT, OFFLOAD_AWAY_TTL, PROMOTION_ADMISSION_THRESHOLD, PROMOTION_QUEUE_LIMIT,
                NODE_STORAGE_BACKEND, NODE_STORAGE_PATH, NODE_TASK_POLL_INTERVAL, GATEWAY_HOST, GATEWAY_PORT, GATEWAY_MAX_CONNECTIONS,
                GATEWAY_IDLE_TIMEOUT, GATEWAY_MAX_BULK_SIZE, GATEWAY_MAX_ARRAY_LENGTH, GATEWAY_MAX_INLINE_LENGTH,
                GATEWAY_MAX_PIPELINE_BYTES, GATEWAY_MAX_MEMORY, GATEWAY_WRITE_BUFFER, GATEWAY_IO_THREADS,
                GATEWAY_REPLICAS);
    }

    private static Map<String, ConfigKey<?>> index(List<ConfigKey<?>> keys) {
        Map<String, ConfigKey<?>> m = new LinkedHashMap<>();
        for (ConfigKey<?> k : keys) {
            if (m.put(k.name(), k) != null) {
                throw new IllegalStateException("duplicate configuration key " + k.name());
            }
            if (isOpen(k.name())) {
                throw new IllegalStateException("key " + k.name() + " lies under an open prefix " + OPEN_PREFIXES);
            }
        }
        return Collections.unmodifiableMap(m);
    }
}
