package io.tiffin.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * Draws the benchmark's average fragmentation per case as a grouped bar chart (one group per case,
 * one bar per strategy) into a PNG, with Java2D in headless mode.
 *
 * <p>Thread-safe: stateless; each call draws its own image.
 */
final class FragmentationPlot {
    private static final Color[] PALETTE = {new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868),
        new Color(0xC44E52), new Color(0x8172B3), new Color(0x937860), new Color(0xDA8BC3), new Color(0x8C8C8C)};

    private FragmentationPlot() {
    }

    static void write(Path file, String title, List<CaseResult> results) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Map<String, Map<String, Double>> byCase = new LinkedHashMap<>();
        List<String> strategies = new ArrayList<>();
        for (CaseResult r : results) {
            byCase.computeIfAbsent(r.caseKey(), k -> new LinkedHashMap<>()).put(r.strategy, r.fragAvg);
            if (!strategies.contains(r.strategy)) {
                strategies.add(r.strategy);
            }
        }
        int groups = Math.max(1, byCase.size());
        int barWidth = 10;
        int groupWidth = strategies.size() * barWidth + 12;
        int left = 70;
        int top = 60;
        int plotHeight = 400;
        int bottom = 170;
        int width = Math.max(700, left + groups * groupWidth + 140);
        int height = top + plotHeight + bottom;
        double max = 0.05;
        for (CaseResult r : results) {
            max = Math.max(max, r.fragAvg);
        }
        max = Math.ceil(max * 10) / 10.0;

        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
            g.drawString(title, left, 25);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            // Axes and grid.
            for (int i = 0; i <= 5; i++) {
                double v = max * i / 5;
                int y = top + plotHeight - (int) Math.round(plotHeight * v / max);
                g.setColor(new Color(0xDDDDDD));
                g.drawLine(left, y, width - 20, y);
                g.setColor(Color.BLACK);
                g.drawString(String.format(Locale.ROOT, "%.2f", v), left - 40, y + 4);
            }
            g.setStroke(new BasicStroke(1.5f));
            g.drawLine(left, top, left, top + plotHeight);
            g.drawLine(left, top + plotHeight, width - 20, top + plotHeight);
            AffineTransform normal = g.getTransform();
            g.rotate(-Math.PI / 2);
            g.drawString("Frag_avg (1 - largest free / free, weighted)", -(top + plotHeight - 40), 18);
            g.setTransform(normal);
            // Bars.
            int x = left + 8;
            for (Map.Entry<String, Map<String, Double>> e : byCase.entrySet()) {
                for (int s = 0; s < strategies.size(); s++) {
                    Double v = e.getValue().get(strategies.get(s));
                    if (v != null) {
                        int h = (int) Math.round(plotHeight * v / max);
                        g.setColor(PALETTE[s % PALETTE.length]);
                        g.fillRect(x + s * barWidth, top + plotHeight - h, barWidth - 1, h);
                    }
                }
                g.setColor(Color.BLACK);
                AffineTransform t = g.getTransform();
                g.translate(x + groupWidth / 2.0, top + plotHeight + 8);
                g.rotate(Math.PI / 3);
                g.drawString(e.getKey(), 0, 0);
                g.setTransform(t);
                x += groupWidth;
            }
            // Legend.
            int lx = left;
            for (int s = 0; s < strategies.size(); s++) {
                g.setColor(PALETTE[s % PALETTE.length]);
                g.fillRect(lx, 33, 12, 12);
                g.setColor(Color.BLACK);
                g.drawString(strategies.get(s), lx + 16, 43);
                lx += 20 + g.getFontMetrics().stringWidth(strategies.get(s)) + 12;
            }
        } finally {
            g.dispose();
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        if (!ImageIO.write(image, "png", file.toFile())) {
            throw new IOException("no PNG writer available for " + file);
        }
    }
}
