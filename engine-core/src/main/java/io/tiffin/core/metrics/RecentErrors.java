package io.tiffin.core.metrics;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.Property;

/**
 * The latest warnings and errors this process logged, for the status page: a Log4j appender on the root
 * logger that keeps the last {@link #CAPACITY} events (time, level, logger, message and the exception's
 * one-line summary). One per process ({@link #installed()}): every master of a JVM shows the same list.
 *
 * <p>Thread-safe: appends and reads are serialised on the ring.
 */
public final class RecentErrors {
    /** Events kept; older ones go. */
    public static final int CAPACITY = 50;

    /** One logged warning or error. */
    public record Event(long timeMillis, String level, String logger, String message) {
    }

    private static RecentErrors instance;

    private final ArrayDeque<Event> ring = new ArrayDeque<>(CAPACITY);
    /** False when the logging backend is not Log4j core (nothing is captured then). */
    private final boolean capturing;

    private RecentErrors(boolean capturing) {
        this.capturing = capturing;
    }

    /** The process's ring, with its appender installed on first use. */
    public static synchronized RecentErrors installed() {
        if (instance == null) {
            instance = install();
        }
        return instance;
    }

    private static RecentErrors install() {
        if (!(LogManager.getContext(false) instanceof LoggerContext context)) {
            return new RecentErrors(false);
        }
        RecentErrors errors = new RecentErrors(true);
        AbstractAppender appender = new AbstractAppender("tiffin-recent-errors", null, null, true,
                Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                errors.add(event);
            }
        };
        appender.start();
        Configuration config = context.getConfiguration();
        config.addAppender(appender);
        config.getRootLogger().addAppender(appender, Level.WARN, null);
        context.updateLoggers();
        return errors;
    }

    private void add(LogEvent e) {
        Throwable t = e.getThrown();
        String message = e.getMessage().getFormattedMessage();
        if (t != null) {
            message = message + " (" + t + ")";
        }
        Event event = new Event(e.getTimeMillis(), e.getLevel().name(), e.getLoggerName(), message);
        synchronized (ring) {
            if (ring.size() == CAPACITY) {
                ring.removeFirst();
            }
            ring.addLast(event);
        }
    }

    /** Whether events are captured (the logging backend is Log4j core). */
    public boolean capturing() {
        return capturing;
    }

    /** The kept events, newest first. */
    public List<Event> latest() {
        synchronized (ring) {
            List<Event> out = new ArrayList<>(ring);
            java.util.Collections.reverse(out);
            return out;
        }
    }
}
