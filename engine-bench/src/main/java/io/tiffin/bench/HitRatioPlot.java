package io.tiffin.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import javax.imageio.ImageIO;

/**
 * Draws the hit ratio against the cache size, one line per policy, as a PNG, with Java2D in headless
 * mode (no display needed).
 *
 * <p>Stateless and thread-safe.
 */
final class HitRatioPlot {
    private static final int WIDTH = 900;
    private static final int HEIGHT = 560;
    private static final int LEFT = 70;
    private static final int RIGHT = 200;
    private static final int TOP = 50;
    private static final int BOTTOM = 60;
    private static final Color[] COLORS = {
        new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728),
        new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f)
    };

    private HitRatioPlot() {
    }

    static void write(List<BenchCacheSimCommand.Row> rows, String title, Path file) {
        System.setProperty("java.awt.headless", "true");
        Map<String, Map<Double, Double>> series = new LinkedHashMap<>();
        TreeSet<Double> sizes = new TreeSet<>();
        double maxRatio = 0.01;
        for (BenchCacheSimCommand.Row row : rows) {
            series.computeIfAbsent(row.policy(), p -> new LinkedHashMap<>()).put(row.capacityPct(), row.hitRatio());
            sizes.add(row.capacityPct());
            maxRatio = Math.max(maxRatio, row.hitRatio());
        }
        double yMax = Math.min(1, Math.ceil(maxRatio * 10) / 10);
        BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);
            int plotWidth = WIDTH - LEFT - RIGHT;
            int plotHeight = HEIGHT - TOP - BOTTOM;
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(title, LEFT, TOP - 20);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawRect(LEFT, TOP, plotWidth, plotHeight);
            for (int tick = 0; tick <= 5; tick++) {
                double ratio = yMax * tick / 5;
                int y = TOP + plotHeight - (int) Math.round(plotHeight * ratio / yMax);
                g.setColor(new Color(0xdddddd));
                g.drawLine(LEFT + 1, y, LEFT + plotWidth - 1, y);
                g.setColor(Color.BLACK);
                g.drawString(String.format(Locale.ROOT, "%.0f%%", ratio * 100), LEFT - 40, y + 4);
            }
            double minLog = Math.log(sizes.first());
            double spanLog = Math.max(1e-9, Math.log(sizes.last()) - minLog);
            for (double size : sizes) {
                int x = x(size, minLog, spanLog, plotWidth);
                g.drawString(BenchCacheSimCommand.trimmed(size) + "%", x - 10, TOP + plotHeight + 18);
            }
            g.drawString("cache size (% of distinct blocks, log scale)", LEFT + plotWidth / 2 - 130, HEIGHT - 15);
            int index = 0;
            g.setStroke(new BasicStroke(2.2f));
            for (Map.Entry<String, Map<Double, Double>> entry : series.entrySet()) {
                g.setColor(COLORS[index % COLORS.length]);
                int previousX = -1;
                int previousY = -1;
                for (Map.Entry<Double, Double> point : entry.getValue().entrySet()) {
                    int x = x(point.getKey(), minLog, spanLog, plotWidth);
                    int y = TOP + plotHeight - (int) Math.round(plotHeight * point.getValue() / yMax);
                    g.fillOval(x - 4, y - 4, 8, 8);
                    if (previousX >= 0) {
                        g.drawLine(previousX, previousY, x, y);
                    }
                    previousX = x;
                    previousY = y;
                }
                int legendY = TOP + 20 + 22 * index;
                g.drawLine(LEFT + plotWidth + 15, legendY - 4, LEFT + plotWidth + 40, legendY - 4);
                g.setColor(Color.BLACK);
                g.drawString(entry.getKey(), LEFT + plotWidth + 48, legendY);
                index++;
            }
        } finally {
            g.dispose();
        }
        try {
            if (!ImageIO.write(image, "png", file.toFile())) {
                throw new IllegalStateException("no PNG writer available");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private static int x(double size, double minLog, double spanLog, int plotWidth) {
        return LEFT + 20 + (int) Math.round((plotWidth - 40) * (Math.log(size) - minLog) / spanLog);
    }
}
