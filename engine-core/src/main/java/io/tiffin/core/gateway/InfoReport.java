package io.tiffin.core.gateway;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The text of INFO: the sections server, clients, memory, stats and keyspace, in Redis's
 * {@code # Section} / {@code field:value} form with CRLF line ends. Memory and keyspace figures are the
 * store's (from the master's statistics), the rest the gateway's own.
 *
 * <p>Thread-safe (stateless besides the shared context).
 */
final class InfoReport {
    static final List<String> SECTIONS = List.of("server", "clients", "memory", "stats", "keyspace");

    private final GatewayContext gw;

    InfoReport(GatewayContext gw) {
        this.gw = gw;
    }

    /** The sections asked for ({@code default}, {@code all} and {@code everything} = every one; unknown ones add nothing). */
    static Set<String> sections(List<String> args) {
        Set<String> out = new LinkedHashSet<>();
        if (args.isEmpty()) {
            out.addAll(SECTIONS);
        }
        for (String a : args) {
            String s = a.toLowerCase(Locale.ROOT);
            if (s.equals("default") || s.equals("all") || s.equals("everything")) {
                out.addAll(SECTIONS);
            } else if (SECTIONS.contains(s)) {
                out.add(s);
            }
        }
        return out;
    }

    String render(Set<String> sections) {
        GatewayStore.StoreStats store = sections.contains("memory") || sections.contains("stats")
                || sections.contains("keyspace") || sections.contains("server") ? gw.store.stats() : null;
        StringBuilder sb = new StringBuilder();
        for (String s : SECTIONS) {
            if (!sections.contains(s)) {
                continue;
            }
            if (!sb.isEmpty()) {
                sb.append("\r\n");
            }
            switch (s) {
                case "server" -> server(sb, store);
                case "clients" -> clients(sb);
                case "memory" -> memory(sb, store);
                case "stats" -> stats(sb, store);
                default -> keyspace(sb, store);
            }
        }
        return sb.toString();
    }

    private void server(StringBuilder sb, GatewayStore.StoreStats store) {
        long uptime = (gw.ticker.millis() - gw.startMillis) / 1000;
        sb.append("# Server\r\n");
        line(sb, "redis_version", ConnectionCommands.REDIS_VERSION);
        line(sb, "tiffin_version", ConnectionCommands.tiffinVersion());
        line(sb, "tiffin_master", gw.store.describe());
        line(sb, "tiffin_master_version", store.version());
        line(sb, "redis_mode", "standalone");
        line(sb, "os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        line(sb, "arch_bits", "64");
        line(sb, "multiplexing_api", gw.epoll() ? "epoll" : "nio");
        line(sb, "process_id", Long.toString(ProcessHandle.current().pid()));
        line(sb, "run_id", gw.runId);
        line(sb, "tcp_port", Integer.toString(gw.port()));
        line(sb, "server_time_usec", Long.toString(gw.ticker.millis() * 1000));
        line(sb, "uptime_in_seconds", Long.toString(uptime));
        line(sb, "uptime_in_days", Long.toString(uptime / 86_400));
        line(sb, "executable", "tiffin");
        line(sb, "config_file", "");
    }

    private void clients(StringBuilder sb) {
        sb.append("# Clients\r\n");
        line(sb, "connected_clients", Integer.toString(gw.stats.connected.get()));
        line(sb, "maxclients", Integer.toString(gw.settings.maxConnections()));
        line(sb, "blocked_clients", "0");
    }

    private void memory(StringBuilder sb, GatewayStore.StoreStats store) {
        sb.append("# Memory\r\n");
        line(sb, "used_memory", Long.toString(store.used()));
        line(sb, "used_memory_human", human(store.used()));
        line(sb, "maxmemory", Long.toString(store.capacity()));
        line(sb, "maxmemory_human", human(store.capacity()));
        line(sb, "maxmemory_policy", "allkeys-lru");
        line(sb, "gateway_buffers", Long.toString(gw.budget.used()));
        line(sb, "gateway_max_buffers", Long.toString(gw.budget.limit()));
        line(sb, "gateway_heap_used", Long.toString(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed()));
    }

    private void stats(StringBuilder sb, GatewayStore.StoreStats store) {
        GatewayStats s = gw.stats;
        sb.append("# Stats\r\n");
        line(sb, "total_connections_received", Long.toString(s.connectionsReceived.sum()));
        line(sb, "total_commands_processed", Long.toString(s.commandsProcessed.sum()));
        line(sb, "total_net_input_bytes", Long.toString(s.inputBytes.sum()));
        line(sb, "total_net_output_bytes", Long.toString(s.outputBytes.sum()));
        line(sb, "rejected_connections", Long.toString(s.rejectedConnections.sum()));
        line(sb, "expired_keys", "0");
        line(sb, "evicted_keys", Long.toString(store.evictedKeys()));
        line(sb, "keyspace_hits", Long.toString(s.hits.sum()));
        line(sb, "keyspace_misses", Long.toString(s.misses.sum()));
        line(sb, "total_error_replies", Long.toString(s.errorReplies.sum()));
        line(sb, "protocol_errors", Long.toString(s.protocolErrors.sum()));
        line(sb, "idle_connections_closed", Long.toString(s.idleClosed.sum()));
        line(sb, "store_put_batches", Long.toString(s.putBatches.sum()));
        line(sb, "store_put_batch_keys", Long.toString(s.putBatchKeys.sum()));
        line(sb, "ready_gets", Long.toString(s.readyGets.sum()));
        line(sb, "ready_exists", Long.toString(s.readyExists.sum()));
        line(sb, "ready_sets", Long.toString(s.readySets.sum()));
        line(sb, "zero_copy_replies", Long.toString(s.lentReplies.sum()));
        line(sb, "zero_copy_replies_open", Long.toString(s.lentOpen.get()));
        line(sb, "zero_copy_lease_closed", Long.toString(s.lentExpired.sum()));
        line(sb, "zero_copy_lease_renewed", Long.toString(s.lentRenewed.sum()));
    }

    private static void keyspace(StringBuilder sb, GatewayStore.StoreStats store) {
        sb.append("# Keyspace\r\n");
        if (store.keys() > 0) {
            line(sb, "db0", "keys=" + store.keys() + ",expires=" + Math.min(store.keys(), store.expiringKeys())
                    + ",avg_ttl=0");
        }
    }

    private static void line(StringBuilder sb, String field, String value) {
        sb.append(field).append(':').append(value).append("\r\n");
    }

    /** Bytes as Redis's {@code bytesToHuman}: {@code 1.50M}. */
    static String human(long n) {
        String[] units = {"B", "K", "M", "G", "T", "P"};
        double d = n;
        int u = 0;
        while (d >= 1024 && u < units.length - 1) {
            d /= 1024;
            u++;
        }
        return u == 0 ? n + "B" : String.format(Locale.ROOT, "%.2f%s", d, units[u]);
    }
}
