package dev.xq.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;

/**
 * Draws a report as PNG files: one CDF chart per sample series (a line per mode) and one bar
 * chart per figure the scenario named for bars.
 */
public final class Plots {

    /** More points than this per CDF line add nothing a reader can see. */
    private static final int MAX_POINTS = 2000;

    private Plots() {
    }

    /**
     * Writes the charts of {@code r} into {@code dir}, creating it if needed.
     * @return the files written
     */
    public static List<Path> write(ScenarioReport r, Path dir) throws IOException {
        // Charts are drawn off-screen; a node has no display, and AWT must not look for one.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        Files.createDirectories(dir);
        List<Path> written = new ArrayList<>();
        Set<String> series = new LinkedHashSet<>();
        for (ModeResult m : r.modes()) {
            series.addAll(m.samples().keySet());
        }
        for (String s : series) {
            Path p = dir.resolve(r.scenario() + "-" + slug(s) + "-cdf.png");
            if (cdf(r, s, p)) {
                written.add(p);
            }
        }
        for (String f : r.barFigures()) {
            Path p = dir.resolve(r.scenario() + "-" + slug(f) + ".png");
            if (bars(r, f, p)) {
                written.add(p);
            }
        }
        return written;
    }

    private static boolean cdf(ScenarioReport r, String series, Path file) throws IOException {
        XYChart chart = new XYChartBuilder().width(900).height(560)
                .title(r.scenario() + " on " + r.device() + ": CDF of " + series)
                .xAxisTitle(series).yAxisTitle("% of samples <= x").build();
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        chart.getStyler().setMarkerSize(0);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideSE);
        chart.getStyler().setYAxisDecimalPattern("0");
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        int lines = 0;
        for (ModeResult m : r.modes()) {
            double[] v = m.samples().get(series);
            if (v == null || v.length == 0) {
                continue;
            }
            double[][] xy = cdfPoints(v, MAX_POINTS);
            min = Math.min(min, xy[0][0]);
            max = Math.max(max, xy[0][xy[0].length - 1]);
            chart.addSeries(uniqueName(chart, m.mode()), xy[0], xy[1]);
            lines++;
        }
        if (lines == 0) {
            return false;
        }
        // Latencies of different modes can differ by orders of magnitude.
        if (min > 0 && max / min > 100) {
            chart.getStyler().setXAxisLogarithmic(true);
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return true;
    }

    private static boolean bars(ScenarioReport r, String figure, Path file) throws IOException {
        List<String> names = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        for (ModeResult m : r.modes()) {
            double v = m.number(figure);
            if (!Double.isNaN(v) && !Double.isInfinite(v)) {
                names.add(m.mode());
                values.add(v);
            }
        }
        if (names.isEmpty()) {
            return false;
        }
        CategoryChart chart = new CategoryChartBuilder().width(900).height(560)
                .title(r.scenario() + " on " + r.device() + ": " + figure)
                .xAxisTitle("mode").yAxisTitle(figure).build();
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setLabelsVisible(true);
        chart.addSeries(figure, names, values);
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return true;
    }

    /**
     * The empirical CDF of {@code values} as (x, y in percent) points, at most about
     * {@code maxPoints} of them. Each value sits at the middle of its step (Hazen's plotting
     * position, 100 (i + 0.5) / n), and the curve is anchored at (min, 0) and (max, 100) so both
     * tails stay visible. (Evenly spaced y values would also make XChart use every one of them
     * as a tick label.)
     */
    static double[][] cdfPoints(double[] values, int maxPoints) {
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        int n = sorted.length;
        int step = Math.max(1, (int) Math.ceil((double) n / maxPoints));
        List<double[]> pts = new ArrayList<>();
        pts.add(new double[] {sorted[0], 0.0});
        for (int i = 0; i < n; i += step) {
            pts.add(new double[] {sorted[i], 100.0 * (i + 0.5) / n});
        }
        if ((n - 1) % step != 0) {
            pts.add(new double[] {sorted[n - 1], 100.0 * (n - 0.5) / n});
        }
        pts.add(new double[] {sorted[n - 1], 100.0});
        double[][] xy = new double[2][pts.size()];
        for (int i = 0; i < pts.size(); i++) {
            xy[0][i] = pts.get(i)[0];
            xy[1][i] = pts.get(i)[1];
        }
        return xy;
    }

    private static String uniqueName(XYChart chart, String name) {
        String n = name;
        for (int k = 2; chart.getSeriesMap().containsKey(n); k++) {
            n = name + " (" + k + ")";
        }
        return n;
    }

    /** @return a file-name-safe form of a series or figure name */
    static String slug(String s) {
        String t = s.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
        return t.replaceAll("^-+|-+$", "");
    }
}
