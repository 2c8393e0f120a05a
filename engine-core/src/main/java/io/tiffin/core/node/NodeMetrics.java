package io.tiffin.core.node;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageStats;
import io.tiffin.core.metrics.JsonText;
import io.tiffin.core.metrics.PrometheusText;
import io.tiffin.core.transport.TiffinVersion;
import io.tiffin.core.transport.TlsContexts;
import io.tiffin.core.transport.TokensFile;
import java.security.cert.X509Certificate;
import java.util.function.ToLongFunction;

/**
 * What one node exports on its admin HTTP server ({@code node.admin-port}): {@code /metrics} in Prometheus text and
 * {@code /health} in JSON. The master's metrics already cover the cluster (segments' capacity and use, heartbeat ages,
 * SSD-tier totals); these are what only the node sees: its data plane's reads, writes and refusals ({@link
 * DataPlaneCounters}; same-host clients' copies through shared memory bypass it), its link to the master, its SSD
 * tier's disk and tasks (corrupt reads, O_DIRECT fallbacks, failed offloads), and the expiry of the certificate its
 * data plane presents.
 *
 * <p>Thread-safe: every metric is a callback that reads the node's thread-safe counters when scraped; {@link #scrape}
 * and {@link #healthJson} may run at any time, also while the node stops.
 */
public final class NodeMetrics {
    /** Pings in a row without an answer at which {@code /health} says {@code degraded} (as the node logs it). */
    static final int DEGRADED_AFTER_PING_FAILURES = 3;

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final NodeServer node;

    /** The metrics of {@code node}. */
    public NodeMetrics(NodeServer node) {
        this.node = node;
        gauge("tiffin_node_segment_capacity_bytes", "Bytes of memory this node contributes (node.segment-size)",
                n -> n.options().segmentSize());
        gauge("tiffin_node_master_ping_failures", "Heartbeats in a row the master did not answer (0 once one is)",
                n -> n.link().consecutivePingFailures());
        gauge("tiffin_node_superseded", "1 once another process of this node.id joined the master (this one stopped"
                + " its heartbeats)", n -> n.superseded() ? 1 : 0);
        counter("tiffin_node_remounts_total", "Mounts again after the master forgot this node", NodeServer::remounts);
        counter("tiffin_node_attaches_total", "Attaches of the segment to a master that restored it (failover, restart)",
                NodeServer::attaches);
        DataPlaneCounters data = node.dataPlane();
        counter("tiffin_node_data_reads_total", "DATA_READs answered (slices of objects read from this node's memory)",
                n -> data.reads.sum());
        counter("tiffin_node_data_read_bytes_total", "Bytes DATA_READs answered", n -> data.readBytes.sum());
        counter("tiffin_node_data_writes_total", "DATA_WRITEs done (slices of objects written into this node's memory)",
                n -> data.writes.sum());
        counter("tiffin_node_data_write_bytes_total", "Bytes DATA_WRITEs wrote", n -> data.writeBytes.sum());
        counter("tiffin_node_data_refused_total", "DATA_READs and DATA_WRITEs refused (no valid grant, out of the"
                + " segment, a stale mount epoch)", n -> data.refused.sum());
        NodeStorageTier tier = node.tier();
        if (tier != null) {
            StorageBackend backend = tier.backend();
            ssd("objects", "Objects on this node's SSD tier", StorageStats::objects);
            ssd("used_bytes", "Bytes of the objects on this node's SSD tier", StorageStats::usedBytes);
            ssd("disk_bytes", "Bytes the SSD tier's files take on disk", StorageStats::diskBytes);
            ssd("capacity_bytes", "Capacity of this node's SSD tier", StorageStats::capacityBytes);
            counter("tiffin_node_ssd_corrupt_reads_total", "SSD reads that failed their checksum or were cut short",
                    n -> backend.stats().corruptReads());
            counter("tiffin_node_ssd_direct_io_fallbacks_total", "SSD files switched from O_DIRECT to buffered I/O",
                    n -> backend.stats().directIoFallbacks());
            counter("tiffin_node_ssd_evicted_objects_total", "Objects the SSD tier evicted to get below its watermark",
                    n -> backend.stats().evictedObjects());
            counter("tiffin_node_ssd_offloads_total", "Objects written to the SSD tier for the master's offloads",
                    n -> tier.offloaded());
            counter("tiffin_node_ssd_offload_failures_total", "Offloads that failed (a full or broken disk)",
                    n -> tier.offloadFailures());
            counter("tiffin_node_ssd_promotions_total", "Objects loaded back into memory from the SSD tier",
                    n -> tier.promoted());
            counter("tiffin_node_ssd_promotion_failures_total", "Promotions that failed", n -> tier.promotionFailures());
        }
        TlsContexts tls = node.tls();
        if (tls != null) {
            GaugeWithCallback.builder().name("tiffin_node_tls_certificate_not_after_seconds")
                    .help("When the certificate this node's data plane presents expires (Unix time, seconds)")
                    .callback(cb -> {
                        X509Certificate c = tls.certificate();
                        if (c != null) {
                            cb.call(c.getNotAfter().getTime() / 1e3);
                        }
                    }).register(registry);
            counter("tiffin_node_tls_reloads_total", "Times changed TLS files were loaded without a restart",
                    n -> tls.reloads());
            counter("tiffin_node_tls_reload_failures_total", "Times changed TLS files did not load",
                    n -> tls.failedReloads());
        }
        TokensFile tokens = node.options().transport().credentials().tokensFile();
        if (tokens != null) {
            counter("tiffin_node_tokens_reloads_total", "Times a changed transport.tokens-file was read",
                    n -> tokens.reloads());
            counter("tiffin_node_tokens_reload_failures_total", "Times a changed transport.tokens-file was refused",
                    n -> tokens.failedReloads());
        }
    }

    private void gauge(String name, String help, ToLongFunction<NodeServer> value) {
        GaugeWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.applyAsLong(node)))
                .register(registry);
    }

    private void counter(String name, String help, ToLongFunction<NodeServer> value) {
        CounterWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.applyAsLong(node)))
                .register(registry);
    }

    private void ssd(String name, String help, ToLongFunction<StorageStats> value) {
        StorageBackend backend = node.tier().backend();
        GaugeWithCallback.builder().name("tiffin_node_ssd_" + name).help(help)
                .callback(cb -> cb.call(value.applyAsLong(backend.stats()))).register(registry);
    }

    /** The Prometheus text exposition of every metric. */
    public String scrape() {
        return PrometheusText.of(registry);
    }

    /**
     * {@code /health}: {@code ok}, or {@code degraded} while the master has not answered {@value
     * #DEGRADED_AFTER_PING_FAILURES} heartbeats in a row or once another process took over this node's id; with the
     * node's id, segment, master and version.
     */
    public String healthJson() {
        long failures = node.link().consecutivePingFailures();
        boolean degraded = failures >= DEGRADED_AFTER_PING_FAILURES || node.superseded();
        String master = node.masterLeader();
        return new JsonText().beginObject().field("status", degraded ? "degraded" : "ok").field("role", "node")
                .field("node", node.nodeId()).field("segment", node.segmentName())
                .field("master", master == null ? "" : master).field("master_ping_failures", failures)
                .field("superseded", node.superseded()).field("version", TiffinVersion.VERSION).endObject().toString();
    }
}
